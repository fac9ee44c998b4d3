// sparse_attn / dense_attn on the GPU (docs/spec.md §4.5, §4.1): each query's 16 heads of one kv group attend to the
// keys j <= p of its selected 64-token blocks (dense: every block b <= p/64) with an fp32 online softmax.
//
// Prefill (T > kAttnSplitMaxT): a CTA takes consecutive queries, one warp each, and walks the ascending union of
// their selections once (the 33 local blocks and block 0 are always shared; a trained model's other picks are
// correlated, synthetic weights' nearly disjoint), so each union block's K and V (2 x 64 x 128 bf16) come to shared
// memory once for all of them. A warp whose query did not select the block skips it. Per block and query
// (attend_block, m16n8k16, bf16 in, fp32 accumulate):
//   S = Q K_b^T (16 heads x 64 keys, 64 mma), causal mask on the query's own block, online softmax in log2 units,
//   P = P_hi + P_lo straight from the S accumulators (a P in bf16 alone would add a rounding the size of the
//   output's own), O += P V_b (16 x 128, 128 mma). O stays in registers; O / l rounded once to bf16.
// Two kernels do this with the same arithmetic in the same order (AttnArgs::Engine): ring_kernel on Hopper (8
// queries, the tensor copy engine filling a ring of 6 stages, warps at their own pace) and tile_kernel elsewhere (4
// queries, cp.async, 3 stages, a CTA barrier a block). The union is a bitmap in shared memory over the blocks up to
// the CTA's last query (4 KiB at 2M keys). Cost: 786K FLOP per (query, group, block). What bounds it with disjoint
// selections is bytes: each query's 62 chosen blocks are 2 MiB of K/V per group from HBM, whatever the kernel
// (docs/performance.md, "Sparse attention: what bounds it").
//
// Decode (T <= kAttnSplitMaxT): split_kernel, grid (T, G, splits of kAttnSplitSlots = 2 block slots), 4 warps: both
// blocks of the split come to shared memory at once (the query already in registers, loaded before pdl_wait), warp w
// takes their keys 16w..16w+15, and the warps' partial softmaxes are merged in shared memory into one (max, sum, O)
// per split; combine_kernel, a CTA per query row, merges the splits (flash-decoding). A
// decode step thereby runs 96 CTAs per sparse layer (k_sel = 96, G = 2), each over <= 2 blocks: what bounds a
// decode call is latency (a block's load, a barrier), not bytes (6 MiB of K/V per layer), so short chains over many
// SMs win; 8 slots per split (24 CTAs, each a chain of 8 blocks) measured slower a call under Nsight Compute
// (docs/performance.md, "Measured reasons behind kernel choices").
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "gpu/check.cuh"
#include "gpu/pdl.cuh"
#include "gpu/mma.cuh"
#include "gpu/sparse_attn.hpp"
#include "gpu/launch_geometry.hpp"
#include "gpu/hopper.cuh"
#include "gpu/tensor_map.hpp"

namespace salasim::gpu {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kHd = 128;    // head dim the kernels are built for
constexpr int kRows = 16;   // query heads per kv group (H / G): one m16 tile
constexpr int kBlock = 64;  // keys per selection block
constexpr int kQ = 4;       // queries per prefill tile, one per warp (2 CTAs per SM overlap their block rounds)
constexpr int kThreads = kQ * 32;
constexpr int kMaxSel = 128;  // k_sel limit: 4 list entries per lane
constexpr int kLd = kHd + 8;  // bf16 row stride of the K/V tiles (272 B: ldmatrix rows in distinct bank groups)
constexpr int kTile = kBlock * kLd;
constexpr float kLog2e = 1.4426950408889634f;
constexpr int kStages = 3;  // K/V stages of the prefill tile kernel
constexpr int kSplitWarps = 4, kSplitThreads = kSplitWarps * 32;
constexpr int kSlotsPerSplit = kAttnSplitSlots;
constexpr size_t kSplitSmem = size_t(4 * kTile) * 2;  // 2 stages of K, V

// Rows j0 .. j0+63 of one kv head's cache (row stride kHd) into a [64][kLd] tile; rows >= valid zero-filled.
__device__ void load_block(bf16* tile, const bf16* src, int64_t j0, int valid, int threads) {
  for (int i = threadIdx.x; i < kBlock * (kHd / 8); i += threads) {
    const int r = i >> 4, piece = i & 15;
    const bf16* p = src + (j0 + (r < valid ? r : 0)) * kHd + piece * 8;
    mma::cp_async16(tile + r * kLd + piece * 8, p, r < valid ? 16 : 0);
  }
}

// The B operands of attend_block: keys key .. key + 15 of the K tile at dims 16 ks .. (S = Q K^T, non-transposed
// ldmatrix), and of the V tile at dims 16 dp .. (O += P V, transposed).
struct Padded {  // [64][kLd] tiles
  static __device__ const bf16* k(const bf16* Ks, int key, int ks, int lane) {
    return mma::frag_b_nk_addr(Ks + key * kLd + 16 * ks, kLd, lane);
  }
  static __device__ const bf16* v(const bf16* Vs, int key, int dp, int lane) {
    return mma::frag_b_kn_addr(Vs + key * kLd + 16 * dp, kLd, lane);
  }
};
// Tiles as two boxes of 64 keys x 64 dims (dims 0..63, then 64..127), rows of 128 B whose 16-byte piece j lies at
// j ^ (row % 8) (gpu/tensor_map.hpp): a lane's row n and piece j as in mma.cuh's frag_b_nk_addr / frag_b_kn_addr,
// moved by the swizzle, so the 8 rows of each 8x8 matrix fall in 8 different bank groups.
struct Swizzled {
  static constexpr int kBoxElems = kBlock * 64;
  static __device__ const bf16* at(const bf16* tile, int n, int dim) {  // dim a multiple of 8
    const int j = (dim & 63) >> 3;
    return tile + (dim >> 6) * kBoxElems + n * 64 + ((j ^ (n & 7)) << 3);
  }
  static __device__ const bf16* k(const bf16* Ks, int key, int ks, int lane) {
    return at(Ks, key + (lane & 7) + 8 * (lane >> 4), 16 * ks + 8 * ((lane >> 3) & 1));
  }
  static __device__ const bf16* v(const bf16* Vs, int key, int dp, int lane) {
    return at(Vs, key + (lane & 7) + 8 * ((lane >> 3) & 1), 16 * dp + 8 * (lane >> 4));
  }
};

// The online softmax of one block's logits for the warp's 16 rows (g and g + 8 of each n-tile): s holds the warp's
// NT n-tiles of 8 keys from key0 (mma.m16n8k16's C layout, which is also wgmma's per warp); columns >= valid are
// masked. The row max m and sum l (log2 units) move to the new max, s is replaced by P = exp2(s - m), and alpha is
// the factor that takes O to the new max (rescale_o; softmax_block does both). A warp whose every column is masked
// keeps its state bit for bit (P = 0; alpha = 1 once a valid key was seen, and before that O and l are 0 anyway).
template <int NT>
__device__ void softmax_p(float (&s)[NT][4], int key0, int valid, float sc_log2, float (&m)[2], float (&l)[2],
                          float (&alpha)[2], int lane) {
  const int c4 = lane & 3;
  float bmax[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int col = key0 + 8 * j + 2 * c4 + (e & 1);
      s[j][e] = col < valid ? s[j][e] * sc_log2 : -INFINITY;
      bmax[e >> 1] = fmaxf(bmax[e >> 1], s[j][e]);
    }
  float psum[2] = {0.f, 0.f}, mref[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    bmax[r] = fmaxf(bmax[r], __shfl_xor_sync(0xffffffffu, bmax[r], 1));
    bmax[r] = fmaxf(bmax[r], __shfl_xor_sync(0xffffffffu, bmax[r], 2));
    const float mn = fmaxf(m[r], bmax[r]);
    mref[r] = mn == -INFINITY ? 0.f : mn;  // no valid key yet: exp2 must see -inf - 0, never -inf - -inf
    alpha[r] = exp2f(m[r] - mref[r]);      // 0 on the first valid block (m = -inf)
    m[r] = mn;
  }
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      s[j][e] = exp2f(s[j][e] - mref[e >> 1]);  // masked: exp2(-inf) = 0
      psum[e >> 1] += s[j][e];
    }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    psum[r] += __shfl_xor_sync(0xffffffffu, psum[r], 1);
    psum[r] += __shfl_xor_sync(0xffffffffu, psum[r], 2);
    l[r] = l[r] * alpha[r] + psum[r];
  }
}
__device__ void rescale_o(float (&o)[16][4], const float (&alpha)[2]) {
#pragma unroll
  for (int j = 0; j < 16; ++j) o[j][0] *= alpha[0], o[j][1] *= alpha[0], o[j][2] *= alpha[1], o[j][3] *= alpha[1];
}
template <int NT>
__device__ void softmax_block(float (&s)[NT][4], int key0, int valid, float sc_log2, float (&m)[2], float (&l)[2],
                              float (&o)[16][4], int lane) {
  float alpha[2];
  softmax_p<NT>(s, key0, valid, sc_log2, m, l, alpha, lane);
  rescale_o(o, alpha);
}

