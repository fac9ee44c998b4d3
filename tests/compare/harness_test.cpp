// The harness can fail: a correct backend passes over a sweep of seeds, and each kind of fault fails with its tap
// named as the first divergence, in process and through `salasim diff` on dumped files.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "compare/hdf5_io.hpp"
#include "compare/report.hpp"
#include "model/bf16.hpp"
#include "tests/compare/run_cli.hpp"
#include "tests/compare/synthetic.hpp"
#include "tests/support/allowance.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using test::Synthetic;

namespace {

const std::vector<uint64_t> kSeeds = {11, 23, 37, 41, 53};
const std::string kBlocks = "/prefill/layer_03/sparse/select/blocks";
const std::string kScores = "/prefill/layer_03/sparse/select/scores";

double band() { return tolerance_row(tolerance_table(), "sparse/select/blocks").tie_band; }

// One (query, group) row of a [T, G, K] block tap, as its selected ids.
std::vector<int64_t> selected(const Tap& t, int64_t q, int64_t g) {
  const int64_t G = t.shape[1], K = t.shape[2];
  std::vector<int64_t> ids;
  for (int64_t k = 0; k < K; ++k)
    if (double v = t.data[size_t((q * G + g) * K + k)]; v >= 0) ids.push_back(int64_t(v));
  return ids;
}

// Writes ids (ascending, then -1 padding) into row (q, g).
void set_selected(Tap& t, int64_t q, int64_t g, std::vector<int64_t> ids) {
  const int64_t G = t.shape[1], K = t.shape[2];
  std::sort(ids.begin(), ids.end());
  for (int64_t k = 0; k < K; ++k)
    t.data[size_t((q * G + g) * K + k)] = k < int64_t(ids.size()) ? double(ids[size_t(k)]) : -1;
}

struct Row {
  int64_t q, g;
  std::vector<int64_t> ids;  // the reference's selection
  const double* score;       // [NB] the reference's scores
  int64_t nb;
  double boundary;           // lowest finite score among ids
};

Row ref_row(const Synthetic& s, int64_t q, int64_t g) {
  const Tap& sc = s.ref.at(kScores);
  Row r{q, g, selected(s.ref.at(kBlocks), q, g), &sc.data[size_t((q * sc.shape[1] + g) * sc.shape[2])], sc.shape[2],
        std::numeric_limits<double>::infinity()};
  for (int64_t b : r.ids)
    if (std::isfinite(r.score[b])) r.boundary = std::min(r.boundary, r.score[b]);
  return r;
}

// The unselected past block with the lowest (or highest) finite score.
int64_t unselected(const Row& r, bool lowest) {
  int64_t best = -1;
  for (int64_t b = 0; b < r.nb; ++b) {
    if (!std::isfinite(r.score[b]) || std::count(r.ids.begin(), r.ids.end(), b)) continue;
    if (best < 0 || (lowest ? r.score[b] < r.score[best] : r.score[b] > r.score[best])) best = b;
  }
  return best;
}

// Dumps the three maps and runs `salasim diff` on them.
test::CliResult diff_dumps(const Synthetic& s, const std::string& dir) {
  DumpInfo info;
  info.scenario = "synthetic";
  const std::pair<std::string, const TapMap*> files[] = {{"ref", &s.ref}, {"peer", &s.peer}, {"backend", &s.backend}};
  for (const auto& [file, map] : files) {
    info.backend = file;
    write_taps(dir + "/" + file + ".h5", *map, info, FloatStorage::Float32);
  }
  return test::run_salasim("diff " + dir + "/ref.h5 " + dir + "/backend.h5 --peer " + dir + "/peer.h5 --failures-only");
}

}  // namespace

TEST_CASE("harness: a correct backend passes for a sweep of seeds", "[harness]") {
  for (uint64_t seed : kSeeds) {
    const Synthetic s = test::make_synthetic(seed);
    const CompareReport r = compare_taps(s.ref, &s.peer, s.backend);
    INFO("seed " << seed << "\n" << format_report(r, PrintOptions{true}));
    CHECK(r.pass());
    CHECK(r.failed == 0);
    std::set<std::string> kinds;
    for (const TapResult& row : r.rows) kinds.insert(row.kind);
    CHECK(kinds.size() == tolerance_table().size());  // every row of the table was exercised
    for (const TapResult& row : r.rows)
      if (row.metrics) {
        INFO(row.name);
        CHECK(row.rel_rms.err > 0);  // a perturbed backend, not a copy
        CHECK(row.peer_metrics);
      }
  }
}

