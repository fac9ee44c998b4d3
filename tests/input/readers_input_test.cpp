// Issue 35, item 3 (reader side): every reader bounded and exact. One test per class of the hostile-input sweep:
// JSON readers (repeated keys, non-regular files, excerpts of quoted input), config floats, `salasim op`
// attributes, strict numbers on the command line.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "compare/hdf5_io.hpp"
#include "compare/op_table.hpp"
#include "model/config.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
#include "model/safetensors.hpp"
#include "model/tokenizer.hpp"
#include "reports/dense_config.hpp"
#include "reports/hardware.hpp"
#include "reports/measured.hpp"
#include "scenarios/ruler/sample_io.hpp"
#include "scenarios/ruler/sources.hpp"
#include "tests/compare/op_files.hpp"
#include "tests/input/support.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;
using namespace salasim::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json released() { return read_json(real_config()); }

// A command with a time limit, so that a reader that blocks (a FIFO opened for reading) fails instead of hanging.
CliResult run_limited(const std::string& args) {
  return run_command("timeout 30 " + std::string(SALASIM_BIN) + " " + args + " 2>&1 < /dev/null");
}

// The first line of a message: what a user sees first, and what must stay readable.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// A safetensors file whose header is `header` (no data section).
std::string write_safetensors_header(const std::string& path, const std::string& header) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[size_t(i)] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
  return write_text(path, bytes + header);
}

// `depth` nested arrays around a string, built without recursion (a parser or a copy would recurse).
json nested_arrays(int depth) {
  json inner = "x";
  for (int i = 0; i < depth; ++i) {
    json outer = json::array();
    outer.push_back(std::move(inner));
    inner = std::move(outer);
  }
  return inner;
}

}  // namespace

TEST_CASE("json: a key repeated in one object, at any depth, is refused naming the file, the key and its path",
          "[input]") {
  // nlohmann keeps the last of two equal keys: a config with two "hidden_size" ran with whichever came last.
  std::string e = error_of([] { parse_json_text(R"({"a": 1, "b": {"c": [0, {"d": 1, "d": 2}]}})", "dup.json"); });
  CHECK(has(e, "dup.json: key 'd' appears twice in one object (at b.c[1].d)"));
  e = error_of([] { parse_json_text(R"({"x": 1, "x": 1})", "top.json"); });
  CHECK(has(e, "top.json: key 'x' appears twice in one object (at x)"));
  // The same key in two different objects is not a repetition.
  CHECK_NOTHROW(parse_json_text(R"({"a": {"k": 1}, "b": {"k": 2}, "k": [{"k": 0}, {"k": 1}]})", "ok.json"));

  const std::string dir = scratch_dir("input_dup_keys");
  std::string text = read_json(tiny_config()).dump(2);
  text.insert(text.find('{') + 1, "\n  \"hidden_size\": 4096,");
  const std::string cfg = write_text(dir + "/dup-config.json", text);
  CHECK(has(error_of([&] { load_config(cfg); }), "dup-config.json: key 'hidden_size' appears twice"));
  json sparse = read_json(tiny_config());
  std::string nested = sparse.dump();
  nested.replace(nested.find("\"topk\":64"), 9, "\"topk\":64,\"topk\":1");
  CHECK(has(error_of([&] { parse_config(nested, "n.json"); }),
            "key 'topk' appears twice in one object (at sparse_config.topk)"));
  // A safetensors header naming one tensor twice: the reader kept one and its bytes silently.
  const std::string st = write_safetensors_header(
      dir + "/dup.safetensors",
      R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}, "w": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}})");
  CHECK(has(error_of([&] { SafetensorsFile f(st); }), "dup.safetensors (header): key 'w' appears twice"));
  // A hardware profile and a measured run, through the same reader.
  const std::string hw = write_text(dir + "/hw.json", R"({"name": "a", "name": "b"})");
  CHECK(has(error_of([&] { reports::load_hw(hw); }), "hw.json: key 'name' appears twice"));
  const std::string m = write_text(dir + "/m.json", R"([{"ttft_s": 1, "ttft_s": 2}])");
  CHECK(has(error_of([&] { reports::load_measured(m); }),
            "m.json: key 'ttft_s' appears twice in one object (at [0].ttft_s)"));

  const CliResult r = run_salasim("params --config " + cfg);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "salasim: error: " + cfg + ": key 'hidden_size' appears twice"));
}

