// Memory and latency sweeps rendered as tables and JSON.
#include "reports/sweep.hpp"

#include <fmt/format.h>

#include "model/memory.hpp"
#include "reports/context.hpp"
#include "reports/latency.hpp"
#include "model/data_path.hpp"

namespace salasim::reports {

namespace {

std::string common_args(const Sweep& s, int64_t context) {
  std::string a;
  for (const Model& m : s.models) a += " --config " + source_relative(m.path);
  std::string formats;
  for (WeightFormat f : s.formats) formats += std::string(formats.empty() ? "" : ",") + weight_format_name(f);
  if (formats != "bf16") a += " --weights " + formats;
  // A profile from reports/hw/ is named; any other file is given by its path.
  const std::string hw_rel = source_relative(s.hw.file);
  a += " --hw " + (hw_rel == "reports/hw/" + s.hw.name + ".json" ? s.hw.name : hw_rel);
  a += " --context " + context_label(context);
  if (s.ws.chunk != WorkspaceParams{}.chunk) a += fmt::format(" --chunk {}", s.ws.chunk);
  return a;
}

bool has_paper(const PaperData* paper, const std::string& gpu) {
  if (!paper) return false;
  for (const PaperPoint& p : paper->points)
    if (p.gpu == gpu) return true;
  return false;
}

}  // namespace

bool fits(const MemoryBreakdown& b, const HwProfile& hw) { return b.peak() <= hw.memory_bytes; }

std::string memory_command(const Sweep& s, int64_t context) {
  return "salasim model memory" + common_args(s, context);
}

std::string latency_command(const Sweep& s, int64_t context) {
  std::string c = "salasim model latency" + common_args(s, context);
  if (s.decode_tokens != 1024) c += fmt::format(" --decode-tokens {}", s.decode_tokens);
  if (s.floor) c += " --floor";
  return c;
}

Table memory_table(const Sweep& s) {
  Table t;
  t.header = {"model", "weights", "context", "weights GiB", "KV GiB", "K1+K2 GiB", "GLA state GiB", "workspace GiB",
              "peak GiB", fmt::format("{} GiB", s.hw.name), "fits", "command"};
  for (const Model& m : s.models)
    for (WeightFormat f : s.formats)
      for (int64_t ctx : s.contexts) {
        const MemoryBreakdown b = memory_breakdown(m, f, ctx, s.ws);
        t.rows.push_back({m.name, weight_format_name(f), context_label(ctx), gib(b.weight_bytes), gib(b.kv_bytes),
                          gib(b.compressed_key_bytes), gib(b.gla_state_bytes), gib(b.workspace_bytes), gib(b.peak()),
                          gib(s.hw.memory_bytes), fits(b, s.hw) ? "yes" : "OOM", memory_command(s, ctx)});
      }
  return t;
}

nlohmann::json memory_json(const Sweep& s) {
  nlohmann::json j;
  j["hw"] = {{"name", s.hw.name}, {"file", source_relative(s.hw.file)}, {"memory_bytes", s.hw.memory_bytes}};
  j["chunk"] = s.ws.chunk;
  for (const Model& m : s.models) {
    nlohmann::json jm;
    jm["config"] = source_relative(m.path);
    jm["model"] = m.name;
    jm["kv_bytes_per_token"] = model_kv_bytes_per_token(m);
    if (m.kind == ModelKind::Sala) {
      jm["compressed_key_bytes_per_token"] = k1_bytes_per_token(m.sala) + k2_bytes_per_token(m.sala);
      jm["gla_state_bytes"] = gla_state_bytes(m.sala);
    }
    for (WeightFormat f : s.formats) {
      jm["weight_bytes"][weight_format_name(f)] = model_weight_bytes(m, f);
      for (int64_t ctx : s.contexts) {
        const MemoryBreakdown b = memory_breakdown(m, f, ctx, s.ws);
        nlohmann::json r = {{"weights", weight_format_name(f)},
                            {"context", ctx},
                            {"chunk", b.chunk},
                            {"weight_bytes", b.weight_bytes},
                            {"kv_bytes", b.kv_bytes},
                            {"compressed_key_bytes", b.compressed_key_bytes},
                            {"gla_state_bytes", b.gla_state_bytes},
                            {"workspace_bytes", b.workspace_bytes},
                            {"peak_bytes", b.peak()},
                            {"fits", fits(b, s.hw)},
                            {"command", memory_command(s, ctx)}};
        for (const WorkspaceTerm& w : b.workspace_terms)
          r["workspace_terms"].push_back(
              {{"name", w.name}, {"shape", w.shape}, {"phase", w.phase}, {"bytes", w.bytes}, {"why", w.why}});
        jm["rows"].push_back(r);
      }
    }
    j["models"].push_back(jm);
  }
  return j;
}

Table latency_table(const Sweep& s, const Efficiency& eff, const PaperData* paper) {
  const bool with_paper = has_paper(paper, s.hw.name);
  Table t;
  t.header = {"model", "weights", "context", "TTFT s"};
  for (int c = 0; c < kOpClasses; ++c) t.header.push_back(std::string(op_class_name(op_class(c))) + " s");
  t.header.insert(t.header.end(), {"decode ms/token", fmt::format("E2E s (+{} tok)", s.decode_tokens), "memory"});
  if (with_paper) t.header.insert(t.header.end(), {"paper TTFT s", "pred/paper", "paper E2E s", "pred/paper"});
  t.header.push_back("command");
  for (const Model& m : s.models)
    for (WeightFormat f : s.formats)
      for (int64_t ctx : s.contexts) {
        const LatencyPrediction p = predict_latency(m, f, s.hw, eff, ctx, s.decode_tokens, s.ws.chunk);
        const MemoryBreakdown b = memory_breakdown(m, f, ctx, s.ws);
        std::vector<std::string> r = {m.name, weight_format_name(f), context_label(ctx), seconds(p.ttft_s)};
        for (double x : p.prefill_s) r.push_back(seconds(x));
        r.insert(r.end(), {millis(p.decode_ms), seconds(p.e2e_s), fits(b, s.hw) ? "fits" : "OOM"});
        if (with_paper) {
          const PaperPoint* pp = find_paper(*paper, s.hw.name, m.name, f, ctx);
          if (!pp) r.insert(r.end(), {"-", "-", "-", "-"});
          else if (pp->oom) r.insert(r.end(), {"OOM", "-", "OOM", "-"});
          else
            r.insert(r.end(), {seconds(pp->ttft_s), ratio(p.ttft_s / pp->ttft_s), seconds(pp->e2e_s),
                               ratio(p.e2e_s / pp->e2e_s)});
        }
        r.push_back(latency_command(s, ctx));
        t.rows.push_back(std::move(r));
      }
  return t;
}

nlohmann::json latency_json(const Sweep& s, const Efficiency& eff, const PaperData* paper) {
  nlohmann::json j;
  j["hw"] = {{"name", s.hw.name}, {"file", source_relative(s.hw.file)}, {"bf16_tensor_flops", s.hw.bf16_flops},
             {"memory_bandwidth_bytes_per_s", s.hw.bandwidth}, {"exp_per_s", s.hw.exp_per_s}};
  for (int c = 0; c < kOpClasses; ++c) j["efficiency"][op_class_name(op_class(c))] = eff.prefill[c];
  j["efficiency"]["decode"] = eff.decode;
  for (int c = 0; c < kOpClasses; ++c)  // what each decode class uses: its own factor where fitted, else `decode`
    j["efficiency"]["decode_by_class"][op_class_name(op_class(c))] = eff.decode_of(c);
  j["chunk"] = s.ws.chunk;
  j["decode_tokens"] = s.decode_tokens;
  for (const Model& m : s.models)
    for (WeightFormat f : s.formats)
      for (int64_t ctx : s.contexts) {
        const LatencyPrediction p = predict_latency(m, f, s.hw, eff, ctx, s.decode_tokens, s.ws.chunk);
        const MemoryBreakdown b = memory_breakdown(m, f, ctx, s.ws);
        nlohmann::json r = {{"config", source_relative(m.path)}, {"model", m.name}, {"weights", weight_format_name(f)},
                            {"context", ctx}, {"ttft_s", p.ttft_s}, {"decode_ms_per_token", p.decode_ms},
                            {"decode_floor_ms_per_token", p.decode_floor_ms}, {"e2e_s", p.e2e_s},
                            {"peak_bytes", b.peak()}, {"fits", fits(b, s.hw)}, {"command", latency_command(s, ctx)}};
        for (int c = 0; c < kOpClasses; ++c) {
          r["prefill_s"][op_class_name(op_class(c))] = p.prefill_s[c];
          r["prefill_floor_s"][op_class_name(op_class(c))] = p.prefill_floor_s[c];
        }
        for (const OpTotal& o : p.ops)
          r["prefill_ops"].push_back({{"op", o.op}, {"class", op_class_name(o.cls)}, {"flops", o.flops},
                                      {"bytes", o.bytes}, {"exps", o.exps}, {"floor_s", o.floor_s}});
        if (const PaperPoint* pp = paper ? find_paper(*paper, s.hw.name, m.name, f, ctx) : nullptr) {
          r["paper"] = pp->oom ? nlohmann::json{{"oom", true}}
                               : nlohmann::json{{"ttft_s", pp->ttft_s}, {"e2e_s", pp->e2e_s},
                                                {"ttft_ratio", p.ttft_s / pp->ttft_s}, {"e2e_ratio", p.e2e_s / pp->e2e_s}};
        }
        j["rows"].push_back(r);
      }
  return j;
}

Table measured_table(const std::vector<MeasuredRun>& runs, const HwProfile& hw, const Efficiency& eff) {
  Table t;
  t.header = {"date", "config", "context", "TTFT s measured", "predicted", "pred/meas", "decode ms measured",
              "predicted", "pred/meas", "peak GiB measured", "planner", "predicted", "pred/meas", "command"};
  for (const MeasuredRun& run : runs) {
    const Model m = load_model(run.config);
    const WeightFormat f = parse_weight_format(run.weights, fmt::format("measured run '{}': weights", run.command));
    const LatencyPrediction p = predict_latency(m, f, hw, eff, run.context, run.decode_tokens, run.chunk);
    WorkspaceParams ws;
    ws.chunk = run.chunk;
    const MemoryBreakdown b = memory_breakdown(m, f, run.context, ws);
    std::vector<std::string> r = {run.date, source_relative(run.config), context_label(run.context),
                                  seconds(run.ttft_s), seconds(p.ttft_s), ratio(p.ttft_s / run.ttft_s)};
    if (run.decode_ms_per_token)
      r.insert(r.end(), {millis(*run.decode_ms_per_token), millis(p.decode_ms),
                         ratio(p.decode_ms / *run.decode_ms_per_token)});
    else
      r.insert(r.end(), {"-", millis(p.decode_ms), "-"});
    r.insert(r.end(), {gib(run.peak_vram_bytes), gib(run.planner_peak_bytes), gib(b.peak()),
                       run.peak_vram_bytes > 0 ? ratio(double(b.peak()) / double(run.peak_vram_bytes)) : "-",
                       code(run.command)});
    t.rows.push_back(std::move(r));
  }
  return t;
}

}  // namespace salasim::reports