// P's A fragment of k-step kk (keys 16 kk .. 16 kk + 15) as two bf16 terms, hi + lo, from the S accumulators of
// n-tiles 2kk and 2kk + 1 (a P in bf16 alone would add a rounding the size of the output's own).
template <int NT>
__device__ void p_frags(const float (&s)[NT][4], int kk, uint32_t (&ph)[4], uint32_t (&pl)[4]) {
  mma::split2(s[2 * kk][0], s[2 * kk][1], ph[0], pl[0]);
  mma::split2(s[2 * kk][2], s[2 * kk][3], ph[1], pl[1]);
  mma::split2(s[2 * kk + 1][0], s[2 * kk + 1][1], ph[2], pl[2]);
  mma::split2(s[2 * kk + 1][2], s[2 * kk + 1][3], ph[3], pl[3]);
}

// One query's 16 heads against one 64-key block on the warp's own mma.sync: S = Q K^T, softmax_block, O += P V.
// key0 .. key0 + 8 NT - 1 are the block's columns this warp owns (all 64, or 16 in the split kernel); columns >= valid
// are masked. Layout: where the K and V tiles' ldmatrix rows are (Padded: the cp.async tiles, rows kLd apart;
// Swizzled: the tensor copy engine's 128-byte-swizzled boxes). The arithmetic is the same for both, so are the bits.
template <int NT, class Layout>  // key n-tiles of 8 the warp owns: 8 (64 keys) or 2 (16 keys)
__device__ void attend_block(const uint32_t (&qa)[8][4], const bf16* Ks, const bf16* Vs, int key0, int valid,
                             float sc_log2, float (&m)[2], float (&l)[2], float (&o)[16][4], int lane) {
  float s[NT][4];
#pragma unroll
  for (int j = 0; j < NT; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
  for (int ks = 0; ks < 8; ++ks)
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      uint32_t b[4];
      mma::ldmatrix_x4(b, Layout::k(Ks, key0 + 16 * np, ks, lane));
      mma::mma16816(s[2 * np], qa[ks], b[0], b[1]);
      mma::mma16816(s[2 * np + 1], qa[ks], b[2], b[3]);
    }
  softmax_block<NT>(s, key0, valid, sc_log2, m, l, o, lane);
  // O += P V: k-steps of 16 keys
#pragma unroll
  for (int kk = 0; kk < NT / 2; ++kk) {
    uint32_t ph[4], pl[4];
    p_frags<NT>(s, kk, ph, pl);
#pragma unroll
    for (int dp = 0; dp < 8; ++dp) {  // dims 16 dp .. 16 dp + 15: output n-tiles 2dp, 2dp+1
      uint32_t b[4];
      mma::ldmatrix_x4_trans(b, Layout::v(Vs, key0 + 16 * kk, dp, lane));
      mma::mma16816(o[2 * dp], ph, b[0], b[1]);
      mma::mma16816(o[2 * dp], pl, b[0], b[1]);
      mma::mma16816(o[2 * dp + 1], ph, b[2], b[3]);
      mma::mma16816(o[2 * dp + 1], pl, b[2], b[3]);
    }
  }
}

// The 16 x 128 query tile of (query row t, group g) into A fragments, through shared memory `stage` ([16][kLd]).
__device__ void load_q(uint32_t (&qa)[8][4], const bf16* q, bf16* stage, int lane) {
  for (int i = lane; i < kRows * (kHd / 8); i += 32) {
    const int r = i >> 4, piece = i & 15;
    *reinterpret_cast<uint4*>(stage + r * kLd + piece * 8) = *reinterpret_cast<const uint4*>(q + r * kHd + piece * 8);
  }
  __syncwarp();
#pragma unroll
  for (int ks = 0; ks < 8; ++ks) mma::ldmatrix_x4(qa[ks], mma::frag_a_addr(stage + 16 * ks, kLd, lane));
  __syncwarp();
}

// The warp's query's selection, 4 slots a lane: ids outside [0, qb] (and every slot of an inactive warp) as -1.
__device__ void load_selection(int32_t (&sel)[kMaxSel / 32], const int32_t* blocks, int64_t t, int G, int grp,
                               int k_sel, int64_t qb, bool active, int lane) {
#pragma unroll
  for (int i = 0; i < kMaxSel / 32; ++i) {
    const int slot = lane + 32 * i;
    int32_t b = -1;
    if (blocks && active && slot < k_sel) b = blocks[(t * G + grp) * k_sel + slot];
    sel[i] = b >= 0 && b <= qb ? b : -1;  // an id outside [0, qb] holds no key j <= p
  }
}

// Whether the warp's query selected block b (warp-uniform).
__device__ bool selected(const int32_t (&sel)[kMaxSel / 32], int64_t b) {
  bool hit = false;
#pragma unroll
  for (int i = 0; i < kMaxSel / 32; ++i) hit |= sel[i] == b;
  return __any_sync(0xffffffffu, hit);
}

// The union of the CTA's selections, ascending, into ulist (its size returned to every thread): a bitmap of nbw words
// over the blocks, then its set bits in order, through a scan over the CTA's kWarps warps. Every thread calls it.
template <int kWarps>
__device__ int build_union(const int32_t (&sel)[kMaxSel / 32], uint32_t* bitmap, int nbw, int32_t* ulist) {
  __shared__ int n_union;
  __shared__ int scan_part[kWarps];
  constexpr int kThreadsU = 32 * kWarps;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = threadIdx.x; i < nbw; i += kThreadsU) bitmap[i] = 0u;
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kMaxSel / 32; ++i)
    if (sel[i] >= 0) atomicOr(&bitmap[sel[i] >> 5], 1u << (sel[i] & 31));
  __syncthreads();
  const int per = (nbw + kThreadsU - 1) / kThreadsU, w0 = threadIdx.x * per;
  int cnt = 0;
  for (int i = w0; i < w0 + per && i < nbw; ++i) cnt += __popc(bitmap[i]);
  int x = cnt;  // inclusive warp scan, then across warps
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) scan_part[warp] = x;
  __syncthreads();
  int before = x - cnt;
  for (int w = 0; w < warp; ++w) before += scan_part[w];
  if (threadIdx.x == kThreadsU - 1) n_union = before + cnt;
  for (int i = w0; i < w0 + per && i < nbw; ++i)
    for (uint32_t bits = bitmap[i]; bits; bits &= bits - 1) ulist[before++] = 32 * i + __ffs(int(bits)) - 1;
  __syncthreads();
  return n_union;
}

