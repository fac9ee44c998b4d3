// salasim explain: every card's parameters equal the inventory's, its costs the latency model's, its taps the
// tolerance table's, and every file:line it prints resolves in the source tree.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "model/taps.hpp"
#include "ops/op.hpp"
#include "reports/explain.hpp"
#include "reports/forward_flow.hpp"
#include "reports/latency.hpp"
#include "reports/op_costs.hpp"
#include "reports/table.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::reports;

namespace {

// Which op applies each checkpoint tensor, by a rule of its own (not the forward flow's): the embedding gather, the
// logits GEMM, RMSNorm for every vector, a projection for every other matrix.
std::string op_of_tensor(const TensorSpec& t) {
  if (t.name.find("embed_tokens") != std::string::npos) return "embed";
  if (t.name == "lm_head.weight") return "logits";
  if (t.shape.size() == 1) return "rmsnorm";
  return "linear";
}

bool close(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)) + 1e-9; }

void check_cost(const Cost& got, const Cost& want, const std::string& what) {
  INFO(what << ": flops " << got.flops << " vs " << want.flops << ", bytes " << got.bytes << " vs " << want.bytes
            << ", exps " << got.exps << " vs " << want.exps);
  CHECK(close(got.flops, want.flops));
  CHECK(close(got.bytes, want.bytes));
  CHECK(close(got.exps, want.exps));
}

Cost add(Cost a, const Cost& b, double times = 1) {
  return {a.flops + times * b.flops, a.bytes + times * b.bytes, a.exps + times * b.exps};
}

// The registry's op names, in its order.
std::vector<std::string> op_names() {
  std::vector<std::string> n;
  for (const op::OpSpec& s : op::registry()) n.push_back(s.name);
  return n;
}

// A variant of the tiny config written to a scratch file: tied embeddings, no Lightning output gate, no q/k norm.
std::string variant_config() {
  std::ifstream in(test::tiny_config());
  nlohmann::json j = nlohmann::json::parse(in);
  j["tie_word_embeddings"] = true;
  j["use_output_gate"] = false;
  j["qk_norm"] = false;
  const std::string path = test::scratch_dir("explain_variant") + "/variant.json";
  std::ofstream(path) << j.dump(2);
  return path;
}

}  // namespace

TEST_CASE("explain: every op of reference/ops.hpp has a card, and only those", "[explain]") {
  std::vector<std::string> sections;
  for (const OpsSection& s : reference_ops_sections()) {
    sections.push_back(s.op);
    INFO(s.op);
    CHECK(!s.functions.empty());
  }
  CHECK(sections == op_names());
  const std::vector<std::string> names = explain_names();
  for (const char* c : {"lightning-layer", "sparse-layer", "model"})
    CHECK(std::find(names.begin(), names.end(), c) != names.end());
  CHECK(names.size() == op_names().size() + 3);
}

TEST_CASE("explain: parameters on every card equal the inventory's", "[explain]") {
  for (const std::string& path : {test::real_config(), test::tiny_config(), variant_config()}) {
    INFO(path);
    const Model m = load_model(path);
    const ParamCount pc = count_params(m.sala, m.inventory);
    std::map<std::string, int64_t> want;
    for (const TensorSpec& t : m.inventory) want[op_of_tensor(t)] += t.numel();
    int64_t sum = 0;
    for (const std::string& op : op_names()) {
      const OpCard card = explain(m, op, 65536);
      INFO(op);
      CHECK(card.params_total == want[op]);
      int64_t uses = 0;
      for (const UseRow& u : card.uses) {
        int64_t first = 0;
        for (const UseTensor& t : u.tensors) first += t.params;
        CHECK(first == u.each);
        CHECK(u.total == u.each * u.instances);
        uses += u.total;
      }
      CHECK(uses == card.params_total);
      sum += card.params_total;
    }
    CHECK(sum == pc.total);

    const OpCard light = explain(m, "lightning-layer", 65536), sparse = explain(m, "sparse-layer", 65536);
    CHECK(light.params_each == pc.lightning_layer);
    CHECK(light.instances == pc.n_lightning);
    CHECK(sparse.params_each == pc.sparse_layer);
    CHECK(sparse.instances == pc.n_sparse);
    for (const OpCard* card : {&light, &sparse}) {
      int64_t each = 0;
      for (const UseRow& u : card->uses) each += u.each;
      CHECK(each == card->params_each);
    }
    const OpCard model = explain(m, "model", 65536);
    CHECK(model.params_total == pc.total);
    int64_t parts = 0;
    for (const UseRow& u : model.uses) parts += u.total;
    CHECK(parts == pc.total);
  }
}

