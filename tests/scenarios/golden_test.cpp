// Goldens: a golden recorded (through the library, with a fake device name) from the peer passes its check; an
// altered tap or a changed gpu/ source fails it with the command that re-records it; the subset is what the header
// promises; the source hash notices every change that matters and nothing else.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "compare/source_hash.hpp"
#include "model/error.hpp"
#include "scenarios/golden.hpp"
#include "tests/compare/run_cli.hpp"
#include "tests/scenarios/verify_support.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A fake gpu/ folder: two kernels and a header.
std::string fake_gpu(const std::string& name) {
  const std::string dir = test::scratch_dir(name);
  write_file(fs::path(dir) / "gla.cu", "__global__ void gla() {}\n");
  write_file(fs::path(dir) / "gla.hpp", "void gla();\n");
  write_file(fs::path(dir) / "select_blocks.cu", "__global__ void select() {}\n");
  return dir;
}

// The golden a GPU run would give, with the peer's taps standing in for the GPU's.
Golden peer_golden(const test::ShortRun& r, const SourceHash& h) {
  const BackendRun run{r.truth.peer, r.truth.peer_times, "FakeGPU 9000 (test)"};
  return make_golden(r.s, "scenarios/tiny-short.json", run, "peer standing in for a GPU (test)", h, "test");
}

}  // namespace

TEST_CASE("source_hash: every change to a gpu/ source or a shared host-device header changes it, and nothing else does", "[golden]") {
  const std::string dir = fake_gpu("hash_a");
  const SourceHash a = hash_sources(dir);
  CHECK(a.files == std::vector<std::string>{"gpu/gla.cu", "gpu/gla.hpp", "gpu/select_blocks.cu"});
  CHECK(a.hex.rfind("fnv1a64:", 0) == 0);
  CHECK(hash_sources(fake_gpu("hash_b")).hex == a.hex);  // another checkout, the same sources

  write_file(fs::path(dir) / "notes.txt", "not a source\n");
  CHECK(hash_sources(dir).hex == a.hex);
  write_file(fs::path(dir) / "gla.cu", "__global__ void gla() { }\n");
  CHECK(hash_sources(dir).hex != a.hex);

  const std::string nested = fake_gpu("hash_d");  // kernels in a subfolder count too
  fs::create_directories(fs::path(nested) / "kernels");
  write_file(fs::path(nested) / "kernels" / "mma.cuh", "// tile\n");
  const SourceHash n = hash_sources(nested);
  CHECK(n.files == std::vector<std::string>{"gpu/gla.cu", "gpu/gla.hpp", "gpu/kernels/mma.cuh", "gpu/select_blocks.cu"});
  CHECK(n.hex != a.hex);

  const std::string moved = fake_gpu("hash_c");  // same bytes, one file renamed
  fs::rename(fs::path(moved) / "gla.hpp", fs::path(moved) / "gla2.hpp");
  CHECK(hash_sources(moved).hex != a.hex);
  CHECK_THROWS_AS(hash_sources(dir + "/absent"), Error);

  // The shared host-device headers count, framed by their own names; a missing one is an error.
  const std::string root = test::scratch_dir("hash_shared");
  fs::create_directories(fs::path(root) / "model");
  write_file(fs::path(root) / "model" / "synth.hpp", "// mix\n");
  const std::string g = fake_gpu("hash_e");
  const SourceHash s1 = hash_sources(g, "gpu", root, {"model/synth.hpp"});
  CHECK(s1.files.back() == "model/synth.hpp");
  CHECK(s1.hex != a.hex);
  write_file(fs::path(root) / "model" / "synth.hpp", "// mix, changed\n");
  CHECK(hash_sources(g, "gpu", root, {"model/synth.hpp"}).hex != s1.hex);
  CHECK_THROWS_AS(hash_sources(g, "gpu", root, {"model/bf16.hpp"}), Error);
  const SourceHash real = gpu_source_hash();  // this tree: gpu/ and both shared headers
  CHECK(std::count(real.files.begin(), real.files.end(), "model/bf16.hpp") == 1);
  CHECK(std::count(real.files.begin(), real.files.end(), "model/synth.hpp") == 1);
}

