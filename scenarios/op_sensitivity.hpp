// `salasim op --sensitivity` (docs/check-your-implementation.md): the gate's power, shown on the faults real kernels
// make. At each case, each fault is injected into a correct output, the float64 reference's own (the most favourable
// place for a fault to hide: an implementation's own rounding error only adds to it), and the output is gated as a
// user's implementation or the CUDA path is (compare_taps against the reference with the peer's allowance). A fault
// is defined per op and output where it means something (fault_meaning) and reported as not applying elsewhere; for
// the scale fault the smallest scale the gate catches is found by bisection. A fault the gate misses is reported as
// MISSED, and the run exits 1.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ops/op.hpp"
#include "scenarios/op_sweep.hpp"

namespace salasim {

// The faults, in the order of the table's columns: scale, shift, position, heads, neighbour.
struct FaultDef {
  std::string name;
  std::string summary;  // one line, what it is on any op
};
const std::vector<FaultDef>& fault_defs();
// What fault `fault` does to output `o` of op `s`, or "" where it does not apply.
std::string fault_meaning(const std::string& fault, const op::OpSpec& s, const op::OutputSpec& o);
// The size of the scale fault named in the table: 1%.
constexpr double kNamedScale = 0.01;

enum class FaultOutcome {
  NotApplicable,  // the fault has no meaning for this output ("-")
  NotOnCase,      // it has, but this case cannot show it ("n/a": one head, a single window, no carried state)
  Caught,
  Missed
};

struct FaultResult {
  std::string fault;
  FaultOutcome outcome = FaultOutcome::NotApplicable;
  std::string why;      // NotOnCase: why; Missed: the gate's verdict on the faulty output
  double smallest = 0;  // scale: the smallest relative scale the gate catches (0: none up to 100%)
};

struct OutputSensitivity {
  std::string output;               // tap name, "/op/lightning/gla/out"
  std::vector<FaultResult> faults;  // fault_defs() order
};

struct SensitivityCase {
  std::string op, sizes;
  uint64_t seed = 0;
  std::vector<OutputSensitivity> outputs;
  double seconds = 0;
  bool missed() const;
};

// The faults of one generated case (SweepOptions' seed and drawn values).
SensitivityCase sensitivity_case(const op::OpSpec& s, const op::CaseSizes& c, const SweepOptions& o);
// Every sweep case of the chosen ops (SweepOptions::ops, every op when empty); `each` sees each case as it is made.
std::vector<SensitivityCase> run_sensitivity(const SweepOptions& o,
                                             const std::function<void(const SensitivityCase&)>& each);

// The table: a header line, then a line per case and output: op, output, one cell per fault ("0.21%" for the
// smallest scale caught, "caught", "MISSED", "n/a", "-"), the case.
std::string sensitivity_header();
std::string format_sensitivity(const SensitivityCase& c);
// The legend under the table: what each fault is, per op and output of `ops`, and what "-" and "n/a" mean.
std::string sensitivity_legend(const std::vector<std::string>& ops);
nlohmann::json sensitivity_json(const SensitivityCase& c);
const char* outcome_name(FaultOutcome o);  // "-", "n/a", "caught", "MISSED"

}  // namespace salasim