TEST_CASE("json: a FIFO, a device or a folder is refused from stat, before it is opened, naming the file", "[input]") {
  const std::string dir = scratch_dir("input_nonregular");
  const std::string fifo = dir + "/config.fifo";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A FIFO as --config blocked forever (the open waits for a writer); now it is refused at once.
  CliResult r = run_limited("params --config " + fifo);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, fifo + ": is not a regular file (a FIFO, a socket or a device); expected a JSON file"));
  r = run_limited("model memory --hw " + fifo + " --context 4K");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, fifo + ": is not a regular file"));
  // A device: /dev/null was read as an empty document, /dev/zero up to the size cap.
  for (const std::string dev : {"/dev/null", "/dev/zero"}) {
    const std::string e = error_of([&] { load_config(dev); });
    INFO(e);
    CHECK(has(e, dev + ": is not a regular file"));
  }
  CHECK(has(error_of([&] { load_config(dir); }), dir + ": is a folder; expected a JSON file"));
  CHECK(has(error_of([&] { reports::load_measured("/dev/null"); }), "/dev/null: is not a regular file"));
  CHECK(has(error_of([&] { SafetensorsFile f(fifo); }), fifo + ": is not a regular file"));
  // Tokenizer files beside a tokenizer.model, and RULER data lines.
  const std::string tok = scratch_dir("input_nonregular_tok");
  fs::remove(tok + "/tokenizer_config.json");
  REQUIRE(::mkfifo((tok + "/tokenizer_config.json").c_str(), 0600) == 0);
  CHECK(has(error_of([&] { read_added_tokens(tok); }), "tokenizer_config.json: is not a regular file"));
  CHECK(has(error_of([&] { ruler::read_samples(fifo); }), fifo));
}

TEST_CASE("text and HDF5 inputs: a FIFO, a device or a folder is refused before it is opened, naming the file",
          "[input]") {
  const std::string dir = scratch_dir("input_nonregular_text");
  const std::string fifo = dir + "/text.fifo";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // --haystack-text and the word lists were read with an ifstream: a FIFO blocked forever, /dev/zero never ended.
  for (const std::string& bad : {fifo, std::string("/dev/zero")})
    CHECK(has(error_of([&] { ruler::load_essay(bad); }), bad + ": is not a regular file"));
  CHECK(has(error_of([&] { ruler::load_essay(dir); }), dir + ": is a folder"));
  const std::string words = scratch_dir("input_nonregular_words");
  fs::remove(words + "/adjectivelist.txt");
  { std::ofstream(words + "/nounlist.txt") << "a\n"; }
  REQUIRE(::mkfifo((words + "/adjectivelist.txt").c_str(), 0600) == 0);
  CHECK(has(error_of([&] { ruler::load_word_lists(words); }), "is not a regular file"));
  // A text input past 64 MiB is refused by its size, before it is read.
  const std::string big = dir + "/big.txt";
  { std::ofstream(big) << "x"; }
  fs::resize_file(big, uint64_t(kTextMaxBytes) + 1);
  CHECK(has(error_of([&] { ruler::load_essay(big); }), "larger than 64 MiB"));
  fs::remove(big);
  // An HDF5 input (diff, golden check, op --in): H5Fopen of a FIFO blocked, first in the crash guard's child, then
  // for good in salasim itself.
  CHECK(has(error_of([&] { read_taps(fifo); }), fifo + ": is not a regular file (a FIFO, a socket or a device); "
                                                       "expected an HDF5 file"));
}

