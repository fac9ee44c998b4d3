// compress_k on the GPU: mean-pooled compressed keys (docs/spec.md §4.2), appended incrementally from the KV cache.
#pragma once
#include "gpu/common.hpp"

namespace salasim::gpu {

// Writes the windows that keys [0, len) complete beyond those [0, len_old) completed:
// windows c in [n_windows(len_old), n_windows(len)), window c = mean of keys [stride c, stride c + kernel).
// K:  [G, cap, hd] bf16 key cache (kv head g's row j at K + (g * cap + j) * hd).
// ck: [G, ccap, hd] bf16 compressed keys. Means accumulate in fp32 and round once to bf16.
void compress_k(const bf16_t* K, int64_t cap, int G, int hd, int64_t len_old, int64_t len, int kernel, int stride,
                bf16_t* ck, int64_t ccap, Stream s);

}  // namespace salasim::gpu
