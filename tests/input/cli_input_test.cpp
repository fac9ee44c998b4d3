// Issue 11, rows 16-21, and the exit codes of issue 10: 0 ok, 1 a check failed, 2 bad input (an unwritable output
// folder included), 3 an internal or device error; `run --time-limit` stopping early is a failed check (1).

#include <filesystem>
#include <new>

#include "model/error.hpp"
#include "tests/input/support.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;
using namespace salasim::test;

namespace fs = std::filesystem;

TEST_CASE("input: an unwritable output folder is bad input naming it, not an internal error (row 16)", "[input]") {
  const std::string dir = scratch_dir("input_unwritable");
  const std::string file = write_text(dir + "/a-file", "x");  // a folder cannot be made inside a file
  CliResult r = run_salasim("report --out " + file + "/report --context 4K");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "salasim: error: --out " + file + "/report: cannot create its folder"));
  r = run_salasim("synth-checkpoint --config scenarios/models/tiny.json --out " + file + "/ckpt");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--out " + file + "/ckpt: cannot create its folder"));
  r = run_salasim("verify --backend peer --scenario scenarios/tiny-short.json --dump " + file + "/dump");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--dump " + file + "/dump: cannot create the folder"));
  CHECK_FALSE(has(r.output, "internal error"));
}

TEST_CASE("input: synth-checkpoint writes the shards asked for, or refuses more than tensors (row 17)", "[input]") {
  const std::string dir = scratch_dir("input_shards");
  CliResult r =
      run_salasim("synth-checkpoint --config scenarios/models/tiny.json --out " + dir + "/many --shards 1000");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--shards 1000: scenarios/models/tiny.json has 49 tensors, so at most 49 shards"));
  CHECK_FALSE(fs::exists(dir + "/many"));
  r = run_salasim("synth-checkpoint --config scenarios/models/tiny.json --out " + dir + "/all --shards 49");
  REQUIRE(r.exit_code == 0);
  int shards = 0;
  for (const auto& e : fs::directory_iterator(dir + "/all")) {
    if (e.path().extension() != ".safetensors") continue;
    ++shards;
    CHECK(fs::file_size(e.path()) > 8);
    CHECK(has(e.path().filename().string(), "-of-00049.safetensors"));
  }
  CHECK(shards == 49);
}

TEST_CASE("input: run --plan checks the checkpoint it is given (row 18)", "[input]") {
  const std::string dir = scratch_dir("input_run_plan");
  const CliResult r = run_salasim("run --plan --config scenarios/models/tiny.json --context 4K --checkpoint " + dir);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, dir + ": no model.safetensors.index.json or model.safetensors in this folder"));
}

TEST_CASE("input: model latency --measured with a missing file is an error (row 19)", "[input]") {
  const CliResult r = run_salasim("model latency --measured /nonexistent/runs.json --context 64K");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--measured /nonexistent/runs.json: no such file"));
}

TEST_CASE("input: params --checkpoint without config.json needs --config (row 20)", "[input]") {
  const std::string dir = scratch_dir("input_params_noconfig");
  REQUIRE(run_salasim("synth-checkpoint --config scenarios/models/tiny.json --out " + dir + "/ck").exit_code == 0);
  fs::remove(dir + "/ck/config.json");
  CliResult r = run_salasim("params --checkpoint " + dir + "/ck");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output,
            "--checkpoint " + dir + "/ck: no config.json in it; give the config it was made from with --config"));
  r = run_salasim("params --checkpoint " + dir + "/ck --config scenarios/models/tiny.json");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "checkpoint matches the inventory"));
}

TEST_CASE("input: an unknown subcommand is named, and a bad count says its range plainly (row 21)", "[input]") {
  CliResult r = run_salasim("frobnicate");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "salasim: error: unknown subcommand 'frobnicate'; expected one of: verify, params"));
  r = run_salasim("model memory --chunk 0");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--chunk: '0' is not a whole number in [1, 16777216]"));
  CHECK(r.output.size() < 400);  // once a 300-digit range
  r = run_salasim("model memory --context 99999999999999K");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "is not a context length"));
}

TEST_CASE("exit codes: each error class maps to its documented code", "[input][exit]") {
  CHECK(exit_report(Error("bad field")).code == 2);
  CHECK(exit_report(Error("bad field")).message == "salasim: error: bad field");
  CHECK(exit_report(DeviceError("CUDA error in gemm")).code == 3);
  CHECK(exit_report(DeviceError("CUDA error in gemm")).message == "salasim: device error: CUDA error in gemm");
  CHECK(exit_report(InternalError("broken invariant")).code == 3);
  CHECK(has(exit_report(InternalError("x")).message, "salasim: internal error: x"));
  CHECK(exit_report(std::bad_alloc()).code == 3);
  CHECK(exit_report(std::logic_error("bug")).code == 3);
  const fs::filesystem_error fe("cannot create", fs::path("/x"), std::make_error_code(std::errc::permission_denied));
  CHECK(exit_report(fe).code == 2);
  CHECK(kExitOk == 0);
  CHECK(kExitCheckFailed == 1);
  CHECK(kExitBadInput == 2);
  CHECK(kExitInternal == 3);
}

TEST_CASE("exit codes: 0 ok, 1 a check failed, 2 bad input, from the command", "[input][exit]") {
  CHECK(run_salasim("tolerances").exit_code == 0);
  const std::string dir = scratch_dir("input_exit_codes");
  REQUIRE(run_salasim("synth-checkpoint --config scenarios/models/tiny.json --out " + dir + "/ck").exit_code == 0);
  // A checkpoint checked against another config: the check fails.
  CHECK(run_salasim("params --config scenarios/models/minicpm-sala-9b.json --checkpoint " + dir + "/ck").exit_code ==
        1);
  CHECK(run_salasim("params --config " + dir + "/absent.json").exit_code == 2);
  CHECK(run_salasim("--no-such-flag").exit_code == 2);
  // run --time-limit: stopping early is a failed check (1). Without the CUDA path or a GPU it is 2 (unavailable).
  const CliResult r = run_salasim("run --context 64K --decode 0 --time-limit 0.000001");
  INFO(r.output);
  if (has(r.output, "needs the CUDA path") || has(r.output, "needs a GPU")) {
    CHECK(r.exit_code == 2);
  } else {
    CHECK(r.exit_code == 1);
    CHECK(has(r.output, "prefill STOPPED by --time-limit"));
    CHECK(has(r.output, "run: INCOMPLETE"));
  }
}
