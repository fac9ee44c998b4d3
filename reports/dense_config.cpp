// Parser and tensor inventory of the dense comparator's config.json (Qwen3 form).
#include "reports/dense_config.hpp"

#include "model/error.hpp"
#include "model/json_field.hpp"

namespace salasim::reports {

static DenseConfig dense_from_json(const json& j, const std::string& source) {
  if (!j.is_object()) fail("{}: expected a JSON object at the top level, got {}", source, json_type_name(j));
  JsonDoc d{j, source, ""};
  DenseConfig c;
  c.source = source;
  c.model_type = d.string("model_type");
  if (c.model_type != "qwen3" && c.model_type != "qwen2" && c.model_type != "llama")
    d.bad("model_type", "\"qwen3\", \"qwen2\" or \"llama\" (a dense comparator) or \"minicpm_sala\"");
  c.qk_norm = c.model_type == "qwen3";
  auto positive = [&](const char* key) { return int(d.integer(key, 1)); };
  c.hidden_size = positive("hidden_size");
  c.num_hidden_layers = positive("num_hidden_layers");
  c.num_attention_heads = positive("num_attention_heads");
  c.num_key_value_heads = positive("num_key_value_heads");
  c.head_dim = d.has("head_dim") ? positive("head_dim") : c.hidden_size / c.num_attention_heads;
  c.intermediate_size = positive("intermediate_size");
  c.vocab_size = positive("vocab_size");
  c.tie_word_embeddings = d.boolean("tie_word_embeddings");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    d.bad("num_key_value_heads", "a divisor of num_attention_heads");
  if (d.has("hidden_act") && d.string("hidden_act") != "silu") d.bad("hidden_act", "\"silu\"");
  if (d.has("use_sliding_window") && d.boolean("use_sliding_window"))
    d.bad("use_sliding_window", "false (the model counts full causal attention in every layer)");
  return c;
}

DenseConfig parse_dense_config(const std::string& text, const std::string& source) {
  return dense_from_json(parse_json_text(text, source), source);
}

DenseConfig load_dense_config(const std::string& path) { return dense_from_json(parse_json_file(path), path); }

std::vector<TensorSpec> dense_inventory(const DenseConfig& c) {
  const int64_t D = c.hidden_size, Q = c.q_dim(), KV = c.kv_dim(), I = c.intermediate_size;
  std::vector<TensorSpec> inv;
  auto add = [&](std::string name, std::vector<int64_t> shape, Component comp, int layer) {
    inv.push_back(TensorSpec{std::move(name), std::move(shape), DType::BF16, comp, layer, 0});
  };
  add("model.embed_tokens.weight", {c.vocab_size, D}, Component::Embed, -1);
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = layer_prefix(l);
    add(p + "input_layernorm.weight", {D}, Component::LayerNorms, l);
    // Component labels are SALA's: the attention block is filed under SparseMixer (it only labels rows).
    add(p + "self_attn.q_proj.weight", {Q, D}, Component::SparseMixer, l);
    add(p + "self_attn.k_proj.weight", {KV, D}, Component::SparseMixer, l);
    add(p + "self_attn.v_proj.weight", {KV, D}, Component::SparseMixer, l);
    add(p + "self_attn.o_proj.weight", {D, Q}, Component::SparseMixer, l);
    if (c.qk_norm) {
      add(p + "self_attn.q_norm.weight", {c.head_dim}, Component::SparseMixer, l);
      add(p + "self_attn.k_norm.weight", {c.head_dim}, Component::SparseMixer, l);
    }
    add(p + "post_attention_layernorm.weight", {D}, Component::LayerNorms, l);
    add(p + "mlp.gate_proj.weight", {I, D}, Component::Mlp, l);
    add(p + "mlp.up_proj.weight", {I, D}, Component::Mlp, l);
    add(p + "mlp.down_proj.weight", {D, I}, Component::Mlp, l);
  }
  add("model.norm.weight", {D}, Component::FinalNorm, -1);
  if (!c.tie_word_embeddings) add("lm_head.weight", {c.vocab_size, D}, Component::LmHead, -1);
  return inv;
}

int64_t dense_kv_bytes_per_token(const DenseConfig& c) {
  return int64_t(c.num_hidden_layers) * 2 * c.num_key_value_heads * c.head_dim * 2;
}

}  // namespace salasim::reports
