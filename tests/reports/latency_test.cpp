// The latency model: closed-form position sums against brute force, FLOP counts against hand calculations
// (docs/performance.md), the quadratic selection term, the 6144-key cap, and the floors on the H200.
#include <algorithm>
#include <cmath>

#include "model/memory.hpp"
#include "reports/latency.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;
using namespace salasim::reports;

namespace {

double op_sum(const std::vector<OpCost>& ops, const char* name, double OpCost::*field) {
  double s = 0;
  for (const OpCost& o : ops)
    if (std::string(o.op) == name) s += o.*field;
  return s;
}

double class_sum(const std::vector<OpTotal>& ops, OpClass c, double OpTotal::*field) {
  double s = 0;
  for (const OpTotal& o : ops)
    if (o.cls == c) s += o.*field;
  return s;
}

}  // namespace

TEST_CASE("op costs: closed-form position sums equal brute-force sums", "[latency]") {
  // Odd ranges around the 6144 / 8192 switches and the pooling edges.
  const int64_t ranges[][2] = {{0, 1},       {0, 63},      {5, 200},     {30, 33},      {100, 8193},
                               {6100, 6200}, {6143, 6145}, {8191, 8193}, {16384, 20000}};
  for (const auto& r : ranges) {
    const int64_t a = r[0], b = r[1];
    double causal = 0, k1 = 0, k2 = 0, blocks = 0, sel = 0;
    for (int64_t p = a; p < b; ++p) {
      causal += double(p + 1);
      for (int64_t c = 0; 16 * c + 31 <= p; ++c) k1 += 1;   // V1(p) of docs/spec.md §4.3
      for (int64_t e = 0; 64 * e + 127 <= p; ++e) k2 += 1;  // V2(p)
      blocks += double(p / 64 + 1);
      const int64_t qb = p / 64;
      sel += qb < 96 ? double(p + 1) : double(95 * 64 + p % 64 + 1);  // 95 full blocks + the query's own
    }
    INFO(a << ".." << b);
    CHECK(sum_causal_keys(a, b) == causal);
    CHECK(sum_visible_windows(a, b, 32, 16) == k1);
    CHECK(sum_visible_windows(a, b, 128, 64) == k2);
    CHECK(sum_causal_blocks(a, b, 64) == blocks);
    CHECK(sum_selected_keys(a, b, 64, 96) == sel);
  }
}

TEST_CASE("latency: GEMMs are 2 x the layer weights per token, plus the lm_head once", "[latency]") {
  const Model s = load_model("scenarios/models/minicpm-sala-9b.json");
  const HwProfile hw = load_hw("h200");
  // Layer matrices = total - embed - lm_head - norms (docs/spec.md §6): docs/performance.md's 8,875,517,952 less
  // 370,688 norm weights, which are not GEMM operands.
  const double layer_params = 9477203968.0 - 2 * 300843008.0 - (262144 + 4096 + 24 * (128 + 128 + 4096));
  const int64_t N = 65536;
  const std::vector<OpTotal> ops = prefill_ops(s, WeightFormat::Bf16, hw, N, 16384);
  CHECK(class_sum(ops, OpClass::Gemm, &OpTotal::flops) == 2 * layer_params * N + 2.0 * 73448 * 4096);
  // Decode reads every GEMM weight once: bf16 bytes less the embedding (a gather) and the norm weights (read by
  // the elementwise kernels), plus activations.
  double io = 0;
  for (const GemmGroup& g : s.gemms) io += g.io_elems * 2;
  const auto step = call_costs(s, WeightFormat::Bf16, N, N + 1, true);
  double gemm_bytes = 0;
  for (const OpCost& o : step)
    if (o.cls == OpClass::Gemm) gemm_bytes += o.bytes;
  const double norm_bytes = 2.0 * (262144 + 4096 + 24 * (128 + 128 + 4096));
  CHECK(gemm_bytes == double(weight_bytes_bf16(s.sala)) - 2.0 * 73448 * 4096 - norm_bytes + io);
}

