// `salasim op NAME --random` and `salasim op --sweep` (docs/op.md#generated-inputs): generated inputs
// (ops/random.hpp) through the reference, its bf16 peer and, on a GPU, the CUDA path, each case gated by the
// tolerance table as `salasim diff` gates two dumps, with optional timings.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/op.hpp"
#include "compare/report.hpp"
#include "model/taps.hpp"

namespace salasim {

// The backend under test. "gpu": the CUDA path against the reference with the peer's allowance, the tolerance table
// as verify applies it. "peer" (what a CPU can run): the bf16 peer against the reference within the table's rel-RMS
// floors, the bf16 unit 2^-8 (peer_sweep_table): the two CPU implementations of an op must agree within what a few
// bf16 roundings explain, so a bug in either shows. The peer's max-err is reported, not gated: the largest error of
// thousands of elements lies several of their RMS out, which is why the table gates max-err against the peer's own.
struct SweepOptions {
  std::string backend = "peer";
  bool perf = false;  // time each backend: the median of `rounds` runs after one untimed warm-up
  int rounds = 5;
  uint64_t seed = 0;
  std::vector<std::string> ops;  // empty: every op of the table
};

enum class CaseVerdict { Ok, Fail, Skip };

struct OpCaseResult {
  std::string op;
  std::string sizes;  // op::format_case
  uint64_t seed = 0;
  std::string backend;  // "peer", or "cuda:<GPU>" once the CUDA path ran
  CaseVerdict verdict = CaseVerdict::Skip;
  std::string why;  // Fail: the failing taps' reasons; Skip: why the backend did not run
  CompareReport report;
  double worst_ratio = 0;                          // the largest err / allowed over the case's float gates
  double ref_ms = 0, peer_ms = 0, backend_ms = 0;  // perf: medians of wall time (0 when not timed)
};

// The backend under test as a function of the checked inputs (tests give their own); the sweep makes it from
// SweepOptions::backend. `device` gets a name for OpCaseResult::backend.
// The tolerance table of the "peer" sweep: the harness's rows with the max-err gate lifted (allowance +inf).
ToleranceTable peer_sweep_table();

using OpBackend = std::function<TapMap(const op::OpInputs&, std::string* device)>;
OpBackend sweep_backend(const std::string& backend);

// One case: inputs drawn, the reference and the peer run, the backend (when it is not the peer) run, compared.
// A salasim::Error from the backend (sizes the CUDA kernels are not built for) is a Skip with its message; a device
// or internal error propagates.
OpCaseResult run_op_case(const op::OpSpec& s, const op::CaseSizes& c, const SweepOptions& o, const OpBackend& backend);

// Every sweep case of the chosen ops (op::sweep_cases), in table order; `each` sees each result as it is made.
std::vector<OpCaseResult> run_op_sweep(const SweepOptions& o, const std::function<void(const OpCaseResult&)>& each);

const char* verdict_name(CaseVerdict v);  // "OK", "FAIL", "SKIP"
// One line: "OK    gla  T=100,H=2,hd=128,state=0  peer  worst 0.61 of the allowance  [times]".
std::string format_case_line(const OpCaseResult& r, bool perf);
nlohmann::json case_json(const OpCaseResult& r);

}  // namespace salasim