TEST_CASE("json: messages quote at most 200 bytes of input, and a value nesting 200,000 arrays crashes nothing",
          "[input]") {
  CHECK(excerpt(std::string(10, 'x')) == "xxxxxxxxxx");
  const std::string cut = excerpt(std::string(100000, 'x'));
  CHECK(cut.size() < kQuoteMaxChars + 40);
  CHECK(has(cut, "... (100000 bytes)"));
  CHECK(excerpt(std::string("a\x1b[2Jb")) == "a\\x1b[2Jb");  // a terminal escape shown, not sent
  CHECK(excerpt(std::string(199, 'x') + "\xc3\xa9" + "y").size() == 199 + std::string("... (202 bytes)").size());
  // A JSON value of any depth: serialized without recursion, and cut.
  const json deep = nested_arrays(200000);
  const std::string shown = excerpt(deep);
  CHECK(shown.size() < kQuoteMaxChars + 40);
  CHECK(shown.rfind("[[[[", 0) == 0);
  CHECK(excerpt(json{{"k", std::string(5000, 'v')}}).size() < kQuoteMaxChars + 40);

  const std::string dir = scratch_dir("input_excerpts");
  // A RULER data line whose "outputs" nests 200,000 arrays: the message dumped the value and overflowed the stack.
  const std::string deep_line =
      "{\"index\": 0, \"input\": \"x\", \"answer_prefix\": \"a\", \"length\": 10, \"task\": "
      "\"niah_single_1\", \"outputs\": [" +
      std::string(200000, '[') + std::string(200000, ']') + "]}\n";
  const std::string data = write_text(dir + "/deep.jsonl", deep_line);
  const std::string e = error_of([&] { ruler::read_samples(data); });
  INFO(first_line(e).substr(0, 300));
  CHECK(has(e, "deep.jsonl line 1"));
  CHECK(e.size() < 2000);
  // Input quoted in messages: a 10,000-byte dtype or tensor name of a safetensors header, a hardware profile name.
  const std::string long_name(10000, 'n');
  const std::string st = write_safetensors_header(dir + "/long.safetensors",
                                                  "{\"" + long_name + "\": {\"dtype\": \"" + std::string(10000, 'D') +
                                                      "\", \"shape\": [0], \"data_offsets\": [0, 0]}}");
  const std::string se = error_of([&] { SafetensorsFile f(st); });
  INFO(se.substr(0, 300));
  CHECK(has(se, "unknown dtype"));
  CHECK(se.size() < 1000);
  const std::string he = error_of([&] { reports::load_hw(std::string(5000, 'h')); });
  CHECK(has(he, "no hardware profile"));
  CHECK(he.size() < 1000);
  const CliResult r = run_salasim("model memory --context " + std::string(3000, '9') + "K");
  CHECK(r.exit_code == 2);
  CHECK(r.output.size() < 1000);
}

TEST_CASE("config: a non-finite or out-of-range float field is refused, naming it", "[input]") {
  struct Field {
    const char* key;
    std::vector<json> bad;
  };
  // 1e308 is finite JSON; -5, 0 and a string are wrong in every one of these fields.
  const std::vector<Field> fields = {
      {"rms_norm_eps", {1e308, -5, 0, "1e-6", 1.0, 1e-300}}, {"rope_theta", {1e308, -5, 0, "NaN", 1.0, 0.5}},
      {"scale_emb", {1e308, -5, 0, "12", 1e-7, 1e7}},        {"scale_depth", {1e308, -5, 0, "1.4", 1e-4, 101}},
      {"initializer_range", {1e308, -5, "0.1", 2.0}},        {"attention_dropout", {1e308, -5, "0", 1.5}},
  };
  for (const Field& f : fields)
    for (const json& v : f.bad) {
      json j = released();
      j[f.key] = v;
      const std::string e = error_of([&] { parse_config(j.dump(), "cfg.json"); });
      INFO(f.key << " = " << v.dump() << ": " << e);
      CHECK(has(e, std::string("cfg.json: field '") + f.key + "' is "));
      CHECK(has(e, "expected a number in "));
    }
  // NaN is not JSON: the text is refused by the parser, naming the file.
  std::string text = released().dump();
  text.replace(text.find("\"scale_depth\":1.4"), 17, "\"scale_depth\":NaN");
  CHECK(has(error_of([&] { parse_config(text, "nan.json"); }), "nan.json: not well-formed JSON"));
  // dim_model_base wider than the model would multiply the logits.
  json j = released();
  j["dim_model_base"] = 8192;
  CHECK(has(error_of([&] { parse_config(j.dump(), "cfg.json"); }),
            "field 'dim_model_base' is integer 8192; expected an integer in [1, hidden_size = 4096]"));
  // The released values load, and the dense comparator's floats are held to the same ranges.
  CHECK_NOTHROW(parse_config(released().dump(), "cfg.json"));
  json q = read_json(source_path("scenarios/models/qwen3-8b.json"));
  q["rms_norm_eps"] = -5;
  CHECK(has(error_of([&] { reports::parse_dense_config(q.dump(), "q.json"); }),
            "q.json: field 'rms_norm_eps' is integer -5; expected a number in [1e-12, 0.1]"));
  q = read_json(source_path("scenarios/models/qwen3-8b.json"));
  q["rope_theta"] = 1e308;
  CHECK(has(error_of([&] { reports::parse_dense_config(q.dump(), "q.json"); }), "q.json: field 'rope_theta'"));

  // On the command line: scale_depth 1e308 or -5 ran with exit 0 and all-zero logits.
  const std::string dir = scratch_dir("input_config_floats");
  for (const double v : {1e308, -5.0}) {
    const std::string cfg = tiny_config_with(dir, "depth.json", [&](json& c) { c["scale_depth"] = v; });
    const CliResult r = run_salasim("params --config " + cfg);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "depth.json: field 'scale_depth' is "));
  }
}

