// verify end to end on the real model (the short scenario): a correct backend passes for a sweep of seeds, and each
// kind of fault injected through the Backend interface fails verify and diff with exactly that tap named as the
// first divergence and dumped with its inputs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "compare/hdf5_io.hpp"
#include "compare/report.hpp"
#include "scenarios/backend.hpp"
#include "scenarios/verify.hpp"
#include "tests/compare/run_cli.hpp"
#include "tests/scenarios/verify_support.hpp"
#include "tests/support/allowance.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

// A correct backend whose numerics differ from the peer's: the peer fed the prompt in other pieces, so the GLA's
// fp32 state is rounded on another chunk grid (as a GPU with another prefill chunk does).
struct OtherPiecesBackend : Backend {
  std::unique_ptr<Backend> peer;
  int64_t piece;
  std::string name() const override { return "peer in other pieces (test)"; }
  BackendRun run(const Scenario& s, const TapFilter& f, const TapMap* forced) override {
    Scenario t = s;
    t.prefill_chunk = piece;
    return peer->run(t, f, forced);
  }
};

// The peer with one tap of its result perturbed after the run: the fault stays in that tap (the downstream taps are
// the peer's own), so verify must name exactly it.
struct FaultyBackend : Backend {
  std::unique_ptr<Backend> inner;
  std::function<void(TapMap&)> fault;
  std::string name() const override { return "faulty peer (test)"; }
  BackendRun run(const Scenario& s, const TapFilter& f, const TapMap* forced) override {
    BackendRun r = inner->run(s, f, forced);
    fault(r.taps);
    return r;
  }
};

const ToleranceRow& row_of(const std::string& name) { return tolerance_row(tolerance_table(), tap_kind(name)); }

// In row (q, g) of a selection tap, replaces a selected block scoring well above the row's boundary by an unselected
// past block scoring well below it (both at least twice the tie band away). Returns false when the row has none.
bool swap_out_of_band(const Truth& t, const std::string& blocks_name, Tap& blocks, int64_t q, int64_t g) {
  const Tap& sc = t.ref.at(blocks_name.substr(0, blocks_name.rfind('/')) + "/scores");
  const Tap& rb = t.ref.at(blocks_name);
  const int64_t G = rb.shape[1], K = rb.shape[2], NB = sc.shape[2];
  const double band = row_of(blocks_name).tie_band;
  const double* score = &sc.data[size_t((q * G + g) * NB)];
  std::vector<int64_t> ids;
  for (int64_t k = 0; k < K; ++k)
    if (double v = rb.data[size_t((q * G + g) * K + k)]; v >= 0) ids.push_back(int64_t(v));
  double boundary = std::numeric_limits<double>::infinity();
  for (int64_t b : ids)
    if (std::isfinite(score[b])) boundary = std::min(boundary, score[b]);
  int64_t high = -1, low = -1;
  for (int64_t b : ids)
    if (std::isfinite(score[b]) && score[b] > boundary * (1 + 2 * band)) high = b;
  for (int64_t b = 0; b < NB; ++b)
    if (std::isfinite(score[b]) && score[b] < boundary * (1 - 2 * band) && !std::count(ids.begin(), ids.end(), b))
      low = b;
  if (high < 0 || low < 0) return false;
  *std::find(ids.begin(), ids.end(), high) = low;
  std::sort(ids.begin(), ids.end());
  for (int64_t k = 0; k < K; ++k)
    blocks.data[size_t((q * G + g) * K + k)] = k < int64_t(ids.size()) ? double(ids[size_t(k)]) : -1;
  return true;
}

// The taps of one phase and layer (small dumps for `salasim diff`).
TapMap slice(const TapMap& m, const std::string& phase, int layer) {
  TapMap out;
  for (const auto& [n, t] : m)
    if (tap_phase(n) == phase && tap_layer(n) == layer) out[n] = t;
  return out;
}

}  // namespace

TEST_CASE("verify: a correct backend passes for a sweep of seeds", "[verify]") {
  struct Seeds {
    uint64_t weights, prompt;
    int64_t backend_piece;
  };
  for (const Seeds& seed : {Seeds{2, 3, 333}, Seeds{17, 29, 1100}, Seeds{101, 7, 64}}) {
    Scenario s = load_scenario(test::short_scenario_path());
    s.weights = synthetic_weights(seed.weights);
    resize_prompt(s, 1100, seed.prompt);  // past dense_len (1024), real choices from 768 on
    s.decode_steps = 2;
    s.decode_tokens.resize(2);
    const Truth truth = run_truth(s, TapFilter::all());
    OtherPiecesBackend be;
    be.peer = make_peer_backend();
    be.piece = seed.backend_piece;
    const VerifyResult v = verify_backend(s, truth, be);
    INFO("weights seed " << seed.weights << ", prompt seed " << seed.prompt << ", backend pieces of "
                         << seed.backend_piece << "\n" << format_report(v.report, PrintOptions{true}));
    CHECK(v.report.pass());
    CHECK(v.report.only_in_backend.empty());
    CHECK(v.report.only_in_reference.empty());
    int selections = 0;
    for (const TapResult& r : v.report.rows) selections += r.selection.has_value();
    CHECK(selections == 2 * 3);  // two sparse layers: the prefill and two decode steps
  }
}