TEST_CASE("latency: block selection is quadratic, 2560 N^2 FLOP and 10 N^2 exponentials", "[latency]") {
  const Model s = load_model("scenarios/models/minicpm-sala-9b.json");
  const HwProfile hw = load_hw("h200");
  for (int64_t N : {int64_t(65536), int64_t(1) << 20, int64_t(2097152)}) {
    INFO(N);
    const std::vector<OpTotal> ops = prefill_ops(s, WeightFormat::Bf16, hw, N, 16384);
    const double f = class_sum(ops, OpClass::Select, &OpTotal::flops);
    const double e = class_sum(ops, OpClass::Select, &OpTotal::exps);
    // 8 layers x 32 heads x 256 FLOP per visible K1/K2 entry; entries at p are in [5p/64 - 4, 5(p+1)/64], so
    // the sum lies between 2560 N(N-1) - 8*32*256*4 N and 2560 N(N+1).
    const double n = double(N);
    CHECK(f <= 2560 * n * (n + 1));
    CHECK(f >= 2560 * n * (n - 1) - 8.0 * 32 * 256 * 4 * n);
    CHECK(e * 256 == f);  // one exponential per scored entry and head
  }
  // Doubling the prompt doubles the GEMMs but quadruples selection (up to the linear terms bounded above).
  const auto a = prefill_ops(s, WeightFormat::Bf16, hw, 1 << 20, 16384);
  const auto b = prefill_ops(s, WeightFormat::Bf16, hw, 1 << 21, 16384);
  const double r_sel = class_sum(b, OpClass::Select, &OpTotal::flops) / class_sum(a, OpClass::Select, &OpTotal::flops);
  const double r_gemm = class_sum(b, OpClass::Gemm, &OpTotal::flops) / class_sum(a, OpClass::Gemm, &OpTotal::flops);
  CHECK(r_sel > 3.99);
  CHECK(r_sel < 4.01);
  CHECK(r_gemm > 1.99);
  CHECK(r_gemm < 2.01);
}

TEST_CASE("latency: sparse attention reads at most 6144 keys per query", "[latency]") {
  const Model s = load_model("scenarios/models/minicpm-sala-9b.json");
  const double per_key = 8.0 * 32 * 4 * 128;  // 8 layers x 32 heads x (QK + PV) x 128
  for (int64_t p : {int64_t(8191), int64_t(100000), int64_t(1) << 20, int64_t(2097151)}) {
    INFO(p);
    const auto ops = call_costs(s, WeightFormat::Bf16, p, p + 1, true);
    const double keys = op_sum(ops, "sparse_attn", &OpCost::flops) / per_key;
    CHECK(keys <= 6144);
    CHECK(keys >= 95 * 64 + 1);
    CHECK(op_sum(ops, "dense_attn", &OpCost::flops) == 0);
  }
  // Below dense_len the sparse layers attend densely to every causal key.
  const auto ops = call_costs(s, WeightFormat::Bf16, 0, 8191, true);
  CHECK(op_sum(ops, "dense_attn", &OpCost::flops) == per_key * 8191.0 * 8192 / 2);
  CHECK(op_sum(ops, "select_blocks", &OpCost::flops) == 0);
}

TEST_CASE("latency: the comparator's dense attention is 4 H d per causal key per layer", "[latency]") {
  const Model q = load_model("scenarios/models/qwen3-8b.json");
  const auto ops = call_costs(q, WeightFormat::Bf16, 0, 65536, true);
  CHECK(op_sum(ops, "dense_attn", &OpCost::flops) == 36.0 * 32 * 4 * 128 * (65536.0 * 65537 / 2));
  CHECK(op_sum(ops, "dense_attn", &OpCost::exps) == 36.0 * 32 * (65536.0 * 65537 / 2));
}

