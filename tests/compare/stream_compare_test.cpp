// Comparing taps as they are produced: the accumulators fed in pieces give the one-call numbers bit for bit, and a
// StreamCompare fed from two threads in different pieces gives compare_taps(ref, &peer, peer)'s report.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <atomic>
#include <chrono>

#include "compare/report.hpp"
#include "compare/stream_compare.hpp"
#include "model/bf16.hpp"
#include "model/error.hpp"
#include "tests/compare/same_report.hpp"
#include "tests/compare/synthetic.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"

using namespace salasim;
using test::check_same_metrics;
using test::check_same_reports;
using test::same;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The definition max-err and its location follow, written the plain way: the RMS of the whole reference first, then
// one pass over every element. The accumulator must agree with it without knowing the RMS until the end.
void two_pass_max_err(const std::vector<double>& r, const std::vector<double>& x, double* max_err, int64_t* worst) {
  double s = 0;
  int64_t n = 0;
  for (double v : r)
    if (std::isfinite(v)) s += v * v, ++n;
  const double rms = n ? std::sqrt(s / double(n)) : 0.0;
  *max_err = 0;
  *worst = -1;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!std::isfinite(r[i]) || !std::isfinite(x[i])) continue;
    const double ad = std::fabs(x[i] - r[i]), scale = std::max(std::fabs(r[i]), rms);
    const double e = scale > 0 ? ad / scale : (ad == 0 ? 0.0 : kInf);
    if (*worst < 0 || e > *max_err) *max_err = e, *worst = int64_t(i);
  }
}

// Splits [0, n) at random points (some pieces empty).
std::vector<int64_t> random_cuts(int64_t n, std::mt19937_64& rng, int pieces) {
  std::vector<int64_t> cuts = {0, n};
  for (int i = 0; i < pieces; ++i) cuts.push_back(std::uniform_int_distribution<int64_t>(0, n)(rng));
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

struct Case {
  const char* what;
  std::vector<double> r, x;
};

std::vector<Case> metric_cases(std::mt19937_64& rng) {
  std::normal_distribution<double> nd;
  std::vector<Case> cases;
  const int n = 3001;
  Case heavy{"heavy-tailed values, bf16-like errors, zeros, matched and unmatched infinities, a NaN", {}, {}};
  for (int i = 0; i < n; ++i) {
    const double v = std::exp(2.5 * nd(rng)) * (i % 2 ? 1 : -1);
    heavy.r.push_back(i % 97 == 0 ? 0.0 : v);
    heavy.x.push_back(round_bf16(heavy.r.back() * (1 + 0x1p-9 * nd(rng))));
  }
  heavy.r[10] = heavy.x[10] = kInf;
  heavy.r[20] = -kInf, heavy.x[20] = kInf;
  heavy.x[30] = kNaN;
  cases.push_back(heavy);
  Case ramp{"errors growing along the tensor at a constant ratio (every element stays a candidate)", {}, {}};
  for (int i = 0; i < n; ++i) ramp.r.push_back(i + 1), ramp.x.push_back(2.0 * (i + 1));
  cases.push_back(ramp);
  Case ties{"quantized values: many elements share the worst error (the first must win)", {}, {}};
  for (int i = 0; i < n; ++i) ties.r.push_back(double(i % 7 - 3)), ties.x.push_back(double(i % 7 - 3) + (i % 5 == 0));
  cases.push_back(ties);
  Case zero_ref{"an all-zero reference: the RMS is zero, every error is infinite", std::vector<double>(50, 0.0), {}};
  for (int i = 0; i < 50; ++i) zero_ref.x.push_back(i % 3 ? 0.0 : 1.0);
  cases.push_back(zero_ref);
  Case equal{"equal tensors", heavy.r, heavy.r};
  cases.push_back(equal);
  return cases;
}

}  // namespace

TEST_CASE("metrics: fed in pieces, the accumulator gives tensor_metrics' numbers bit for bit", "[metrics][stream]") {
  std::mt19937_64 rng(20251130);
  for (const Case& c : metric_cases(rng)) {
    INFO(c.what);
    const int64_t n = int64_t(c.r.size());
    const Tap r{{n}, c.r, false, 0}, x{{n}, c.x, false, 0};
    const TensorMetrics whole = tensor_metrics("/prefill/layer_00/mlp/out", r, x);
    double max_err = 0;
    int64_t worst = -1;
    two_pass_max_err(c.r, c.x, &max_err, &worst);
    CHECK(same(whole.max_err, max_err));
    CHECK(whole.worst_err == worst);
    for (int split = 0; split < 5; ++split) {
      const std::vector<int64_t> cuts = random_cuts(n, rng, 1 + 3 * split);
      MetricsAccumulator acc;
      for (size_t i = 0; i + 1 < cuts.size(); ++i)
        acc.add(c.r.data() + cuts[i], c.x.data() + cuts[i], cuts[i + 1] - cuts[i]);
      check_same_metrics(acc.finish({n}), whole);
    }
  }
}

