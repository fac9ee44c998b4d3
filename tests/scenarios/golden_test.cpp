// Goldens: a golden recorded (through the library, with a fake device name) from the peer passes its check; an
// altered tap, a changed gpu/ source, a thinned or padded tap set, another scenario or another format fails it,
// naming what differs; the subset is what the header promises; the source hash notices every change that matters
// and nothing else.
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
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using test::error_of;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A fake source tree: two kernels, a header and a copy of the real launch-geometry header, with the manifest that
// lists them.
struct FakeTree {
  std::string root;
  GpuInputs in;
};
FakeTree fake_tree(const std::string& name) {
  const std::string root = test::scratch_dir(name);
  fs::create_directories(fs::path(root) / "gpu");
  write_file(fs::path(root) / "gpu" / "gla.cu", "__global__ void gla() {}\n");
  write_file(fs::path(root) / "gpu" / "gla.hpp", "void gla();\n");
  write_file(fs::path(root) / "gpu" / "select_blocks.cu", "__global__ void select() {}\n");
  fs::copy_file(test::source_path("gpu/launch_geometry.hpp"), fs::path(root) / "gpu" / "launch_geometry.hpp");
  GpuInputs in;
  in.cuda_flags = {"-O3", "-DNDEBUG", "--generate-code=arch=compute_90a,code=[compute_90a,sm_90a]"};
  in.cxx_flags = {"-O3", "-DNDEBUG"};
  in.files = {"gpu/gla.cu", "gpu/gla.hpp", "gpu/launch_geometry.hpp", "gpu/select_blocks.cu"};
  return {root, in};
}
SourceHash fake_hash(const std::string& name) {
  const FakeTree t = fake_tree(name);
  return hash_inputs(t.root, t.in);
}
using test::read_file;
void replace_once(const fs::path& p, const std::string& from, const std::string& to) {
  std::string text = read_file(p);
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  write_file(p, text);
}

}  // namespace

TEST_CASE("source_hash: a code change, a renamed input or another flag changes it; comments and layout do not",
          "[golden]") {
  const FakeTree t = fake_tree("hash_a");
  const SourceHash a = hash_inputs(t.root, t.in);
  CHECK(a.hex.rfind("tok64:", 0) == 0);
  REQUIRE(a.files.size() == 6);  // four files, then the two flag sets
  CHECK(a.files[0].rfind("gpu/gla.cu=", 0) == 0);
  CHECK(a.files[4].rfind("cuda-flags=", 0) == 0);
  CHECK(hash_inputs(fake_tree("hash_b").root, t.in).hex == a.hex);  // another checkout, the same sources

  const fs::path gla = fs::path(t.root) / "gpu" / "gla.cu";
  write_file(gla, "// the GLA kernel\n__global__   void gla( )\n{\n  /* nothing yet */ }\n");
  CHECK(hash_inputs(t.root, t.in).hex == a.hex);
  write_file(gla, "__global__ void gla() { int x; }\n");
  const SourceHash changed = hash_inputs(t.root, t.in);
  CHECK(changed.hex != a.hex);
  CHECK(changed_inputs(a.files, changed.files) == std::vector<std::string>{"gpu/gla.cu"});
  write_file(gla, "__global__ void gla() {}\n");
  CHECK(hash_inputs(t.root, t.in).hex == a.hex);

  // The launch-geometry header: a constant's value changes the hash, a comment and a reflowed line do not.
  const fs::path geo = fs::path(t.root) / "gpu" / "launch_geometry.hpp";
  replace_once(geo, "constexpr int kSelectSplit = 512;", "constexpr int kSelectSplit = 512;  // windows: see above");
  replace_once(geo, "inline int64_t gla_segment_chunks(int64_t T) {",
               "inline int64_t\ngla_segment_chunks(int64_t  T)\n{");
  CHECK(hash_inputs(t.root, t.in).hex == a.hex);
  replace_once(geo, "constexpr int kSelectSplit = 512;", "constexpr int kSelectSplit = 256;");
  const SourceHash geo_changed = hash_inputs(t.root, t.in);
  CHECK(geo_changed.hex != a.hex);
  CHECK(changed_inputs(a.files, geo_changed.files) == std::vector<std::string>{"gpu/launch_geometry.hpp"});
  replace_once(geo, "constexpr int kSelectSplit = 256;", "constexpr int kSelectSplit = 512;");
  replace_once(geo, "return std::max<int64_t>(8, (chunks + 511) / 512);",
               "return std::max<int64_t>(16, (chunks + 511) / 512);");
  CHECK(hash_inputs(t.root, t.in).hex != a.hex);  // the GLA scan's segments: another reduction order

  // Flags and the file list are part of it.
  GpuInputs fast = fake_tree("hash_c").in;
  fast.cuda_flags.push_back("--use_fast_math");
  const SourceHash f = hash_inputs(fake_tree("hash_d").root, fast);
  CHECK(f.hex != a.hex);
  CHECK(changed_inputs(a.files, f.files) == std::vector<std::string>{"cuda-flags"});
  const FakeTree moved = fake_tree("hash_e");  // same bytes, one file renamed
  fs::rename(fs::path(moved.root) / "gpu" / "gla.hpp", fs::path(moved.root) / "gpu" / "gla2.hpp");
  GpuInputs renamed = moved.in;
  renamed.files[1] = "gpu/gla2.hpp";
  CHECK(hash_inputs(moved.root, renamed).hex != a.hex);
  CHECK(error_of([&] { hash_inputs(moved.root, moved.in); }).find("gpu/gla.hpp") != std::string::npos);

  // This tree: its manifest lists the launch geometry, the shared host-device headers and every kernel.
  const SourceHash real = gpu_source_hash();
  for (const char* f : {"gpu/launch_geometry.hpp=", "model/bf16.hpp=", "model/synth.hpp=", "model/windows.hpp=",
                        "gpu/gla.cu=", "model/runner_plan.hpp="})
    CHECK(std::count_if(real.files.begin(), real.files.end(),
                        [&](const std::string& e) { return e.rfind(f, 0) == 0; }) == 1);
}