TEST_CASE("verify: each fault injected through the Backend interface fails and names its tap", "[verify]") {
  const test::ShortRun& run = test::short_run();
  const Truth& t = run.truth;
  std::string tap, dir;
  std::function<void(TapMap&)> fault;
  SECTION("one element off by four times its allowance") {
    tap = "/prefill/layer_01/lightning/gla/out", dir = "verify_fault_element";
    const size_t i = t.ref.at(tap).data.size() / 3 + 7;
    const double v = t.ref.at(tap).data[i] + 4 * test::allowed_at(t.ref, t.peer, tap, i);
    fault = [tap, i, v](TapMap& m) { m.at(tap).data[i] = v; };
  }
  SECTION("a whole tensor scaled by four times its rel-RMS allowance") {
    tap = "/prefill/layer_02/mlp/out", dir = "verify_fault_scale";
    const double f = 1 + 4 * test::allowed_rel_rms(t.ref, t.peer, tap);
    fault = [tap, f](TapMap& m) {
      for (double& x : m.at(tap).data) x *= f;
    };
  }
  SECTION("one NaN in a decode step") {
    tap = "/decode_0002/layer_03/sparse/attn/out", dir = "verify_fault_nan";
    fault = [tap](TapMap& m) { m.at(tap).data[100] = std::numeric_limits<double>::quiet_NaN(); };
  }
  SECTION("one selected block swapped for one far outside the tie band") {
    tap = "/prefill/layer_03/sparse/select/blocks", dir = "verify_fault_block";
    Tap swapped = t.peer.at(tap);
    bool done = false;
    for (int64_t q = 1499; q >= 900 && !done; --q) done = swap_out_of_band(t, tap, swapped, q, 1);
    REQUIRE(done);
    fault = [tap, swapped](TapMap& m) { m.at(tap) = swapped; };
  }
  FaultyBackend be;
  be.inner = make_peer_backend(run.w);
  be.fault = fault;
  const VerifyResult v = verify_backend(run.s, t, be);
  INFO(format_report(v.report, PrintOptions{true}));
  CHECK_FALSE(v.report.pass());
  CHECK(v.report.failed == 1);
  REQUIRE(v.report.first_divergence());
  CHECK(v.report.first_divergence()->name == tap);

  // The failure dump holds that tap with reference, backend, difference and its op's inputs.
  const std::string scratch = test::scratch_dir(dir);
  DumpInfo info;
  info.scenario = run.s.name;
  info.backend = be.name();
  const std::string path = scratch + "/failures.h5";
  CHECK(dump_failures(path, v.report, t.ref, v.run.taps, info) == 1);
  const FailureDump d = read_failures(path);
  REQUIRE(d.entries.size() == 1);
  const FailureEntry& e = d.entries[0];
  CHECK(e.name == tap);
  CHECK(e.reference);
  CHECK(e.backend);
  CHECK(e.reference->shape == t.ref.at(tap).shape);
  CHECK(e.inputs.count("reference." + layer_dir(tap_layer(tap)) + ".input_norm.out"));
  CHECK(e.inputs.count("backend." + layer_dir(tap_layer(tap)) + ".input_norm.out"));

  // `salasim diff` on dumps of the tap's phase and layer names it too.
  const std::string phase = tap_phase(tap);
  const int layer = tap_layer(tap);
  const std::pair<std::string, TapMap> files[] = {
      {"ref", slice(t.ref, phase, layer)}, {"peer", slice(t.peer, phase, layer)}, {"backend", slice(v.run.taps, phase, layer)}};
  for (const auto& [file, map] : files) {
    info.backend = file;
    write_taps(scratch + "/" + file + ".h5", map, info, FloatStorage::Float32);
  }
  const test::CliResult diff = test::run_salasim("diff " + scratch + "/ref.h5 " + scratch + "/backend.h5 --peer " +
                                                 scratch + "/peer.h5 --failures-only");
  INFO(diff.output);
  CHECK(diff.exit_code == 1);
  CHECK(diff.output.find("FIRST DIVERGENCE: " + tap) != std::string::npos);
}
