// Roofline times per op, summed over prefill chunks and decode steps.
#include "reports/latency.hpp"

#include <algorithm>

#include "model/error.hpp"
#include "model/limits.hpp"

namespace salasim::reports {

double roofline_seconds(const OpCost& op, const HwProfile& hw) {
  return std::max({op.flops / hw.bf16_flops, op.bytes / hw.bandwidth, op.exps / hw.exp_per_s});
}

const char* roofline_bound(const OpCost& op, const HwProfile& hw) {
  const double f = op.flops / hw.bf16_flops, b = op.bytes / hw.bandwidth, e = op.exps / hw.exp_per_s;
  return f >= b && f >= e ? "compute" : b >= e ? "memory" : "exp";
}

std::vector<OpTotal> prefill_ops(const Model& m, WeightFormat f, const HwProfile& hw, int64_t tokens, int64_t chunk) {
  if (tokens <= 0) fail("prefill of {} tokens: expected at least one token", tokens);
  if (chunk <= 0) fail("--chunk {}: expected a positive chunk size", chunk);
  if ((tokens - 1) / chunk + 1 > kMaxPrefillCalls)
    fail(
        "--chunk {}: a prefill of {} tokens would take {} chunks, more than the {} the latency model sums; use a "
        "larger --chunk",
        chunk, tokens, (tokens - 1) / chunk + 1, kMaxPrefillCalls);
  std::vector<OpTotal> out;
  for (int64_t s = 0; s < tokens; s += chunk) {
    const int64_t e = std::min(tokens, s + chunk);
    for (const OpCost& op : call_costs(m, f, s, e, e == tokens)) {
      auto it = std::find_if(out.begin(), out.end(), [&](const OpTotal& t) { return t.op == op.op; });
      if (it == out.end()) {
        out.push_back(OpTotal{op.op, op.cls, op.scope});
        it = out.end() - 1;
      }
      it->flops += op.flops;
      it->bytes += op.bytes;
      it->exps += op.exps;
      it->floor_s += roofline_seconds(op, hw);
    }
  }
  return out;
}

ClassSeconds class_seconds(const std::vector<OpTotal>& ops) {
  ClassSeconds s{};
  for (const OpTotal& t : ops) s[int(t.cls)] += t.floor_s;
  return s;
}

ClassSeconds decode_step_class_floor(const Model& m, WeightFormat f, const HwProfile& hw, int64_t position) {
  ClassSeconds s{};
  for (const OpCost& op : call_costs(m, f, position, position + 1, true)) s[int(op.cls)] += roofline_seconds(op, hw);
  return s;
}

double decode_step_floor(const Model& m, WeightFormat f, const HwProfile& hw, int64_t position) {
  double s = 0;
  for (double c : decode_step_class_floor(m, f, hw, position)) s += c;
  return s;
}

LatencyPrediction predict_latency(const Model& m, WeightFormat f, const HwProfile& hw, const Efficiency& eff,
                                  int64_t context, int64_t decode_tokens, int64_t chunk) {
  LatencyPrediction p;
  p.context = context;
  p.decode_tokens = decode_tokens;
  p.ops = prefill_ops(m, f, hw, context, chunk);
  p.prefill_floor_s = class_seconds(p.ops);
  for (int i = 0; i < kOpClasses; ++i) {
    p.prefill_s[i] = p.prefill_floor_s[i] / eff.prefill[i];
    p.ttft_s += p.prefill_s[i];
  }
  if (decode_tokens < 0 || decode_tokens > kMaxDecodeTokens)
    fail("--decode-tokens {}: expected a count in [0, {}]", decode_tokens, kMaxDecodeTokens);
  // Decode steps at positions context .. context + decode_tokens - 2.
  ClassSeconds steps_floor{};
  for (int64_t i = 0; i + 1 < decode_tokens; ++i) {
    const ClassSeconds one = decode_step_class_floor(m, f, hw, context + i);
    for (int c = 0; c < kOpClasses; ++c) steps_floor[c] += one[c];
  }
  const int64_t steps = std::max<int64_t>(decode_tokens - 1, 0);
  const ClassSeconds mean_floor = steps > 0 ? steps_floor : decode_step_class_floor(m, f, hw, context);
  double steps_s = 0;
  for (int c = 0; c < kOpClasses; ++c) {
    p.decode_floor_class_ms[c] = 1e3 * mean_floor[c] / double(std::max<int64_t>(steps, 1));
    p.decode_floor_ms += p.decode_floor_class_ms[c];
    p.decode_ms += p.decode_floor_class_ms[c] / eff.decode_of(c);
    steps_s += steps_floor[c] / eff.decode_of(c);
  }
  p.e2e_s = p.ttft_s + steps_s;
  return p;
}

}  // namespace salasim::reports