namespace {

// The golden a GPU run would give, with the peer's taps standing in for the GPU's.
Golden peer_golden(const test::ShortRun& r, const SourceHash& h) {
  const BackendRun run{r.truth.peer, r.truth.peer_times, "FakeGPU 9000 (test)"};
  return make_golden(r.s, "scenarios/tiny-short.json", run, "peer standing in for a GPU (test)", h, "test");
}

}  // namespace

TEST_CASE("golden: recorded from the peer it passes, and an altered tap or a changed gpu/ source fails it",
          "[golden]") {
  const test::ShortRun& r = test::short_run();  // one truth run for every section
  const SourceHash h = fake_hash("golden_gpu");
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
    const GoldenCheck c = check_golden(g, r.s, r.truth, h, shown);
    INFO(format_golden_check(c, g, path));
    CHECK(c.hash_ok());
    CHECK(c.report.pass());
    CHECK(c.pass());
    CHECK(c.report.rows.size() == g.taps.size());
    CHECK(c.tap_set_ok());
    CHECK(g.meta.manifest == tap_shapes(g.taps));  // the manifest survives the file
    CHECK(g.meta.manifest_source.rfind("recorded", 0) == 0);
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
    const GoldenCheck c = check_golden(g, r.s, r.truth, h, shown);
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
    const FakeTree other = fake_tree("golden_gpu_changed");
    write_file(fs::path(other.root) / "gpu" / "gla.cu", "__global__ void gla() { int faster; }\n");
    const GoldenCheck c = check_golden(g, r.s, r.truth, hash_inputs(other.root, other.in), shown);
    const std::string text = format_golden_check(c, g, shown);
    INFO(text);
    CHECK(c.report.pass());
    CHECK_FALSE(c.hash_ok());
    CHECK_FALSE(c.pass());
    CHECK(text.find("DIFFER") != std::string::npos);
    CHECK(text.find("changed: gpu/gla.cu\n") != std::string::npos);
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

TEST_CASE("golden: a thinned or padded tap set, another scenario or another format fails, naming what differs",
          "[golden]") {
  const test::ShortRun& r = test::short_run();
  const SourceHash h = fake_hash("golden_set_gpu");
  const std::string shown = "tests/golden/tiny-short.h5";
  const Golden full = peer_golden(r, h);
  const std::string kept = "/prefill/layer_03/sparse/attn/out";

  SECTION("thinned to one tap, manifest and all, it fails and names the taps it lacks") {
    Golden g = full;
    g.taps = {{kept, full.taps.at(kept)}};
    g.meta.manifest = tap_shapes(g.taps);
    const GoldenCheck c = check_golden(g, r.s, r.truth, h, shown);
    const std::string text = format_golden_check(c, g, shown);
    INFO(text);
    CHECK_FALSE(c.pass());
    CHECK(c.stored.ok());                                  // the file holds its (thinned) manifest ...
    CHECK(c.made.missing.size() == full.taps.size() - 1);  // ... which lacks what the reference records
    CHECK(c.report.only_in_reference.size() == full.taps.size() - 1);
    const std::string fail_line = fmt::format("tap set: FAIL: the reference records {} taps", full.taps.size());
    CHECK(text.find(fail_line) != std::string::npos);
    CHECK(text.find(fmt::format("the manifest lacks {} tap(s): /", full.taps.size() - 1)) != std::string::npos);
    CHECK(text.find("the tap set differs from the reference's") != std::string::npos);
  }

  SECTION("datasets deleted after writing, its manifest intact, it fails and names them") {
    Golden g = full;
    const std::string gone = "/decode_0001/layer_01/lightning/gla/out";
    g.taps.erase(gone);
    const GoldenCheck c = check_golden(g, r.s, r.truth, h, shown);
    const std::string text = format_golden_check(c, g, shown);
    INFO(text);
    CHECK_FALSE(c.pass());
    CHECK(c.made.ok());
    CHECK(c.stored.missing == std::vector<std::string>{gone});
    CHECK(text.find("the file lacks, of its own manifest, 1 tap(s): " + gone) != std::string::npos);
  }

  SECTION("an extra tap, one the reference does not record, fails it and is named") {
    // A decode step's state that only the last step keeps, and a kind the model has no tap of.
    for (const std::string extra : {"/decode_0000/layer_01/lightning/gla/state", "/prefill/layer_01/no/such"}) {
      Golden g = full;
      g.taps[extra] = full.taps.at("/decode_0003/layer_01/lightning/gla/state");
      g.meta.manifest = tap_shapes(g.taps);
      const GoldenCheck c = check_golden(g, r.s, r.truth, h, shown);
      const std::string text = format_golden_check(c, g, shown);
      INFO(text);
      CHECK_FALSE(c.pass());
      CHECK(c.made.extra == std::vector<std::string>{extra});
      CHECK(c.report.pass());  // every tap the reference records still matches
      CHECK(text.find("the reference does not record, 1 tap(s): " + extra) != std::string::npos);
    }
  }

  SECTION("a tap of another shape fails it and is named with both shapes") {
    Golden g = full;
    Tap& t = g.taps.at(kept);
    t.shape[0] -= 1;
    t.data.resize(size_t(t.numel()));
    g.meta.manifest = tap_shapes(g.taps);
    const GoldenCheck c = check_golden(g, r.s, r.truth, h, shown);
    INFO(format_golden_check(c, g, shown));
    CHECK_FALSE(c.pass());
    REQUIRE(c.made.reshaped.size() == 1);
    CHECK(c.made.reshaped[0].rfind(kept + ": [10,", 0) == 0);
  }

  SECTION("a golden recorded on another scenario fails it, in the library and through the CLI") {
    Golden g = full;
    g.meta.scenario = "tiny-sparse";
    const GoldenCheck c = check_golden(g, r.s, r.truth, h, shown);
    const std::string text = format_golden_check(c, g, shown);
    INFO(text);
    CHECK_FALSE(c.scenario_ok);
    CHECK_FALSE(c.pass());
    CHECK(text.find("recorded on scenario 'tiny-sparse', checked against 'tiny-short'") != std::string::npos);

    const std::string path = test::scratch_dir("golden_other_scenario") + "/tiny-short.h5";
    write_golden(path, full);
    const test::CliResult cli =
        test::run_salasim("golden check --scenario scenarios/tiny-sparse.json --golden " + path);
    INFO(cli.output);
    CHECK(cli.exit_code == 2);
    CHECK(cli.output.find("the golden was recorded on scenario 'tiny-short', but scenarios/tiny-sparse.json is "
                          "scenario 'tiny-sparse'") != std::string::npos);
  }

  SECTION("another golden format, or a manifest that is not one, is refused naming the file and attribute") {
    const std::string dir = test::scratch_dir("golden_format");
    DumpInfo info;
    info.scenario = "tiny-short";
    info.backend = "test";
    info.extra = {{"golden_format", "1"},
                  {"golden_device", "FakeGPU"},
                  {"golden_gpu_source_hash", h.hex},
                  {"golden_gpu_source_files", "gpu/gla.cu"},
                  {"golden_scenario_path", "scenarios/tiny-short.json"},
                  {"golden_prefill_rows", "0,1"}};
    write_taps(dir + "/v1.h5", {{kept, full.taps.at(kept)}}, info, FloatStorage::Float32);
    std::string msg = error_of([&] { read_golden(dir + "/v1.h5"); });
    CHECK(msg.find("v1.h5: file attribute 'golden_format' is '1', this build reads format 2") != std::string::npos);
    const test::CliResult cli = test::run_salasim("golden check --golden " + dir + "/v1.h5");
    INFO(cli.output);
    CHECK(cli.exit_code == 2);
    CHECK(cli.output.find("'golden_format' is '1'") != std::string::npos);

    info.extra["golden_format"] = kGoldenFormat;
    info.extra["golden_manifest_source"] = "test";
    for (const std::string bad :
         {"[1, 2]", R"({"/prefill/embed/out": "11x256"})", R"({"/prefill/embed/out": [11, -1]})", "{"}) {
      info.extra["golden_taps"] = bad;
      write_taps(dir + "/bad.h5", {{kept, full.taps.at(kept)}}, info, FloatStorage::Float32);
      msg = error_of([&] { read_golden(dir + "/bad.h5"); });
      INFO(bad << ": " << msg);
      CHECK(msg.find("bad.h5: file attribute 'golden_taps'") != std::string::npos);
    }
  }

  SECTION("salasim golden check fails a golden thinned to one tap, exit 1, naming what is missing") {
    Golden g = peer_golden(r, gpu_source_hash());
    g.taps = {{kept, g.taps.at(kept)}};
    g.meta.manifest = tap_shapes(g.taps);
    const std::string path = test::scratch_dir("golden_thin_cli") + "/thin.h5";
    write_golden(path, g);
    const test::CliResult cli = test::run_salasim("golden check --golden " + path);
    INFO(cli.output);
    CHECK(cli.exit_code == 1);
    CHECK(cli.output.find(fmt::format("tap set: FAIL: the reference records {} taps", full.taps.size())) !=
          std::string::npos);
    CHECK(cli.output.find("golden check: FAIL (the tap set differs from the reference's; ") != std::string::npos);
  }
}
