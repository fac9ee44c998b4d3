// Tensor inventory and parameter count: every tensor's HF name, shape and dtype follow from the config.
#include "model/inventory.hpp"

#include <cmath>
#include <map>

#include "model/error.hpp"
#include "model/shape.hpp"

namespace salasim {

const char* component_name(Component c) {
  switch (c) {
    case Component::Embed: return "embed_tokens";
    case Component::LmHead: return "lm_head";
    case Component::FinalNorm: return "final_norm";
    case Component::Mlp: return "mlp";
    case Component::LayerNorms: return "layer_norms";
    case Component::LightningMixer: return "lightning_mixer";
    case Component::SparseMixer: return "sparse_mixer";
  }
  return "?";
}

int64_t TensorSpec::numel() const { return shape_numel(shape); }

int64_t TensorSpec::cols() const { return shape_numel(shape, 1); }

std::string layer_prefix(int layer) { return fmt::format("model.layers.{}.", layer); }
std::string tensor_name_embed() { return "model.embed_tokens.weight"; }
std::string tensor_name_final_norm() { return "model.norm.weight"; }
std::string tensor_name_lm_head(const ModelConfig& c) {
  return c.tie_word_embeddings ? tensor_name_embed() : "lm_head.weight";
}

std::vector<TensorSpec> tensor_inventory(const ModelConfig& c) {
  const int64_t D = c.hidden_size;
  std::vector<TensorSpec> inv;
  auto add = [&](std::string name, std::vector<int64_t> shape, Component comp, int layer, double std) {
    inv.push_back(TensorSpec{std::move(name), std::move(shape), DType::BF16, comp, layer, std});
  };
  // Synthetic scales keep activations O(1): Linear std 1/sqrt(in); embeddings 1/scale_emb so h = E*scale_emb
  // has RMS 1; lm_head (hidden/dim_model_base)/sqrt(D) so the logits of h/16 have RMS 1; sparse q/k 2/sqrt(D)
  // so attention and block scores are peaked, as in a trained model, rather than uniform.
  auto linear = [](int64_t in) { return 1.0 / std::sqrt(double(in)); };

  add(tensor_name_embed(), {c.vocab_size, D}, Component::Embed, -1, 1.0 / c.scale_emb);
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = layer_prefix(l);
    add(p + "input_layernorm.weight", {D}, Component::LayerNorms, l, 0);
    if (c.layers[l] == Mixer::Lightning) {
      const int64_t L = c.lightning_dim(), hd = c.lightning_head_dim;
      add(p + "self_attn.q_proj.weight", {L, D}, Component::LightningMixer, l, linear(D));
      add(p + "self_attn.k_proj.weight", {L, D}, Component::LightningMixer, l, linear(D));
      add(p + "self_attn.v_proj.weight", {L, D}, Component::LightningMixer, l, linear(D));
      add(p + "self_attn.o_proj.weight", {D, L}, Component::LightningMixer, l, linear(L));
      if (c.use_output_gate) add(p + "self_attn.z_proj.weight", {L, D}, Component::LightningMixer, l, linear(D));
      if (c.qk_norm) {
        add(p + "self_attn.q_norm.weight", {hd}, Component::LightningMixer, l, 0);
        add(p + "self_attn.k_norm.weight", {hd}, Component::LightningMixer, l, 0);
      }
      if (c.use_output_norm) add(p + "self_attn.o_norm.weight", {L}, Component::LightningMixer, l, 0);
    } else {
      const int64_t Q = c.q_dim(), KV = c.kv_dim();
      add(p + "self_attn.q_proj.weight", {Q, D}, Component::SparseMixer, l, 2 * linear(D));
      add(p + "self_attn.k_proj.weight", {KV, D}, Component::SparseMixer, l, 2 * linear(D));
      add(p + "self_attn.v_proj.weight", {KV, D}, Component::SparseMixer, l, linear(D));
      add(p + "self_attn.o_proj.weight", {D, Q}, Component::SparseMixer, l, linear(Q));
      if (c.attn_use_output_gate) add(p + "self_attn.o_gate.weight", {Q, D}, Component::SparseMixer, l, linear(D));
    }
    add(p + "post_attention_layernorm.weight", {D}, Component::LayerNorms, l, 0);
    const int64_t I = c.intermediate_size;
    add(p + "mlp.gate_proj.weight", {I, D}, Component::Mlp, l, linear(D));
    add(p + "mlp.up_proj.weight", {I, D}, Component::Mlp, l, linear(D));
    add(p + "mlp.down_proj.weight", {D, I}, Component::Mlp, l, linear(I));
  }
  add(tensor_name_final_norm(), {D}, Component::FinalNorm, -1, 0);
  if (!c.tie_word_embeddings)
    add("lm_head.weight", {c.vocab_size, D}, Component::LmHead, -1, c.logit_divisor() / std::sqrt(double(D)));
  return inv;
}

const TensorSpec* find_tensor(const std::vector<TensorSpec>& inv, const std::string& name) {
  for (const TensorSpec& t : inv)
    if (t.name == name) return &t;
  return nullptr;
}

ParamCount count_params(const ModelConfig& c, const std::vector<TensorSpec>& inv) {
  int64_t sum[kComponents] = {};
  std::map<int, int64_t> per_layer;
  ParamCount pc;
  for (const TensorSpec& t : inv) {
    sum[int(t.component)] += t.numel();
    if (t.layer >= 0) per_layer[t.layer] += t.numel();
    pc.total += t.numel();
    pc.bf16_bytes += t.numel() * 2;
  }
  pc.n_lightning = c.n_layers(Mixer::Lightning);
  pc.n_sparse = c.n_layers(Mixer::Sparse);
  const int64_t D = c.hidden_size, V = c.vocab_size, I = c.intermediate_size;
  auto row = [&](Component comp, std::string label, int64_t count) {
    if (count == 0) return;
    int64_t s = sum[int(comp)];
    if (s % count != 0) internal_fail("component {} does not split evenly over {} instances", component_name(comp), count);
    pc.rows.push_back(ComponentRow{comp, std::move(label), s / count, count});
  };
  row(Component::Embed, fmt::format("embed_tokens [{}x{}]", V, D), 1);
  row(Component::LmHead, fmt::format("lm_head [{}x{}] (untied)", V, D), c.tie_word_embeddings ? 0 : 1);
  row(Component::FinalNorm, "final norm", 1);
  row(Component::Mlp, fmt::format("MLP (gate+up+down, 3x{}x{})", D, I), c.num_hidden_layers);
  row(Component::LayerNorms, "input + post-attention norms", c.num_hidden_layers);
  row(Component::LightningMixer, "lightning mixer: q,k,v,o,z + q_norm, k_norm, o_norm", pc.n_lightning);
  row(Component::SparseMixer, "sparse mixer: q, k, v, o, o_gate", pc.n_sparse);
  for (auto& [layer, n] : per_layer) {
    int64_t& slot = c.layers[layer] == Mixer::Lightning ? pc.lightning_layer : pc.sparse_layer;
    if (slot != 0 && slot != n) internal_fail("layers of one type differ in size ({} vs {})", slot, n);
    slot = n;
  }
  return pc;
}

}  // namespace salasim
