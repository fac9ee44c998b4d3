// sparse_attn / dense_attn on the GPU (docs/spec.md §4.5, §4.1): each query's 16 heads of one kv group attend to the
// keys j <= p of its selected 64-token blocks (dense: every block b <= p/64) with an fp32 online softmax.
//
// Prefill (T > kAttnSplitMaxT): tile_kernel, grid (ceil(T/4), G), 4 warps, one query per warp, 2 CTAs per SM. The 4
// consecutive queries of a tile share most blocks (the 33 local ones and block 0 always; a real model's picks are correlated),
// so the CTA walks the ascending union of their selections once: each union block's K and V (2 x 64 x 128 bf16)
// come to shared memory once for the 4 queries, by cp.async, two blocks in flight while one is used. A
// warp whose query did not select the block skips it. Per block and query (m16n8k16, bf16 in, fp32 accumulate):
//   S = Q K_b^T (16 heads x 64 keys, 64 mma), causal mask on the query's own block, online softmax in log2 units,
//   P = P_hi + P_lo straight from the S accumulators (a P in bf16 alone would add a rounding the size of the
//   output's own), O += P V_b (16 x 128, 128 mma). O stays in registers; O / l rounded once to bf16.
// The union is built in shared memory as a bitmap over the blocks up to the tile's last query (4 KiB at 2M keys).
// Cost: 786K FLOP per (query, group, block). What bounds it is bytes: with selections that neighbouring queries
// do not share (random synthetic weights), each query's 62 chosen blocks are 2 MiB of K/V per group from HBM.
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

#include "gpu/check.cuh"
#include "gpu/pdl.cuh"
#include "gpu/mma.cuh"
#include "gpu/sparse_attn.hpp"
#include "gpu/launch_geometry.hpp"