// A tile's share of AttnArgs::tile_stats: its union's size, one tile, its queries ([1], the blocks each query
// attended to, is added by the query's warp).
__device__ void add_tile_stats(unsigned long long* stats, int nu, int64_t queries) {
  atomicAdd(&stats[0], (unsigned long long)nu);
  atomicAdd(&stats[2], 1ull);
  atomicAdd(&stats[3], (unsigned long long)queries);
}

// out row t's 16 heads of group grp = O / l, one bf16 rounding; a row that saw no key is written as 0, not NaN.
__device__ void write_rows(bf16* out, int64_t ldo, int64_t t, int grp, const float (&o)[16][4], const float (&l)[2],
                           int lane) {
  const int g = lane >> 2, c4 = lane & 3;
  const float inv0 = l[0] > 0.f ? 1.f / l[0] : 0.f, inv1 = l[1] > 0.f ? 1.f / l[1] : 0.f;
  bf16* orow = out + t * ldo + int64_t(grp) * kRows * kHd;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const int col = 8 * j + 2 * c4;
    *reinterpret_cast<uint32_t*>(orow + g * kHd + col) = mma::pack_bf16(o[j][0] * inv0, o[j][1] * inv0);
    *reinterpret_cast<uint32_t*>(orow + (g + 8) * kHd + col) = mma::pack_bf16(o[j][2] * inv1, o[j][3] * inv1);
  }
}

// q: [T, H*hd] (row stride ldq); K, V: [G, cap, hd]; blocks: [T, G, k_sel] or nullptr (dense);
// out: [T, H*hd] (row stride ldo). Grid (ceil(T/kQ), G), kThreads threads; dynamic smem: the K/V stages, the
// bitmap words and the union list.
__global__ void __launch_bounds__(kThreads, 2)
    tile_kernel(const bf16* __restrict__ q, int64_t ldq, int64_t T, int64_t pos0, const bf16* __restrict__ K,
                const bf16* __restrict__ V, int64_t cap, int G, float sc_log2, const int32_t* __restrict__ blocks,
                int k_sel, int nbw, bf16* __restrict__ out, int64_t ldo, unsigned long long* __restrict__ stats) {
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* kv = reinterpret_cast<bf16*>(smem);  // stage st: K at tile 2st, V at tile 2st+1
  uint32_t* bitmap = reinterpret_cast<uint32_t*>(smem + 2 * kStages * kTile * 2);  // [nbw] union of the tile's blocks
  int32_t* ulist = reinterpret_cast<int32_t*>(bitmap + nbw);                       // [kQ * kMaxSel] union, ascending

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int grp = blockIdx.y;
  const int64_t t = int64_t(blockIdx.x) * kQ + warp;
  const bool active = t < T;
  const int64_t p = pos0 + (active ? t : T - 1), qb = p / kBlock;
  const int64_t t_last = std::min<int64_t>(int64_t(blockIdx.x) * kQ + kQ, T) - 1;
  const int64_t qb_last = (pos0 + t_last) / kBlock;  // the tile's largest query block
  const int64_t kv_len = pos0 + T;
  const bf16* Kg = K + int64_t(grp) * cap * kHd;
  const bf16* Vg = V + int64_t(grp) * cap * kHd;

  // the warp's query: Q fragments (staged through the second K/V stage) and its selection, 4 entries per lane
  uint32_t qa[8][4];
  if (active) load_q(qa, q + t * ldq + int64_t(grp) * kRows * kHd, kv + 2 * kTile + warp * kRows * kLd, lane);
  int32_t sel[kMaxSel / 32];
  load_selection(sel, blocks, t, G, grp, k_sel, qb, active, lane);
  // the union: bitmap over blocks 0 .. qb_last, then its set bits in ascending order (dense: blocks 0 .. qb_last)
  const int nu = blocks ? build_union<kQ>(sel, bitmap, nbw, ulist) : int(qb_last + 1);
  __syncthreads();  // the Q staging area (second stage) is free
  if (stats && blocks && threadIdx.x == 0) add_tile_stats(stats, nu, t_last - int64_t(blockIdx.x) * kQ + 1);

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;

  int attended = 0;
  auto block_of = [&](int u) -> int64_t { return blocks ? int64_t(ulist[u]) : int64_t(u); };
  auto issue = [&](int u, int st) {
    const int64_t j0 = block_of(u) * kBlock;
    const int valid = int(std::min<int64_t>(kBlock, kv_len - j0));
    load_block(kv + (2 * st) * kTile, Kg, j0, valid, kThreads);
    load_block(kv + (2 * st + 1) * kTile, Vg, j0, valid, kThreads);
  };
  // three stages: blocks u + 1 and u + 2 are in flight while block u is used
  if (nu > 0) issue(0, 0);
  mma::cp_async_commit();
  if (nu > 1) issue(1, 1);
  mma::cp_async_commit();
  for (int u = 0; u < nu; ++u) {
    const int st = u % kStages;
    mma::cp_async_wait<kStages - 2>();
    __syncthreads();  // block u is in stage st; every warp is done with block u - 1, whose stage refills now
    if (u + 2 < nu) issue(u + 2, (u + 2) % kStages);
    mma::cp_async_commit();
    const int64_t b = block_of(u);
    const bool mine = (blocks ? selected(sel, b) : b <= qb) && active;
    if (mine) {
      const int valid = int(std::min<int64_t>(kBlock, p - b * kBlock + 1));  // keys b*64 .. p of this block
      attend_block<8, Padded>(qa, kv + (2 * st) * kTile, kv + (2 * st + 1) * kTile, 0, valid, sc_log2, m, l, o, lane);
      ++attended;
    }
  }
  if (!active) return;
  write_rows(out, ldo, t, grp, o, l, lane);
  if (stats && blocks && lane == 0) atomicAdd(&stats[1], (unsigned long long)attended);
}

