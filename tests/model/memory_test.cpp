// Memory facts of a config (model/memory.hpp) against hand calculations from docs/spec.md §6 and §7.
#include "model/config.hpp"
#include "model/inventory.hpp"
#include "model/memory.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

TEST_CASE("memory: KV cache is 8192 B/token for the released config", "[memory]") {
  const ModelConfig c = load_config(test::real_config());
  // 8 sparse layers x (K, V) x 2 kv heads x 128 dims x 2 B
  CHECK(kv_bytes_per_token(c) == 8 * 2 * 2 * 128 * 2);
  CHECK(kv_bytes_per_token(c) == 8192);
  CHECK(kv_cache_bytes(c, 1 << 20) == int64_t(8) << 30);  // 8 GiB at 1M tokens
}

TEST_CASE("memory: compressed keys are 320 B/token for the released config", "[memory]") {
  const ModelConfig c = load_config(test::real_config());
  CHECK(k1_bytes_per_token(c) == 256.0);  // 8 x 2 x 128 x 2 B / 16
  CHECK(k2_bytes_per_token(c) == 64.0);   // ... / 64
  CHECK(k1_bytes_per_token(c) + k2_bytes_per_token(c) == 320.0);
  // Exact at 1M: n1 = (2^20 - 32)/16 + 1 = 65535, n2 = (2^20 - 128)/64 + 1 = 16383 entries of 4096 B.
  CHECK(k1_entries(c, 1 << 20) == 65535);
  CHECK(k2_entries(c, 1 << 20) == 16383);
  CHECK(compressed_key_bytes(c, 1 << 20) == int64_t(65535 + 16383) * 4096);
}

TEST_CASE("memory: K1/K2 entries exist once their window is complete", "[memory]") {
  const ModelConfig c = load_config(test::real_config());
  CHECK(k1_entries(c, 31) == 0);
  CHECK(k1_entries(c, 32) == 1);
  CHECK(k1_entries(c, 47) == 1);
  CHECK(k1_entries(c, 48) == 2);
  CHECK(k2_entries(c, 127) == 0);
  CHECK(k2_entries(c, 128) == 1);
  CHECK(k2_entries(c, 191) == 1);
  CHECK(k2_entries(c, 192) == 2);
  CHECK(compressed_key_bytes(c, 31) == 0);
}

TEST_CASE("memory: GLA state is 48 MiB for the released config", "[memory]") {
  const ModelConfig c = load_config(test::real_config());
  CHECK(gla_state_bytes(c) == 24 * 32 * 128 * 128 * 4);  // 24 layers x 32 heads x 128 x 128 fp32
  CHECK(gla_state_bytes(c) == int64_t(48) << 20);
}

TEST_CASE("memory: bf16 weights are 18,954,407,936 B for the released config", "[memory]") {
  const ModelConfig c = load_config(test::real_config());
  CHECK(weight_bytes_bf16(c) == 18954407936LL);
  CHECK(weight_bytes_bf16(c) == 2 * 9477203968LL);
}

TEST_CASE("memory: W4A16 weights match a hand count of the GPTQ layout", "[memory]") {
  const ModelConfig c = load_config(test::real_config());
  // Quantised: Lightning q, k, v, o (4 x 4096^2 x 24), sparse q, o (2 x 4096^2 x 8) and k, v (2 x 256 x 4096 x 8),
  // MLP (3 x 4096 x 16384 x 32). Each costs 1/2 B per weight + per 128 inputs a 2 B scale and a 1/2 B zero.
  const int64_t q = 4LL * 4096 * 4096 * 24 + (2LL * 4096 * 4096 + 2LL * 256 * 4096) * 8 + 3LL * 4096 * 16384 * 32;
  CHECK(q == 8338276352LL);
  const int64_t quantised_bytes = q / 2 + q / 128 * 2 + q / 128 / 2;
  // Kept bf16: everything else (embeddings, lm_head, norms, o_gate, z_proj).
  const int64_t kept_bytes = (9477203968LL - q) * 2;
  CHECK(weight_bytes_w4a16(c) == quantised_bytes + kept_bytes);
  CHECK(weight_bytes_w4a16(c) == 6609850368LL);
}

TEST_CASE("memory: GPTQ keeps gates, embeddings, lm_head and norms in bf16", "[memory]") {
  const ModelConfig c = load_config(test::real_config());
  for (const TensorSpec& t : tensor_inventory(c)) {
    INFO(t.name);
    const bool gate = t.name.find("o_gate") != std::string::npos || t.name.find("z_proj") != std::string::npos;
    const bool layer_linear = t.layer >= 0 && t.shape.size() == 2;
    CHECK(gptq_keeps_bf16(t) == (gate || !layer_linear));
  }
  CHECK(w4a16_matrix_bytes(4096, 4096) == 4096 * 4096 / 2 + 4096 * 32 * 2 + 4096 * 32 / 2);
}

TEST_CASE("memory: facts follow the tiny config", "[memory]") {
  const ModelConfig c = load_config(test::tiny_config());
  // tiny: 2 sparse layers with 2 kv heads of 128; 2 Lightning layers with 4 heads of 128.
  CHECK(kv_bytes_per_token(c) == 2 * 2 * 2 * 128 * 2);
  CHECK(k1_bytes_per_token(c) == 2.0 * 2 * 128 * 2 / 16);
  CHECK(gla_state_bytes(c) == 2 * 4 * 128 * 128 * 4);
  CHECK(weight_bytes_bf16(c) == 2 * 10751744LL);
}
