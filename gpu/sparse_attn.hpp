// sparse_attn on the GPU: each query attends, with an fp32 online softmax, to the keys j <= p of its selected
// 64-token blocks (docs/spec.md §4.5); bf16 in, bf16 out. dense_attn is the same kernels with every causal block.
#pragma once
#include "gpu/common.hpp"
#include "gpu/launch_geometry.hpp"

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
  const int32_t* blocks = nullptr;  // [T, G, k_sel] ascending, -1 = unused; nullptr = every block <= qb (dense).
                                    // A block listed twice counts once (the selection is a set, as in the
                                    // reference); ids outside [0, p/64] are ignored.
  int k_sel = 96;                   // <= 128
  bf16_t* out = nullptr;            // [T, H*hd], row stride ldo
  int64_t ldo = 0;
  // Calls of T <= kAttnSplitMaxT queries (decode) split each query's blocks over many CTAs and combine the
  // partial softmaxes (flash-decoding); they need sparse_attn_workspace_bytes(T, G, k_sel, kv_len) bytes here.
  // Such a call reads q before it waits for the kernel before it on the stream (gpu/pdl.cuh): q must have been
  // written before that kernel (the runner's projection is: kv_append, then the selection (sparse) or kv_append
  // and any compress_k (dense), run in between).
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  // Prefill calls (T > kAttnSplitMaxT) run one of two kernels with the same arithmetic in the same order, so the
  // same bits: the ring kernel (8 queries a CTA, the tensor copy engine filling a ring of K/V stages for warps that
  // each go at their own pace; an sm_90a build on a Hopper GPU, wgmma_available()) or the tile kernel (4 queries a
  // CTA, cp.async, a CTA barrier a block; any GPU). automatic takes the ring where it runs and its union bitmap fits
  // shared memory (contexts up to ~15M tokens); tma insists on it (an error where it cannot run); cp_async takes the
  // tile kernel (the comparison point, and what other GPUs run).
  enum class Engine { automatic, tma, cp_async };
  Engine engine = Engine::automatic;
  // Ring kernel: a union block that at least this many of a warpgroup's 4 queries attend to runs on the warpgroup's
  // MMA (wgmma, 64 rows at once), a block fewer take on each taker's own mma.sync. 0: automatic (3); 5: never.
  int wg_takers = 0;
  // Ring kernel: a warpgroup of a sparse call whose every union block runs on wgmma (at least wg_takers of its 4
  // queries picked each block of the union), and every warpgroup of a dense call (wg_takers <= 4), take the union
  // pipelined, the softmax of one block beside the P V product of the one before. false: each block's products
  // waited on in turn (the A/B's and the tests' comparison point: the same bits for sparse calls; for dense ones
  // wherever the walk in turn also takes a block on wgmma, which it does not for the few diagonal blocks fewer than
  // wg_takers of a warpgroup's queries reach).
  bool wg_pipeline = true;
  // When not null, a sparse prefill call adds to these kAttnTileStats device counters: [0] the blocks each query tile
  // loaded (the union of its queries' selections), [1] the blocks each query attended to, [2] the tiles, [3] their
  // queries. [1] / [0] is how many queries each loaded block served (1 when neighbours' selections are disjoint).
  unsigned long long* tile_stats = nullptr;
};

// Workspace of a call of T queries against kv_len cached keys (0 when T > kAttnSplitMaxT).
size_t sparse_attn_workspace_bytes(int64_t T, int G, int k_sel, int64_t kv_len);

void sparse_attn(const AttnArgs& a, Stream s);
// Causal GQA attention over every cached key j <= p (below dense_len): sparse_attn with blocks = nullptr.
void dense_attn(AttnArgs a, Stream s);

}  // namespace salasim::gpu
