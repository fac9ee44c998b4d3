// compare_taps on hand-made tap sets: every way a tap can fail becomes a row with its reason, rows follow the
// recording order, and the printers show what failed.
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

#include "compare/report.hpp"
#include "model/error.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

namespace {

// [4, 4] of +-1: |r| equals the RMS everywhere, so a uniform scaling gives equal rel-RMS and max-err.
Tap unit_tap(int64_t order, double scale = 1.0) {
  Tap t{{4, 4}, {}, false, order};
  for (int i = 0; i < 16; ++i) t.data.push_back((i % 3 ? 1.0 : -1.0) * scale);
  return t;
}

const ToleranceRow& row(const std::string& kind) { return tolerance_row(tolerance_table(), kind); }

}  // namespace

TEST_CASE("report: without a peer only the floor applies", "[report]") {
  const std::string n = "/prefill/layer_01/mlp/out";
  const TapMap ref = {{n, unit_tap(0)}};
  const double floor = row("mlp/out").rms_floor;
  CHECK(compare_taps(ref, nullptr, {{n, unit_tap(0, 1 + floor / 2)}}).pass());
  const CompareReport r = compare_taps(ref, nullptr, {{n, unit_tap(0, 1 + 2 * floor)}});
  CHECK_FALSE(r.pass());
  REQUIRE(r.rows.size() == 1);
  CHECK_FALSE(r.rows[0].rel_rms.pass);
  CHECK(r.rows[0].rel_rms.ratio > 1);
  CHECK_FALSE(r.with_peer);
}

TEST_CASE("report: the peer's error widens the allowance by its multiplier", "[report]") {
  const std::string n = "/prefill/layer_01/mlp/out";
  const ToleranceRow& tol = row("mlp/out");
  const double peer_err = 10 * tol.rms_floor;
  const TapMap ref = {{n, unit_tap(0)}}, peer = {{n, unit_tap(0, 1 + peer_err)}};
  const double allowed = tol.mult * peer_err + tol.rms_floor;
  CHECK(compare_taps(ref, &peer, {{n, unit_tap(0, 1 + 0.9 * allowed)}}).pass());
  const CompareReport r = compare_taps(ref, &peer, {{n, unit_tap(0, 1 + 1.1 * allowed)}});
  CHECK_FALSE(r.pass());
  CHECK(r.rows[0].rel_rms.peer_err == r.rows[0].peer_metrics->rel_rms);
}

TEST_CASE("report: missing taps on either side are failures and listed", "[report]") {
  const TapMap ref = {{"/prefill/embed/out", unit_tap(0)}, {"/prefill/final/norm", unit_tap(1)}};
  const TapMap be = {{"/prefill/embed/out", unit_tap(0)}, {"/prefill/final/logits", unit_tap(2)}};
  const CompareReport r = compare_taps(ref, &ref, be);
  CHECK(r.failed == 2);
  CHECK(r.passed == 1);
  CHECK(r.only_in_reference == std::vector<std::string>{"/prefill/final/norm"});
  CHECK(r.only_in_backend == std::vector<std::string>{"/prefill/final/logits"});
  REQUIRE(r.first_divergence());
  CHECK(r.first_divergence()->name == "/prefill/final/norm");
}

TEST_CASE("report: hard rules fail NaN, Inf and an all-zero backend", "[report]") {
  const std::string n = "/prefill/layer_02/lightning/o_proj/out";
  const TapMap ref = {{n, unit_tap(0)}};
  Tap nan = unit_tap(0), inf = unit_tap(0), zero = unit_tap(0, 0.0);
  nan.data[5] = std::numeric_limits<double>::quiet_NaN();
  inf.data[6] = std::numeric_limits<double>::infinity();
  for (const Tap* t : {&nan, &inf, &zero}) {
    const CompareReport r = compare_taps(ref, &ref, {{n, *t}});
    CHECK_FALSE(r.pass());
    INFO(r.rows[0].why);
    CHECK_FALSE(r.rows[0].why.empty());
  }
  CHECK(compare_taps(ref, &ref, {{n, nan}}).rows[0].why.find("[1, 1]") != std::string::npos);  // where the NaN is
}

