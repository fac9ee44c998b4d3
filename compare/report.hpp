// Comparing whole tap sets: every tap of every layer of a backend against the float64 reference, gated by the
// tolerance table against the peer, one verdict row per tap in recording order, the first divergence named.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/metrics.hpp"
#include "compare/selection.hpp"
#include "compare/tolerance.hpp"
#include "model/taps.hpp"

namespace salasim {

struct TapResult {
  std::string name;   // "/prefill/layer_03/lightning/gla/out"
  std::string phase;  // "prefill"
  std::string kind;   // "lightning/gla/out"
  int layer = -1;     // -1 for embed/final
  int64_t order = 0;  // the reference's Tap::order (the backend's when the reference lacks the tap)
  Gate gate = Gate::Float;
  bool in_reference = false, in_backend = false, in_peer = false;

  std::optional<TensorMetrics> metrics;       // backend vs reference
  std::optional<TensorMetrics> peer_metrics;  // peer vs reference
  GateResult rel_rms;                         // Float gate on relative RMS error
  GateResult max_err;                         // Float gate on max-err: max |x - r| / max(|r|, RMS(ref))
  std::optional<SelectionReport> selection;   // Selection gate

  bool pass = false;
  std::string why;  // empty when it passes; else every reason it fails, "; "-separated
};

struct CompareReport {
  std::vector<TapResult> rows;  // by order, then name
  bool with_peer = false;       // false: allowances are the floors alone
  int passed = 0;
  int failed = 0;
  std::vector<std::string> only_in_reference;
  std::vector<std::string> only_in_backend;
  bool pass() const { return failed == 0; }
  // The failing row of lowest order, or nullptr when everything passes.
  const TapResult* first_divergence() const;
};

// What is known of one tap on each side when its verdict is made: compare_taps fills it from whole tap maps, the
// streaming comparison (scenarios/stream_truth.hpp) as both runs produce the tap, without keeping it.
struct TapFacts {
  bool in_reference = false, in_backend = false, in_peer = false;
  int64_t order = 0;  // the reference's Tap::order (the backend's when the reference lacks the tap)
  std::vector<int64_t> ref_shape, backend_shape, peer_shape;
  bool ref_integer = false, backend_integer = false;
  std::optional<TensorMetrics> metrics;       // backend vs reference: float taps of one shape
  std::optional<TensorMetrics> peer_metrics;  // peer vs reference: taps of one shape
  std::optional<SelectionReport> selection;   // backend vs reference: integer taps of one shape
};

// The verdict of one tap from its facts (hard rules first, then the gate of its tolerance row). with_peer: a peer
// was given, so its allowance applies (and a tap missing from it fails).
TapResult judge_tap(const std::string& name, const ToleranceRow& tol, bool with_peer, const TapFacts& facts);
// Adds a judged row to `rep` (the counts and the one-side lists); finish_report sorts the rows by order, then name.
void add_row(CompareReport& rep, TapResult row);
void finish_report(CompareReport& rep);

// ref: the float64 reference's taps; peer: the bf16-emulating reference's taps, or nullptr (then only the floors
// apply); backend: the taps under test. A tap whose kind has no tolerance row is a salasim::Error (a new tap needs a
// row); everything else wrong with a backend tap (missing, wrong shape, NaN, ...) is a failing row.
CompareReport compare_taps(const TapMap& ref, const TapMap* peer, const TapMap& backend,
                           const ToleranceTable& table = tolerance_table());

struct PrintOptions {
  bool failures_only = false;  // print only failing rows (and the totals)
};

// Fixed-width table, one line per tap plus one line of reasons under each failure, then the totals and the first
// divergence.
std::string format_report(const CompareReport& r, const PrintOptions& opt = {});
// The same content, every number included; non-finite numbers become the strings "nan", "inf", "-inf".
nlohmann::json report_json(const CompareReport& r);

}  // namespace salasim
