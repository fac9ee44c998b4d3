// Tensor inventory and parameter counts: the released totals of docs/spec.md §6, and any config against
// an independent closed-form formula.
#include <set>

#include "model/config.hpp"
#include "model/inventory.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

// Written from docs/spec.md §6 directly, not from the inventory code.
int64_t closed_form_total(const ModelConfig& c) {
  const int64_t D = c.hidden_size, V = c.vocab_size, I = c.intermediate_size, L = c.num_hidden_layers;
  const int64_t Ld = int64_t(c.lightning_nh) * c.lightning_head_dim, hd = c.lightning_head_dim;
  const int64_t Q = int64_t(c.num_attention_heads) * c.head_dim, KV = int64_t(c.num_key_value_heads) * c.head_dim;
  const int64_t lightning_mixer = 4 * Ld * D + D * Ld + 2 * hd + Ld;
  const int64_t sparse_mixer = Q * D + 2 * KV * D + D * Q + Q * D;
  return V * D * (c.tie_word_embeddings ? 1 : 2) + D + L * (2 * D + 3 * D * I) +
         c.n_layers(Mixer::Lightning) * lightning_mixer + c.n_layers(Mixer::Sparse) * sparse_mixer;
}

int64_t row_total(const ParamCount& pc, Component c) {
  for (const ComponentRow& r : pc.rows)
    if (r.component == c) return r.total();
  return -1;
}

}  // namespace

TEST_CASE("inventory: released config totals 9,477,203,968", "[inventory]") {
  ModelConfig c = load_config(test::real_config());
  auto inv = tensor_inventory(c);
  ParamCount pc = count_params(c, inv);
  CHECK(pc.total == 9477203968LL);
  CHECK(pc.lightning_layer == 285225216LL);
  CHECK(pc.sparse_layer == 253763584LL);
  CHECK(pc.n_lightning == 24);
  CHECK(pc.n_sparse == 8);
  CHECK(pc.bf16_bytes == 18954407936LL);
}

TEST_CASE("inventory: released per-component rows match docs/spec.md §6", "[inventory]") {
  ModelConfig c = load_config(test::real_config());
  ParamCount pc = count_params(c, tensor_inventory(c));
  CHECK(row_total(pc, Component::Embed) == 300843008LL);
  CHECK(row_total(pc, Component::LmHead) == 300843008LL);
  CHECK(row_total(pc, Component::FinalNorm) == 4096);
  CHECK(row_total(pc, Component::Mlp) == 6442450944LL);
  CHECK(row_total(pc, Component::LayerNorms) == 262144);
  CHECK(row_total(pc, Component::LightningMixer) == 2013370368LL);
  CHECK(row_total(pc, Component::SparseMixer) == 419430400LL);
  for (const ComponentRow& r : pc.rows) {
    if (r.component == Component::LightningMixer) CHECK(r.each == 83890432LL);
    if (r.component == Component::SparseMixer) CHECK(r.each == 52428800LL);
    if (r.component == Component::Mlp) CHECK(r.each == 201326592LL);
  }
}

TEST_CASE("inventory: names, shapes and dtypes follow docs/spec.md §12", "[inventory]") {
  ModelConfig c = load_config(test::real_config());
  auto inv = tensor_inventory(c);
  std::set<std::string> names;
  for (const TensorSpec& t : inv) {
    CHECK(names.insert(t.name).second);  // unique
    CHECK(t.dtype == DType::BF16);
  }
  CHECK(inv.size() == 3 + 32 * 5 + 24 * 8 + 8 * 5);
  auto shape = [&](const std::string& n) { return find_tensor(inv, n)->shape; };
  using S = std::vector<int64_t>;
  CHECK(shape("model.embed_tokens.weight") == S{73448, 4096});
  CHECK(shape("lm_head.weight") == S{73448, 4096});
  CHECK(shape("model.norm.weight") == S{4096});
  CHECK(shape("model.layers.0.self_attn.k_proj.weight") == S{256, 4096});
  CHECK(shape("model.layers.0.self_attn.o_gate.weight") == S{4096, 4096});
  CHECK(shape("model.layers.1.self_attn.z_proj.weight") == S{4096, 4096});
  CHECK(shape("model.layers.1.self_attn.q_norm.weight") == S{128});
  CHECK(shape("model.layers.1.self_attn.o_norm.weight") == S{4096});
  CHECK(shape("model.layers.31.mlp.down_proj.weight") == S{4096, 16384});
  CHECK(shape("model.layers.31.mlp.gate_proj.weight") == S{16384, 4096});
  CHECK(find_tensor(inv, "model.layers.0.self_attn.q_norm.weight") == nullptr);  // no qk-norm in sparse layers
  CHECK(find_tensor(inv, "model.layers.1.self_attn.o_gate.weight") == nullptr);
}

TEST_CASE("inventory: counts follow any config (closed form)", "[inventory]") {
  for (const std::string& path : {test::real_config(), test::tiny_config()}) {
    ModelConfig c = load_config(path);
    ParamCount pc = count_params(c, tensor_inventory(c));
    INFO(path);
    CHECK(pc.total == closed_form_total(c));
    int64_t rows = 0;
    for (const ComponentRow& r : pc.rows) rows += r.total();
    CHECK(rows == pc.total);
    CHECK(pc.lightning_layer * pc.n_lightning + pc.sparse_layer * pc.n_sparse + 2 * int64_t(c.vocab_size) * c.hidden_size +
              c.hidden_size ==
          pc.total);
  }
}

TEST_CASE("inventory: tiny config count by hand", "[inventory]") {
  ModelConfig c = load_config(test::tiny_config());
  ParamCount pc = count_params(c, tensor_inventory(c));
  // 2*1024*256 + 256 + 4*(2*256 + 3*256*768) + 2*(5*512*256 + 2*128 + 512) + 2*(3*4096*256 + 2*256*256)
  CHECK(pc.total == 10751744);
}

TEST_CASE("inventory: tied embeddings and switched-off norms change the inventory", "[inventory]") {
  ModelConfig c = load_config(test::tiny_config());
  int64_t base = count_params(c, tensor_inventory(c)).total;
  c.tie_word_embeddings = true;
  CHECK(count_params(c, tensor_inventory(c)).total == base - int64_t(c.vocab_size) * c.hidden_size);
  CHECK(closed_form_total(c) == base - int64_t(c.vocab_size) * c.hidden_size);
  c.qk_norm = false;
  CHECK(count_params(c, tensor_inventory(c)).total ==
        base - int64_t(c.vocab_size) * c.hidden_size - c.n_layers(Mixer::Lightning) * 2 * c.lightning_head_dim);
}