TEST_CASE("latency: H200 floors reproduce docs/performance.md's TTFT table to its rounding", "[latency]") {
  const Model s = load_model("scenarios/models/minicpm-sala-9b.json");
  const HwProfile hw = load_hw("h200");
  auto tenth = [](double x) { return std::round(x * 10) / 10; };
  // docs/performance.md: 1M: GEMMs 23.7 s, selection 3.6 s, sparse attention 1.1 s, Lightning bytes 0.2 s.
  LatencyPrediction p = predict_latency(s, WeightFormat::Bf16, hw, Efficiency{}, 1 << 20, 1, 16384);
  CHECK(tenth(p.prefill_floor_s[int(OpClass::Gemm)]) == 23.7);
  CHECK(tenth(p.prefill_floor_s[int(OpClass::Select)]) == 3.6);
  CHECK(tenth(p.prefill_floor_s[int(OpClass::SparseAttn)]) == 1.1);
  CHECK(tenth(p.prefill_floor_s[int(OpClass::Gla)]) == 0.2);
  // 2048K: 47.4, 14.3, 2.2 (2.1 here: the last block's partial keys), 0.4.
  p = predict_latency(s, WeightFormat::Bf16, hw, Efficiency{}, 1 << 21, 1, 16384);
  CHECK(tenth(p.prefill_floor_s[int(OpClass::Gemm)]) == 47.4);
  CHECK(tenth(p.prefill_floor_s[int(OpClass::Select)]) == 14.3);
  CHECK(tenth(p.prefill_floor_s[int(OpClass::Gla)]) == 0.4);
  // Decode floor: all bf16 weights once at 4.3 TB/s, about 4.3 ms/token, nearly flat in context.
  const double d1 = 1e3 * decode_step_floor(s, WeightFormat::Bf16, hw, 4096);
  const double d2 = 1e3 * decode_step_floor(s, WeightFormat::Bf16, hw, 1 << 20);
  CHECK(tenth(d1) == 4.3);
  // What grows with context is the selection traffic: 320 B of compressed keys and ~5 B of scores per token.
  CHECK(d2 > d1);
  CHECK(d2 - d1 < 1e3 * 400.0 * double(1 << 20) / hw.bandwidth);
}

TEST_CASE("latency: efficiency factors divide the floors; E2E adds decode steps", "[latency]") {
  const Model s = load_model("scenarios/models/minicpm-sala-9b.json");
  const HwProfile hw = load_hw("h200");
  Efficiency eff;
  eff.prefill[int(OpClass::Gemm)] = 0.5;
  eff.decode = 0.25;
  const LatencyPrediction floor = predict_latency(s, WeightFormat::Bf16, hw, Efficiency{}, 65536, 3, 16384);
  const LatencyPrediction p = predict_latency(s, WeightFormat::Bf16, hw, eff, 65536, 3, 16384);
  CHECK(p.prefill_s[int(OpClass::Gemm)] == 2 * floor.prefill_s[int(OpClass::Gemm)]);
  CHECK(p.prefill_s[int(OpClass::Select)] == floor.prefill_s[int(OpClass::Select)]);
  CHECK(p.decode_ms == 4 * floor.decode_ms);
  // 3 generated tokens: the first from the prefill, two decode steps at positions 65536 and 65537.
  const double steps =
      decode_step_floor(s, WeightFormat::Bf16, hw, 65536) + decode_step_floor(s, WeightFormat::Bf16, hw, 65537);
  CHECK(floor.e2e_s == floor.ttft_s + steps);
  // W4A16 changes weight bytes only: same prefill FLOPs, faster decode.
  const LatencyPrediction w4 = predict_latency(s, WeightFormat::W4A16, hw, Efficiency{}, 65536, 3, 16384);
  CHECK(w4.prefill_floor_s[int(OpClass::Gemm)] == floor.prefill_floor_s[int(OpClass::Gemm)]);
  CHECK(w4.decode_floor_ms < floor.decode_floor_ms / 2);
}
