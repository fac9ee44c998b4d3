// What select_blocks.cu and select_wgmma.cu share: one sub-chunk of queries, and the launchers of the tensor-core
// (wgmma) kernels that select_blocks picks for prefill sub-chunks (select_wgmma.cu).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "gpu/tensor_map.hpp"

namespace salasim::gpu {

constexpr int kHd = 128;   // head dim the selection kernels are built for
constexpr int kRows = 16;  // query heads per kv group: a warp's 16 MMA rows (two n8 tiles in the mma.sync kernels)
constexpr int kQT = 16;    // queries per CTA of the scoring kernels, in both engines

// Shapes and positions of one sub-chunk of queries: chunk-local query tl is absolute query t0 + tl at position
// pos0 + t0 + tl.
struct Chunk {
  const __nv_bfloat16* q;  // [T, H*hd], row stride ldq
  int64_t ldq;
  int64_t pos0, t0, nq;
  int G, H;
  float sc_log2;  // tau * log2(e): logits in log2 units
};

// (max, sum) of exp2 merged: a pair with max -inf is empty.
__device__ inline void merge_ml(float& m, float& l, float m2, float l2) {
  const float M = fmaxf(m, m2);
  if (M == -INFINITY) return;
  l = (m > -INFINITY ? l * exp2f(m - M) : 0.f) + (m2 > -INFINITY ? l2 * exp2f(m2 - M) : 0.f);
  m = M;
}

// The max-pool that ends score_pool and score_pool_wg: block b0 + j of query tq0 + qi takes window scores
// wsc[qi * ld + 4j .. 4j + 4] (16-bit keys of non-negative bf16 scores, which order like the values); blocks past
// the query's own are left alone. n_q queries of the tile, pool_blocks blocks, the CTA's threads in turn.
__device__ inline void pool_to_blocks(const Chunk& ch, const uint16_t* wsc, int ld, int n_q, int64_t tq0, int64_t b0,
                                      int pool_blocks, int block, int grp, uint16_t* __restrict__ pooled, int64_t nbs) {
  for (int i = threadIdx.x; i < n_q * pool_blocks; i += blockDim.x) {
    const int qi = i / pool_blocks, j = i % pool_blocks;
    const int64_t t = tq0 + qi, b = b0 + j;
    if (t >= ch.nq || b > (ch.pos0 + ch.t0 + t) / block) continue;
    const uint16_t* w = wsc + qi * ld + 4 * j;
    uint16_t key = w[0];
    for (int x = 1; x < 5; ++x) key = w[x] > key ? w[x] : key;
    pooled[(t * ch.G + grp) * nbs + b] = key;
  }
}

// Blocks a score_pool_wg CTA scores in prefill: 4 * 255 + 1 windows, 8 tiles of 128 (score_pool's 127 are 4).
constexpr int kWgPoolBlocks = 255;

// The wgmma forms of lse_partial and score_pool (select_blocks.cu steps 1 and 3): the same outputs from the same
// arguments (pool_blocks: kWgPoolBlocks, or decode's 31), in other fp32 summation orders; 16 queries a CTA, each CTA
// two LSE splits or pool_blocks blocks.
cudaError_t launch_lse_partial_wg(const Chunk& ch, const __nv_bfloat16* k2, int64_t k2_cap, int64_t n2c, int kernel2,
                                  int stride2, int split_w, int64_t nsplit, float2* part, Stream s);
cudaError_t launch_score_pool_wg(const Chunk& ch, const __nv_bfloat16* k1, int64_t k1_cap, int64_t n1c, int kernel,
                                 int stride, int block, int pool_blocks, const float* lse, uint16_t* pooled,
                                 int64_t nbs, Stream s);

}  // namespace salasim::gpu