// ---- prefill on Hopper (sm_90a): ring_kernel. A CTA is kRingQ warps, one query each (its 16 heads as the 16 rows
// of its MMAs, as in tile_kernel). The ascending union of the CTA's selections streams through a ring of kRingStages
// shared-memory stages: the tensor copy engine brings each union block's K and V (4 boxes of 64 keys x 64 dims, 32 KB,
// 128-byte swizzled; rows past the cache's written part read as zeros), completing on the stage's `full` mbarrier.
// Every warp walks the union at its own pace: it waits for the block's stage, attends to it when its query selected
// it (attend_block, the same arithmetic in the same block order as tile_kernel: the same bits) and counts itself out
// of the stage; the last warp out refills it with the block kRingStages further on. No CTA barrier inside the walk,
// so a block one query chose is worked on while the next blocks land and other warps work on theirs: with selections
// neighbours do not share (synthetic weights), several warps compute at once instead of one while the others wait at
// tile_kernel's barrier, and with shared selections (a trained model) each load serves 8 queries instead of 4. (A
// ninth, producer warp would cap the registers at 168 a thread, 3 warps on one scheduler: it spilled.)
// A block that at least `wg_takers` of a warpgroup's 4 queries attend to (the forced ones, a trained model's shared
// picks, every block of a dense call) is taken by the warpgroup at once on wgmma (attend_block_wg: 64 rows, the
// query's own 16 per warp, B straight from the stage, no ldmatrix; a warp whose query did not pick the block masks
// its rows and keeps its state); fewer takers, each on its own mma.sync as before. wgmma may sum a product's terms in
// an order of its own, so such a block's outputs may differ from tile_kernel's in the last bits (within the rounding
// the tolerance table allows for an fp32 accumulation); the one comparison made so far found the same error figures
// to the last digit (bench/RESULTS.md, "Issue 36, fifth session"). A masked warp adds 0 * V for a block its query
// skipped: a non-finite value there would reach it (the model's values are finite; rows past the cache read as 0).
// The P fragments of all four k-steps of the P V product are built before the warpgroup's fence, as the PTX ISA asks
// of registers a wgmma reads (32 registers more than building each k-step's between the products; the shared
// selection's chunk took 5.98 ms against 6.19 before on the H100, bench/RESULTS.md, "Issue 36, sixth session").
// A warpgroup of a sparse call whose every union block goes to wgmma (at least wg_takers of its 4 queries picked
// each: neighbours that share their picks), and every warpgroup of a dense call, takes the union in wg_walk instead,
// the softmax of one block beside the P V product of the one before: 1.12x faster on the shared selection and
// 1.02-1.13x dense (the `.in_turn` op cases, AttnArgs::wg_pipeline = false, keep the walk in turn). For a sparse
// call the two walks are the same arithmetic in the same order, the same bits. A dense call's wg_walk also takes on
// wgmma the blocks that fewer than wg_takers of a warpgroup's queries reach (the last block of a warpgroup that
// straddles a 64-key boundary, a last warpgroup of 1 or 2 queries), which the walk in turn gives to those queries'
// mma.sync: there the two may differ in the last bits, as wgmma and mma.sync may.
constexpr int kRingQ = 8;
constexpr int kRingThreads = 32 * kRingQ;
constexpr int kRingStages = 6;
constexpr uint32_t kBoxBytes = kBlock * 64 * 2;  // one box: 64 keys x 64 dims bf16, 8 KB
constexpr uint32_t kStageBytes = 4 * kBoxBytes;  // K dims 0..63, K 64..127, V 0..63, V 64..127
constexpr size_t kRingBytes = size_t(kRingStages) * kStageBytes;
size_t ring_smem(int nbw) { return 1024 + kRingBytes + size_t(nbw) * 4 + size_t(kRingQ) * kMaxSel * 4; }
constexpr int kUnionWords = kRingQ * kMaxSel / 32;  // bit words over a CTA's union positions
constexpr int kWgTakers = 3;                        // AttnArgs::wg_takers' automatic value

// One block for the warpgroup's 4 queries at once on wgmma: 64 rows (warp w's query's 16 heads as rows 16w ..), the
// stage's K boxes the K-major B of S = Q K^T (8 x m64n64k16), its V boxes the MN-major B of O += P V (4 k-steps x
// hi, lo: 8 x m64n128k16), P and Q from registers in mma.sync's A layout, S and O in its C layout: softmax_block and
// the state are the same code and registers as attend_block's. valid: the warp's query's keys in the block (0: the
// warp's rows masked, its state kept). Every thread of the warpgroup calls it, converged.
__device__ void attend_block_wg(const uint32_t (&qa)[8][4], const unsigned char* stage, int valid, float sc_log2,
                                float (&m)[2], float (&l)[2], float (&o)[16][4], int lane) {
  float s[8][4];
  float(&sd)[32] = reinterpret_cast<float(&)[32]>(s);
  float(&od)[64] = reinterpret_cast<float(&)[64]>(o);
  const uint32_t base = mma::smem_addr(stage);
  wg::fence_operand(sd);
  wg::fence();
#pragma unroll
  for (int ks = 0; ks < 8; ++ks)
    wg::mma_m64n64k16(sd, qa[ks], wg::desc_sw128(base + (ks >> 2) * kBoxBytes + (ks & 3) * 32), ks > 0);
  wg::commit();
  wg::wait<0>();
  wg::fence_operand(sd);
  softmax_block<8>(s, 0, valid, sc_log2, m, l, o, lane);
  uint32_t ph[4][4], pl[4][4];  // P's A fragments, all written before the fence that orders them before the wgmma
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) p_frags<8>(s, kk, ph[kk], pl[kk]);
  wg::fence_operand(od);
  wg::fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {  // keys 16 kk ..: rows 16 kk .. of both V boxes (2 atoms of 8 rows, 2048 B)
    const uint64_t dv = wg::desc_sw128_mn(base + 2 * kBoxBytes + kk * 2048, kBoxBytes);
    wg::mma_m64n128k16<true>(od, ph[kk], dv, true);
    wg::mma_m64n128k16<true>(od, pl[kk], dv, true);
  }
  wg::commit();
  wg::wait<0>();
  wg::fence_operand(od);
}

// S = Q K^T of one stage's block for the warpgroup (8 x m64n64k16), one commit group, not waited on.
__device__ void block_logits(float (&sd)[32], const uint32_t (&qa)[8][4], uint32_t base) {
#pragma unroll
  for (int ks = 0; ks < 8; ++ks)
    wg::mma_m64n64k16(sd, qa[ks], wg::desc_sw128(base + (ks >> 2) * kBoxBytes + (ks & 3) * 32), ks > 0);
  wg::commit();
}
// O += P V of one stage's block (4 k-steps x hi, lo: 8 x m64n128k16, V MN-major), one commit group, not waited on.
__device__ void block_pv(float (&od)[64], const uint32_t (&ph)[4][4], const uint32_t (&pl)[4][4], uint32_t base) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {  // keys 16 kk ..: rows 16 kk .. of both V boxes (2 atoms of 8 rows, 2048 B)
    const uint64_t dv = wg::desc_sw128_mn(base + 2 * kBoxBytes + kk * 2048, kBoxBytes);
    wg::mma_m64n128k16<true>(od, ph[kk], dv, true);
    wg::mma_m64n128k16<true>(od, pl[kk], dv, true);
  }
  wg::commit();
}

// The warpgroup's walk of the whole union on wgmma (union blocks 0 .. nu - 1, each in stage u % kRingStages), with the
// softmax of block u beside the P V product of block u - 1: S u is issued before P V u - 1, so it completes first, and
// its exponentials run while the tensor pipe works on P V (attend_block_wg waits on each product before the next
// step: the softmax and the products take turns). O's rescale to block u's max waits for P V u - 1 (it is in flight in
// O's registers), and P V u reads P u from registers built once that product is done. Every product is waited on in
// the iteration that issues it and none is issued under a condition, so ptxas keeps them asynchronous. The same
// arithmetic in the same order as attend_block_wg over the same blocks: the same bits as that walk wherever it takes
// the same blocks on wgmma. valid_of(u): the keys of block u the warp's query sees (0: its rows masked, its state
// kept). Every thread of the warpgroup calls it, converged.
template <class ValidOf, class WaitStage, class Release>
__device__ void wg_walk(const uint32_t (&qa)[8][4], const unsigned char* ring, int nu, ValidOf&& valid_of,
                        float sc_log2, float (&m)[2], float (&l)[2], float (&o)[16][4], int lane,
                        WaitStage&& wait_stage, Release&& release) {
  float s[8][4];
  float(&sd)[32] = reinterpret_cast<float(&)[32]>(s);
  float(&od)[64] = reinterpret_cast<float(&)[64]>(o);
  auto base_of = [&](int u) { return mma::smem_addr(ring + size_t(u % kRingStages) * kStageBytes); };
  if (nu == 0) return;
  float alpha[2];
  wait_stage(0);
  wg::fence_operand(sd);
  wg::fence();
  block_logits(sd, qa, base_of(0));
  wg::wait<0>();
  wg::fence_operand(sd);
  softmax_p<8>(s, 0, valid_of(0), sc_log2, m, l, alpha, lane);
  rescale_o(o, alpha);
  uint32_t ph[4][4], pl[4][4];
  for (int u = 1; u < nu; ++u) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) p_frags<8>(s, kk, ph[kk], pl[kk]);  // P of block u - 1
    wait_stage(u);
    wg::fence_operand(sd);
    wg::fence_operand(od);
    wg::fence();
    block_logits(sd, qa, base_of(u));
    block_pv(od, ph, pl, base_of(u - 1));
    wg::wait<1>();  // S of block u
    wg::fence_operand(sd);
    softmax_p<8>(s, 0, valid_of(u), sc_log2, m, l, alpha, lane);
    wg::wait<0>();  // P V of block u - 1
    wg::fence_operand(od);
    release(u - 1);
    rescale_o(o, alpha);
  }
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) p_frags<8>(s, kk, ph[kk], pl[kk]);
  wg::fence_operand(od);
  wg::fence();
  block_pv(od, ph, pl, base_of(nu - 1));
  wg::wait<0>();
  wg::fence_operand(od);
  release(nu - 1);
}

