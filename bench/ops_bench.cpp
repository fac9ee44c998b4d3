// Google Benchmark suite of the CUDA path's ops (bench/op_cases.hpp): every op at 16K, 256K and 1M context on the
// full config, timed with CUDA events around each call (manual time), after 3 warm-up calls on inputs that are
// never all zero. Counters per case: FLOP/s and bytes/s achieved (the analytic model's counts over the measured
// median), median_ms, floor_ms (the op at the measured H200 ceilings) and floor_frac = floor / median.
//   ./build/bench/salasim_ops_bench --benchmark_out=bench/out/ops.json --benchmark_out_format=json
// The JSON's context carries the GPU, the date and the command line. The choices these cases decided, each with its
// ratio and commit, are docs/decisions.md.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "bench/op_cases.hpp"
#include "gpu/common.hpp"
#include "model/error.hpp"

namespace {

using salasim::bench::OpCase;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "salasim_ops_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}

void run_case(benchmark::State& state, const std::string& op, int64_t context) {
  OpCase c;
  try {
    c = salasim::bench::make_case(op, context);
  } catch (const salasim::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  for (int i = 0; i < 3; ++i) c.run(s);  // warm-up: module load, cuBLAS heuristics, caches
  check(cudaStreamSynchronize(s), "warm-up");
  std::vector<double> ms;
  for (auto _ : state) {
    check(cudaEventRecord(a, s), "record");
    c.run(s);
    check(cudaEventRecord(b, s), "record");
    check(cudaEventSynchronize(b), "synchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, a, b), "elapsed");
    ms.push_back(t);
    state.SetIterationTime(double(t) * 1e-3);
  }
  check(cudaGetLastError(), "after the runs");
  std::sort(ms.begin(), ms.end());
  const double median = ms.empty() ? 0 : ms[ms.size() / 2];
  const double floor_ms = salasim::bench::floor_seconds(c) * 1e3;
  state.counters["median_ms"] = median;
  state.counters["floor_ms"] = floor_ms;
  state.counters["floor_frac"] = median > 0 ? floor_ms / median : 0;
  state.counters["FLOP/s"] = median > 0 ? c.work.flops / (median * 1e-3) : 0;
  state.counters["bytes/s"] = median > 0 ? c.work.bytes / (median * 1e-3) : 0;
  state.SetLabel(c.shape);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
}

std::string context_name(int64_t n) {
  return n % (1 << 20) == 0 ? std::to_string(n >> 20) + "M" : std::to_string(n >> 10) + "K";
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (!salasim::gpu::available(&why)) {
    std::fprintf(stderr, "salasim_ops_bench: no GPU (%s)\n", why.c_str());
    return 77;
  }
  std::string cmd;
  for (int i = 0; i < argc; ++i) {
    if (i) cmd += ' ';
    cmd += argv[i];
  }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  benchmark::AddCustomContext("gpu", salasim::gpu::device_name());
  benchmark::AddCustomContext("command", cmd);
  benchmark::AddCustomContext("run_date", date);
  const std::vector<int64_t> contexts = {int64_t(16) << 10, int64_t(256) << 10, int64_t(1) << 20};
  for (const std::string& op : salasim::bench::op_names()) {
    // ops whose work depends on the context run at every length; the rest process one 16K-token prefill chunk
    const std::string base = salasim::bench::base_op(op);
    const bool by_context = base == "gla" || (base == "sparse_attn" && op.find(".decode") == std::string::npos) ||
                            base == "select_blocks" || base == "compress_k";
    // a decode step's sparse ops (one query) at the run lengths, where the context is all that changes
    const bool decode = (base == "select_blocks" || base == "sparse_attn") && op.find(".decode") != std::string::npos;
    const std::vector<int64_t> decode_contexts = {int64_t(64) << 10, int64_t(1) << 20, int64_t(2) << 20};
    // dense attention: a 16K chunk ending at 16K and at 64K (torch SDPA's lengths in bench/peers.py)
    const bool dense = base == "dense_attn";
    const std::vector<int64_t> dense_contexts = {int64_t(16) << 10, int64_t(64) << 10};
    for (int64_t n : decode ? decode_contexts : dense ? dense_contexts : contexts) {
      if (!by_context && !decode && !dense && n != contexts.front()) continue;
      benchmark::RegisterBenchmark((op + "/" + context_name(n)).c_str(),
                                   [op, n](benchmark::State& st) { run_case(st, op, n); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.3);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
