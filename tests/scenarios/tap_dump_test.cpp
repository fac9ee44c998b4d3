// Tap dumps of whole runs as a user makes them: `salasim ref --dump-taps` and `salasim verify --dump-taps` (whose
// reference and peer stream their taps through the comparison, so the files are written as the taps go by) read
// back as exactly the taps a run that keeps them holds, and `salasim diff` takes the files.
#include <filesystem>

#include "compare/hdf5_io.hpp"
#include "scenarios/run_reference.hpp"
#include "tests/compare/run_cli.hpp"
#include "tests/scenarios/verify_support.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/same_taps.hpp"

using namespace salasim;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The float64 reference on the short scenario (with `tokens`, when given, as `salasim ref --tokens` sets them),
// keeping the taps `filter` records.
TapMap reference_taps(const TapFilter& filter, int64_t tokens = 0) {
  Scenario s = load_scenario(test::short_scenario_path());
  override_lengths(s, tokens, -1);
  return run_reference(s, ref::RefOptions{}, filter).taps;
}

}  // namespace

TEST_CASE("ref: --dump-taps writes the taps --taps chooses, all rows, equal to the run's taps", "[dump]") {
  const std::string dir = test::scratch_dir("ref_dump_taps");
  const test::CliResult r = test::run_salasim("ref --scenario scenarios/tiny-short.json --tokens 1100 --taps layer_01/ "
                                              "layer_03/sparse/select final/ --dump-taps " + dir + "/some.h5");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const TapMap want = reference_taps(TapFilter{{"layer_01/", "layer_03/sparse/select", "final/"}}, 1100);
  CHECK(has(r.output, "wrote " + std::to_string(want.size()) + " taps, all rows, to " + dir + "/some.h5"));
  CHECK(want.count("/prefill/layer_03/sparse/select/blocks"));  // 1100 tokens: sparse, in two pieces (704 + 396)
  CHECK(want.at("/prefill/layer_01/mlp/out").shape[0] == 1100);
  test::check_same_taps(read_taps(dir + "/some.h5").taps, want);
  std::filesystem::remove_all(dir);
}

// The short scenario whole: 1500 tokens in pieces of 704, sparse, 4 decode steps; each dump is ~650 MB of float64.
TEST_CASE("verify: --dump-taps writes each run's taps as they stream by, equal to ref --dump-taps", "[dump]") {
  const std::string dir = test::scratch_dir("verify_dump_taps");
  const std::string ref = dir + "/out/tiny-short-reference.h5", peer = dir + "/out/tiny-short-peer.h5";
  const test::CliResult v = test::run_salasim("verify --scenario scenarios/tiny-short.json --backend peer "
                                              "--failures-only --dump-taps " + dir + "/out");
  INFO(v.output);
  REQUIRE(v.exit_code == 0);
  CHECK(has(v.output, "verify: PASS"));
  const test::CliResult r =
      test::run_salasim("ref --scenario scenarios/tiny-short.json --dump-taps " + dir + "/ref.h5");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::string n;
  {
    const TapMap want = reference_taps(TapFilter::all());  // the run keeping every tap in memory
    n = std::to_string(want.size());
    CHECK(has(r.output, "wrote " + n + " taps, all rows, to " + dir + "/ref.h5"));
    CHECK(has(v.output, "wrote every tap of the reference (" + n + " taps) to " + ref + ", of the peer (" + n +
                            " taps) to " + peer));
    const TapDump a = read_taps(dir + "/ref.h5");
    test::check_same_taps(a.taps, want);
    CHECK(a.info.scenario == "tiny-short");
    CHECK(a.info.backend == "reference");
    const TapDump b = read_taps(ref);
    test::check_same_taps(b.taps, want);  // streamed through verify's comparison, the same taps
    CHECK(b.info.backend == "reference");
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/out/tiny-short-backend.h5"));  // peer mode: the peer is the backend

  const test::CliResult same = test::run_salasim("diff " + dir + "/ref.h5 " + ref);
  INFO(same.output);
  CHECK(same.exit_code == 0);
  CHECK(has(same.output, "all " + n + " taps pass"));
  // verify's own comparison (the peer as the backend, its allowance from itself) reproduced from its dumps.
  const test::CliResult d = test::run_salasim("diff " + ref + " " + peer + " --peer " + peer + " --json");
  INFO(d.output);
  CHECK(d.exit_code == 0);
  CHECK(has(d.output, "\"failed\": 0,"));
  CHECK(has(d.output, "\"taps\": " + n + ","));
  std::filesystem::remove_all(dir);
}