// The warp's query (16 heads of group grp at row t) as A fragments, straight from global memory: qa[ks] is k-step ks
// (dims 16 ks ..), rows g = head g and g + 8 (mma.cuh's A layout).
__device__ void load_q_frags(uint32_t (&qa)[8][4], const bf16* q, int64_t ldq, int64_t t, int grp, int lane) {
  const int g = lane >> 2, c = lane & 3;
  const uint32_t* r0 = reinterpret_cast<const uint32_t*>(q + t * ldq + (int64_t(grp) * kRows + g) * kHd);
  const uint32_t* r1 = r0 + 8 * kHd / 2;  // head g + 8
#pragma unroll
  for (int ks = 0; ks < 8; ++ks) {
    const int k = 8 * ks + c;  // u32 index of dims 16 ks + 2c, 2c + 1
    qa[ks][0] = __ldg(r0 + k);
    qa[ks][1] = __ldg(r1 + k);
    qa[ks][2] = __ldg(r0 + k + 4);
    qa[ks][3] = __ldg(r1 + k + 4);
  }
}

// Grid (ceil(T / kRingQ), G), kRingThreads threads, ring_smem(nbw) dynamic shared memory. kmap, vmap: the caches'
// rows 0 .. pos0 + T - 1 (bf16_rows_map, 64-row boxes). wg_takers: AttnArgs::wg_takers (resolved); wg_pipeline:
// AttnArgs::wg_pipeline. stats: AttnArgs::tile_stats.
__global__ void __launch_bounds__(kRingThreads, 1)
    ring_kernel(const __grid_constant__ CUtensorMap kmap, const __grid_constant__ CUtensorMap vmap,
                const bf16* __restrict__ q, int64_t ldq, int64_t T, int64_t pos0, int G, float sc_log2,
                const int32_t* __restrict__ blocks, int k_sel, int nbw, int wg_takers, bool wg_pipeline,
                bf16* __restrict__ out, int64_t ldo, unsigned long long* __restrict__ stats) {
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* ring = smem + ((1024 - (mma::smem_addr(smem) & 1023)) & 1023);
  uint32_t* bitmap = reinterpret_cast<uint32_t*>(ring + kRingBytes);  // [nbw] union of the CTA's blocks
  int32_t* ulist = reinterpret_cast<int32_t*>(bitmap + nbw);          // [kRingQ * kMaxSel] union, ascending
  __shared__ uint64_t full[kRingStages];
  __shared__ int used[kRingStages];  // warps done with the stage, monotonic: the kRingQ-th of a round refills it
  __shared__ uint32_t own[kRingQ][kUnionWords];  // bit u of warp w: w's query selected union block u

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int grp = blockIdx.y;
  const int64_t t = int64_t(blockIdx.x) * kRingQ + warp;
  const bool active = t < T;
  const int64_t p = pos0 + (active ? t : T - 1), qb = p / kBlock;
  const int64_t t_last = std::min<int64_t>(int64_t(blockIdx.x) * kRingQ + kRingQ, T) - 1;
  const int64_t qb_last = (pos0 + t_last) / kBlock;  // the CTA's largest query block
  if (threadIdx.x == 0) {
    for (int s = 0; s < kRingStages; ++s) wg::mbar_init(&full[s], 1), used[s] = 0;
    wg::fence_mbar_init();
  }
  uint32_t qa[8][4] = {};  // an inactive warp's rows are masked, but its operands still enter the warpgroup's MMAs
  if (active) load_q_frags(qa, q, ldq, t, grp, lane);
  int32_t sel[kMaxSel / 32];
  load_selection(sel, blocks, t, G, grp, k_sel, qb, active, lane);
  __syncthreads();  // the mbarriers are initialised (build_union's barriers are not reached on the dense path)
  const int nu = blocks ? build_union<kRingQ>(sel, bitmap, nbw, ulist) : int(qb_last + 1);
  if (blocks) {            // each selected block's position in the (ascending) union, by bisection
    own[warp][lane] = 0u;  // kUnionWords = 32: a word a lane
    __syncwarp();
#pragma unroll
    for (int i = 0; i < kMaxSel / 32; ++i) {
      if (sel[i] < 0) continue;
      int lo = 0, hi = nu - 1;
      while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (ulist[mid] < sel[i]) lo = mid + 1;
        else hi = mid;
      }
      atomicOr(&own[warp][lo >> 5], 1u << (lo & 31));
    }
    __syncthreads();
  }
  const int wg0 = warp & ~3;  // the warpgroup's first warp
  auto block_of = [&](int u) -> int64_t { return blocks ? int64_t(ulist[u]) : int64_t(u); };
  auto issue = [&](int u) {  // one thread: union block u into stage u % kRingStages
    const int s = u % kRingStages;
    unsigned char* st = ring + size_t(s) * kStageBytes;
    const int row = int(block_of(u) * kBlock);
    wg::mbar_arrive_expect_tx(&full[s], kStageBytes);
    wg::tma_load_3d(st, &kmap, 0, row, grp, &full[s]);
    wg::tma_load_3d(st + kBoxBytes, &kmap, 64, row, grp, &full[s]);
    wg::tma_load_3d(st + 2 * kBoxBytes, &vmap, 0, row, grp, &full[s]);
    wg::tma_load_3d(st + 3 * kBoxBytes, &vmap, 64, row, grp, &full[s]);
  };
  if (threadIdx.x == 0) {
    for (int u = 0; u < nu && u < kRingStages; ++u) issue(u);
    if (stats && blocks) add_tile_stats(stats, nu, t_last - int64_t(blockIdx.x) * kRingQ + 1);
  }

  int64_t wg_qb[4];  // dense: the query block of each of the warpgroup's queries (-1 past T), for its taker count
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t ti = int64_t(blockIdx.x) * kRingQ + wg0 + i;
    wg_qb[i] = ti < T ? (pos0 + ti) / kBlock : -1;
  }

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  auto wait_stage = [&](int u) {
    wg::mbar_wait(&full[u % kRingStages], uint32_t(u / kRingStages) & 1u);
    __syncwarp();  // the lanes leave the spin together before ldmatrix / mma (.sync.aligned)
  };
  auto release = [&](int u) {  // this warp is done with union block u's stage
    __syncwarp();              // every lane's reads of the stage are done before the warp counts itself out
    if (lane == 0) {
      __threadfence_block();  // release: this warp's reads of the stage before its count
      if (atomicAdd(&used[u % kRingStages], 1) % kRingQ == kRingQ - 1 && u + kRingStages < nu) {
        __threadfence_block();         // acquire: the other warps' counted reads before the refill
        wg::fence_proxy_async_smem();  // ... and before the async proxy's writes to the stage
        issue(u + kRingStages);
      }
    }
  };
  // The warpgroup takes the whole union on wgmma, pipelined (wg_walk): in a sparse call where every union block goes
  // there anyway (at least wg_takers of its 4 queries picked each: neighbours that share their picks); in a dense
  // call always (its diagonal blocks included, which fewer queries may reach: see the kernel's header). Read off
  // lane 0, the branch is warp-uniform to ptxas (as takers below).
  bool whole = wg_pipeline && wg_takers <= 4;
  if (whole && blocks) {
    for (int u = lane; u < nu; u += 32) {
      int n = 0;
#pragma unroll
      for (int i = 0; i < 4; ++i) n += (own[wg0 + i][u >> 5] >> (u & 31)) & 1u;
      whole = whole && n >= wg_takers;
    }
    whole = __all_sync(0xffffffffu, whole);
  }
  if (__shfl_sync(0xffffffffu, int(whole), 0)) {
    auto valid_of = [&](int u) {  // keys b*64 .. p of block b = block_of(u), if the warp's query attends to it
      const int64_t b = block_of(u);
      const bool mine = blocks ? ((own[warp][u >> 5] >> (u & 31)) & 1u) != 0 : active && b <= qb;
      return mine ? int(std::min<int64_t>(kBlock, p - b * kBlock + 1)) : 0;
    };
    wg_walk(qa, ring, nu, valid_of, sc_log2, m, l, o, lane, wait_stage, release);
    if (!active) return;
    write_rows(out, ldo, t, grp, o, l, lane);
    if (stats && blocks && lane == 0) {
      int attended = 0;
      for (int w = 0; w < kUnionWords; ++w) attended += __popc(own[warp][w]);
      atomicAdd(&stats[1], (unsigned long long)attended);
    }
    return;
  }
  int attended = 0;
  for (int u = 0; u < nu; ++u) {
    const int s = u % kRingStages;
    const int64_t b = block_of(u);
    bool mine;
    int takers = 0;  // the warpgroup's queries that attend to block b (the same count in its 4 warps)
    if (blocks) {
      mine = (own[warp][u >> 5] >> (u & 31)) & 1u;
#pragma unroll
      for (int i = 0; i < 4; ++i) takers += (own[wg0 + i][u >> 5] >> (u & 31)) & 1u;
    } else {
      mine = active && b <= qb;
#pragma unroll
      for (int i = 0; i < 4; ++i) takers += wg_qb[i] >= b;
    }
    wait_stage(u);
    const int valid = mine ? int(std::min<int64_t>(kBlock, p - b * kBlock + 1)) : 0;  // keys b*64 .. p of the block
    // (takers is the same in the warpgroup's 4 warps; read off lane 0 the compiler sees it uniform, and does not
    // serialize the wgmma behind warpgroup barriers of its own, ptxas C7520)
    if (__shfl_sync(0xffffffffu, takers, 0) >= wg_takers) {
      attend_block_wg(qa, ring + size_t(s) * kStageBytes, valid, sc_log2, m, l, o, lane);
      attended += mine;
    } else if (mine) {
      const bf16* Ks = reinterpret_cast<const bf16*>(ring + size_t(s) * kStageBytes);
      attend_block<8, Swizzled>(qa, Ks, Ks + 2 * Swizzled::kBoxElems, 0, valid, sc_log2, m, l, o, lane);
      ++attended;
    }
    release(u);
  }
  if (!active) return;
  write_rows(out, ldo, t, grp, o, l, lane);
  if (stats && blocks && lane == 0) atomicAdd(&stats[1], (unsigned long long)attended);
}

