// The tolerance table: one row per tap kind ("lightning/gla/out"), each with its numbers and the reason for them.
// Every tolerance the harness and its tests use comes from here; a tap kind without a row is an error.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace salasim {

enum class Gate {
  Float,      // err(backend, ref64) <= mult * err(peer, ref64) + floor, for rel-RMS and for max-err (metrics.hpp)
  Selection,  // integer block ids: sets compared exactly, mismatches allowed only inside the tie band
};

struct ToleranceRow {
  std::string kind;    // tap_kind(name), e.g. "lightning/gla/out"
  std::string stored;  // precision the GPU path keeps the tensor in: "bf16", "fp32" or "int32"
  Gate gate = Gate::Float;
  double mult = 0;       // Float: times the peer's rel-RMS error
  double max_mult = 0;   // Float: times the peer's max-err (a noisier statistic, see tolerance.cpp)
  double rms_floor = 0;  // Float: added to the rel-RMS allowance (a fraction of ||ref||)
  double max_floor = 0;  // Float: added to the max-err allowance: a fraction of max(|ref element|, RMS(ref))
  bool inf_must_match = false;  // Float: +-inf allowed where the reference holds the same infinity
  double tie_band = 0;   // Selection: |score - boundary| <= tie_band * |boundary| makes a swap a tie
  std::string reason;
};

using ToleranceTable = std::vector<ToleranceRow>;

// The table the harness uses (compare/tolerance.cpp).
const ToleranceTable& tolerance_table();

// The row of a kind; a kind with no row is a salasim::Error asking for one. (kind by value: binding the result to
// a reference stays free of GCC's dangling-reference warning when the kind is a temporary.)
const ToleranceRow& tolerance_row(const ToleranceTable& table, std::string_view kind);

// One gate applied to one error figure: allowed = mult * peer_err + floor, ratio = err / allowed (headroom:
// below 1 passes). A NaN error never passes.
struct GateResult {
  double err = 0;
  double peer_err = 0;
  double allowed = 0;
  double ratio = 0;
  bool pass = true;
};
GateResult apply_gate(double err, double peer_err, double mult, double floor);

// The table as fixed-width text (kind, stored, gate numbers, reason), for `salasim tolerances` and docs/verify.md.
std::string format_tolerance_table(const ToleranceTable& table);

}  // namespace salasim
