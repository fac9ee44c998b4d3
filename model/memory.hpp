// Memory facts that follow from a config alone (docs/spec.md §7): weight bytes (bf16 and GPTQ W4A16), the sparse
// layers' KV cache, the compressed keys K1/K2 and the Lightning (GLA) state. The GPU memory planner and the
// analytic report (reports/) both use exactly these functions, so the two can never disagree on them.
#pragma once
#include <cstdint>

#include "model/config.hpp"
#include "model/inventory.hpp"

namespace salasim {

// GPTQ W4A16 as the paper's quantized runs use it: every Linear weight inside the layers is 4-bit with
// group-wise (group of `group` input columns, one output row) an fp16 scale and a 4-bit zero point (GPTQ's
// `scales` and packed `qzeros`); embeddings, lm_head, norms and the gates o_gate / z_proj stay bf16.
// GPTQ's optional act-order index g_idx (4 B per input column) is not counted: < 0.01% of the weights.
constexpr int kGptqGroup = 128;

int64_t w4a16_matrix_bytes(int64_t rows, int64_t cols, int group = kGptqGroup);  // one [rows, cols] weight
bool gptq_keeps_bf16(const TensorSpec& t);  // true for the tensors the quantized checkpoint leaves in bf16

int64_t weight_bytes_bf16(const ModelConfig& c);  // 18,954,407,936 for the released config
int64_t weight_bytes_w4a16(const ModelConfig& c, int group = kGptqGroup);
int64_t weight_bytes_w4a16(const std::vector<TensorSpec>& inv, int group = kGptqGroup);

// KV cache of the sparse layers, bf16 K and V for every token (sparse compute, dense storage):
// n_sparse x 2 x kv_heads x head_dim x 2 B = 8,192 B/token for the released config.
int64_t kv_bytes_per_token(const ModelConfig& c);
int64_t kv_cache_bytes(const ModelConfig& c, int64_t tokens);

// Compressed keys (bf16, K only, per sparse layer and kv head): K1 pools kernel_size keys with stride
// kernel_stride, K2 pools 4x both (docs/spec.md §4.2). Entries exist once their window is complete.
int64_t k1_entries(const ModelConfig& c, int64_t tokens);  // n1(L) = floor((L-32)/16)+1 for L >= 32
int64_t k2_entries(const ModelConfig& c, int64_t tokens);  // n2(L) = floor((L-128)/64)+1 for L >= 128
int64_t compressed_key_entry_bytes(const ModelConfig& c);   // one entry over all sparse layers and kv heads
double k1_bytes_per_token(const ModelConfig& c);            // 256 for the released config (asymptotic rate)
double k2_bytes_per_token(const ModelConfig& c);            // 64
int64_t compressed_key_bytes(const ModelConfig& c, int64_t tokens);  // exact: (n1 + n2) entries

// Lightning recurrent state, fp32 [H, d, d] per layer, independent of context: 48 MiB for 24 layers.
int64_t gla_state_bytes(const ModelConfig& c);

}  // namespace salasim