// Partial softmax of one split: part_ml [T, G, nsplit, 16] (max, sum) in log2 units, part_o [T, G, nsplit, 16, hd]
// (unnormalised O). Grid (T, G, nsplit), kSplitThreads threads, kSplitSmem dynamic shared memory.
__global__ void __launch_bounds__(kSplitThreads)
    split_kernel(const bf16* __restrict__ q, int64_t ldq, int64_t T, int64_t pos0, const bf16* __restrict__ K,
                 const bf16* __restrict__ V, int64_t cap, int G, float sc_log2, const int32_t* __restrict__ blocks,
                 int k_sel, float2* __restrict__ part_ml, float* __restrict__ part_o) {
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* kv = reinterpret_cast<bf16*>(smem);  // stage st: K tile at 2st, V tile at 2st+1
  __shared__ float mrg_m[kSplitWarps][kRows], mrg_l[kSplitWarps][kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, c4 = lane & 3;
  const int64_t t = blockIdx.x;
  const int grp = blockIdx.y, split = blockIdx.z, nsplit = gridDim.z;
  const int64_t p = pos0 + t, qb = p / kBlock, kv_len = pos0 + T;
  const bf16* Kg = K + int64_t(grp) * cap * kHd;
  const bf16* Vg = V + int64_t(grp) * cap * kHd;

  // The query was written kernels before the one this kernel follows (the projection; the selection ran since), so
  // it is read before pdl_wait (pdl.cuh): its round trip overlaps the end of the top-k. The blocks are the top-k's.
  uint32_t qa[8][4];
  load_q(qa, q + t * ldq + int64_t(grp) * kRows * kHd, kv + 2 * kTile + warp * kRows * kLd, lane);
  pdl_begin();  // launched with launch_pdl
  // this split's blocks: slots split*8 .. of the selection (dense: blocks split*8 ..), kept when in [0, qb] and
  // unlike the slot before (the list is ascending: a repeat counts once, as in the reference's set)
  __shared__ int32_t list[kSlotsPerSplit];
  __shared__ int n_list;
  if (warp == 0) {
    const int64_t slot = int64_t(split) * kSlotsPerSplit + lane;
    int64_t b = -1;
    if (lane < kSlotsPerSplit) {
      if (!blocks) {
        b = slot;
      } else if (slot < k_sel) {
        const int32_t* row = blocks + (t * G + grp) * k_sel;
        b = row[slot];
        if (slot > 0 && row[slot - 1] == b) b = -1;
      }
    }
    const bool keep = b >= 0 && b <= qb;
    const unsigned mask = __ballot_sync(0xffffffffu, keep);
    if (keep) list[__popc(mask & ((1u << lane) - 1u))] = int32_t(b);
    if (lane == 0) n_list = __popc(mask);
  }
  __syncthreads();  // also: every warp has its Q fragments, the staging area is free
  const int n = n_list;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  auto issue = [&](int u, int st) {
    const int64_t j0 = int64_t(list[u]) * kBlock;
    const int valid = int(std::min<int64_t>(kBlock, kv_len - j0));
    load_block(kv + (2 * st) * kTile, Kg, j0, valid, kSplitThreads);
    load_block(kv + (2 * st + 1) * kTile, Vg, j0, valid, kSplitThreads);
  };
  // a split's <= 2 blocks are both in flight from the start, one stage each
  static_assert(kSlotsPerSplit == 2, "one K/V stage per block of a split");
  if (n > 0) issue(0, 0);
  mma::cp_async_commit();
  if (n > 1) issue(1, 1);
  mma::cp_async_commit();
  for (int u = 0; u < n; ++u) {
    if (u == 0) mma::cp_async_wait<1>();
    else mma::cp_async_wait<0>();
    __syncthreads();
    const int valid = int(std::min<int64_t>(kBlock, p - int64_t(list[u]) * kBlock + 1));
    attend_block<2, Padded>(qa, kv + (2 * u) * kTile, kv + (2 * u + 1) * kTile, 16 * warp, valid, sc_log2, m, l, o,
                            lane);
  }
  // merge the 4 warps: each row's max over the warps, then sums and O rescaled to it, summed in shared memory
  if (c4 == 0) {
    mrg_m[warp][g] = m[0], mrg_m[warp][g + 8] = m[1];
    mrg_l[warp][g] = l[0], mrg_l[warp][g + 8] = l[1];
  }
  __syncthreads();
  float M[2], Lsum[2], f[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = g + 8 * r;
    M[r] = -INFINITY;
    for (int w = 0; w < kSplitWarps; ++w) M[r] = fmaxf(M[r], mrg_m[w][row]);
    Lsum[r] = 0.f;
    for (int w = 0; w < kSplitWarps; ++w)
      if (mrg_m[w][row] > -INFINITY) Lsum[r] += mrg_l[w][row] * exp2f(mrg_m[w][row] - M[r]);
    f[r] = m[r] > -INFINITY ? exp2f(m[r] - M[r]) : 0.f;
  }
  // Each warp's rescaled O to its own slice, then the slices summed in warp order: the same bits on every run (shared
  // atomicAdd in arrival order made the fp32 sums, and now and then a bf16 output, differ between runs).
  float* ow = reinterpret_cast<float*>(smem);  // [kSplitWarps][16][kHd] fp32, over the K/V tiles (all reads done)
  static_assert(size_t(kSplitWarps) * kRows * kHd * 4 <= kSplitSmem, "the warps' O slices must fit the K/V tiles");
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      ow[(warp * kRows + g + 8 * (e >> 1)) * kHd + 8 * j + 2 * c4 + (e & 1)] = o[j][e] * f[e >> 1];
  __syncthreads();
  const int64_t base = (t * G + grp) * nsplit + split;
  for (int i = threadIdx.x; i < kRows * kHd; i += kSplitThreads) {
    float sum = ow[i];
#pragma unroll
    for (int w = 1; w < kSplitWarps; ++w) sum += ow[w * kRows * kHd + i];
    part_o[base * kRows * kHd + i] = sum;
  }
  if (warp == 0 && c4 == 0) {
    part_ml[base * kRows + g] = make_float2(M[0], Lsum[0]);
    part_ml[base * kRows + g + 8] = make_float2(M[1], Lsum[1]);
  }
}

// out = merged O / merged l over the splits. Grid (T, G, kRows): one CTA a query row, kCombLanes warps of 32
// threads; lane d4 owns output dims 4 d4 .. 4 d4 + 3, warp w the splits w, w + kCombLanes, ... In chunks of
// kCombLanes x kCombPer splits, every (max, sum) pair and float4 of partial O of a thread's splits is loaded at once
// (one round trip), the chunk's max found over the CTA, and each warp's rescaled sums added in split order; at the end
// the warps' sums are added in warp order (the same bits on every run). The kernel it replaced, a CTA per 4 rows and
// one thread per dim walking the 48 splits of a decode call, waited on 6 dependent rounds of loads on 8 CTAs
// (docs/performance.md, "Measured reasons behind kernel choices").
constexpr int kCombLanes = 8, kCombPer = 8, kCombThreads = kCombLanes * kHd / 4;
__global__ void __launch_bounds__(kCombThreads)
    combine_kernel(int nsplit, int G, const float2* __restrict__ part_ml, const float* __restrict__ part_o,
                   bf16* __restrict__ out, int64_t ldo) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  __shared__ float wmax[kCombLanes];
  __shared__ float wsum[kCombLanes];
  __shared__ float4 wacc[kCombLanes][kHd / 4];
  const int64_t t = blockIdx.x;
  const int grp = blockIdx.y, r = blockIdx.z, warp = threadIdx.x / 32, d4 = threadIdx.x % 32;
  const int64_t base = (t * G + grp) * nsplit;
  float M = -INFINITY, L = 0.f;
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int s0 = 0; s0 < nsplit; s0 += kCombLanes * kCombPer) {
    float2 ml[kCombPer];
    float4 po[kCombPer];
#pragma unroll
    for (int i = 0; i < kCombPer; ++i) {
      const int s = s0 + warp + kCombLanes * i;
      ml[i] = s < nsplit ? part_ml[(base + s) * kRows + r] : make_float2(-INFINITY, 0.f);
      po[i] = s < nsplit ? *reinterpret_cast<const float4*>(part_o + ((base + s) * kRows + r) * kHd + 4 * d4)
                         : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    float cm = -INFINITY;
#pragma unroll
    for (int i = 0; i < kCombPer; ++i) cm = fmaxf(cm, ml[i].x);
    __syncthreads();  // the previous chunk's wmax is read
    if (d4 == 0) wmax[warp] = cm;
    __syncthreads();
#pragma unroll
    for (int w = 0; w < kCombLanes; ++w) cm = fmaxf(cm, wmax[w]);
    if (cm == -INFINITY) continue;  // CTA-uniform: no split of this chunk saw a key
    const float Mn = fmaxf(M, cm), f = M == -INFINITY ? 0.f : exp2f(M - Mn);
    L *= f;
    acc.x *= f, acc.y *= f, acc.z *= f, acc.w *= f;
    M = Mn;
#pragma unroll
    for (int i = 0; i < kCombPer; ++i) {
      const float w = ml[i].x == -INFINITY ? 0.f : exp2f(ml[i].x - M);
      L += ml[i].y * w;
      acc.x += po[i].x * w, acc.y += po[i].y * w, acc.z += po[i].z * w, acc.w += po[i].w * w;
    }
  }
  if (d4 == 0) wsum[warp] = L;
  wacc[warp][d4] = acc;
  __syncthreads();
  if (warp != 0) return;
  float Ls = 0.f;
  float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int w = 0; w < kCombLanes; ++w) {
    const float4 v = wacc[w][d4];
    Ls += wsum[w];
    a.x += v.x, a.y += v.y, a.z += v.z, a.w += v.w;
  }
  if (!(Ls > 0.f)) a = make_float4(0.f, 0.f, 0.f, 0.f), Ls = 1.f;  // a row that saw no key is 0, not NaN
  bf16* o = out + t * ldo + (int64_t(grp) * kRows + r) * kHd + 4 * d4;
  *reinterpret_cast<uint2*>(o) = make_uint2(mma::pack_bf16(a.x / Ls, a.y / Ls), mma::pack_bf16(a.z / Ls, a.w / Ls));
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

