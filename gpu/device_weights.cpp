// Device weights: allocation in the fused layout and filling from either weight source.
#include "gpu/device_weights.hpp"

#include <algorithm>

#include "gpu/ops.hpp"
#include "model/error.hpp"

namespace salasim::gpu {

namespace {

// Fills rows [row0, row0 + t.rows()) of dst ([?, t.cols()]) with tensor t.
void fill(bf16_t* dst, int64_t row0, const TensorSpec& t, const WeightSource& w, Stream s) {
  bf16_t* at = dst + row0 * t.cols();
  if (w.synthetic()) {
    const SynthParams p = synth_params(w.seed, t);
    synth_fill(at, t.numel(), 0, p.key, p.amp, p.ones, s);
    return;
  }
  const int64_t rows_per = std::max<int64_t>(1, (int64_t(64) << 20) / std::max<int64_t>(1, t.cols()));  // ~128 MB
  std::vector<bf16_t> host;
  for (int64_t r = 0; r < t.rows(); r += rows_per) {
    const int64_t n = std::min(rows_per, t.rows() - r);
    host.resize(size_t(n * t.cols()));
    weight_rows_bf16(w, t, r, n, host.data());
    copy_to_device(at + r * t.cols(), host.data(), host.size() * sizeof(bf16_t));
  }
}

const TensorSpec& need(const std::vector<TensorSpec>& inv, const std::string& name) {
  const TensorSpec* t = find_tensor(inv, name);
  if (!t) internal_fail("'{}' missing from the inventory", name);
  return *t;
}

}  // namespace

size_t device_weight_bytes(const ModelConfig& c) { return size_t(count_params(c, tensor_inventory(c)).bf16_bytes); }

DeviceWeights load_device_weights(const ModelConfig& c, const WeightSource& w, Stream s) {
  if (!c.qk_norm || !c.use_output_norm || !c.use_output_gate || !c.attn_use_output_gate)
    fail("{}: the CUDA path implements the released mixer (qk_norm, use_output_norm, use_output_gate and "
         "attn_use_output_gate all true)", c.source);
  const auto inv = tensor_inventory(c);
  const int64_t D = c.hidden_size, I = c.intermediate_size, Ld = c.lightning_dim(), Q = c.q_dim(), KV = c.kv_dim();
  DeviceWeights dw;
  auto one = [&](const std::string& name, const char* what) {
    const TensorSpec& t = need(inv, name);
    Buffer<bf16_t> b(size_t(t.numel()), what);
    fill(b.get(), 0, t, w, s);
    dw.bytes += b.size() * 2;
    return b;
  };
  dw.embed = one(tensor_name_embed(), "embed_tokens");
  if (!c.tie_word_embeddings) dw.lm_head = one("lm_head.weight", "lm_head");
  dw.final_norm = one(tensor_name_final_norm(), "final norm");
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const std::string p = layer_prefix(l), a = p + "self_attn.";
    LayerBuffers L;
    L.mixer = c.layers[size_t(l)];
    L.input_norm = one(p + "input_layernorm.weight", "input norm");
    L.post_norm = one(p + "post_attention_layernorm.weight", "post norm");
    std::vector<std::string> parts;
    if (L.mixer == Mixer::Lightning) {
      parts = {"q_proj", "k_proj", "v_proj", "z_proj"};
      L.proj = Buffer<bf16_t>(size_t(4 * Ld * D), "lightning q|k|v|z");
      L.q_norm = one(a + "q_norm.weight", "q_norm");
      L.k_norm = one(a + "k_norm.weight", "k_norm");
      L.o_norm = one(a + "o_norm.weight", "o_norm");
    } else {
      parts = {"q_proj", "k_proj", "v_proj", "o_gate"};
      L.proj = Buffer<bf16_t>(size_t((2 * Q + 2 * KV) * D), "sparse q|k|v|o_gate");
    }
    int64_t row = 0;
    for (const std::string& part : parts) {
      const TensorSpec& t = need(inv, a + part + ".weight");
      fill(L.proj.get(), row, t, w, s);
      row += t.rows();
    }
    dw.bytes += L.proj.size() * 2;
    L.o = one(a + "o_proj.weight", "o_proj");
    L.gate_up = Buffer<bf16_t>(size_t(2 * I * D), "mlp gate|up");
    fill(L.gate_up.get(), 0, need(inv, p + "mlp.gate_proj.weight"), w, s);
    fill(L.gate_up.get(), I, need(inv, p + "mlp.up_proj.weight"), w, s);
    dw.bytes += L.gate_up.size() * 2;
    L.down = one(p + "mlp.down_proj.weight", "mlp down");
    dw.layers.push_back(std::move(L));
  }
  return dw;
}

}  // namespace salasim::gpu