TEST_CASE("op: every attribute and the decays are checked as --help states, naming the file and the attribute",
          "[input]") {
  const std::string dir = scratch_dir("input_op_attrs");
  const ref::Mat x = ref::Mat::Constant(2, 8, 0.5), row = ref::Mat::Constant(1, 8, 1.0);
  struct Case {
    std::string op, attr;
    double value;
  };
  // Each value is outside the range --help gives; every one ran before (only eps and theta had to be > 0).
  const std::vector<Case> cases = {
      {"rmsnorm", "eps", 1e308},    {"rmsnorm", "eps", 1e-300},   {"rope", "theta", 1.0},
      {"rope", "theta", 1e300},     {"gla", "tau", -1},           {"gla", "tau", 0},
      {"gla", "tau", 1e300},        {"dense_attn", "tau", 1e308}, {"residual", "scale", -1},
      {"residual", "scale", 1e308}, {"logits", "divisor", 0.5},   {"logits", "divisor", 1e300},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string path = dir + "/" + c.op + "-" + std::to_string(n++) + ".h5";
    {
      OpInputFile f(path);
      if (c.op == "rmsnorm") f.mat("x", x).mat("w", row, {8});
      if (c.op == "rope") f.mat("x", x).whole("head_dim", 4).whole("pos0", 0);
      if (c.op == "gla") f.mat("q", x).mat("k", x).mat("v", x).mat("gamma", ref::Mat::Constant(1, 2, -0.1), {2});
      if (c.op == "dense_attn")
        f.mat("q", x)
            .mat("k", ref::Mat::Constant(4, 4, 0.25), {2, 2, 4})
            .mat("v", ref::Mat::Constant(4, 4, 0.5), {2, 2, 4})
            .whole("pos0", 0);
      if (c.op == "residual") f.mat("h", x).mat("branch", x);
      if (c.op == "logits") f.mat("h", x).mat("w", ref::Mat::Constant(3, 8, 0.1));
      f.num(c.attr, c.value);
    }
    const std::string e = error_of([&] { op::read_op_inputs(op::find_op(c.op), path); });
    INFO(c.op << " " << c.attr << " = " << c.value << ": " << e);
    CHECK(has(e, path + ": attribute '" + c.attr + "' is "));
    CHECK(has(e, "expected a float in "));
  }
  // --help states the ranges it checks.
  const CliResult help = run_salasim("op gla --help");
  CHECK(has(help.output, "tau          float in [1e-06, 1]"));
  // gla's decays are < 0, as its help says: a positive one ran and returned 1e30.
  const std::string pos = dir + "/gla-positive-decay.h5";
  {
    const ref::Mat q = ref::Mat::Constant(100, 8, 0.5);
    OpInputFile(pos)
        .mat("q", q)
        .mat("k", q)
        .mat("v", q)
        .mat("gamma", ref::Mat::Constant(1, 2, 0.7), {2})
        .num("tau", 0.5);
  }
  fs::remove(dir + "/gla-out.h5");
  const CliResult r = run_salasim("op gla --in " + pos + " --out " + dir + "/gla-out.h5");
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, pos + ": dataset 'gamma': element [0] is 0.7; expected a natural-log decay < 0"));
  CHECK_FALSE(fs::exists(dir + "/gla-out.h5"));
}