int64_t split_slots(const AttnArgs& a) { return a.blocks ? a.k_sel : (a.pos0 + a.T + kBlock - 1) / kBlock; }

}  // namespace

size_t sparse_attn_workspace_bytes(int64_t T, int G, int k_sel, int64_t kv_len) {
  if (T > kAttnSplitMaxT) return 0;
  return attn_split_workspace_bytes(T, G, std::max<int64_t>(k_sel, (kv_len + kBlock - 1) / kBlock));
}

namespace {

using OpName = std::function<std::string()>;

// The dynamic shared-memory limit of `kernel` raised to `bytes` where a call needs more than `raised` (the launcher's
// own high-water mark, a static of its call site): the attribute belongs to the function, process-wide, so each size
// is set once, not at every launch.
template <class Kernel>
void raise_smem_limit(Kernel kernel, size_t bytes, size_t& raised, const OpName& op) {
  if (bytes <= raised) return;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)), op);
  raised = bytes;
}

// Decode-sized calls (T <= kAttnSplitMaxT): every (query, kv group) row's keys cut into splits, each split's partial
// softmax state in the workspace, then merged by combine_kernel.
void launch_split(const AttnArgs& a, const bf16* q, const bf16* K, const bf16* V, bf16* out, float sc, Stream s,
                  const OpName& op) {
  const int64_t nsplit = (split_slots(a) + kSlotsPerSplit - 1) / kSlotsPerSplit;
  const size_t need = attn_split_workspace_bytes(a.T, a.G, split_slots(a));
  ARG_CHECK(a.workspace && a.workspace_bytes >= need && aligned16(a.workspace), op,
            "a call of T <= 4 queries needs sparse_attn_workspace_bytes(T, G, k_sel, kv_len) of 16-byte aligned "
            "workspace");
  ARG_CHECK(nsplit <= 65535, op, "too many splits");
  auto* part_ml = static_cast<float2*>(a.workspace);
  auto* part_o = reinterpret_cast<float*>(part_ml + a.T * a.G * nsplit * kRows);
  static size_t split_attr = 0;
  raise_smem_limit(split_kernel, kSplitSmem, split_attr, op);
  CUDA_CHECK(launch_pdl(split_kernel, dim3(unsigned(a.T), unsigned(a.G), unsigned(nsplit)), kSplitThreads, kSplitSmem,
                        s, q, a.ldq, a.T, a.pos0, K, V, a.cap, a.G, sc, a.blocks, a.k_sel, part_ml, part_o),
             [&] { return op() + " split"; });
  CUDA_CHECK(launch_pdl(combine_kernel, dim3(unsigned(a.T), unsigned(a.G), unsigned(kRows)), kCombThreads, 0, s,
                        int(nsplit), a.G, part_ml, part_o, out, a.ldo),
             [&] { return op() + " combine"; });
}

