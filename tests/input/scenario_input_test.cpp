// Issue 11, rows 3, 4, 5, 6, 10: scenario and command-line lengths are checked against max_position_embeddings
// and the machine's memory before anything is allocated; counts on the command line are whole numbers in range;
// a scenario's name is a plain file name.
#include <filesystem>

#include "model/limits.hpp"
#include "scenarios/scenario.hpp"
#include "tests/input/support.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;
using namespace salasim::test;
using nlohmann::json;

namespace fs = std::filesystem;

TEST_CASE("input: scenario lengths past max_position_embeddings are refused before allocating (rows 3, 4)", "[input]") {
  const std::string dir = scratch_dir("input_scenario_lengths");
  const std::string cfg = tiny_config();  // max_position_embeddings 524288
  auto error_for = [&](const json& j) {
    const std::string p = write_json(dir + "/s.json", j);
    return error_of([&] { load_scenario(p); });
  };
  // decode_steps 2^32 + 2: once silently 2 steps.
  std::string e = error_for(scenario_json(cfg, 100, (int64_t(1) << 32) + 2));
  CHECK(has(e, "s.json: prompt.length and decode_steps: prompt of 100 tokens + 4294967298 decode steps is past "
               "max_position_embeddings = 524288"));
  CHECK(has(e, "--extrapolate"));
  e = error_for(scenario_json(cfg, 100, 1000000000));
  CHECK(has(e, "+ 1000000000 decode steps is past max_position_embeddings"));
  e = error_for(scenario_json(cfg, 1000000000000, 0));
  CHECK(has(e, "prompt of 1000000000000 tokens + 0 decode steps is past max_position_embeddings"));
  // With "extrapolate" the limit is 4x, and no further.
  json x = scenario_json(cfg, 600000, 0);
  x["extrapolate"] = true;
  const std::string p = write_json(dir + "/x.json", x);
  CHECK(load_scenario(p).prompt.size() == 600000);
  x["prompt"]["length"] = 4 * 524288 + 1;
  e = error_for(x);
  CHECK(has(e, "is past 2097152 positions, 4x max_position_embeddings = 524288"));
  // A prompt given as token ids counts the same way, and the overrides of the command line too.
  Scenario s = load_scenario(source_path("scenarios/tiny-short.json"));
  e = error_of([&] { override_lengths(s, 524288, -1); });
  CHECK(has(e, "--tokens 524288 / --decode 4 (scenario"));
  CHECK(has(e, "is past max_position_embeddings = 524288"));
  CHECK(has(error_of([&] { resize_prompt(s, 524290, 7); }), "--tokens 524290"));
  override_lengths(s, 100, 0);
  CHECK(s.prompt.size() == 100);
  CHECK(s.decode_steps == 0);
}

TEST_CASE("input: ref and verify refuse prompts past max_position_embeddings unless told to extrapolate (row 5)", "[input]") {
  const std::string dir = scratch_dir("input_ref_maxpos");
  const std::string cfg = tiny_config_with(dir, "short-context.json", [](json& j) { j["max_position_embeddings"] = 1024; });
  const std::string sc = write_json(dir + "/short.json", scenario_json(cfg, 1000, 0));
  CliResult r = run_salasim("ref --scenario " + sc + " --tokens 1500");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--tokens 1500 / --decode 0"));
  CHECK(has(r.output, "is past max_position_embeddings = 1024 of " + cfg));
  r = run_salasim("verify --scenario " + sc + " --tokens 1500 --backend peer");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "is past max_position_embeddings = 1024"));
  // Opting in runs it (the last layer's output only, to stay quick).
  r = run_salasim("ref --scenario " + sc + " --tokens 1500 --extrapolate --taps final/logits");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "prompt 1500 tokens"));
}

TEST_CASE("input: ref refuses a run the machine cannot hold, before allocating (row 4)", "[input]") {
  // The full 9.48B config at 1M tokens: terabytes of float64 taps on any machine.
  const CliResult r = run_salasim("ref --scenario scenarios/sala-9b-1m.json");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "salasim: error: ref needs"));
  CHECK(has(r.output, "GB of float64 weights for 9,477,203,968 parameters"));
  const CliResult big = run_salasim("ref --tokens 1000000000000");
  CHECK(big.exit_code == 2);
  CHECK(has(big.output, "--tokens: '1000000000000' is not a whole number in [1, 67108864]"));
}

TEST_CASE("input: negative and zero counts are refused by the option parser (row 6)", "[input]") {
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{"ref --tokens -5", "--tokens: '-5' is not a whole number in [1, "},
                        Case{"ref --tokens 0", "--tokens: '0' is not a whole number in [1, "},
                        Case{"ref --decode -5", "--decode: '-5' is not a whole number in [0, "},
                        Case{"verify --tokens -5", "--tokens: '-5' is not a whole number in [1, "},
                        Case{"verify --spot -1", "--spot: '-1' is not a whole number in [1, 1024]"},
                        Case{"verify --spot 4 --spot-layers 1,-2", "--spot-layers: '-2' is not a whole number"},
                        Case{"run --decode -1 --plan", "--decode: '-1' is not a whole number in [0, 1048576]"},
                        Case{"run --chunk 0 --plan", "--chunk: '0' is not a whole number in [64, 16777216]"},
                        Case{"synth-checkpoint --out /tmp/x --shards 0", "--shards: '0' is not a whole number"},
                        Case{"model latency --decode-tokens -1", "--decode-tokens: '-1' is not a whole number"},
                        Case{"synth-checkpoint --out /tmp/x --seed -5", "--seed: '-5' is not a whole number in [0, "},
                        Case{"run --plan --time-limit -3", "--time-limit: '-3' is not a number of seconds in [0, 1e+07]"}}) {
    const CliResult r = run_salasim(c.args);
    INFO(c.args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, c.says));
  }
}

TEST_CASE("input: a scenario name is a plain file name (row 10)", "[input]") {
  const std::string dir = scratch_dir("input_scenario_name");
  for (const std::string name : {"../escaped", "/tmp/abs", "a/b", "..", ".", "", "x\ny"}) {
    json j = scenario_json(tiny_config(), 100, 0);
    j["name"] = name;
    const std::string p = write_json(dir + "/named.json", j);
    const std::string e = error_of([&] { load_scenario(p); });
    INFO(name << ": " << e);
    CHECK(has(e, "named.json: field 'name' is '"));
    CHECK(has(e, "expected a plain file name"));
  }
  // verify --dump and golden check refuse it before writing or looking up anything.
  json j = scenario_json(tiny_config(), 100, 0);
  j["name"] = "../escaped";
  const std::string p = write_json(dir + "/escaped.json", j);
  const std::string dump = dir + "/dump";
  CliResult r = run_salasim("verify --backend peer --scenario " + p + " --dump " + dump);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "field 'name' is '../escaped'"));
  CHECK_FALSE(fs::exists(dir + "/escaped-failures.h5"));
  r = run_salasim("golden check --scenario " + p);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "field 'name' is '../escaped'"));
}