namespace salasim::gpu {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kHd = 128;     // head dim the kernels are built for
constexpr int kRows = 16;    // query heads per kv group (H / G): one m16 tile
constexpr int kBlock = 64;   // keys per selection block
constexpr int kQ = 4;        // queries per prefill tile, one per warp (2 CTAs per SM overlap their block rounds)
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

// One query's 16 heads against one 64-key block: the online softmax state (row max m and sum l of rows g and g+8,
// log2 units) and O (16 x 128) in the accumulators of mma tiles. key_lo .. key_hi-1 are the block's columns this
// warp owns (all 64, or 16 in the split kernel); columns >= valid are masked.
template <int NT>  // key n-tiles of 8 the warp owns: 8 (64 keys) or 2 (16 keys)
__device__ void attend_block(const uint32_t (&qa)[8][4], const bf16* Ks, const bf16* Vs, int key0, int valid,
                             float sc_log2, float (&m)[2], float (&l)[2], float (&o)[16][4], int lane) {
  const int c4 = lane & 3;
  float s[NT][4];
#pragma unroll
  for (int j = 0; j < NT; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
  for (int ks = 0; ks < 8; ++ks)
#pragma unroll
    for (int np = 0; np < NT / 2; ++np) {
      uint32_t b[4];
      mma::ldmatrix_x4(b, mma::frag_b_nk_addr(Ks + (key0 + 16 * np) * kLd + 16 * ks, kLd, lane));
      mma::mma16816(s[2 * np], qa[ks], b[0], b[1]);
      mma::mma16816(s[2 * np + 1], qa[ks], b[2], b[3]);
    }
  float bmax[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int col = key0 + 8 * j + 2 * c4 + (e & 1);
      s[j][e] = col < valid ? s[j][e] * sc_log2 : -INFINITY;
      bmax[e >> 1] = fmaxf(bmax[e >> 1], s[j][e]);
    }
  float alpha[2], psum[2] = {0.f, 0.f}, mref[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    bmax[r] = fmaxf(bmax[r], __shfl_xor_sync(0xffffffffu, bmax[r], 1));
    bmax[r] = fmaxf(bmax[r], __shfl_xor_sync(0xffffffffu, bmax[r], 2));
    const float mn = fmaxf(m[r], bmax[r]);
    mref[r] = mn == -INFINITY ? 0.f : mn;  // no valid key yet: exp2 must see -inf - 0, never -inf - -inf
    alpha[r] = exp2f(m[r] - mref[r]);       // 0 on the first valid block (m = -inf)
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
#pragma unroll
  for (int j = 0; j < 16; ++j) o[j][0] *= alpha[0], o[j][1] *= alpha[0], o[j][2] *= alpha[1], o[j][3] *= alpha[1];
  // O += P V: k-steps of 16 keys; the S accumulators of n-tiles 2kk, 2kk+1 are P's A fragment of k-step kk
#pragma unroll
  for (int kk = 0; kk < NT / 2; ++kk) {
    uint32_t ph[4], pl[4];
    mma::split2(s[2 * kk][0], s[2 * kk][1], ph[0], pl[0]);
    mma::split2(s[2 * kk][2], s[2 * kk][3], ph[1], pl[1]);
    mma::split2(s[2 * kk + 1][0], s[2 * kk + 1][1], ph[2], pl[2]);
    mma::split2(s[2 * kk + 1][2], s[2 * kk + 1][3], ph[3], pl[3]);
#pragma unroll
    for (int dp = 0; dp < 8; ++dp) {  // dims 16 dp .. 16 dp + 15: output n-tiles 2dp, 2dp+1
      uint32_t b[4];
      mma::ldmatrix_x4_trans(b, mma::frag_b_kn_addr(Vs + (key0 + 16 * kk) * kLd + 16 * dp, kLd, lane));
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

// q: [T, H*hd] (row stride ldq); K, V: [G, cap, hd]; blocks: [T, G, k_sel] or nullptr (dense);
// out: [T, H*hd] (row stride ldo). Grid (ceil(T/kQ), G), kThreads threads; dynamic smem: the K/V stages, the
// bitmap words and the union list.
__global__ void __launch_bounds__(kThreads, 2) tile_kernel(const bf16* __restrict__ q, int64_t ldq, int64_t T,
                                                          int64_t pos0, const bf16* __restrict__ K,
                                                          const bf16* __restrict__ V, int64_t cap, int G,
                                                          float sc_log2, const int32_t* __restrict__ blocks, int k_sel,
                                                          int nbw, bf16* __restrict__ out, int64_t ldo) {
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* kv = reinterpret_cast<bf16*>(smem);  // stage st: K at tile 2st, V at tile 2st+1
  uint32_t* bitmap = reinterpret_cast<uint32_t*>(smem + 2 * kStages * kTile * 2);  // [nbw] union of the tile's blocks
  int32_t* ulist = reinterpret_cast<int32_t*>(bitmap + nbw);        // [kQ * kMaxSel] union, ascending
  __shared__ int n_union;
  __shared__ int scan_part[kQ];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane >> 2, c4 = lane & 3;
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
#pragma unroll
  for (int i = 0; i < kMaxSel / 32; ++i) {
    const int slot = lane + 32 * i;
    int32_t b = -1;
    if (blocks && active && slot < k_sel) b = blocks[(t * G + grp) * k_sel + slot];
    sel[i] = b >= 0 && b <= qb ? b : -1;  // an id outside [0, qb] holds no key j <= p
  }
  // the union: bitmap over blocks 0 .. qb_last, then its set bits in ascending order
  int nu;
  if (blocks) {
    for (int i = threadIdx.x; i < nbw; i += kThreads) bitmap[i] = 0u;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kMaxSel / 32; ++i)
      if (sel[i] >= 0) atomicOr(&bitmap[sel[i] >> 5], 1u << (sel[i] & 31));
    __syncthreads();
    const int per = (nbw + kThreads - 1) / kThreads, w0 = threadIdx.x * per;
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
    if (threadIdx.x == kThreads - 1) n_union = before + cnt;
    for (int i = w0; i < w0 + per && i < nbw; ++i)
      for (uint32_t bits = bitmap[i]; bits; bits &= bits - 1) ulist[before++] = 32 * i + __ffs(int(bits)) - 1;
    __syncthreads();
    nu = n_union;
  } else {
    nu = int(qb_last + 1);  // dense: blocks 0 .. qb_last
  }
  __syncthreads();  // the Q staging area (second stage) is free

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float o[16][4];
#pragma unroll
  for (int j = 0; j < 16; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;

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
    bool mine = active && b <= qb;
    if (blocks) {
      bool hit = false;
#pragma unroll
      for (int i = 0; i < kMaxSel / 32; ++i) hit |= sel[i] == b;
      mine = __any_sync(0xffffffffu, hit) && active;
    }
    if (mine) {
      const int valid = int(std::min<int64_t>(kBlock, p - b * kBlock + 1));  // keys b*64 .. p of this block
      attend_block<8>(qa, kv + (2 * st) * kTile, kv + (2 * st + 1) * kTile, 0, valid, sc_log2, m, l, o, lane);
    }
  }
  if (!active) return;
  // out = O / l, one bf16 rounding; a row that saw no key is written as 0, not NaN
  const float inv0 = l[0] > 0.f ? 1.f / l[0] : 0.f, inv1 = l[1] > 0.f ? 1.f / l[1] : 0.f;
  bf16* orow = out + t * ldo + int64_t(grp) * kRows * kHd;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const int col = 8 * j + 2 * c4;
    *reinterpret_cast<uint32_t*>(orow + g * kHd + col) = mma::pack_bf16(o[j][0] * inv0, o[j][1] * inv0);
    *reinterpret_cast<uint32_t*>(orow + (g + 8) * kHd + col) = mma::pack_bf16(o[j][2] * inv1, o[j][3] * inv1);
  }
}

// Partial softmax of one split: part_ml [T, G, nsplit, 16] (max, sum) in log2 units, part_o [T, G, nsplit, 16, hd]
// (unnormalised O). Grid (T, G, nsplit), kSplitThreads threads, kSplitSmem dynamic shared memory.
__global__ void __launch_bounds__(kSplitThreads) split_kernel(const bf16* __restrict__ q, int64_t ldq, int64_t T,
                                                              int64_t pos0, const bf16* __restrict__ K,
                                                              const bf16* __restrict__ V, int64_t cap, int G,
                                                              float sc_log2, const int32_t* __restrict__ blocks,
                                                              int k_sel, float2* __restrict__ part_ml,
                                                              float* __restrict__ part_o) {
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
    attend_block<2>(qa, kv + (2 * u) * kTile, kv + (2 * u + 1) * kTile, 16 * warp, valid, sc_log2, m, l, o, lane);
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
__global__ void __launch_bounds__(kCombThreads) combine_kernel(int nsplit, int G, const float2* __restrict__ part_ml,
                                                               const float* __restrict__ part_o,
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

void sparse_attn(const AttnArgs& a, Stream s) {
  const auto op = [&] {
    return op_desc(a.blocks ? "sparse_attn" : "dense_attn", {{"T", a.T}, {"pos0", a.pos0}, {"H", a.H}, {"G", a.G},
                                                        {"hd", a.hd}, {"cap", a.cap}, {"block", a.block},
                                                        {"k_sel", a.k_sel}, {"ldq", a.ldq}, {"ldo", a.ldo}});
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
  if (a.T <= kAttnSplitMaxT) {
    const int64_t nsplit = (split_slots(a) + kSlotsPerSplit - 1) / kSlotsPerSplit;
    const size_t need = attn_split_workspace_bytes(a.T, a.G, split_slots(a));
    ARG_CHECK(a.workspace && a.workspace_bytes >= need && aligned16(a.workspace), op,
              "a call of T <= 4 queries needs sparse_attn_workspace_bytes(T, G, k_sel, kv_len) of 16-byte aligned "
              "workspace");
    ARG_CHECK(nsplit <= 65535, op, "too many splits");
    auto* part_ml = static_cast<float2*>(a.workspace);
    auto* part_o = reinterpret_cast<float*>(part_ml + a.T * a.G * nsplit * kRows);
    static bool split_attr = false;
    if (!split_attr) {
      CUDA_CHECK(cudaFuncSetAttribute(split_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSplitSmem)), op);
      split_attr = true;
    }
    CUDA_CHECK(launch_pdl(split_kernel, dim3(unsigned(a.T), unsigned(a.G), unsigned(nsplit)), kSplitThreads, kSplitSmem,
                          s, q, a.ldq, a.T, a.pos0, K, V, a.cap, a.G, sc, a.blocks, a.k_sel, part_ml, part_o),
               [&] { return op() + " split"; });
    CUDA_CHECK(launch_pdl(combine_kernel, dim3(unsigned(a.T), unsigned(a.G), unsigned(kRows)), kCombThreads, 0, s,
                          int(nsplit), a.G, part_ml, part_o, out, a.ldo),
               [&] { return op() + " combine"; });
    return;
  }
  const int64_t nb = (a.pos0 + a.T + kBlock - 1) / kBlock;
  const int nbw = int((nb + 31) / 32);
  const size_t smem = size_t(2 * kStages * kTile) * 2 + size_t(nbw) * 4 + size_t(kQ * kMaxSel) * 4;
  ARG_CHECK(smem <= 227 * 1024, op, "context too long for the union bitmap in shared memory");
  static size_t tile_attr = 0;  // raised as far as a call needs, once per size
  if (smem > tile_attr) {
    CUDA_CHECK(cudaFuncSetAttribute(tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), op);
    tile_attr = smem;
  }
  tile_kernel<<<dim3(unsigned((a.T + kQ - 1) / kQ), unsigned(a.G)), kThreads, smem, s>>>(
      q, a.ldq, a.T, a.pos0, K, V, a.cap, a.G, sc, a.blocks, a.k_sel, nbw, out, a.ldo);
  CHECK_LAUNCH(op);
}

}  // namespace salasim::gpu