TEST_CASE("explain: costs on every card equal the latency model's", "[explain]") {
  // Dense and sparse sparse-layer calls, on the released and the tiny config.
  for (const std::string& path : {test::real_config(), test::tiny_config()})
    for (int64_t N : {int64_t(4096), int64_t(65536)}) {
      INFO(path << " at " << N);
      const Model m = load_model(path);
      const ModelConfig& c = m.sala;
      HwProfile unit;
      unit.bf16_flops = unit.bandwidth = unit.exp_per_s = 1;
      Cost decode, prefill;
      for (const OpCost& o : call_costs(m, WeightFormat::Bf16, N, N + 1, true))
        decode = add(decode, {o.flops, o.bytes, o.exps});
      for (const OpTotal& o : prefill_ops(m, WeightFormat::Bf16, unit, N, 16384))
        prefill = add(prefill, {o.flops, o.bytes, o.exps}, 1.0 / double(N));

      // The op cards split the model's cost without gap or overlap.
      Cost ops_decode, ops_prefill;
      std::map<std::string, OpCard> cards;
      for (const std::string& op : op_names()) {
        cards[op] = explain(m, op, N);
        ops_decode = add(ops_decode, cards[op].cost_total.decode);
        ops_prefill = add(ops_prefill, cards[op].cost_total.prefill);
        // A whole latency-model entry on a card is that entry, unchanged.
        for (const CostRow& r : cards[op].costs) {
          if (r.source.rfind("other.", 0) == 0) continue;
          for (const OpCost& o : call_costs(m, WeightFormat::Bf16, N, N + 1, true))
            if (r.source == o.op) check_cost(r.decode, {o.flops, o.bytes, o.exps}, op + " " + r.source);
        }
      }
      check_cost(ops_decode, decode, "op cards, decode");
      check_cost(ops_prefill, prefill, "op cards, prefill");
      const OpCard model = explain(m, "model", N);
      check_cost(model.cost_total.decode, decode, "model card, decode");
      check_cost(model.cost_total.prefill, prefill, "model card, prefill");

      // The inventory and the latency model agree: a token costs 2 FLOP per projection weight.
      CHECK(cards["linear"].cost_total.decode.flops == 2.0 * double(cards["linear"].params_total));
      CHECK(cards["logits"].cost_total.decode.flops == 2.0 * double(cards["logits"].params_total));
      CHECK(cards["linear"].cost_total.prefill.flops == 2.0 * double(cards["linear"].params_total));

      // Layer cards: Lightning x n + sparse x n + the non-layer parts = the model.
      const OpCard light = explain(m, "lightning-layer", N), sparse = explain(m, "sparse-layer", N);
      Cost outer_d = add(cards["embed"].cost_total.decode, cards["logits"].cost_total.decode);
      Cost outer_p = add(cards["embed"].cost_total.prefill, cards["logits"].cost_total.prefill);
      int final_norm_rows = 0;
      for (const CostRow& r : cards["rmsnorm"].costs)
        if (r.source.find("final norm") != std::string::npos) {
          outer_d = add(outer_d, r.decode);
          outer_p = add(outer_p, r.prefill);
          ++final_norm_rows;
        }
      CHECK(final_norm_rows == 1);
      const double nl = c.n_layers(Mixer::Lightning), ns = c.n_layers(Mixer::Sparse);
      check_cost(add(add(outer_d, light.cost_total.decode, nl), sparse.cost_total.decode, ns), decode,
                 "layers, decode");
      check_cost(add(add(outer_p, light.cost_total.prefill, nl), sparse.cost_total.prefill, ns), prefill,
                 "layers, prefill");
    }
}

TEST_CASE("explain: every tap kind has its tolerance row and every row belongs to a card", "[explain]") {
  const Model m = load_model(test::real_config());
  std::set<std::string> claimed;
  for (const std::string& name : explain_names()) {
    const OpCard card = explain(m, name, 65536);
    for (const TapRow& t : card.taps) {
      INFO(name << " " << t.kind << " " << t.example);
      claimed.insert(t.kind);
      CHECK(tap_kind(t.example) == t.kind);
      CHECK(t.tolerance.kind == t.kind);
      CHECK(!t.tolerance.reason.empty());
      if (tap_layer(t.example) >= 0) {
        const Mixer mx = m.sala.layers[size_t(tap_layer(t.example))];
        if (t.kind.rfind("lightning/", 0) == 0) CHECK(mx == Mixer::Lightning);
        if (t.kind.rfind("sparse/", 0) == 0) CHECK(mx == Mixer::Sparse);
      }
    }
  }
  std::set<std::string> rows;
  for (const ToleranceRow& r : tolerance_table()) rows.insert(r.kind);
  CHECK(claimed == rows);
}