TEST_CASE("harness: each fault fails and names its tap as the first divergence", "[harness]") {
  Synthetic s = test::make_synthetic(101);
  std::string tap, dir;
  SECTION("one element off by four times its allowance") {
    tap = "/prefill/layer_01/lightning/gla/out", dir = "fault_element";
    Tap& b = s.backend.at(tap);
    const size_t i = b.data.size() / 3;
    b.data[i] = s.ref.at(tap).data[i] + 4 * test::allowed_at(s.ref, s.peer, tap, i);
  }
  SECTION("a whole tensor scaled by 1 + 1e-2") {
    tap = "/prefill/layer_02/mlp/out", dir = "fault_scale";
    for (double& v : s.backend.at(tap).data) v *= 1 + 1e-2;
  }
  SECTION("one NaN") {
    tap = "/prefill/layer_00/sparse/attn/out", dir = "fault_nan";
    s.backend.at(tap).data[12345] = std::numeric_limits<double>::quiet_NaN();
  }
  SECTION("one selected block swapped for one far outside the tie band") {
    tap = kBlocks, dir = "fault_block";
    const Row r = ref_row(s, 40, 1);
    int64_t top = -1;
    for (int64_t b : r.ids)
      if (std::isfinite(r.score[b]) && (top < 0 || r.score[b] > r.score[top])) top = b;
    const int64_t low = unselected(r, true);
    REQUIRE(top >= 0);
    REQUIRE(low >= 0);
    REQUIRE(r.score[top] > r.boundary * (1 + 2 * band()));  // the swap really is outside the band
    REQUIRE(r.score[low] < r.boundary * (1 - 2 * band()));
    std::vector<int64_t> ids = r.ids;
    *std::find(ids.begin(), ids.end(), top) = low;
    set_selected(s.backend.at(kBlocks), r.q, r.g, ids);
  }
  const CompareReport rep = compare_taps(s.ref, &s.peer, s.backend);
  INFO(format_report(rep, PrintOptions{true}));
  CHECK_FALSE(rep.pass());
  CHECK(rep.failed == 1);
  REQUIRE(rep.first_divergence());
  CHECK(rep.first_divergence()->name == tap);

  const test::CliResult d = diff_dumps(s, test::scratch_dir(dir));
  INFO(d.output);
  CHECK(d.exit_code == 1);
  CHECK(d.output.find("FIRST DIVERGENCE: " + tap) != std::string::npos);
}

TEST_CASE("harness: a selection swap inside the tie band passes", "[harness]") {
  Synthetic s = test::make_synthetic(202);
  const Row r = ref_row(s, 20, 0);
  int64_t edge = -1;  // the reference's boundary block
  for (int64_t b : r.ids)
    if (r.score[b] == r.boundary) edge = b;
  const int64_t next = unselected(r, false);
  REQUIRE(edge >= 0);
  REQUIRE(next >= 0);
  // Put the best unselected block half a band under the boundary, the same in all three maps (a bf16 value), then
  // let the backend pick it instead of the boundary block.
  const double near = round_bf16(r.boundary * (1 - band() / 2));
  REQUIRE(near < r.boundary);
  const size_t at = size_t((r.q * s.ref.at(kScores).shape[1] + r.g) * r.nb + next);
  for (TapMap* m : {&s.ref, &s.peer, &s.backend}) m->at(kScores).data[at] = near;
  std::vector<int64_t> ids = r.ids;
  *std::find(ids.begin(), ids.end(), edge) = next;
  set_selected(s.backend.at(kBlocks), r.q, r.g, ids);

  const CompareReport rep = compare_taps(s.ref, &s.peer, s.backend);
  INFO(format_report(rep, PrintOptions{true}));
  CHECK(rep.pass());
  for (const TapResult& row : rep.rows)
    if (row.name == kBlocks) {
      REQUIRE(row.selection);
      CHECK(row.selection->in_band >= 2);
      CHECK(row.selection->out_of_band == 0);
    }
}

TEST_CASE("diff: dumps of a correct backend pass, without a peer it says so, bad input exits 2", "[diff]") {
  const Synthetic s = test::make_synthetic(303);
  const std::string dir = test::scratch_dir("diff_ok");
  const test::CliResult ok = diff_dumps(s, dir);
  INFO(ok.output);
  CHECK(ok.exit_code == 0);
  CHECK(ok.output.find("all " + std::to_string(s.ref.size()) + " taps pass") != std::string::npos);

  const test::CliResult no_peer = test::run_salasim("diff " + dir + "/ref.h5 " + dir + "/backend.h5 --failures-only");
  INFO(no_peer.output);
  CHECK(no_peer.output.find("--peer not given") != std::string::npos);

  const test::CliResult json = test::run_salasim("diff " + dir + "/ref.h5 " + dir + "/backend.h5 --peer " + dir +
                                                 "/peer.h5 --json");
  CHECK(json.exit_code == 0);
  CHECK(json.output.find("\"first_divergence\": null") != std::string::npos);

  const test::CliResult bad = test::run_salasim("diff " + dir + "/absent.h5 " + dir + "/backend.h5");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("absent.h5: no such file") != std::string::npos);
}
