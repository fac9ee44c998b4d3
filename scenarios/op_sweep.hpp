// `salasim op NAME --random`, `salasim op --sweep` and a user's implementation on an input file
// (docs/op.md#generated-inputs, docs/check-your-implementation.md): inputs generated (ops/random.hpp) or read, run
// through the reference, its bf16 peer and the backend under test (the peer itself, the CUDA path, or a user's
// implementation: scenarios/op_user.hpp), each case gated by the tolerance table as `salasim diff` gates two dumps,
// with optional timings.
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

// The backend under test. "peer" (what a CPU runs without a user's code): the bf16 peer against the reference
// within the table's rel-RMS floors, the bf16 unit 2^-8 (peer_sweep_table): the two CPU implementations of an op
// must agree within what a few bf16 roundings explain, so a bug in either shows. The peer's max-err is reported, not
// gated: the largest error of thousands of elements lies several of their RMS out, which is why the table gates
// max-err against the peer's own. "gpu", and a user's implementation ("exec:...", "py:...", "lib:...",
// scenarios/op_user.hpp): against the reference with the peer's allowance, the tolerance table as verify applies it.
struct SweepOptions {
  std::string backend = "peer";
  bool perf = false;  // time each backend: the median of `rounds` runs after one untimed warm-up
  int rounds = 5;
  uint64_t seed = 0;
  std::vector<std::string> ops;            // empty: every op of the table
  op::Drawn drawn = op::Drawn::GpuStores;  // generated values as the CUDA path stores them, or as drawn
  std::string python;                      // py: backends: the interpreter (--python), "" to find one
  // Generated cases: a folder that receives each case's inputs as an input file ("<op>_<i>.h5", i counting the op's
  // cases from 0), or "" for none.
  std::string save_inputs;
  bool force = false;  // replace saved inputs that exist
};

enum class CaseVerdict { Ok, Fail, Skip };

struct OpCaseResult {
  std::string op;
  std::string sizes;  // op::format_case, or the input file of a case read from one
  uint64_t seed = 0;
  std::string backend;  // "peer", "cuda:<GPU>" once the CUDA path ran, or the user's backend as given
  CaseVerdict verdict = CaseVerdict::Skip;
  std::string why;  // Fail: the failing taps' reasons or the implementation's failure; Skip: why it did not run
  CompareReport report;
  std::vector<std::string> skipped_outputs;        // outputs the implementation left out: not compared
  std::string inputs_file;                         // where the case's inputs were saved, or ""
  double worst_ratio = 0;                          // the largest err / allowed over the case's float gates
  double ref_ms = 0, peer_ms = 0, backend_ms = 0;  // perf: medians of wall time (0 when not timed)
  double seconds = 0;                              // the whole case, wall time (JUnit's time)
};

// The tolerance table of the "peer" sweep: the harness's rows with the max-err gate lifted (allowance +inf).
ToleranceTable peer_sweep_table();

// What a backend hands back for one case.
struct OpRun {
  TapMap taps;                            // the outputs produced, under their /op/ tap names
  std::vector<std::string> not_produced;  // outputs the implementation leaves out (tap names): skipped
  std::string skip;    // not empty: the implementation does not take this case (the reason); the case is a Skip
  std::string failed;  // not empty: the implementation failed on this case (the reason); the case is a Fail
  std::string device;  // the GPU's name when the CUDA path ran
};
// The backend under test as a function of the checked inputs (tests give their own); make_backend makes it from
// SweepOptions::backend ("peer": null, the peer itself is what is gated). A salasim::Error it throws ends the run
// (exit 2: a program that cannot be started, a library that does not load).
using OpBackend = std::function<OpRun(const op::OpInputs&)>;
OpBackend make_backend(const SweepOptions& o);
// Whether `backend` names a user's implementation (exec:, py:, lib:).
bool is_user_backend(const std::string& backend);

// One case: inputs drawn, the reference and the peer run, the backend (when it is not the peer) run, compared.
// The CUDA path's refusal of sizes it is not built for is a Skip with its message; a device or internal error
// propagates. `index`: the case's place among its op's cases (the name of its saved inputs).
OpCaseResult run_op_case(const op::OpSpec& s, const op::CaseSizes& c, const SweepOptions& o, const OpBackend& backend,
                         int index = 0);
// The same on inputs already checked (a user's input file): the case's label is the file.
OpCaseResult check_op_case(const op::OpInputs& x, const SweepOptions& o, const OpBackend& backend);

// Every sweep case of the chosen ops (op::sweep_cases), in table order; `each` sees each result as it is made.
std::vector<OpCaseResult> run_op_sweep(const SweepOptions& o, const std::function<void(const OpCaseResult&)>& each);

// A user's implementation that ran on no case at all (every case skipped) has checked nothing: a salasim::Error
// (exit 2) saying so, with the first skip's reason. The peer and the CUDA path pass.
void require_some_case_ran(const std::vector<OpCaseResult>& rs, const SweepOptions& o);

const char* verdict_name(CaseVerdict v);  // "OK", "FAIL", "SKIP"
// One line: "OK    gla  T=100,H=2,hd=128,state=0  peer  worst 0.61 of the allowance  [times]", then a line per
// skipped output and the reasons of a failure.
std::string format_case_line(const OpCaseResult& r, bool perf);
nlohmann::json case_json(const OpCaseResult& r);

}  // namespace salasim