TEST_CASE("report: block scores may hold the reference's infinities, nothing else", "[report]") {
  const std::string n = "/prefill/layer_00/sparse/select/scores";
  const double inf = std::numeric_limits<double>::infinity();
  const TapMap ref = {{n, Tap{{1, 1, 4}, {inf, 2.0, 1.0, -inf}, false, 0}}};
  CHECK(compare_taps(ref, &ref, ref).pass());
  const TapMap wrong = {{n, Tap{{1, 1, 4}, {inf, 2.0, 1.0, 0.5}, false, 0}}};
  CHECK_FALSE(compare_taps(ref, &ref, wrong).pass());
  const std::string other = "/prefill/layer_00/sparse/attn/out";
  const TapMap ref2 = {{other, Tap{{2}, {inf, 1.0}, false, 0}}};
  CHECK_FALSE(compare_taps(ref2, &ref2, ref2).pass());  // an infinity where the table allows none
}

TEST_CASE("report: a shape or type mismatch is a failing row, an unknown kind an error", "[report]") {
  const std::string n = "/prefill/layer_01/mlp/act";
  const TapMap ref = {{n, unit_tap(0)}};
  Tap flat = unit_tap(0);
  flat.shape = {16};
  CHECK_FALSE(compare_taps(ref, &ref, {{n, flat}}).pass());
  Tap ints = unit_tap(0);
  ints.integer = true;
  CHECK_FALSE(compare_taps(ref, &ref, {{n, ints}}).pass());
  const TapMap unknown = {{"/prefill/layer_01/mlp/new_tensor", unit_tap(0)}};
  CHECK_THROWS_AS(compare_taps(unknown, &unknown, unknown), Error);
}

TEST_CASE("report: rows follow the recording order; the first divergence is the lowest failing order", "[report]") {
  const TapMap ref = {{"/prefill/embed/out", unit_tap(0)},
                      {"/prefill/layer_00/residual/h", unit_tap(2)},
                      {"/prefill/layer_00/input_norm/out", unit_tap(1)}};
  TapMap be = ref;
  be["/prefill/layer_00/residual/h"] = unit_tap(2, 2.0);
  be["/prefill/layer_00/input_norm/out"] = unit_tap(1, 2.0);
  const CompareReport r = compare_taps(ref, &ref, be);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].name == "/prefill/embed/out");
  CHECK(r.rows[1].name == "/prefill/layer_00/input_norm/out");
  CHECK(r.rows[2].name == "/prefill/layer_00/residual/h");
  CHECK(r.rows[1].layer == 0);
  CHECK(r.rows[0].layer == -1);
  CHECK(r.rows[1].kind == "input_norm/out");
  CHECK(r.rows[1].phase == "prefill");
  REQUIRE(r.first_divergence());
  CHECK(r.first_divergence()->name == "/prefill/layer_00/input_norm/out");
}

TEST_CASE("report: the text table and JSON name the failures", "[report]") {
  const TapMap ref = {{"/prefill/embed/out", unit_tap(0)}, {"/prefill/layer_00/residual/h", unit_tap(1)}};
  TapMap be = ref;
  be["/prefill/layer_00/residual/h"].data[3] = std::numeric_limits<double>::quiet_NaN();
  const CompareReport r = compare_taps(ref, &ref, be);
  const std::string all = format_report(r), fails = format_report(r, PrintOptions{true});
  INFO(all);
  CHECK(all.find("embed/out") != std::string::npos);
  CHECK(all.find("FIRST DIVERGENCE: /prefill/layer_00/residual/h") != std::string::npos);
  CHECK(all.find("FAIL") != std::string::npos);
  CHECK(fails.find("embed/out") == std::string::npos);
  CHECK(fails.find("1 passing taps not shown") != std::string::npos);
  const nlohmann::json j = report_json(r);
  CHECK(j["first_divergence"] == "/prefill/layer_00/residual/h");
  CHECK(j["failed"] == 1);
  CHECK(j["rows"].size() == 2);
  CHECK(j["rows"][1]["verdict"] == "fail");
  CHECK(j["rows"][1]["backend"]["nonfinite"]["value"] == 1);
  // Non-finite figures stay readable: an infinite rel-RMS (a zero reference) is the string "inf".
  const std::string n = "/prefill/final/norm";
  const nlohmann::json z = report_json(compare_taps({{n, unit_tap(0, 0.0)}}, nullptr, {{n, unit_tap(0)}}));
  CHECK(z["rows"][0]["rel_rms"]["err"] == "inf");
}
