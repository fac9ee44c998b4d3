// The model's weights as float64 matrices (exactly the bf16 values of the source), per layer.
#pragma once
#include <memory>
#include <vector>

#include "model/config.hpp"
#include "model/inventory.hpp"
#include "model/weights.hpp"
#include "reference/tensor.hpp"

namespace salasim::ref {

struct LayerWeights {
  Mixer mixer = Mixer::Lightning;
  Vec input_norm, post_norm;  // [D]
  // Lightning: q, k, v, z [Ld, D], o [D, Ld]; q_norm, k_norm [hd]; o_norm [Ld]
  // Sparse:    q [Q, D], k, v [KV, D], o [D, Q], z = o_gate [Q, D]
  Mat q, k, v, o, z;
  Vec q_norm, k_norm, o_norm;
  Mat mlp_gate, mlp_up, mlp_down;  // [I, D], [I, D], [D, I]
};

struct RefWeights {
  Mat embed;       // [V, D]
  Mat lm_head;     // [V, D] (the embedding when tied)
  Vec final_norm;  // [D]
  std::vector<LayerWeights> layers;
};

LayerWeights load_layer_weights(const ModelConfig& c, const std::vector<TensorSpec>& inv, const WeightSource& w,
                                int layer);
std::shared_ptr<const RefWeights> load_ref_weights(const ModelConfig& c, const WeightSource& w);

}  // namespace salasim::ref