TEST_CASE("golden: recorded from the peer it passes, and an altered tap or a changed gpu/ source fails it", "[golden]") {
  const test::ShortRun& r = test::short_run();  // one truth run for every section
  const SourceHash h = hash_sources(fake_gpu("golden_gpu"));
  const std::string shown = "tests/golden/tiny-short.h5";
  const std::string rerecord =
      "build/salasim golden record --scenario scenarios/tiny-short.json --out tests/golden/tiny-short.h5";

  SECTION("written, read back and checked, it passes") {
    const std::string path = test::scratch_dir("golden_pass") + "/tiny-short.h5";
    write_golden(path, peer_golden(r, h));
    const Golden g = read_golden(path);
    CHECK(g.meta.device == "FakeGPU 9000 (test)");
    CHECK(g.meta.gpu_hash == h.hex);
    CHECK(g.meta.rows == golden_rows(r.s));
    const GoldenCheck c = check_golden(g, r.truth, h, shown);
    INFO(format_golden_check(c, g, path));
    CHECK(c.hash_ok());
    CHECK(c.report.pass());
    CHECK(c.pass());
    CHECK(c.report.rows.size() == g.taps.size());
  }

  SECTION("it keeps every tap kind, the golden rows of the prefill and the states of the last step") {
    const Golden g = peer_golden(r, h);
    const std::vector<int64_t> rows = golden_rows(r.s);
    CHECK(std::is_sorted(rows.begin(), rows.end()));
    CHECK(rows.front() == 0);
    CHECK(rows.back() == int64_t(r.s.prompt.size()) - 1);
    for (int64_t b : {int64_t(703), int64_t(704), int64_t(r.s.cfg.sparse.dense_len)})  // a piece boundary, dense_len
      CHECK(std::count(rows.begin(), rows.end(), b) == 1);
    std::set<std::string> kinds_run, kinds_golden;
    for (const auto& [n, t] : r.truth.peer) kinds_run.insert(tap_kind(n));
    for (const auto& [n, t] : g.taps) {
      kinds_golden.insert(tap_kind(n));
      const std::string phase = tap_phase(n);
      if (phase == "prefill" && !whole_sequence_tap(n)) CHECK(t.shape[0] == int64_t(rows.size()));
      if (whole_sequence_tap(n) && tap_kind(n) != "final/logits") {
        INFO(n);
        CHECK((phase == "prefill" || phase == decode_phase(r.s.decode_steps - 1)));
      }
    }
    CHECK(kinds_golden == kinds_run);
    for (int step = 0; step < r.s.decode_steps; ++step)
      CHECK(g.taps.count(fmt::format("/{}/layer_03/sparse/attn/out", decode_phase(step))));
  }

  SECTION("a tap altered far beyond its tolerance fails it") {
    Golden g = peer_golden(r, h);
    const std::string tap = "/prefill/layer_03/sparse/o_proj/out";
    for (double& x : g.taps.at(tap).data) x *= 2;
    const GoldenCheck c = check_golden(g, r.truth, h, shown);
    const std::string text = format_golden_check(c, g, shown);
    INFO(text);
    CHECK(c.hash_ok());
    CHECK_FALSE(c.pass());
    REQUIRE(c.report.first_divergence());
    CHECK(c.report.first_divergence()->name == tap);
    CHECK(text.find(rerecord) != std::string::npos);
  }

  SECTION("gpu/ sources changed since recording fail it") {
    const Golden g = peer_golden(r, h);
    const std::string other = fake_gpu("golden_gpu_changed");
    write_file(fs::path(other) / "gla.cu", "__global__ void gla() { /* faster */ }\n");
    const GoldenCheck c = check_golden(g, r.truth, hash_sources(other), shown);
    const std::string text = format_golden_check(c, g, shown);
    INFO(text);
    CHECK(c.report.pass());
    CHECK_FALSE(c.hash_ok());
    CHECK_FALSE(c.pass());
    CHECK(text.find("DIFFER") != std::string::npos);
    CHECK(text.find(rerecord) != std::string::npos);
  }

  SECTION("salasim golden check passes a good file and fails an altered one with the re-record command") {
    const std::string dir = test::scratch_dir("golden_cli");
    Golden g = peer_golden(r, gpu_source_hash());  // the current gpu/ sources: only the numerics decide
    write_golden(dir + "/good.h5", g);
    const test::CliResult ok = test::run_salasim("golden check --golden " + dir + "/good.h5");
    INFO(ok.output);
    CHECK(ok.exit_code == 0);
    CHECK(ok.output.find("golden check: PASS") != std::string::npos);

    for (double& x : g.taps.at("/decode_0001/layer_01/lightning/gla/out").data) x *= 2;
    write_golden(dir + "/bad.h5", g);
    const test::CliResult bad = test::run_salasim("golden check --golden " + dir + "/bad.h5");
    INFO(bad.output);
    CHECK(bad.exit_code == 1);
    CHECK(bad.output.find("FIRST DIVERGENCE: /decode_0001/layer_01/lightning/gla/out") != std::string::npos);
    CHECK(bad.output.find("build/salasim golden record --scenario scenarios/tiny-short.json --out ") !=
          std::string::npos);
    CHECK(bad.output.find("golden_cli/bad.h5") != std::string::npos);
  }
}
