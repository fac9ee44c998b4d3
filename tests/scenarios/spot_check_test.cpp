// Spot checks with the peer standing in for the GPU: its hand-over from a 10K-token run passes, and a fault in any
// handed-over output fails with that spot tap named; malformed inputs name the field.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "model/error.hpp"
#include "scenarios/backend.hpp"
#include "scenarios/spot_check.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

struct SpotRun {
  Scenario s;
  std::vector<SpotInput> inputs;
};

// tests/data/spot-10k.json: the tiny model's first two layers (sparse 0, Lightning 1), 10000 tokens.
const SpotRun& spot_run() {
  static const SpotRun r = [] {
    SpotRun x;
    x.s = load_scenario(test::source_path("tests/data/spot-10k.json"));
    const SpotRequest req = spot_request(int64_t(x.s.prompt.size()), 6, default_spot_layers(x.s.cfg));
    x.inputs = make_peer_backend()->spot_inputs(x.s, req);
    return x;
  }();
  return r;
}

// The message of the salasim::Error check_spots throws, or "" when it does not throw.
std::string spot_error(const ModelConfig& c, const std::vector<SpotInput>& in) {
  try {
    check_spots(c, in);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

SpotInput& of_layer(std::vector<SpotInput>& in, int layer) {
  for (SpotInput& s : in)
    if (s.layer == layer) return s;
  FAIL("no spot input for layer " << layer);
  return in.front();
}

}  // namespace

TEST_CASE("spot_check: the request ends at the last token, inside the GLA window", "[spot]") {
  const SpotRequest r = spot_request(10000, 6, {0, 1});
  CHECK(r.positions.size() == 6);
  CHECK(r.positions.back() == 9999);
  CHECK(r.window_start % 64 == 0);
  CHECK(r.positions.front() >= r.window_start);
  CHECK(std::is_sorted(r.positions.begin(), r.positions.end()));
  CHECK(spot_request(100, 500, {0}).positions.size() <= 100);  // never more positions than the window holds
}

TEST_CASE("spot_check: the peer's 10K-token hand-over passes, a fault fails naming its spot tap, a malformed input its field", "[spot]") {
  const SpotRun& r = spot_run();  // one 10K-token peer prefill for every section
  REQUIRE(r.inputs.size() == 2);
  std::vector<SpotInput> in = r.inputs;
  std::string tap;

  SECTION("as handed over, every spot tap passes") {
    const SpotCheck c = check_spots(r.s.cfg, in);
    INFO(format_report(c.report));
    CHECK(c.report.pass());
    std::set<std::string> kinds;
    for (const TapResult& row : c.report.rows) kinds.insert(row.kind);
    CHECK(kinds == std::set<std::string>{"sparse/compress_k/k1", "sparse/compress_k/k2", "sparse/select/scores",
                                         "sparse/select/blocks", "sparse/attn/out", "lightning/gla/out",
                                         "lightning/gla/state"});
    for (const TapResult& row : c.report.rows)
      if (row.selection) CHECK(row.selection->rows == 6 * 2);  // every position, both kv groups
    return;
  }
  SECTION("one attention element scaled up") {
    tap = "/spot/layer_00/sparse/attn/out";
    float& x = of_layer(in, 0).sparse.attn.data[4096 * 3 + 77];
    x = 4 * x + 1;
  }
  SECTION("a NaN in the GLA output") {
    tap = "/spot/layer_01/lightning/gla/out";
    of_layer(in, 1).lightning.out.data[12] = std::numeric_limits<float>::quiet_NaN();
  }
  SECTION("the state after the window scaled") {
    tap = "/spot/layer_01/lightning/gla/state";
    for (float& x : of_layer(in, 1).lightning.state1.data) x *= 1.5f;
  }
  SECTION("the highest-scoring chosen block swapped for the lowest-scoring past block") {
    tap = "/spot/layer_00/sparse/select/blocks";
    SparseSpot& sp = of_layer(in, 0).sparse;
    const int64_t K = sp.blocks.shape[2], NB = sp.scores.shape[2], row = 5 * 2 + 1;  // last position, group 1
    float* ids = &sp.blocks.data[size_t(row * K)];
    const float* sc = &sp.scores.data[size_t(row * NB)];
    int64_t hi = -1, lo = -1;
    for (int64_t k = 0; k < K; ++k)
      if (ids[k] >= 0 && std::isfinite(sc[int64_t(ids[k])]) && (hi < 0 || sc[int64_t(ids[k])] > sc[int64_t(ids[hi])]))
        hi = k;
    for (int64_t b = 0; b < NB; ++b)
      if (std::isfinite(sc[b]) && std::find(ids, ids + K, float(b)) == ids + K && (lo < 0 || sc[b] < sc[lo])) lo = b;
    REQUIRE(hi >= 0);
    REQUIRE(lo >= 0);
    ids[hi] = float(lo);
    std::sort(ids, ids + K, [](float a, float b) { return a >= 0 && (b < 0 || a < b); });
  }
  SECTION("malformed: a key cache one token short") {
    SpotTensor& k = of_layer(in, 0).sparse.k_cache;
    k.shape[1] -= 1;
    k.data.resize(size_t(k.numel()));
    const std::string e = spot_error(r.s.cfg, in);
    INFO(e);
    CHECK(e.find("spot input of layer 0: field 'k_cache' has shape [2, 9999, 128], expected [2, 10000, 128]") !=
          std::string::npos);
    return;
  }
  SECTION("malformed: a position outside the GLA window") {
    of_layer(in, 1).lightning.window_start += 4096;
    const std::string e = spot_error(r.s.cfg, in);
    INFO(e);
    CHECK(e.find("spot input of layer 1: position") != std::string::npos);
    CHECK(e.find("outside the window") != std::string::npos);
    return;
  }
  SECTION("malformed: the wrong mixer for the layer") {
    of_layer(in, 1).mixer = Mixer::Sparse;
    CHECK_THROWS_AS(check_spots(r.s.cfg, in), Error);
    CHECK(spot_error(r.s.cfg, in).find("makes layer 1 lightning") != std::string::npos);
    return;
  }
  const SpotCheck c = check_spots(r.s.cfg, in);
  INFO(format_report(c.report, PrintOptions{true}));
  CHECK_FALSE(c.report.pass());
  REQUIRE(c.report.first_divergence());
  CHECK(c.report.first_divergence()->name == tap);
}

TEST_CASE("spot_check: a hand-over takes rows by absolute position and names a missing tap or an unrecorded row", "[spot]") {
  const ModelConfig& c = spot_run().s.cfg;  // layer 0 sparse, layer 1 Lightning
  REQUIRE(c.layers.at(1) == Mixer::Lightning);
  SpotRequest req;
  req.layers = {1};
  req.window_start = 128;
  req.positions = {130, 131};
  const int64_t n = 132, first = 128, width = 3;
  // A [4, width] tap recorded from position 128 whose element (i, k) is 10 * (128 + i) + k: rows say where they were.
  auto tap = [&] {
    Tap t;
    t.shape = {n - first, width};
    for (int64_t i = first; i < n; ++i)
      for (int64_t k = 0; k < width; ++k) t.data.push_back(double(10 * i + k));
    return t;
  };
  TapMap taps;
  for (const char* rel : {"qk_rope/q", "qk_rope/k", "proj/v", "gla/out"})
    taps["/prefill/layer_01/lightning/" + std::string(rel)] = tap();
  const SpotInput in = spot_input_from_taps(c, taps, req, 1, n, first, "test");
  CHECK(in.mixer == Mixer::Lightning);
  CHECK(in.lightning.q.shape == std::vector<int64_t>{2, width});
  CHECK(in.lightning.q.data.front() == 1300.0f);  // position 130, element 0
  CHECK(in.lightning.out.data.back() == 1312.0f);  // position 131, element 2
  CHECK(in.lightning.k.shape == std::vector<int64_t>{n - first, width});  // the window [128, 132)
  CHECK(in.lightning.v.data.front() == 1280.0f);

  SpotRequest early = req;
  early.window_start = 64;  // the window's keys before 128 were never recorded
  const std::string e1 = test::error_of([&] { spot_input_from_taps(c, taps, early, 1, n, first, "test"); });
  CHECK(e1.find("test spot inputs") != std::string::npos);
  CHECK(e1.find("/prefill/layer_01/lightning/qk_rope/k") != std::string::npos);
  CHECK(e1.find("not position 64") != std::string::npos);

  taps.erase("/prefill/layer_01/lightning/gla/out");
  const std::string e2 = test::error_of([&] { spot_input_from_taps(c, taps, req, 1, n, first, "test"); });
  CHECK(e2.find("layer 1 recorded no '/lightning/gla/out'") != std::string::npos);
}

TEST_CASE("spot_check: prefill cuts are the scenario's pieces plus the window start, each once", "[spot]") {
  Scenario s = spot_run().s;
  s.prompt.assign(10000, 1);
  s.prefill_chunk = 4096;
  CHECK(prefill_cuts(s) == std::vector<int64_t>{0, 4096, 8192, 10000});
  CHECK(prefill_cuts(s, {8960}) == std::vector<int64_t>{0, 4096, 8192, 8960, 10000});
  CHECK(prefill_cuts(s, {4096}) == std::vector<int64_t>{0, 4096, 8192, 10000});
  s.prefill_chunk = 0;  // one call
  CHECK(prefill_cuts(s, {8960}) == std::vector<int64_t>{0, 8960, 10000});
}
