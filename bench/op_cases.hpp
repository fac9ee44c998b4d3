// One table of GPU op cases, in the spirit of ggml's test-backend-ops: for every op of the registry (ops/op.hpp), how
// its inputs are made (counter-based random bf16, identical on host and device), the GPU call, the reference check
// (float64 truth and bf16 peer, gated by the op's tolerance row) and its FLOPs, bytes and exponentials (the op's cost
// formula, ops/cost.hpp, the latency model's). The GPU op tests (tests/gpu/op_cases_test.cpp) check every case at a
// small context; the Google Benchmark suite (bench/ops_bench.cpp) times every case at 16K, 256K and 1M. A case is
// named NAME[.variant], NAME an op of the registry (every op has at least one case; tests/ops/registry_test.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu/common.hpp"
#include "ops/cost.hpp"

namespace salasim::bench {

struct CheckResult {
  bool pass = false;
  std::string report;  // the verdict table (or the selection summary) for a failure message
};

struct OpCase {
  std::string op;         // NAME[.variant]: "gla", "sparse_attn.decode", "linear.qkvz.decode.cublas", ...
  std::string shape;      // "T=1048576 H=32 hd=128"
  std::string tolerance;  // the tolerance row that gates it (compare/tolerance.cpp)
  int64_t context = 0;    // the sequence length the case stands for
  op::Work work;          // one run: the op's cost formula (ops/cost.hpp)
  std::function<void(gpu::Stream)> run;  // the GPU call, inputs already on the device
  // Refills the inputs, runs once, compares sampled rows with the float64 reference and the peer.
  std::function<CheckResult()> check;
  std::shared_ptr<void> state;  // device buffers the calls use
  std::string id() const { return op + " " + shape; }
};

// Every case name, in the registry's op order.
const std::vector<std::string>& op_names();
// The registry's op a case belongs to: "linear.qkvz.decode" -> "linear".
std::string base_op(const std::string& name);
// The case of `op` at `context` tokens (prefill ops process the 16K-token chunk that ends there; gla the whole
// context in one call, as fla's chunk_simple_gla is timed; elementwise ops and GEMMs a 16K chunk).
OpCase make_case(const std::string& op, int64_t context, uint64_t seed = 1);

// Seconds of the op at the measured H200 ceilings (reports/hw/h200.json): max(FLOP / peak, bytes / bandwidth,
// exp / exp rate).
double floor_seconds(const OpCase& c);

}  // namespace salasim::bench
