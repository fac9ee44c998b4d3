// Parser and tensor inventory of the dense comparator's config.json (Qwen3 form).
#include "reports/dense_config.hpp"

#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"

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
  // The ranges of model/limits.hpp, checked in 64 bits before narrowing.
  auto ranged = [&](const char* key, int64_t hi) { return int(d.integer(key, 1, hi)); };
  c.hidden_size = ranged("hidden_size", kMaxWidth);
  c.num_hidden_layers = ranged("num_hidden_layers", kMaxLayers);
  c.num_attention_heads = ranged("num_attention_heads", kMaxHeads);
  c.num_key_value_heads = ranged("num_key_value_heads", kMaxHeads);
  c.head_dim = d.has("head_dim") ? ranged("head_dim", kMaxHeadDim) : c.hidden_size / c.num_attention_heads;
  if (c.head_dim < 1 || c.head_dim > kMaxHeadDim)
    d.bad("head_dim", fmt::format("an integer in [1, {}] (without it, hidden_size / num_attention_heads = {})",
                                  kMaxHeadDim, c.head_dim));
  c.intermediate_size = ranged("intermediate_size", kMaxWidth);
  c.vocab_size = ranged("vocab_size", kMaxVocab);
  c.tie_word_embeddings = d.boolean("tie_word_embeddings");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    d.bad("num_key_value_heads", "a divisor of num_attention_heads");
  if (d.has("hidden_act") && d.string("hidden_act") != "silu") d.bad("hidden_act", "\"silu\"");
  if (d.has("use_sliding_window") && d.boolean("use_sliding_window"))
    d.bad("use_sliding_window", "false (the model counts full causal attention in every layer)");
  // The floating fields are not used by the memory and latency models, but a config that holds them holds them in
  // the ranges a SALA config must (model/limits.hpp): a finite but absurd value means the wrong file.
  if (d.has("rms_norm_eps")) d.number("rms_norm_eps", kRmsNormEps);
  if (d.has("rope_theta")) d.number("rope_theta", kRopeTheta);
  if (d.has("initializer_range")) d.number("initializer_range", kInitializerRange);
  if (d.has("attention_dropout")) d.number("attention_dropout", kAttentionDropout);
  // Every tensor and the parameter total in 64 bits (the ranges keep them there; this says so, naming the tensor).
  int64_t total = 0;
  for (const TensorSpec& t : dense_inventory(c))
    total = checked_add(total, checked_numel(t.shape, source + ": tensor " + t.name), source + ": parameter count");
  checked_mul(total, 8, source + ": float64 bytes of the parameters");
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
  const std::string what = c.source + ": KV cache bytes per token";
  return checked_mul(checked_mul(int64_t(c.num_hidden_layers) * 4, c.num_key_value_heads, what), c.head_dim, what);
}

}  // namespace salasim::reports