TEST_CASE("explain: every file:line resolves in the source tree, and every step's statement is found", "[explain]") {
  const Model m = load_model(test::real_config());
  int kernels = 0;
  for (const std::string& name : explain_names()) {
    const OpCard card = explain(m, name, 65536);
    INFO(name);
    CHECK(!card.reference.empty());
    CHECK(!card.gpu.empty());
    CHECK(!card.tests.empty());
    for (const auto* list : {&card.reference, &card.gpu, &card.kernels})
      for (const SourceLine& l : *list) {
        INFO(l.where() << " " << l.name << " " << l.error);
        CHECK(l.found());
        CHECK(l.text.find(l.name) != std::string::npos);
      }
    kernels += int(card.kernels.size());
    for (const UseRow& u : card.uses) {
      INFO(u.label << ": " << u.source.error);
      CHECK(u.source.found());
    }
    for (const TestRef& t : card.tests) {
      const auto& lines = source_file(t.file);
      REQUIRE(t.line >= 1);
      REQUIRE(size_t(t.line) <= lines.size());
      CHECK(lines[size_t(t.line - 1)].find("TEST_CASE(\"" + t.name) != std::string::npos);
    }
  }
  CHECK(kernels >= 15);  // the .cu files of the ops hold the CUDA kernels
  // Each op's functions declared in reference/ops.hpp are defined in reference/<op>.cpp.
  for (const OpsSection& s : reference_ops_sections())
    for (const std::string& f : s.functions) {
      INFO(s.op << ": " << f);
      CHECK(!find_definitions("reference/" + s.op + ".cpp", f).empty());
    }
  // Each step of the forward flow is found from its taps and its op's reference functions (or its definition).
  for (const std::string& path : {test::real_config(), variant_config()})
    for (const FlowStep& s : forward_flow(load_model(path).sala)) {
      const SourceLine l = step_source(s);
      INFO(s.label << ": " << l.error);
      CHECK(l.found());
      if (!s.op.empty()) CHECK(!s.taps.empty());
    }
  // A tap no line records, or one recorded without a call of the function before it, is an error that says so;
  // a name that is only called, or only declared, has no definition.
  CHECK(find_step("reference/model.cpp", {"nowhere/out"}, {"rmsnorm"}).error.find("no line records") !=
        std::string::npos);
  CHECK(!find_step("reference/model.cpp", {"mlp/out"}, {"gla_chunked"}).found());
  CHECK(find_step("reference/model.cpp", {"mlp/out"}, {"linear"}).found());
  CHECK(!find_step("reference/nonexistent.cpp", {"mlp/out"}, {"linear"}).found());
  CHECK(find_definitions("reference/model.cpp", "residual").empty());
  CHECK(find_definitions("reference/ops.hpp", "gla_chunked").empty());
  CHECK(find_declaration("reference/ops.hpp", "gla_chunked").found());
  CHECK(find_definitions("gpu/runner.cpp", "sparse_layer").size() == 1);
}

TEST_CASE("explain: every __global__ of gpu/ is found by its name, on one line or broken after __launch_bounds__",
          "[explain]") {
  int files = 0, split = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::source_path("gpu"))) {
    if (e.path().extension() != ".cu") continue;
    const std::string rel = "gpu/" + e.path().filename().string();
    const auto& lines = source_file(rel);
    int globals = 0;
    for (const std::string& l : lines) globals += l.rfind("__global__", 0) == 0;
    const std::vector<SourceLine> k = find_kernels(rel);
    INFO(rel);
    CHECK(int(k.size()) == globals);
    for (const SourceLine& l : k) {
      INFO(l.where() << " " << l.name);
      CHECK(l.name.size() > 7);
      CHECK(l.name.rfind("_kernel") == l.name.size() - 7);  // the project's kernels all end so
      CHECK(lines[size_t(l.line - 1)].find(l.name + "(") != std::string::npos);
      split += lines[size_t(l.line - 1)].rfind("__global__", 0) != 0;
    }
    ++files;
  }
  CHECK(files >= 10);
  CHECK(split >= 3);  // select_wgmma.cu's two and gla.cu's are declared across two lines
}

TEST_CASE("explain: an unknown op is an error listing the known ones", "[explain]") {
  const Model m = load_model(test::real_config());
  const std::string e = test::error_of([&] { explain(m, "attention", 4096); });
  CHECK(e.find("unknown op 'attention'") != std::string::npos);
  for (const std::string& n : explain_names()) CHECK(e.find(n) != std::string::npos);
  CHECK(test::error_of([&] {
          explain(load_model(test::source_path("scenarios/models/qwen3-8b.json")), "gla", 4096);
        }).find("not a MiniCPM-SALA config") != std::string::npos);
}

TEST_CASE("explain: the text card and its JSON carry the same numbers, equations also in LaTeX", "[explain]") {
  const Model m = load_model(test::real_config());
  for (const std::string& name : explain_names()) {
    const OpCard card = explain(m, name, 1 << 20);
    const std::string text = format_card(card);
    const nlohmann::json j = card_json(card);
    INFO(name);
    CHECK(j["op"] == name);
    CHECK(j["params"]["total"] == card.params_total);
    REQUIRE(j["equation"].size() == card.equation.size());
    for (const auto& e : j["equation"]) {
      CHECK(!e["text"].get<std::string>().empty());
      CHECK(!e["latex"].get<std::string>().empty());
    }
    CHECK(text.find(commas(card.params_total)) != std::string::npos);
    for (const TapRow& t : card.taps) CHECK(text.find(t.kind) != std::string::npos);
    for (const SourceLine& l : card.reference) CHECK(text.find(l.where()) != std::string::npos);
    CHECK(text.find("NOT FOUND") == std::string::npos);
  }
}
