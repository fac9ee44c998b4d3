// One table of GPU op cases, in the spirit of ggml's test-backend-ops: for every op of the CUDA path, how its
// inputs are made (counter-based random bf16, identical on host and device), the GPU call, the reference check
// (float64 truth and bf16 peer, gated by the op's tolerance row) and its FLOPs, bytes and exponentials (the latency
// model's formulas, reports/op_costs). The GPU op tests (tests/gpu/op_cases_test.cpp) check every case at a small
// context; the Google Benchmark suite (bench/ops_bench.cpp) times every case at 16K, 256K and 1M. Adding an op means
// adding one make_* function here.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/common.hpp"

namespace salasim::bench {

struct CheckResult {
  bool pass = false;
  std::string report;  // the verdict table (or the selection summary) for a failure message
};

struct OpCase {
  std::string op;         // one name everywhere: "gla", "sparse_attn", "select_blocks", ...
  std::string shape;      // "T=1048576 H=32 hd=128"
  std::string tolerance;  // the tolerance row that gates it (compare/tolerance.cpp)
  int64_t context = 0;    // the sequence length the case stands for
  double flops = 0, bytes = 0, exps = 0;  // one run, reports/op_costs conventions (floor traffic)
  std::function<void(gpu::Stream)> run;  // the GPU call, inputs already on the device
  // Refills the inputs, runs once, compares sampled rows with the float64 reference and the peer.
  std::function<CheckResult()> check;
  std::shared_ptr<void> state;  // device buffers the calls use
  std::string id() const { return op + " " + shape; }
};

// Every op of the table, in order.
const std::vector<std::string>& op_names();
// The case of `op` at `context` tokens (prefill ops process the 16K-token chunk that ends there; gla the whole
// context in one call, as fla's chunk_simple_gla is timed; elementwise ops and GEMMs a 16K chunk).
OpCase make_case(const std::string& op, int64_t context, uint64_t seed = 1);

// Seconds of the op at the measured H200 ceilings (reports/hw/h200.json): max(FLOP / peak, bytes / bandwidth,
// exp / exp rate).
double floor_seconds(const OpCase& c);

}  // namespace salasim::bench
