// The report's tables: predictions, the paper's numbers and measured runs side by side, with ratios.
#include "reports/report_tables.hpp"

#include <fmt/format.h>

#include <limits>

#include "model/memory.hpp"
#include "reports/latency.hpp"
#include "model/data_path.hpp"

namespace salasim::reports {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

std::string label(const Model& m, WeightFormat f) { return fmt::format("{} {}", m.name, weight_format_name(f)); }

// --- tables --------------------------------------------------------------------------------------------------

Table hardware_table(const std::vector<Card>& cards) {
  Table t;
  t.header = {"profile", "GPU", "memory GiB", "bf16 TFLOP/s", "bandwidth TB/s", "exp/s", "efficiency", "file",
              "command"};
  for (const Card& c : cards)
    t.rows.push_back({c.hw.name, c.hw.gpu, gib(c.hw.memory_bytes), fmt::format("{:.1f}", c.hw.bf16_flops / 1e12),
                      fmt::format("{:.3f}", c.hw.bandwidth / 1e12), fmt::format("{:.3g}", c.hw.exp_per_s),
                      c.fit.calibrated() ? "fitted" : "1.0 (floor)", code(source_relative(c.hw.file)),
                      code(fmt::format("salasim model latency --hw {} --context 64K --json", c.hw.name))});
  return t;
}

Table facts_table(const std::vector<Model>& models, const ReportOptions& o) {
  Table t;
  t.header = {"model", "weights bf16 B", "weights W4A16 B", "KV B/token", "K1+K2 B/token", "GLA state B", "command"};
  for (const Model& m : models) {
    const bool sala = m.kind == ModelKind::Sala;
    t.rows.push_back(
        {m.name, fmt::format("{}", model_weight_bytes(m, WeightFormat::Bf16)),
         fmt::format("{}", model_weight_bytes(m, WeightFormat::W4A16)), fmt::format("{}", model_kv_bytes_per_token(m)),
         sala ? fmt::format("{:g}", k1_bytes_per_token(m.sala) + k2_bytes_per_token(m.sala)) : "-",
         sala ? fmt::format("{}", gla_state_bytes(m.sala)) : "-",
         code(fmt::format("salasim model memory --config {} --weights bf16,w4a16 --context {} --json",
                          source_relative(m.path), context_label(o.contexts.back())))});
  }
  return t;
}

Table workspace_table(const Model& m, int64_t context, const ReportOptions& o) {
  const MemoryBreakdown b = memory_breakdown(m, WeightFormat::Bf16, context, o.ws);
  const std::string cmd = code(fmt::format("salasim model memory --config {} --context {} --json",
                                           source_relative(m.path), context_label(context)));
  Table t;
  t.header = {"term", "shape", "phase", "MiB", "what", "command"};
  for (const WorkspaceTerm& w : b.workspace_terms)
    t.rows.push_back({w.name, w.shape, w.phase, fmt::format("{:.1f}", double(w.bytes) / (1 << 20)), w.why, cmd});
  t.rows.push_back({"**peak**", "all + largest phase", "", fmt::format("{:.1f}", double(b.workspace_bytes) / (1 << 20)),
                    "", cmd});
  return t;
}

Table vram_table(const Sweep& s) {
  Table t;
  t.header = {"context"};
  for (const Model& m : s.models)
    for (WeightFormat f : s.formats) t.header.push_back(label(m, f) + " GiB");
  t.header.push_back("command");
  for (int64_t ctx : s.contexts) {
    std::vector<std::string> r{context_label(ctx)};
    for (const Model& m : s.models)
      for (WeightFormat f : s.formats) {
        const MemoryBreakdown b = memory_breakdown(m, f, ctx, s.ws);
        r.push_back(fits(b, s.hw) ? gib(b.peak()) : gib(b.peak()) + " **OOM**");
      }
    r.push_back(code(memory_command(s, ctx)));
    t.rows.push_back(std::move(r));
  }
  return t;
}

// SALA beside the comparator: TTFT, decode and E2E per model, one row per (weights, context).
Table latency_wide_table(const Sweep& s, const Efficiency& eff) {
  Table t;
  t.header = {"weights", "context"};
  for (const Model& m : s.models)
    t.header.insert(t.header.end(), {m.name + " TTFT s", m.name + " decode ms/tok",
                                     fmt::format("{} E2E s", m.name)});
  if (s.models.size() == 2) t.header.push_back("TTFT ratio " + s.models[1].name + "/" + s.models[0].name);
  t.header.push_back("command");
  for (WeightFormat f : s.formats)
    for (int64_t ctx : s.contexts) {
      std::vector<std::string> r{weight_format_name(f), context_label(ctx)};
      std::vector<double> ttft;
      for (const Model& m : s.models) {
        const MemoryBreakdown b = memory_breakdown(m, f, ctx, s.ws);
        if (!fits(b, s.hw)) {
          r.insert(r.end(), {"OOM", "OOM", "OOM"});
          ttft.push_back(kNaN);
          continue;
        }
        const LatencyPrediction p = predict_latency(m, f, s.hw, eff, ctx, s.decode_tokens, s.ws.chunk);
        r.insert(r.end(), {seconds(p.ttft_s), millis(p.decode_ms), seconds(p.e2e_s)});
        ttft.push_back(p.ttft_s);
      }
      if (s.models.size() == 2) r.push_back(ratio(ttft[1] / ttft[0]));
      Sweep one = s;
      one.formats = {f};
      r.push_back(code(latency_command(one, ctx)));
      t.rows.push_back(std::move(r));
    }
  return t;
}

// Predictions next to the paper's published numbers, for the contexts the paper has.
Table paper_table(const Sweep& s, const Efficiency& eff, const PaperData& paper) {
  Table t;
  t.header = {"model", "weights", "context", "TTFT s predicted", "paper", "pred/paper", "E2E s predicted", "paper",
              "pred/paper", "memory predicted", "paper", "command"};
  for (const Model& m : s.models)
    for (WeightFormat f : s.formats)
      for (const PaperPoint& pp : paper.points) {
        if (pp.gpu != s.hw.name || pp.model != m.name || pp.weights != f) continue;
        const LatencyPrediction p = predict_latency(m, f, s.hw, eff, pp.context, paper.decode_tokens, s.ws.chunk);
        const MemoryBreakdown b = memory_breakdown(m, f, pp.context, s.ws);
        const std::string mem = fits(b, s.hw) ? fmt::format("fits ({} GiB)", gib(b.peak()))
                                              : fmt::format("**OOM** ({} GiB)", gib(b.peak()));
        Sweep one = s;
        one.models = {m};
        one.formats = {f};
        one.decode_tokens = paper.decode_tokens;
        std::vector<std::string> r{m.name, weight_format_name(f), context_label(pp.context), seconds(p.ttft_s)};
        if (pp.oom)
          r.insert(r.end(), {"OOM", "-", seconds(p.e2e_s), "OOM", "-", mem, "OOM"});
        else
          r.insert(r.end(), {seconds(pp.ttft_s), ratio(p.ttft_s / pp.ttft_s), seconds(p.e2e_s), seconds(pp.e2e_s),
                             ratio(p.e2e_s / pp.e2e_s), mem, "ran"});
        r.push_back(code(latency_command(one, pp.context)));
        t.rows.push_back(std::move(r));
      }
  return t;
}

// Floors per op class, the analogue of docs/performance.md's TTFT floor table.
Table breakdown_table(const Sweep& s) {
  Table t;
  t.header = {"model", "context"};
  for (int c = 0; c < kOpClasses; ++c) t.header.push_back(std::string(op_class_name(op_class(c))) + " s");
  t.header.insert(t.header.end(), {"TTFT floor s", "decode floor ms/tok", "command"});
  for (const Model& m : s.models)
    for (int64_t ctx : s.contexts) {
      const LatencyPrediction p = predict_latency(m, WeightFormat::Bf16, s.hw, Efficiency{}, ctx, s.decode_tokens,
                                                  s.ws.chunk);
      std::vector<std::string> r{m.name, context_label(ctx)};
      double total = 0;
      for (double x : p.prefill_floor_s) {
        r.push_back(seconds(x));
        total += x;
      }
      Sweep one = s;
      one.models = {m};
      one.formats = {WeightFormat::Bf16};
      one.floor = true;
      r.insert(r.end(), {seconds(total), millis(p.decode_floor_ms), code(latency_command(one, ctx) + " --json")});
      t.rows.push_back(std::move(r));
    }
  return t;
}

Table efficiency_table(const std::vector<Card>& cards) {
  Table t;
  t.header = {"profile"};
  for (int c = 0; c < kOpClasses; ++c) t.header.push_back(op_class_name(op_class(c)));
  t.header.insert(t.header.end(), {"decode", "from", "command"});
  for (const Card& c : cards) {
    std::vector<std::string> r{c.hw.name};
    for (double e : c.fit.eff.prefill) r.push_back(fmt::format("{:.3f}", e));
    r.push_back(fmt::format("{:.3f}", c.fit.eff.decode));
    r.push_back(c.fit.summary(c.hw.efficiency));
    r.push_back(code(fmt::format("salasim model latency --hw {} --context 64K --json", c.hw.name)));
    t.rows.push_back(std::move(r));
  }
  return t;
}

}  // namespace salasim::reports
