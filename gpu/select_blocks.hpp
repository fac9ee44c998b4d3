// select_blocks on the GPU: InfLLM-v2 stage-1 block scores, max-pool, forced blocks and top-k (docs/spec.md §4.3-4.4),
// the same function as reference/select_blocks.cpp:
//   LSE2_h(p) = log sum_{e : 64e+127 <= p} exp(tau q_h . K2_e)          (fp32)
//   s_g(p, c) = sum_{h in g} exp(tau q_h . K1_c - LSE2_h(p)), c : 16c+31 <= p, rounded to bf16
//   S_g(b)    = max of s over the K1 windows overlapping block b (c in [4b-1, 4b+3] for the real rules)
//   forced    = b < init_blocks or qb - local_blocks <= b <= qb (+inf); b > qb never chosen (-inf)
//   chosen    = forced + the highest S among the others, min(k_sel, qb + 1) in all, ascending;
//               equal scores break towards the lower block index.
// When no K2 window is visible yet (p < 127) every visible K1 window scores +inf (all blocks are forced then).
#pragma once
#include "gpu/common.hpp"

namespace salasim::gpu {

struct SelectArgs {
  const bf16_t* q = nullptr;  // [T, H*hd] queries, row stride ldq elements
  int64_t ldq = 0;
  int64_t T = 0;              // queries at absolute positions pos0 .. pos0 + T - 1
  int64_t pos0 = 0;
  const bf16_t* k1 = nullptr;  // [G, k1_cap, hd]: every K1 window complete by position pos0 + T - 1
  int64_t k1_cap = 0;
  const bf16_t* k2 = nullptr;  // [G, k2_cap, hd]
  int64_t k2_cap = 0;
  int H = 32, G = 2, hd = 128;
  float tau = 0;
  int kernel = 32, stride = 16;  // K1 window; K2 is 4x both
  int block = 64, init_blocks = 1, local_blocks = 32, k_sel = 96;
  int32_t* blocks = nullptr;  // out [T, G, k_sel]: chosen blocks ascending, -1 in unused slots
  float* scores = nullptr;    // optional out [T, G, n_blocks]: pooled S_g(b), +inf forced, -inf for b > qb
  int64_t n_blocks = 0;       // width of `scores` (blocks of the whole sequence)
  void* workspace = nullptr;  // select_blocks_workspace(...) bytes
  size_t workspace_bytes = 0;
  // How a call of <= 2 queries (decode) spreads its scores over CTAs: per kernel, the finest grid that fits one
  // wave (automatic: LSE partials of 128, 256 or 512 windows, score CTAs of 31 or 127 blocks), or the finest (fine:
  // 128 / 31) or coarsest (coarse: 512 / 127) throughout (the side-by-side benchmarks and tests). Larger calls are
  // always coarse.
  enum class Geometry { automatic, coarse, fine } geometry = Geometry::automatic;
  // Which kernels score: the Hopper warpgroup-MMA ones (wgmma: select_wgmma.cu) or the mma.sync ones
  // (select_blocks.cu). automatic: wgmma for calls of > 2 queries (prefill) where the build and the GPU have it
  // (sm_90a), mma.sync otherwise (decode, whose few CTAs gain nothing from 512-thread ones); either may be forced
  // (the side-by-side tests and benchmarks; wgmma where it is not available is an error). The two differ only in
  // fp32 summation order.
  enum class Engine { automatic, mma, wgmma } engine = Engine::automatic;
};

// Workspace for up to T_max queries against sequences of up to len_max keys.
size_t select_blocks_workspace(int64_t T_max, int64_t len_max, int H, int G, int kernel, int stride);
void select_blocks(const SelectArgs& a, Stream s);

}  // namespace salasim::gpu