TEST_CASE("selection: fed in pieces, the accumulator gives compare_selection's report", "[selection][stream]") {
  const test::Synthetic s = test::make_synthetic(5, 67);
  const std::string blocks = "/prefill/layer_00/sparse/select/blocks", scores = "/prefill/layer_00/sparse/select/scores";
  const Tap& rb = s.ref.at(blocks);
  const Tap& sc = s.ref.at(scores);
  const Tap& bb = s.backend.at(blocks);
  const double band = tolerance_row(tolerance_table(), "sparse/select/blocks").tie_band;
  for (double tight : {band, band / 1000}) {  // the narrow band makes rows fail, so the first mismatch is located
    const SelectionReport whole = compare_selection(blocks, rb, bb, &sc, tight);
    const int64_t T = rb.shape[0], G = rb.shape[1], K = rb.shape[2], NB = sc.shape[2];
    SelectionAccumulator acc(blocks, tight, true);
    for (int64_t t0 = 0; t0 < T; t0 += 10) {
      const int64_t rows = std::min<int64_t>(10, T - t0);
      acc.add(&rb.data[size_t(t0 * G * K)], &bb.data[size_t(t0 * G * K)], &sc.data[size_t(t0 * G * NB)], rows, G, K, NB);
    }
    const SelectionReport& p = acc.report();
    CHECK(p.rows == whole.rows);
    CHECK(p.rows_differing == whole.rows_differing);
    CHECK(p.in_band == whole.in_band);
    CHECK(p.out_of_band == whole.out_of_band);
    REQUIRE(p.first_out_of_band.has_value() == whole.first_out_of_band.has_value());
    if (whole.first_out_of_band) {
      CHECK(p.first_out_of_band->query == whole.first_out_of_band->query);
      CHECK(p.first_out_of_band->block == whole.first_out_of_band->block);
    }
  }
}

namespace {

bool whole_tap(const std::string& name) {
  const std::string k = tap_kind(name);
  return k == "lightning/gla/state" || k == "sparse/compress_k/k1" || k == "sparse/compress_k/k2" ||
         k == "final/logits";
}

// Feeds `taps` into `sink` in recording order, each row tap in pieces of `piece` rows (whole-sequence taps replaced
// twice, the latest value winning), as a run records them.
void feed(const TapMap& taps, TapSink& sink, int64_t piece) {
  std::vector<const std::pair<const std::string, Tap>*> order;
  for (const auto& e : taps) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->second.order < b->second.order; });
  for (auto* e : order) {
    const Tap& t = e->second;
    if (whole_tap(e->first)) {
      Tap stale = t;
      for (double& v : stale.data) v += 1;
      sink.replace(e->first, stale);
      sink.replace(e->first, t);
      continue;
    }
    const int64_t per = t.numel() / t.shape[0];
    for (int64_t r0 = 0; r0 < t.shape[0]; r0 += piece) {
      std::vector<int64_t> shape = t.shape;
      shape[0] = std::min(piece, t.shape[0] - r0);
      sink.append(e->first, shape, t.data.data() + r0 * per, t.integer);
    }
  }
}

}  // namespace

