// config.json parsing: the released config, and each kind of bad input.
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "model/config.hpp"
#include "model/error.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using nlohmann::json;

namespace {

json released() {
  std::ifstream in(test::real_config());
  return json::parse(in);
}

// The error message of parsing j, or "" if it parsed.
std::string error_of(const json& j) {
  try {
    parse_config(j.dump(), "cfg.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("config: released config parses with every field", "[config]") {
  ModelConfig c = load_config(test::real_config());
  CHECK(c.hidden_size == 4096);
  CHECK(c.num_hidden_layers == 32);
  CHECK(c.num_attention_heads == 32);
  CHECK(c.num_key_value_heads == 2);
  CHECK(c.head_dim == 128);
  CHECK(c.lightning_nh == 32);
  CHECK(c.lightning_nkv == 32);
  CHECK(c.lightning_head_dim == 128);
  CHECK(c.intermediate_size == 16384);
  CHECK(c.vocab_size == 73448);
  CHECK(c.rms_norm_eps == 1e-6);
  CHECK(c.rope_theta == 10000.0);
  CHECK(c.max_position_embeddings == 524288);
  CHECK(c.scale_emb == 12);
  CHECK(c.dim_model_base == 256);
  CHECK(c.scale_depth == 1.4);
  CHECK(c.mup_denominator == 32);
  CHECK_FALSE(c.tie_word_embeddings);
  CHECK_FALSE(c.attention_bias);
  CHECK_FALSE(c.attn_use_rope);
  CHECK(c.lightning_use_rope);
  CHECK(c.qk_norm);
  CHECK(c.use_output_norm);
  CHECK(c.use_output_gate);
  CHECK(c.attn_use_output_gate);
  CHECK(c.lightning_scale == "1/sqrt(d)");
  CHECK(c.hidden_act == "silu");
  CHECK(c.sparse.kernel_size == 32);
  CHECK(c.sparse.kernel_stride == 16);
  CHECK(c.sparse.init_blocks == 1);
  CHECK(c.sparse.block_size == 64);
  CHECK(c.sparse.window_size == 2048);
  CHECK(c.sparse.topk == 64);
  CHECK_FALSE(c.sparse.use_nope);
  CHECK(c.sparse.dense_len == 8192);
  CHECK(c.sparse.k_sel() == 96);
  CHECK(c.sparse.local_blocks() == 32);
  CHECK(c.model_type == "minicpm_sala");
  CHECK(c.architectures == std::vector<std::string>{"MiniCPMSALAForCausalLM"});
  CHECK(c.dtype == "bfloat16");
  CHECK(c.transformers_version == "4.57.1");
  CHECK(c.bos_token_id == 1);
  CHECK(c.eos_token_ids == std::vector<int>{2, 73440});
  CHECK(c.pad_token_id == 2);
  CHECK(c.pretraining_tp == 1);
  CHECK(c.use_cache);
}

TEST_CASE("config: layer map follows mixer_types", "[config]") {
  ModelConfig c = load_config(test::real_config());
  std::vector<int> sparse;
  for (int l = 0; l < c.num_hidden_layers; ++l)
    if (c.layers[l] == Mixer::Sparse) sparse.push_back(l);
  CHECK(sparse == std::vector<int>{0, 9, 16, 17, 22, 29, 30, 31});
  CHECK(c.n_layers(Mixer::Lightning) == 24);
}

TEST_CASE("config: derived constants match docs/spec.md", "[config]") {
  ModelConfig c = load_config(test::real_config());
  CHECK(c.residual_scale() == 1.4 / std::sqrt(32.0));
  CHECK(c.logit_divisor() == 16.0);
  CHECK(c.attn_scale() == 1.0 / std::sqrt(128.0));
  std::vector<double> g = c.lightning_decay();
  REQUIRE(g.size() == 32);
  for (int h = 0; h < 32; ++h) CHECK(g[h] == -double(float(std::pow(2.0, -(h + 1) / 4.0))));
}

TEST_CASE("config: unknown keys are ignored", "[config]") {
  json j = released();
  j["some_future_field"] = {{"x", 1}};
  j["quantization_config"] = "gptq";
  CHECK(error_of(j).empty());
}

TEST_CASE("config: a missing required key is rejected naming file and field", "[config]") {
  for (const char* key : {"hidden_size", "num_key_value_heads", "mixer_types", "rms_norm_eps", "sparse_config",
                          "lightning_nh", "qk_norm", "vocab_size"}) {
    json j = released();
    j.erase(key);
    std::string e = error_of(j);
    INFO(key << ": " << e);
    CHECK(contains(e, "cfg.json"));
    CHECK(contains(e, std::string("'") + key + "'"));
    CHECK(contains(e, "missing"));
  }
}

TEST_CASE("config: an ill-typed key is rejected with what was expected", "[config]") {
  json j = released();
  j["hidden_size"] = "4096";
  std::string e = error_of(j);
  CHECK(contains(e, "'hidden_size'"));
  CHECK(contains(e, "string"));
  CHECK(contains(e, "expected an integer"));

  j = released();
  j["qk_norm"] = 1;
  CHECK(contains(error_of(j), "expected true or false"));

  j = released();
  j["rms_norm_eps"] = "small";
  CHECK(contains(error_of(j), "expected a number"));

  j = released();
  j["hidden_size"] = 0;
  CHECK(contains(error_of(j), "integer in [1, 1048576]"));

  j = released();
  j["sparse_config"]["block_size"] = 64.5;
  std::string nested = error_of(j);
  CHECK(contains(nested, "'sparse_config.block_size'"));
}

TEST_CASE("config: mixer_types must match the layer count and name known mixers", "[config]") {
  json j = released();
  j["mixer_types"].erase(j["mixer_types"].begin());
  CHECK(contains(error_of(j), "num_hidden_layers = 32"));
  j = released();
  j["mixer_types"][3] = "mamba";
  CHECK(contains(error_of(j), "\"mamba\""));
}

TEST_CASE("config: values the simulator does not model are rejected", "[config]") {
  json j = released();
  j["hidden_act"] = "gelu";
  CHECK(contains(error_of(j), "'hidden_act'"));
  j = released();
  j["rope_scaling"] = {{"type", "yarn"}};
  CHECK(contains(error_of(j), "'rope_scaling'"));
  j = released();
  j["attn_use_rope"] = true;
  CHECK(contains(error_of(j), "NoPE"));
  j = released();
  j["num_key_value_heads"] = 3;
  CHECK(contains(error_of(j), "divisor"));
  j = released();
  j["sparse_config"]["window_size"] = 2000;
  CHECK(contains(error_of(j), "multiple of block_size"));
  j = released();
  j["model_type"] = "qwen3";
  CHECK(contains(error_of(j), "minicpm_sala"));
}

TEST_CASE("config: malformed JSON and unreadable files are rejected", "[config]") {
  std::string e;
  try {
    parse_config("{\"hidden_size\": 4096,", "broken.json");
  } catch (const Error& x) {
    e = x.what();
  }
  CHECK(contains(e, "broken.json"));
  CHECK(contains(e, "not well-formed JSON"));
  try {
    load_config("/nonexistent/config.json");
    FAIL("expected an error");
  } catch (const Error& x) {
    CHECK(contains(x.what(), "/nonexistent/config.json"));
  }
  try {
    parse_config("[1, 2]", "array.json");
    FAIL("expected an error");
  } catch (const Error& x) {
    CHECK(contains(x.what(), "JSON object"));
  }
}

TEST_CASE("config: tiny keeps the kernels' real shapes and sparse rules", "[config]") {
  ModelConfig t = load_config(test::tiny_config());
  ModelConfig r = load_config(test::real_config());
  CHECK(t.head_dim == 128);
  CHECK(t.num_attention_heads == 32);
  CHECK(t.num_key_value_heads == 2);
  CHECK(t.lightning_head_dim == 128);
  CHECK(t.sparse.kernel_size == r.sparse.kernel_size);
  CHECK(t.sparse.kernel_stride == r.sparse.kernel_stride);
  CHECK(t.sparse.block_size == r.sparse.block_size);
  CHECK(t.sparse.window_size == r.sparse.window_size);
  CHECK(t.sparse.topk == r.sparse.topk);
  CHECK(t.sparse.dense_len == r.sparse.dense_len);
  CHECK(t.layers.front() == Mixer::Sparse);
  CHECK(t.n_layers(Mixer::Sparse) >= 1);
  CHECK(t.n_layers(Mixer::Lightning) >= 1);
  CHECK(t.hidden_size < r.hidden_size);
}

TEST_CASE("config: alibi slopes for non-powers of two follow get_slopes", "[config]") {
  std::vector<double> s = alibi_slopes(6);
  // closest power 4: 2^-2, 2^-4, 2^-6, 2^-8; then every other of get_slopes(8): 2^-1, 2^-3
  std::vector<double> want{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  REQUIRE(s.size() == want.size());
  for (size_t i = 0; i < s.size(); ++i) CHECK(s[i] == want[i]);  // powers of two: exact
}
