// Memory facts of a config: weights (bf16, GPTQ W4A16), KV cache, compressed keys, GLA state (docs/spec.md §7).
#include "model/memory.hpp"

#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/windows.hpp"

namespace salasim {

int64_t w4a16_matrix_bytes(int64_t rows, int64_t cols, int group) {
  if (group <= 0) fail("GPTQ group size must be positive, not {}", group);
  const int64_t groups = (cols + group - 1) / group;  // per output row
  const int64_t qweight = rows * cols / 2;             // 4 bits per weight
  const int64_t scales = rows * groups * 2;            // fp16 per (group, row)
  const int64_t qzeros = (rows * groups + 1) / 2;      // 4 bits per (group, row)
  return qweight + scales + qzeros;
}

bool gptq_keeps_bf16(const TensorSpec& t) {
  if (t.layer < 0 || t.shape.size() != 2) return true;  // embeddings, lm_head, norms
  const std::string& n = t.name;
  auto ends_with = [&](const char* s) {
    const std::string suf(s);
    return n.size() >= suf.size() && n.compare(n.size() - suf.size(), suf.size(), suf) == 0;
  };
  return ends_with("o_gate.weight") || ends_with("z_proj.weight");
}

int64_t weight_bytes_bf16(const ModelConfig& c) {
  int64_t bytes = 0;
  for (const TensorSpec& t : tensor_inventory(c)) bytes += t.numel() * 2;
  return bytes;
}

int64_t weight_bytes_w4a16(const std::vector<TensorSpec>& inv, int group) {
  int64_t bytes = 0;
  for (const TensorSpec& t : inv)
    bytes += gptq_keeps_bf16(t) ? t.numel() * 2 : w4a16_matrix_bytes(t.rows(), t.cols(), group);
  return bytes;
}

int64_t weight_bytes_w4a16(const ModelConfig& c, int group) { return weight_bytes_w4a16(tensor_inventory(c), group); }

int64_t kv_bytes_per_token(const ModelConfig& c) {
  const std::string what = c.source + ": KV cache bytes per token";
  return checked_mul(checked_mul(int64_t(c.n_layers(Mixer::Sparse)) * 4, c.num_key_value_heads, what), c.head_dim, what);
}

int64_t kv_cache_bytes(const ModelConfig& c, int64_t tokens) {
  return checked_mul(kv_bytes_per_token(c), tokens, fmt::format("{}: KV cache bytes of {} tokens", c.source, tokens));
}

int64_t k1_entries(const ModelConfig& c, int64_t tokens) {
  return n_windows(tokens, c.sparse.kernel_size, c.sparse.kernel_stride);
}
int64_t k2_entries(const ModelConfig& c, int64_t tokens) {
  return n_windows(tokens, c.sparse.k2_kernel(), c.sparse.k2_stride());
}

int64_t compressed_key_entry_bytes(const ModelConfig& c) {
  const std::string what = c.source + ": compressed-key bytes per entry";
  return checked_mul(checked_mul(int64_t(c.n_layers(Mixer::Sparse)) * 2, c.num_key_value_heads, what), c.head_dim, what);
}

double k1_bytes_per_token(const ModelConfig& c) {
  return double(compressed_key_entry_bytes(c)) / c.sparse.kernel_stride;
}
double k2_bytes_per_token(const ModelConfig& c) { return double(compressed_key_entry_bytes(c)) / c.sparse.k2_stride(); }

int64_t compressed_key_bytes(const ModelConfig& c, int64_t tokens) {
  return checked_mul(k1_entries(c, tokens) + k2_entries(c, tokens), compressed_key_entry_bytes(c),
                     fmt::format("{}: compressed-key bytes of {} tokens", c.source, tokens));
}

int64_t gla_state_bytes(const ModelConfig& c) {
  const int64_t d = c.lightning_head_dim;
  const std::string what = c.source + ": GLA state bytes";
  return checked_mul(checked_mul(int64_t(c.n_layers(Mixer::Lightning)) * 4, c.lightning_nh, what), d * d, what);
}

}  // namespace salasim
