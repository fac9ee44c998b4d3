// Issue 11, rows 1, 2, 12, 13: integers from JSON are range-checked in 64 bits, sizes computed from them with
// overflow checks, JSON files read with a size cap, and malformed numbers reported naming the file.
#include <cstdint>
#include <filesystem>

#include "model/checked.hpp"
#include "model/config.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
#include "model/memory.hpp"
#include "reports/dense_config.hpp"
#include "tests/input/support.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;
using namespace salasim::test;
using nlohmann::json;

namespace {

json released() { return read_json(real_config()); }

std::string parse_error(const json& j) {
  return error_of([&] { parse_config(j.dump(), "cfg.json"); });
}

}  // namespace

TEST_CASE("input: config integers past 32 bits are errors naming the field, never truncated (row 1)", "[input]") {
  struct Case {
    std::string key;
    int64_t value;
  };
  for (const Case& c : {Case{"hidden_size", int64_t(1) << 40}, Case{"hidden_size", (int64_t(1) << 32) + 256},
                        Case{"num_hidden_layers", (int64_t(1) << 32) + 4}, Case{"vocab_size", int64_t(1) << 40},
                        Case{"intermediate_size", (int64_t(1) << 32) + 16384}}) {
    json j = released();
    j[c.key] = c.value;
    const std::string e = parse_error(j);
    INFO(c.key << " = " << c.value << ": " << e);
    CHECK(has(e, "cfg.json: field '" + c.key + "' is integer " + std::to_string(c.value)));
    CHECK(has(e, "expected an integer in [1, "));
  }
  json j = released();
  j["sparse_config"]["topk"] = int64_t(1) << 40;
  CHECK(has(parse_error(j), "field 'sparse_config.topk' is integer 1099511627776; expected an integer in [1, "));
  j = released();
  j["max_position_embeddings"] = uint64_t(1) << 63;  // past int64: the parser holds it unsigned
  CHECK(has(parse_error(j), "field 'max_position_embeddings' is integer 9223372036854775808"));
  j = released();
  j["eos_token_id"] = {2, 73448};  // one past the vocabulary
  CHECK(has(parse_error(j), "field 'eos_token_id'"));
  // The dense comparator's config is held to the same ranges.
  json q = read_json(source_path("scenarios/models/qwen3-8b.json"));
  q["num_hidden_layers"] = (int64_t(1) << 32) + 36;
  CHECK(has(error_of([&] { reports::parse_dense_config(q.dump(), "q.json"); }), "field 'num_hidden_layers'"));
}

TEST_CASE("input: configs whose sizes would overflow are refused, not counted negative (row 2)", "[input]") {
  json j = released();
  j["hidden_size"] = int64_t(1) << 31;
  CHECK(has(parse_error(j), "field 'hidden_size' is integer 2147483648; expected an integer in [1, 1048576]"));
  j = released();
  j["hidden_size"] = j["intermediate_size"] = j["vocab_size"] = int64_t(1) << 30;
  CHECK(has(parse_error(j), "expected an integer in [1, 1048576]"));

  // The largest config the ranges allow loads, and what grows with the context is still checked at use.
  j = released();
  j["num_hidden_layers"] = kMaxLayers;
  j["mixer_types"] = json::array();
  for (int64_t l = 0; l < kMaxLayers; ++l) j["mixer_types"].push_back("minicpm4");
  j["num_attention_heads"] = j["num_key_value_heads"] = j["lightning_nh"] = j["lightning_nkv"] = kMaxHeads;
  j["head_dim"] = j["lightning_head_dim"] = kMaxHeadDim;
  j["hidden_size"] = j["intermediate_size"] = kMaxWidth;
  const ModelConfig big = parse_config(j.dump(), "big.json");
  const std::string e = error_of([&] { kv_cache_bytes(big, kMaxContext); });
  CHECK(has(e, "big.json: KV cache bytes of 4294967296 tokens"));
  CHECK(has(e, "does not fit in 64 bits"));
}

TEST_CASE("input: checked size arithmetic names what overflowed", "[input]") {
  CHECK(checked_mul(int64_t(1) << 31, int64_t(1) << 31, "x") == int64_t(1) << 62);
  CHECK(has(error_of([] { checked_mul(int64_t(1) << 32, int64_t(1) << 32, "f.json: a x b"); }),
            "f.json: a x b: 4294967296 x 4294967296 does not fit in 64 bits"));
  CHECK(has(error_of([] { checked_add(INT64_MAX, 1, "total"); }), "total: 9223372036854775807 + 1 does not fit"));
  CHECK(checked_numel({0, int64_t(1) << 62, 4}, "t") == 0);
  CHECK(has(error_of([] { checked_numel({(int64_t(1) << 62) + 1, 4}, "t"); }), "t: element count"));
  CHECK(has(error_of([] { checked_numel({2, -3}, "t"); }), "t: dimension -3 is negative"));
}

TEST_CASE("input: JSON files are read up to 64 MiB and malformed numbers name the file (rows 12, 13)", "[input]") {
  const std::string dir = scratch_dir("input_json");
  // A file past the cap is refused by its size, before it is read (sparse: no disk is used); a device such as
  // /dev/zero is not a regular file and is refused before it is opened (readers_input_test.cpp).
  const std::string big = write_text(dir + "/big.json", "{");
  std::filesystem::resize_file(big, (uint64_t(64) << 20) + 1);
  const std::string e = error_of([&] { load_config(big); });
  CHECK(has(e, "big.json: 67108865 bytes, larger than 64 MiB, the limit for JSON input"));

  write_text(dir + "/huge-number.json", R"({"hidden_size": 1e999})");
  const std::string n = error_of([&] { load_config(dir + "/huge-number.json"); });
  CHECK(has(n, dir + "/huge-number.json: not well-formed JSON"));
  CHECK(has(error_of([&] { load_config(dir); }), ": is a folder; expected a JSON file"));
  std::string deep(100, '[');
  deep += std::string(100, ']');
  CHECK(has(error_of([&] { parse_json_text(deep, "deep.json"); }), "deep.json: arrays and objects nest more than 64"));

  // On the command line: exit 2 and the message, never "internal error".
  const CliResult zero = run_salasim("params --config " + big);
  CHECK(zero.exit_code == 2);
  CHECK(has(zero.output, "salasim: error: " + big + ": 67108865 bytes, larger than 64 MiB"));
  const CliResult inf = run_salasim("params --config " + dir + "/huge-number.json");
  CHECK(inf.exit_code == 2);
  CHECK(has(inf.output, "huge-number.json: not well-formed JSON"));
  CHECK_FALSE(has(inf.output, "internal error"));
}