TEST_CASE("stream_compare: two threads feeding different pieces give compare_taps(ref, &peer, peer)", "[stream]") {
  test::Synthetic s = test::make_synthetic(11, 67);
  std::string what;
  int64_t budget = kStreamBudgetBytes;
  SECTION("every tap passes, a generous budget") { what = "plain"; }
  SECTION("a budget of one byte: the side ahead waits for every row") {
    what = "one-byte budget";
    budget = 1;
  }
  SECTION("faults: a NaN, a tap only one side records, a shape that differs, a selection outside the band") {
    what = "faults";
    s.peer.at("/prefill/layer_01/lightning/gla/out").data[5] = kNaN;
    s.peer.erase("/prefill/layer_02/mlp/act");
    Tap& q = s.peer.at("/prefill/layer_00/sparse/proj/q");
    q.shape = {q.shape[0], q.shape[1] * q.shape[2]};
    Tap& b = s.peer.at("/prefill/layer_03/sparse/select/blocks");
    b.data[b.data.size() / 2] = 1e6;  // a block id past the sequence
  }
  INFO(what);
  const CompareReport expected = compare_taps(s.ref, &s.peer, s.peer);
  if (what == "faults") CHECK(expected.failed >= 4);

  KeepTaps keep;  // a golden's (rows cut, in its order), or with the faults a failure dump's (every row)
  keep.names = {"/prefill/layer_00/input_norm/out", "/prefill/layer_01/lightning/gla/state"};
  if (what != "faults") keep.rows = {66, 0, 31};
  StreamCompare cmp(keep, budget);
  std::thread ref([&] { feed(s.ref, cmp.sink(StreamCompare::Reference), 7); });
  std::thread peer([&] { feed(s.peer, cmp.sink(StreamCompare::Peer), 13); });
  ref.join();
  peer.join();
  const StreamResult got = cmp.finish();
  check_same_reports(got.report, expected);
  CHECK(got.kept_error.empty());

  // The kept taps: the rows asked for, in that order; whole-sequence taps whole, their latest value.
  const Tap& in = s.ref.at("/prefill/layer_00/input_norm/out");
  const Tap& kept = got.ref_kept.at("/prefill/layer_00/input_norm/out");
  if (keep.rows.empty()) {
    CHECK(kept.shape == in.shape);
    CHECK(kept.data == in.data);
    CHECK(kept.order == in.order);
  } else {
    const int64_t per = in.shape[1];
    REQUIRE(kept.shape == std::vector<int64_t>{3, per});
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < per; ++j)
        CHECK(kept.data[size_t(i * per + j)] == in.data[size_t(keep.rows[size_t(i)] * per + j)]);
  }
  CHECK(got.peer_kept.at("/prefill/layer_01/lightning/gla/state").data ==
        s.peer.at("/prefill/layer_01/lightning/gla/state").data);
  CHECK(got.ref_kept.size() == 2);
}

TEST_CASE("stream_compare: a kept row past the tap's end is reported, an unknown tap kind is an error", "[stream]") {
  const test::Synthetic s = test::make_synthetic(3, 20);
  SECTION("row past the end") {
    KeepTaps keep;
    keep.names = {"/prefill/embed/out"};
    keep.rows = {0, 20};
    keep.what = "golden";
    StreamCompare cmp(keep);
    feed(s.ref, cmp.sink(StreamCompare::Reference), 8);
    feed(s.peer, cmp.sink(StreamCompare::Peer), 8);
    const StreamResult got = cmp.finish();
    CHECK(got.kept_error == "golden: tap /prefill/embed/out has 20 rows, row 20 was asked for");
    CHECK(got.report.pass());
  }
  SECTION("unknown kind") {
    StreamCompare cmp;
    const double v[2] = {1, 2};
    cmp.sink(StreamCompare::Reference).append("/prefill/layer_00/nonsense/out", {1, 2}, v, false);
    CHECK(test::error_of([&] { cmp.finish(); }).find("has no row in the tolerance table") != std::string::npos);
  }
}

TEST_CASE("stream_compare: block ids recorded before their scores, as the reference records them, never stall",
          "[stream]") {
  // The reference records a layer's select/blocks and then its select/scores; the block rows of both sides wait for
  // those scores (the tie band reads them). With a budget of one byte the reference holds its block rows when the
  // scores come, so the scores must not wait for room: that room only they could free.
  test::Synthetic s = test::make_synthetic(5, 40);
  for (TapMap* m : {&s.ref, &s.peer})
    for (auto& [name, t] : *m)
      if (name.size() > 6 && name.compare(name.size() - 6, 6, "blocks") == 0)
        std::swap(t.order, m->at(name.substr(0, name.size() - 6) + "scores").order);
  const CompareReport expected = compare_taps(s.ref, &s.peer, s.peer);
  StreamCompare cmp(KeepTaps{}, 1);
  std::atomic<int> done{0};
  std::string errors[2];
  auto run = [&](int side, const TapMap& taps, int64_t piece) {
    try {
      feed(taps, cmp.sink(side == 0 ? StreamCompare::Reference : StreamCompare::Peer), piece);
    } catch (const std::exception& e) {
      errors[side] = e.what();
    }
    ++done;
  };
  std::thread ref(run, 0, std::cref(s.ref), 9);
  std::thread peer(run, 1, std::cref(s.peer), 40);
  // A stall is a failure here, not a test that never ends: after 60 s the comparison is aborted, which wakes both.
  for (int i = 0; i < 600 && done < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const bool stalled = done < 2;
  if (stalled) cmp.abort();
  ref.join();
  peer.join();
  REQUIRE_FALSE(stalled);
  CHECK(errors[0].empty());
  CHECK(errors[1].empty());
  check_same_reports(cmp.finish().report, expected);
}