// Prefill through the ring kernel when the engine asks for it or (automatic) when it fits and both tensor maps can
// be made; false leaves the call to the tile kernel.
bool launch_ring(const AttnArgs& a, const bf16* q, const bf16* K, const bf16* V, bf16* out, float sc, int nbw, Stream s,
                 const OpName& op) {
  // 227 KiB of opt-in shared memory a CTA, less the ring kernel's static arrays (mbarriers, counters, union bits:
  // < 2 KiB)
  const bool ring_fits = ring_smem(nbw) + 2048 <= 227 * 1024;
  using Engine = AttnArgs::Engine;
  ARG_CHECK(a.engine != Engine::tma || (wgmma_available() && ring_fits), op,
            "engine tma needs an sm_90a build on a compute capability 9.0 GPU and a context whose union bitmap fits "
            "shared memory");
  if (!(a.engine == Engine::tma || (a.engine == Engine::automatic && ring_fits && wgmma_available()))) return false;
  CUtensorMap kmap, vmap;
  if (a.engine == Engine::automatic) {
    if (bf16_rows_map(&kmap, K, a.cap, a.pos0 + a.T, a.G, kBlock) != cudaSuccess ||
        bf16_rows_map(&vmap, V, a.cap, a.pos0 + a.T, a.G, kBlock) != cudaSuccess)
      return false;  // no tensor map for these tensors (alignment, extents): the tile kernel, which needs none
  } else {
    CUDA_CHECK(bf16_rows_map(&kmap, K, a.cap, a.pos0 + a.T, a.G, kBlock), [&] { return op() + " key map"; });
    CUDA_CHECK(bf16_rows_map(&vmap, V, a.cap, a.pos0 + a.T, a.G, kBlock), [&] { return op() + " value map"; });
  }
  const size_t rsmem = ring_smem(nbw);
  static size_t ring_attr = 0;
  raise_smem_limit(ring_kernel, rsmem, ring_attr, op);
  const int wg_takers = a.wg_takers > 0 ? a.wg_takers : kWgTakers;
  const dim3 grid(unsigned((a.T + kRingQ - 1) / kRingQ), unsigned(a.G));
  ring_kernel<<<grid, kRingThreads, rsmem, s>>>(kmap, vmap, q, a.ldq, a.T, a.pos0, a.G, sc, a.blocks, a.k_sel, nbw,
                                                wg_takers, a.wg_pipeline, out, a.ldo, a.tile_stats);
  CHECK_LAUNCH(op);
  return true;
}

// Prefill through the tile kernel (cp.async, 4-query tiles): any sm_80+ GPU, no tensor map.
void launch_tile(const AttnArgs& a, const bf16* q, const bf16* K, const bf16* V, bf16* out, float sc, int nbw, Stream s,
                 const OpName& op) {
  const size_t smem = size_t(2 * kStages * kTile) * 2 + size_t(nbw) * 4 + size_t(kQ * kMaxSel) * 4;
  ARG_CHECK(smem <= 227 * 1024, op, "context too long for the union bitmap in shared memory");
  static size_t tile_attr = 0;
  raise_smem_limit(tile_kernel, smem, tile_attr, op);
  const dim3 grid(unsigned((a.T + kQ - 1) / kQ), unsigned(a.G));
  tile_kernel<<<grid, kThreads, smem, s>>>(q, a.ldq, a.T, a.pos0, K, V, a.cap, a.G, sc, a.blocks, a.k_sel, nbw, out,
                                           a.ldo, a.tile_stats);
  CHECK_LAUNCH(op);
}

}  // namespace

void sparse_attn(const AttnArgs& a, Stream s) {
  const OpName op = [&] {
    return op_desc(a.blocks ? "sparse_attn" : "dense_attn", {{"T", a.T},
                                                             {"pos0", a.pos0},
                                                             {"H", a.H},
                                                             {"G", a.G},
                                                             {"hd", a.hd},
                                                             {"cap", a.cap},
                                                             {"block", a.block},
                                                             {"k_sel", a.k_sel},
                                                             {"ldq", a.ldq},
                                                             {"ldo", a.ldo}});
  };
  ARG_CHECK(a.T >= 0 && a.pos0 >= 0, op, "T and pos0 must be >= 0");
  if (a.T == 0) return;
  ARG_CHECK(a.hd == kHd && a.G > 0 && a.H == kRows * a.G, op, "the kernel is built for hd = 128 and H = 16 G");
  ARG_CHECK(a.block == kBlock, op, "the kernel is built for 64-token blocks");
  ARG_CHECK(a.pos0 + a.T <= a.cap, op, "keys 0 .. pos0 + T - 1 exceed the cache capacity cap");
  ARG_CHECK(!a.blocks || (a.k_sel > 0 && a.k_sel <= kMaxSel), op, "k_sel must be in [1, 128]");
  ARG_CHECK(a.T <= 0x7fffffff && a.G <= 65535, op, "grid (T, G) too large");
  ARG_CHECK(a.q && a.K && a.V && a.out, op, "null q, K, V or out");
  ARG_CHECK(aligned16(a.q) && aligned16(a.K) && aligned16(a.V) && aligned16(a.out), op,
            "q, K, V and out must be 16-byte aligned");
  ARG_CHECK(a.ldq % 8 == 0 && a.ldo % 8 == 0 && a.ldq >= int64_t(a.H) * kHd && a.ldo >= int64_t(a.H) * kHd, op,
            "ldq and ldo must be multiples of 8 and >= H * hd");
  ARG_CHECK(a.tau > 0.f, op, "tau must be positive");
  const auto* q = reinterpret_cast<const bf16*>(a.q);
  const auto* K = reinterpret_cast<const bf16*>(a.K);
  const auto* V = reinterpret_cast<const bf16*>(a.V);
  auto* out = reinterpret_cast<bf16*>(a.out);
  const float sc = a.tau * kLog2e;
  if (a.T <= kAttnSplitMaxT) return launch_split(a, q, K, V, out, sc, s, op);
  const int64_t nb = (a.pos0 + a.T + kBlock - 1) / kBlock;
  const int nbw = int((nb + 31) / 32);
  if (!launch_ring(a, q, K, V, out, sc, nbw, s, op)) launch_tile(a, q, K, V, out, sc, nbw, s, op);
}

}  // namespace salasim::gpu
