// Op cards: the op's definition in the registry (ops/op.hpp), the forward flow, the inventory, the latency model,
// the tolerance table and the source tree, joined per op by its one name. Nothing here restates a number the model
// already knows, and nothing translates between names.
#include "reports/explain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "model/data_path.hpp"
#include "model/error.hpp"
#include "model/taps.hpp"
#include "reports/context.hpp"
#include "reports/forward_flow.hpp"
#include "reports/latency.hpp"
#include "reports/op_costs.hpp"
#include "reports/table.hpp"

namespace salasim::reports {

namespace {

// The latency model evaluated once per card: one decode token at `context`, a prefill of `context` tokens.
struct Costs {
  const ModelConfig* c = nullptr;
  int64_t context = 0;
  std::vector<OpCost> decode;
  std::vector<OpTotal> prefill;

  CostRow entry(const std::string& op, double share) const {
    CostRow r{op, share, {}, {}};
    bool ran = false;
    for (const OpCost& o : decode)
      if (o.op == op) {
        r.decode = {share * o.flops, share * o.bytes, share * o.exps};
        ran = true;
      }
    for (const OpTotal& o : prefill)
      if (o.op == op) {
        const double n = double(context);
        r.prefill = {share * o.flops / n, share * o.bytes / n, share * o.exps / n};
        ran = true;
      }
    if (!ran) r.source += " (does not run at this context)";
    return r;
  }
  // One elementwise term as other.elementwise counts it (op_costs.cpp): per token, times the layers it repeats
  // over, the per-call term once per call that makes logits (every decode step, the prefill's last chunk).
  CostRow term(const ElementwiseTerm& t, double share) const {
    const double n = term_layers(*c, t.scope) * share;
    CostRow r{fmt::format("other.elementwise: {}", t.what), share, {}, {}};
    r.decode = {0, n * t.bytes, n * t.exps};
    r.prefill = t.per_call ? Cost{0, n * t.bytes / double(context), 0} : Cost{0, n * t.bytes, n * t.exps};
    return r;
  }
};

Costs costs_at(const Model& m, int64_t context, int64_t chunk) {
  HwProfile unit;  // rates of 1: only the counts are used, never the seconds
  unit.bf16_flops = unit.bandwidth = unit.exp_per_s = 1;
  return {&m.sala, context, call_costs(m, WeightFormat::Bf16, context, context + 1, true),
          prefill_ops(m, WeightFormat::Bf16, unit, context, chunk)};
}

CostRow sum_rows(const std::vector<CostRow>& rows) {
  CostRow t{"total", 1, {}, {}};
  for (const CostRow& r : rows) {
    t.decode = {t.decode.flops + r.decode.flops, t.decode.bytes + r.decode.bytes, t.decode.exps + r.decode.exps};
    t.prefill = {t.prefill.flops + r.prefill.flops, t.prefill.bytes + r.prefill.bytes, t.prefill.exps + r.prefill.exps};
  }
  return t;
}

// The latency-model entries of op `op`: NAME itself or NAME.site (reports/op_costs.hpp).
bool entry_of(const std::string& entry, const std::string& op) { return entry == op || entry.rfind(op + ".", 0) == 0; }

// A step as a row, over `layers` (its part's layers, or on a layer card those of the card's type).
UseRow use_row(const std::vector<TensorSpec>& inv, const FlowStep& s, const std::vector<int>& layers) {
  const StepParams p = step_params(inv, s, layers);
  UseRow u;
  u.label = s.label;
  u.op = s.op;
  u.where = part_name(s.part);
  u.layers = layers.front() < 0 ? "-" : layer_ranges(layers);
  u.in = s.in;
  u.out = s.out;
  u.text = s.text;
  for (const TensorSpec* t : p.first) u.tensors.push_back({t->name, t->shape, t->numel()});
  u.each = p.each;
  u.instances = p.instances;
  u.total = p.total;
  u.source = step_source(s);
  u.note = s.note;
  return u;
}

// Tap rows in the tolerance table's order, each with the layers it is recorded in (within `only` when given, as
// on a layer card) and an example full name.
std::vector<TapRow> tap_rows(const ModelConfig& c, const std::set<std::string>& kinds,
                             const std::vector<int>* only = nullptr) {
  std::vector<TapRow> out;
  for (const ToleranceRow& row : tolerance_table()) {
    if (!kinds.count(row.kind)) continue;
    TapRow t{row.kind, "", "-", row};
    const std::string head = row.kind.substr(0, row.kind.find('/'));
    if (head == "embed" || head == "final") {
      t.example = "/prefill/" + row.kind;
    } else {
      const Part p = head == "lightning" ? Part::Lightning : head == "sparse" ? Part::Sparse : Part::LayerPre;
      const std::vector<int> layers = only ? *only : part_layers(c, p);
      t.layers = layer_ranges(layers);
      t.example = fmt::format("/prefill/{}/{}", layer_dir(layers.front()), row.kind);
    }
    out.push_back(t);
  }
  for (const std::string& k : kinds) tolerance_row(tolerance_table(), k);  // a kind without a row is an error
  return out;
}

// The latency-model entries named after `op`, over the decode step's and the prefill's entries (a prefill may have
// one the decode step at the same position lacks, and the other way round).
std::vector<std::string> entry_names(const Costs& k, const std::function<bool(const std::string&, TermScope)>& want) {
  std::vector<std::string> out;
  auto add = [&](const char* op, TermScope scope) {
    if (want(op, scope) && std::find(out.begin(), out.end(), op) == out.end()) out.push_back(op);
  };
  for (const OpCost& o : k.decode) add(o.op, o.scope);
  for (const OpTotal& o : k.prefill) add(o.op.c_str(), o.scope);
  return out;
}

void where_it_lives(OpCard& card, const op::OpSpec& o) {
  const std::vector<std::string>& functions = o.reference_functions;
  const SourceLine decl = find_declaration("reference/ops.hpp", functions.front());
  card.declared = decl.found() ? fmt::format("reference/ops.hpp:{}: {} ({})", decl.line, o.summary, o.section)
                               : "NOT FOUND: " + decl.error;
  for (const std::string& f : functions)
    for (const SourceLine& l : find_definitions("reference/" + o.name + ".cpp", f)) card.reference.push_back(l);
  for (const std::string& f : o.card.gpu_functions)
    for (const SourceLine& l : find_definitions(o.card.gpu_file, f)) card.gpu.push_back(l);
  card.kernels = find_kernels(o.card.gpu_file);
  card.gpu_purpose = source_purpose(o.card.gpu_file);
  std::vector<std::string> called = functions;
  called.insert(called.end(), o.card.gpu_functions.begin(), o.card.gpu_functions.end());
  card.tests = find_tests(o.name, called);
}

void op_card(OpCard& card, const Model& m, const std::vector<FlowStep>& flow, const op::OpSpec& o, const Costs& k) {
  const ModelConfig& c = m.sala;
  card.title = o.card.title;
  card.equation = o.card.equation(c, k.context);
  card.params_note = o.card.params_note;
  std::set<std::string> kinds;
  for (const FlowStep& s : flow) {
    if (s.op != o.name) continue;
    card.uses.push_back(use_row(m.inventory, s, part_layers(c, s.part)));
    card.params_total += card.uses.back().total;
    card.instances += card.uses.back().instances;
    kinds.insert(s.taps.begin(), s.taps.end());
  }
  if (card.uses.size() == 1) card.params_each = card.uses.front().each;
  for (const std::string& e : entry_names(k, [&](const std::string&n, TermScope) { return entry_of(n, o.name); }))
    card.costs.push_back(k.entry(e, 1));
  for (const ElementwiseTerm& t : sala_elementwise_terms(c))
    if (t.op == o.name) card.costs.push_back(k.term(t, 1));
  card.taps = tap_rows(c, kinds);
  where_it_lives(card, o);
}

void layer_card(OpCard& card, const Model& m, const std::vector<FlowStep>& flow, Mixer mixer, const Costs& k) {
  const ModelConfig& c = m.sala;
  const ParamCount pc = count_params(c, m.inventory);
  const bool light = mixer == Mixer::Lightning;
  const TermScope scope = light ? TermScope::Lightning : TermScope::Sparse;
  const std::vector<int> layers = part_layers(c, light ? Part::Lightning : Part::Sparse);
  card.title = fmt::format("one {} layer: pre-norm {} mixer and MLP, each with a scaled residual (layers {})",
                           light ? "Lightning" : "sparse (InfLLM-v2)", light ? "Lightning (GLA)" : "sparse-attention",
                           layer_ranges(layers));
  std::set<std::string> kinds;
  for (const FlowStep& s : layer_steps(flow, mixer)) {
    const UseRow u = use_row(m.inventory, s, layers);  // counted over this layer type only
    card.equation.push_back({fmt::format("{}: {}", s.label, s.text), s.latex});
    card.uses.push_back(u);
    kinds.insert(s.taps.begin(), s.taps.end());
  }
  card.params_each = light ? pc.lightning_layer : pc.sparse_layer;
  card.instances = int64_t(layers.size());
  card.params_total = card.params_each * card.instances;
  card.params_note = light ? "the GLA state is per request (not a parameter)"
                           : "the KV cache and compressed keys are per request (not parameters)";
  std::map<std::string, TermScope> layer_entries;
  for (const std::string& e : entry_names(k, [&](const std::string&n, TermScope s) {
         const bool in_layer = s == scope || s == TermScope::EveryLayer;
         if (in_layer) layer_entries[n] = s;
         return in_layer && n != "other.elementwise";  // split by terms below
       }))
    card.costs.push_back(k.entry(e, 1.0 / term_layers(c, layer_entries.at(e))));
  for (const ElementwiseTerm& t : sala_elementwise_terms(c))
    if (t.scope == scope || t.scope == TermScope::EveryLayer)
      card.costs.push_back(k.term(t, 1.0 / term_layers(c, t.scope)));
  card.taps = tap_rows(c, kinds, &layers);
  card.reference = find_definitions(light ? "reference/lightning.cpp" : "reference/sparse.cpp",
                                    light ? "lightning_mixer" : "sparse_mixer");
  for (const SourceLine& l : find_definitions("reference/model.cpp", "forward")) card.reference.push_back(l);
  card.gpu = find_definitions("gpu/runner.cpp", light ? "lightning" : "sparse_layer");
  card.gpu_purpose = source_purpose("gpu/runner.cpp");
  card.tests = find_tests("model", {light ? "lightning_mixer" : "sparse_mixer"});
}

void model_card(OpCard& card, const Model& m, const std::vector<FlowStep>& flow, const Costs& k) {
  const ModelConfig& c = m.sala;
  const ParamCount pc = count_params(c, m.inventory);
  card.title = fmt::format("MiniCPM-SALA: embedding, {} layers ({} Lightning, {} sparse), final norm, lm_head",
                           c.num_hidden_layers, pc.n_lightning, pc.n_sparse);
  const std::vector<int> light = part_layers(c, Part::Lightning), sparse = part_layers(c, Part::Sparse);
  card.equation =
      {{fmt::format("h = E[x] * {}", fmt::format("{:.10g}", c.scale_emb)),
        fmt::format("h = E_x \\cdot {:.10g}", c.scale_emb)},
       {fmt::format(
            "for l = 0..{}: h = h + s Mixer_l(RMSNorm(h)), then h = h + s MLP(RMSNorm(h)), s = {:.10g}; Mixer_l is "
            "Lightning at layers {} and sparse at layers {}",
            c.num_hidden_layers - 1, c.residual_scale(), layer_ranges(light), layer_ranges(sparse)),
        fmt::format("h \\leftarrow h + s\\,\\mathrm{{Mixer}}_l(\\mathrm{{RMSNorm}}(h)),\\; h \\leftarrow h + "
                    "s\\,\\mathrm{{MLP}}(\\mathrm{{RMSNorm}}(h)),\\ s = {:.10g}",
                    c.residual_scale())},
       {fmt::format("logits = W_lm (RMSNorm(h) / {:.10g})", c.logit_divisor()),
        fmt::format("\\mathrm{{logits}} = W_{{\\mathrm{{lm}}}}\\,(\\mathrm{{RMSNorm}}(h)/{:.10g})",
                    c.logit_divisor())}};
  for (const FlowStep& s : flow)
    if (s.part == Part::Entry) card.uses.push_back(use_row(m.inventory, s, {-1}));
  for (Mixer mx : {Mixer::Lightning, Mixer::Sparse}) {
    const bool l = mx == Mixer::Lightning;
    UseRow u;
    u.label = l ? "Lightning layer" : "sparse layer";
    u.op = l ? "lightning-layer" : "sparse-layer";
    u.where = l ? "lightning" : "sparse";
    u.layers = layer_ranges(l ? light : sparse);
    u.in = u.out = fmt::format("h [T, {}]", c.hidden_size);
    u.each = l ? pc.lightning_layer : pc.sparse_layer;
    u.instances = l ? pc.n_lightning : pc.n_sparse;
    u.total = u.each * u.instances;
    const auto defs = find_definitions(l ? "reference/lightning.cpp" : "reference/sparse.cpp",
                                       l ? "lightning_mixer" : "sparse_mixer");
    if (!defs.empty()) u.source = defs.front();
    u.note = fmt::format("salasim explain {}", u.op);
    if (u.instances > 0) card.uses.push_back(u);
  }
  for (const FlowStep& s : flow)
    if (s.part == Part::Exit) card.uses.push_back(use_row(m.inventory, s, {-1}));
  card.params_each = card.params_total = pc.total;
  card.instances = 1;
  card.params_note = fmt::format("{} tensors, {} bytes in bf16", m.inventory.size(), commas(pc.bf16_bytes));
  for (const OpCost& o : k.decode) card.costs.push_back(k.entry(o.op, 1));
  for (const OpTotal& o : k.prefill)
    if (std::none_of(card.costs.begin(), card.costs.end(), [&](const CostRow& r) { return r.source == o.op; }))
      card.costs.push_back(k.entry(o.op, 1));
  std::set<std::string> kinds;
  for (const FlowStep& s : flow) kinds.insert(s.taps.begin(), s.taps.end());
  card.taps = tap_rows(c, kinds);
  for (const char* f : {"forward", "prefill_piece", "decode"})
    for (const SourceLine& l : find_definitions("reference/model.cpp", f)) card.reference.push_back(l);
  card.gpu = find_definitions("gpu/runner.cpp", "forward");
  card.gpu_purpose = source_purpose("gpu/runner.cpp");
  card.tests = find_tests("model", {});
}

std::string si(double v) {
  if (v == 0) return "0";
  static const char* units[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  return fmt::format("{:.4g}{}", v, units[u]);
}

std::string shape(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

nlohmann::json cost_json(const Cost& c) { return {{"flops", c.flops}, {"bytes", c.bytes}, {"exps", c.exps}}; }
nlohmann::json line_json(const SourceLine& l) {
  return {{"file", l.file}, {"line", l.line},     {"name", l.name},
          {"text", l.text}, {"found", l.found()}, {"error", l.error}};
}

}  // namespace

const std::vector<std::string>& composite_cards() {
  static const std::vector<std::string> names{"lightning-layer", "sparse-layer", "model"};
  return names;
}

std::vector<std::string> explain_names() {
  std::vector<std::string> n;
  for (const op::OpSpec& o : op::registry()) n.push_back(o.name);
  for (const std::string& c : composite_cards()) n.push_back(c);
  return n;
}

OpCard explain(const Model& m, const std::string& name, int64_t context, int64_t chunk) {
  const std::vector<std::string> names = explain_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    fail("explain: unknown op '{}'; known: {}", name, list);
  }
  if (m.kind != ModelKind::Sala) fail("explain: {} is not a MiniCPM-SALA config (model_type minicpm_sala)", m.path);
  if (context < 1) fail("--context {}: expected a positive token count", context);
  OpCard card;
  card.name = name;
  card.config = source_relative(m.path);
  card.context = context;
  card.chunk = chunk;
  const Costs k = costs_at(m, context, chunk);
  const std::vector<FlowStep> flow = forward_flow(m.sala);
  if (name == "lightning-layer") layer_card(card, m, flow, Mixer::Lightning, k);
  else if (name == "sparse-layer") layer_card(card, m, flow, Mixer::Sparse, k);
  else if (name == "model") model_card(card, m, flow, k);
  else op_card(card, m, flow, op::find_op(name), k);
  card.cost_total = sum_rows(card.costs);
  return card;
}

std::string format_card(const OpCard& card) {
  std::string s = fmt::format("{}: {}\n", card.name, card.title);
  s += fmt::format("config {}, context {} ({} tokens)\n", card.config, context_label(card.context),
                   commas(card.context));
  if (!card.declared.empty()) s += "declared " + card.declared + "\n";

  s += "\nEquation\n";
  for (size_t i = 0; i < card.equation.size(); ++i) s += fmt::format("  {}. {}\n", i + 1, card.equation[i].text);

  s += "\nWhere it runs: shapes and parameters (from the tensor inventory)\n";
  // (to_text left-aligns the last column: an empty one keeps the numbers right-aligned)
  Table uses{{"step", "where", "layers", "in", "out", "params each", "x", "params", ""}, {}};
  for (const UseRow& u : card.uses)
    uses.rows.push_back(
        {u.label, u.where, u.layers, u.in, u.out, commas(u.each), std::to_string(u.instances), commas(u.total), ""});
  s += indent(to_text(uses), "  ");
  if (card.params_each > 0 && card.instances > 1)
    s += fmt::format("  parameters: {} per instance x {} = {}\n", commas(card.params_each), card.instances,
                     commas(card.params_total));
  else
    s += fmt::format("  parameters: {} in total{}\n", commas(card.params_total),
                     card.instances > 1 ? fmt::format(" over {} instances", card.instances) : "");
  if (!card.params_note.empty()) s += "  " + card.params_note + "\n";
  s += "  the statements that compute it:\n";
  for (const UseRow& u : card.uses) {
    if (!u.source.found()) {
      s += fmt::format("    {:<28} NOT FOUND: {}\n", u.label, u.source.error);
      continue;
    }
    const std::string first = u.source.text.substr(0, u.source.text.find('\n'));
    s += fmt::format("    {:<28} {}{}\n", u.source.where(), first, first.size() < u.source.text.size() ? " ..." : "");
  }
  bool any_tensor = false;
  for (const UseRow& u : card.uses)
    for (const UseTensor& t : u.tensors) {
      if (!any_tensor) s += "  checkpoint tensors (first instance; the others differ in the layer index):\n";
      any_tensor = true;
      s += fmt::format("    {:<52} {:<14} {:>13}\n", t.name, shape(t.shape), commas(t.params));
    }

  s += fmt::format(
      "\nCost per token (latency model, reports/op_costs.cpp; bf16 weights; decode = one token at "
      "position {}, prefill = {} tokens in chunks of {}, divided by {})\n",
      card.context, card.context, card.chunk, card.context);
  Table cost{{"latency-model entry", "share", "decode FLOP", "decode bytes", "decode exp", "prefill FLOP",
              "prefill bytes", "prefill exp", ""},
             {}};
  auto row = [&](const CostRow& r) {
    cost.rows.push_back({r.source, r.share == 1 ? "1" : fmt::format("1/{:.0f}", 1 / r.share), si(r.decode.flops),
                         si(r.decode.bytes), si(r.decode.exps), si(r.prefill.flops), si(r.prefill.bytes),
                         si(r.prefill.exps), ""});
  };
  for (const CostRow& r : card.costs) row(r);
  row(card.cost_total);
  s += indent(to_text(cost), "  ");

  s += "\nTaps and the tolerance rows that gate them (compare/tolerance.cpp)\n";
  if (card.taps.empty()) s += "  none: no tap is recorded after this op\n";
  for (const TapRow& t : card.taps) {
    const ToleranceRow& r = t.tolerance;
    const std::string gate =
        r.gate == Gate::Float
            ? fmt::format("{}; rel-RMS <= {} x peer + {:.3g}, max-err <= {} x peer + {:.3g}", r.stored, r.mult,
                          r.rms_floor, r.max_mult, r.max_floor)
            : fmt::format("{}; sets equal but for swaps within the tie band {:.3g}", r.stored, r.tie_band);
    s += fmt::format("  {:<22} {}\n    e.g. {} (layers {}); {}\n", t.kind, gate, t.example, t.layers, r.reason);
  }
  s += "\nWhere it lives (found in the source tree now)\n";
  auto lines = [&](const char* what, const std::vector<SourceLine>& ls) {
    for (const SourceLine& l : ls)
      s += l.found() ? fmt::format("  {:<10} {} {}\n", what, l.where(), l.name)
                     : fmt::format("  {:<10} NOT FOUND: {}\n", what, l.error);
  };
  lines("reference", card.reference);
  lines("gpu", card.gpu);
  lines("kernel", card.kernels);
  if (!card.gpu_purpose.empty() && card.kernels.empty() && !card.gpu.empty())
    s += fmt::format("  {:<10} ({})\n", "", card.gpu_purpose);
  for (const TestRef& t : card.tests)
    s += fmt::format("  {:<10} {}:{} \"{}\"{}\n", "test", t.file, t.line, t.name, t.tagged ? "" : " (calls it)");
  if (card.tests.empty()) s += "  test       none found (no TEST_CASE tagged [" + card.name + "] or calling it)\n";
  return s;
}

nlohmann::json card_json(const OpCard& card) {
  nlohmann::json j;
  j["op"] = card.name;
  j["title"] = card.title;
  j["config"] = card.config;
  j["context"] = card.context;
  j["declared"] = card.declared;
  for (const op::EqStep& e : card.equation) j["equation"].push_back({{"text", e.text}, {"latex", e.latex}});
  j["uses"] = nlohmann::json::array();
  for (const UseRow& u : card.uses) {
    nlohmann::json t = nlohmann::json::array();
    for (const UseTensor& x : u.tensors) t.push_back({{"name", x.name}, {"shape", x.shape}, {"params", x.params}});
    j["uses"].push_back({{"step", u.label},
                         {"op", u.op},
                         {"where", u.where},
                         {"layers", u.layers},
                         {"in", u.in},
                         {"out", u.out},
                         {"equation", u.text},
                         {"tensors", t},
                         {"params_each", u.each},
                         {"instances", u.instances},
                         {"params_total", u.total},
                         {"source", line_json(u.source)},
                         {"note", u.note}});
  }
  j["params"] = {{"each", card.params_each},
                 {"instances", card.instances},
                 {"total", card.params_total},
                 {"note", card.params_note}};
  nlohmann::json rows = nlohmann::json::array();
  for (const CostRow& r : card.costs)
    rows.push_back({{"source", r.source},
                    {"share", r.share},
                    {"decode", cost_json(r.decode)},
                    {"prefill_per_token", cost_json(r.prefill)}});
  j["cost"] = {{"weights", "bf16"},
               {"decode_position", card.context},
               {"prefill_tokens", card.context},
               {"prefill_chunk", card.chunk},
               {"rows", rows},
               {"total",
                {{"decode", cost_json(card.cost_total.decode)},
                 {"prefill_per_token", cost_json(card.cost_total.prefill)}}}};
  j["taps"] = nlohmann::json::array();
  for (const TapRow& t : card.taps) {
    const ToleranceRow& r = t.tolerance;
    j["taps"].push_back({{"kind", t.kind},
                         {"example", t.example},
                         {"layers", t.layers},
                         {"tolerance",
                          {{"stored", r.stored},
                           {"gate", r.gate == Gate::Float ? "float" : "selection"},
                           {"mult", r.mult},
                           {"max_mult", r.max_mult},
                           {"rms_floor", r.rms_floor},
                           {"max_floor", r.max_floor},
                           {"tie_band", r.tie_band},
                           {"reason", r.reason}}}});
  }
  auto list = [](const std::vector<SourceLine>& ls) {
    nlohmann::json a = nlohmann::json::array();
    for (const SourceLine& l : ls) a.push_back(line_json(l));
    return a;
  };
  nlohmann::json tests = nlohmann::json::array();
  for (const TestRef& t : card.tests)
    tests.push_back({{"file", t.file}, {"line", t.line}, {"name", t.name}, {"tagged", t.tagged}});
  j["where"] = {{"reference", list(card.reference)},
                {"gpu", list(card.gpu)},
                {"kernels", list(card.kernels)},
                {"tests", tests}};
  return j;
}

}  // namespace salasim::reports
