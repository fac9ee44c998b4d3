// Loading weights into float64 matrices; a switched-off norm (qk_norm=false, ...) is left empty.
#include "reference/weights.hpp"

#include "model/error.hpp"

namespace salasim::ref {

namespace {
Mat load_mat(const std::vector<TensorSpec>& inv, const WeightSource& w, const std::string& name) {
  const TensorSpec* t = find_tensor(inv, name);
  if (!t) internal_fail("tensor '{}' not in the inventory", name);
  Mat m(t->rows(), t->cols());
  weight_rows(w, *t, 0, t->rows(), m.data());
  return m;
}
Vec load_vec(const std::vector<TensorSpec>& inv, const WeightSource& w, const std::string& name) {
  Mat m = load_mat(inv, w, name);
  return Eigen::Map<Vec>(m.data(), m.size());
}
}  // namespace

LayerWeights load_layer_weights(const ModelConfig& c, const std::vector<TensorSpec>& inv, const WeightSource& w,
                                int layer) {
  const std::string p = layer_prefix(layer), a = p + "self_attn.";
  LayerWeights L;
  L.mixer = c.layers[size_t(layer)];
  L.input_norm = load_vec(inv, w, p + "input_layernorm.weight");
  L.post_norm = load_vec(inv, w, p + "post_attention_layernorm.weight");
  L.q = load_mat(inv, w, a + "q_proj.weight");
  L.k = load_mat(inv, w, a + "k_proj.weight");
  L.v = load_mat(inv, w, a + "v_proj.weight");
  L.o = load_mat(inv, w, a + "o_proj.weight");
  if (L.mixer == Mixer::Lightning) {
    if (c.use_output_gate) L.z = load_mat(inv, w, a + "z_proj.weight");
    if (c.qk_norm) {
      L.q_norm = load_vec(inv, w, a + "q_norm.weight");
      L.k_norm = load_vec(inv, w, a + "k_norm.weight");
    }
    if (c.use_output_norm) L.o_norm = load_vec(inv, w, a + "o_norm.weight");
  } else if (c.attn_use_output_gate) {
    L.z = load_mat(inv, w, a + "o_gate.weight");
  }
  L.mlp_gate = load_mat(inv, w, p + "mlp.gate_proj.weight");
  L.mlp_up = load_mat(inv, w, p + "mlp.up_proj.weight");
  L.mlp_down = load_mat(inv, w, p + "mlp.down_proj.weight");
  return L;
}

std::shared_ptr<const RefWeights> load_ref_weights(const ModelConfig& c, const WeightSource& w) {
  const auto inv = tensor_inventory(c);
  auto W = std::make_shared<RefWeights>();
  W->embed = load_mat(inv, w, tensor_name_embed());
  W->lm_head = c.tie_word_embeddings ? W->embed : load_mat(inv, w, tensor_name_lm_head(c));
  W->final_norm = load_vec(inv, w, tensor_name_final_norm());
  for (int l = 0; l < c.num_hidden_layers; ++l) W->layers.push_back(load_layer_weights(c, inv, w, l));
  return W;
}

}  // namespace salasim::ref