TEST_CASE("cli: numbers on the command line are plain decimal, refused otherwise naming the option", "[input]") {
  const std::string dir = scratch_dir("input_strict_numbers");
  // CLI11 read "010" as octal 8: --shards 010 wrote 8 shards.
  fs::remove_all(dir + "/ck");
  CliResult r = run_salasim("synth-checkpoint --config scenarios/models/tiny.json --out " + dir + "/ck --shards 010");
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "in 10 shards"));
  // Options without a range of their own took hex, signs, spaces and -1 as 2^64 - 1 (ruler generate --seed).
  struct Case {
    std::string args, says;
  };
  const std::string gen = "ruler generate --tokenizer " + dir + "/none.model --out " + dir + "/never.jsonl ";
  for (const Case& c :
       {Case{gen + "--seed -1", "--seed: '-1' is not a whole number >= 0"},
        Case{gen + "--seed 0x10", "--seed: '0x10' is not a whole number >= 0"},
        Case{gen + "--seed 1e3", "--seed: '1e3' is not a whole number >= 0"},
        Case{gen + "--seed 18446744073709551616", "--seed: '18446744073709551616' does not fit in 64 bits"},
        Case{gen + "--samples 0x10", "--samples: '0x10' is not a whole number"},
        Case{gen + "--samples ' 5'", "--samples: ' 5' is not a whole number"},
        Case{gen + "--samples +5", "--samples: '+5' is not a whole number"},
        Case{gen + "--tokens-to-generate 04000000", "--tokens-to-generate: Value 4000000 not in range"},
        Case{"run --plan --config scenarios/models/tiny.json --context 1K --seed 99999999999999999999",
             "--seed: '99999999999999999999' does not fit in 64 bits"},
        Case{"model memory --context '6 4K'", "--context: '6 4K' is not a context length"},
        Case{"model memory --context 64K+", "--context: '64K+' is not a context length"},
        Case{"model memory --context 1e3", "--context: '1e3' is not a context length"}}) {
    r = run_salasim(c.args);
    INFO(c.args << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, c.says));
  }
}

TEST_CASE("tokenizer: added tokens are read exactly: decimal ids, one id per token and one token per id", "[input]") {
  const std::string dir = scratch_dir("input_added_tokens");
  auto config = [&](const std::string& decoder) {
    write_text(dir + "/tokenizer_config.json", R"({"added_tokens_decoder": )" + decoder + "}");
  };
  fs::remove(dir + "/added_tokens.json");
  config(R"({"7": {"content": "<a>"}, "9": {"content": "<bb>"}})");
  const auto ok = read_added_tokens(dir);
  REQUIRE(ok.size() == 2);
  CHECK(ok[0].first == "<bb>");  // longest first
  for (const std::string key : {"+7", " 7", "7x", "-1", "2147483648", "0x7", ""}) {
    config("{\"" + key + "\": {\"content\": \"<a>\"}}");
    const std::string e = error_of([&] { read_added_tokens(dir); });
    INFO(key << ": " << e);
    CHECK(has(e, "tokenizer_config.json: field 'added_tokens_decoder' has key '" + key + "'; expected a token id"));
  }
  config(R"({"7": {"content": "<a>"}})");
  write_text(dir + "/added_tokens.json", R"({"<a>": 8})");
  CHECK(has(error_of([&] { read_added_tokens(dir); }),
            "added_tokens.json: field '<a>': added token '<a>' has id 8, but it was given id 7 before"));
  write_text(dir + "/added_tokens.json", R"({"<c>": 7})");
  CHECK(has(error_of([&] { read_added_tokens(dir); }),
            "id 7 is given to added token '<c>', but it was given to '<a>' before"));
  write_text(dir + "/added_tokens.json", R"({"<a>": 7, "<d>": 3.5})");
  CHECK(has(error_of([&] { read_added_tokens(dir); }),
            "added_tokens.json: field '<d>' is number 3.5; expected a token id"));
  write_text(dir + "/added_tokens.json", R"([1, 2])");
  CHECK(has(error_of([&] { read_added_tokens(dir); }), "added_tokens.json: expected a JSON object of token -> id"));
}
