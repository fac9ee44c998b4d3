// The latency model: op costs (op_costs.hpp) turned into seconds with a hardware profile. Each op of each call
// takes max(FLOP / tensor rate, bytes / bandwidth, exps / exp rate) (its roofline floor) divided by its class's
// efficiency; a prefill is the sum over its chunks, a decode step the sum over its ops, each divided by its class's
// decode efficiency (one decode factor for every class unless they were fitted per class).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "reports/hardware.hpp"
#include "reports/op_costs.hpp"

namespace salasim::reports {

using ClassSeconds = std::array<double, kOpClasses>;

double roofline_seconds(const OpCost& op, const HwProfile& hw);
// Which of the three terms of roofline_seconds is the largest: "compute" (FLOPs), "memory" (bytes) or "exp".
const char* roofline_bound(const OpCost& op, const HwProfile& hw);

// One op summed over every chunk of a prefill.
struct OpTotal {
  std::string op;
  OpClass cls = OpClass::Other;
  TermScope scope = TermScope::EveryLayer;
  double flops = 0, bytes = 0, exps = 0;
  double floor_s = 0;  // sum of the per-chunk rooflines
};

std::vector<OpTotal> prefill_ops(const Model& m, WeightFormat f, const HwProfile& hw, int64_t tokens, int64_t chunk);
ClassSeconds class_seconds(const std::vector<OpTotal>& ops);  // floor seconds per class
double decode_step_floor(const Model& m, WeightFormat f, const HwProfile& hw, int64_t position);
ClassSeconds decode_step_class_floor(const Model& m, WeightFormat f, const HwProfile& hw, int64_t position);

struct LatencyPrediction {
  int64_t context = 0;
  int64_t decode_tokens = 0;       // generated tokens: the first comes from the prefill, the rest from decode steps
  ClassSeconds prefill_floor_s{};  // efficiency 1
  ClassSeconds prefill_s{};        // with the efficiency factors
  double ttft_s = 0;
  double decode_floor_ms = 0;  // mean per decode step over the generated tokens (the step at `context` if < 2)
  ClassSeconds decode_floor_class_ms{};  // the same per op class (they add up to decode_floor_ms)
  double decode_ms = 0;                  // sum over classes of floor / Efficiency::decode_of(class)
  double e2e_s = 0;                      // ttft + (decode_tokens - 1) decode steps
  std::vector<OpTotal> ops;              // prefill ops, for --json
};

LatencyPrediction predict_latency(const Model& m, WeightFormat f, const HwProfile& hw, const Efficiency& eff,
                                  int64_t context, int64_t decode_tokens, int64_t chunk);

}  // namespace salasim::reports
