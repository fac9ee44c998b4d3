// sparse_attn on the GPU: each query attends, with an fp32 online softmax, to the keys j <= p of its selected
// 64-token blocks (docs/spec.md §4.5); bf16 in, bf16 out. dense_attn is the same kernel with every causal block.
#pragma once
#include "gpu/common.hpp"

namespace salasim::gpu {

struct AttnArgs {
  const bf16_t* q = nullptr;  // [T, H*hd], row stride ldq; query heads h use kv head h / (H/G)
  int64_t ldq = 0;
  int64_t T = 0, pos0 = 0;    // absolute positions pos0 .. pos0 + T - 1; keys 0 .. pos0 + T - 1 are cached
  const bf16_t* K = nullptr;  // [G, cap, hd] key cache
  const bf16_t* V = nullptr;  // [G, cap, hd] value cache
  int64_t cap = 0;
  int H = 32, G = 2, hd = 128;
  float tau = 0;
  int block = 64;
  const int32_t* blocks = nullptr;  // [T, G, k_sel], ascending, -1 = unused; nullptr = every block <= qb (dense)
  int k_sel = 96;
  bf16_t* out = nullptr;  // [T, H*hd], row stride ldo
  int64_t ldo = 0;
};

void sparse_attn(const AttnArgs& a, Stream s);
// Causal GQA attention over every cached key j <= p (below dense_len): sparse_attn with blocks = nullptr.
void dense_attn(AttnArgs a, Stream s);

}  // namespace salasim::gpu
