// The model's weights on the device in bf16, laid out for fused GEMMs: one [4Ld, D] q|k|v|z matrix per Lightning
// layer, one [Q+2KV+Q, D] q|k|v|o_gate matrix per sparse layer, one [2I, D] gate|up matrix per MLP.
#pragma once
#include <vector>

#include "gpu/common.hpp"
#include "model/config.hpp"
#include "model/inventory.hpp"
#include "model/weights.hpp"

namespace salasim::gpu {

struct LayerBuffers {
  Mixer mixer = Mixer::Lightning;
  Buffer<bf16_t> input_norm, post_norm;  // [D]
  Buffer<bf16_t> proj;                   // Lightning [4Ld, D]: q|k|v|z; sparse [Q+2KV+Q, D]: q|k|v|o_gate
  Buffer<bf16_t> o;                      // [D, Ld] or [D, Q]
  Buffer<bf16_t> q_norm, k_norm, o_norm; // Lightning: [hd], [hd], [Ld]
  Buffer<bf16_t> gate_up, down;          // [2I, D], [D, I]
};

struct DeviceWeights {
  Buffer<bf16_t> embed, lm_head, final_norm;  // lm_head empty when tied (use embed)
  std::vector<LayerBuffers> layers;
  size_t bytes = 0;

  const bf16_t* lm_head_ptr() const { return lm_head.size() ? lm_head.get() : embed.get(); }
};

// Bytes the layout needs (equal to the inventory's bf16 bytes).
size_t device_weight_bytes(const ModelConfig& c);
// Allocates and fills: synthetic weights are generated on the device (bit-identical to model/synth.hpp);
// checkpoint weights are converted to bf16 on the host and uploaded row block by row block.
DeviceWeights load_device_weights(const ModelConfig& c, const WeightSource& w, Stream s);

}  // namespace salasim::gpu
