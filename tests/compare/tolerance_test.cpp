// The tolerance table: a row with a reason for every tap kind the models record, floors that really are two bf16
// roundings, and the gate arithmetic.
#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "compare/tolerance.hpp"
#include "model/bf16.hpp"
#include "model/error.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

namespace {
// The kinds the reference and the GPU path record (issue 5).
const std::vector<std::string> kKinds = {
    "embed/out", "input_norm/out", "post_norm/out", "residual/mid", "residual/h", "mlp/act", "mlp/out", "final/norm",
    "final/logits", "lightning/proj/q", "lightning/proj/k", "lightning/proj/v", "lightning/proj/z",
    "lightning/qk_rope/q", "lightning/qk_rope/k", "lightning/gla/out", "lightning/gla/state", "lightning/o_norm/out",
    "lightning/gate/out", "lightning/o_proj/out", "sparse/proj/q", "sparse/proj/k", "sparse/proj/v", "sparse/proj/g",
    "sparse/compress_k/k1", "sparse/compress_k/k2", "sparse/select/scores", "sparse/select/blocks", "sparse/attn/out",
    "sparse/gate/out", "sparse/o_proj/out"};
}  // namespace

TEST_CASE("tolerance: every tap kind has a row with a reason", "[tolerance]") {
  const ToleranceTable& t = tolerance_table();
  for (const std::string& k : kKinds) {
    INFO(k);
    const ToleranceRow& r = tolerance_row(t, k);
    CHECK(r.kind == k);
    CHECK(r.reason.size() > 20);
    CHECK((r.stored == "bf16" || r.stored == "fp32" || r.stored == "int32"));
  }
  std::set<std::string> kinds;
  for (const ToleranceRow& r : t) kinds.insert(r.kind);
  CHECK(kinds.size() == t.size());      // no kind twice
  CHECK(kinds.size() == kKinds.size());  // and no row for a tap nobody records
}

TEST_CASE("tolerance: an unknown kind is an error asking for a row", "[tolerance]") {
  CHECK_THROWS_AS(tolerance_row(tolerance_table(), "lightning/new_op/out"), Error);
  try {
    tolerance_row(tolerance_table(), "lightning/new_op/out");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("lightning/new_op/out") != std::string::npos);
  }
}

TEST_CASE("tolerance: rows are gated as their tensors are", "[tolerance]") {
  for (const ToleranceRow& r : tolerance_table()) {
    INFO(r.kind);
    if (r.kind == "sparse/select/blocks") {
      CHECK(r.gate == Gate::Selection);
      CHECK(r.tie_band > 0);
      CHECK(r.tie_band < 1);
    } else {
      CHECK(r.gate == Gate::Float);
      CHECK(r.mult > 1);  // never stricter than the peer itself
      CHECK(r.rms_floor > 0);
      CHECK(r.max_floor > 0);
      CHECK(r.tie_band == 0);
      CHECK(r.inf_must_match == (r.kind == "sparse/select/scores"));  // only scores carry +-inf by design
    }
  }
}

TEST_CASE("tolerance: the floors are two bf16 roundings at the tensor's RMS", "[tolerance]") {
  // Measure one bf16 rounding of a Gaussian tensor: the floor must cover two, and not be looser than four.
  std::mt19937_64 rng(20260101);
  std::normal_distribution<double> nd;
  double e2 = 0, r2 = 0, max_rel = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = nd(rng), e = round_bf16(x) - x;
    e2 += e * e, r2 += x * x;
    max_rel = std::max(max_rel, std::fabs(e / x));
  }
  const double one_rms = std::sqrt(e2 / r2);
  for (const ToleranceRow& r : tolerance_table()) {
    if (r.gate != Gate::Float) continue;
    INFO(r.kind);
    CHECK(2 * one_rms <= r.rms_floor);
    CHECK(4 * one_rms > r.rms_floor);
    CHECK(2 * max_rel <= r.max_floor);  // two worst-case roundings of an element the size of the RMS
    CHECK(4 * max_rel > r.max_floor);
  }
}

TEST_CASE("tolerance: the gate allows mult x peer + floor and reports the ratio", "[tolerance]") {
  const ToleranceRow& r = tolerance_row(tolerance_table(), "mlp/out");
  const double peer = 3 * r.rms_floor, allowed = r.mult * peer + r.rms_floor;
  GateResult g = apply_gate(allowed, peer, r.mult, r.rms_floor);
  CHECK(g.pass);
  CHECK(g.allowed == allowed);
  CHECK(g.ratio == 1.0);
  g = apply_gate(std::nextafter(allowed, 1.0), peer, r.mult, r.rms_floor);
  CHECK_FALSE(g.pass);
  CHECK(g.ratio > 1.0);
  g = apply_gate(allowed / 4, peer, r.mult, r.rms_floor);
  CHECK(g.ratio == 0.25);
  CHECK_FALSE(apply_gate(std::numeric_limits<double>::quiet_NaN(), peer, r.mult, r.rms_floor).pass);
  CHECK(apply_gate(0, 0, r.mult, 0).ratio == 0.0);
  CHECK_FALSE(apply_gate(r.rms_floor, 0, r.mult, 0).pass);
}

TEST_CASE("tolerance: the printed table has a line per row", "[tolerance]") {
  const std::string s = format_tolerance_table(tolerance_table());
  for (const ToleranceRow& r : tolerance_table()) {
    INFO(r.kind);
    CHECK(s.find(r.kind + " ") != std::string::npos);
    CHECK(s.find(r.reason) != std::string::npos);
  }
}
