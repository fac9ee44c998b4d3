// select_blocks on the GPU (docs/spec.md §4.3-4.4): stage-1 block scores, max-pool, forced blocks and an exact top-k,
// the function of reference/select_blocks.cpp. Queries run in sub-chunks that fit the workspace; per sub-chunk of nq
// queries (n1 / n2 = K1 / K2 windows complete at its last query, nb its causal blocks):
//
//  1. lse_partial  grid (ceil(nq/16), ceil(n2/512), G), 8 warps. The products are transposed, compressed keys as
//     the m16 rows and the 16 heads of a query as two n8 tiles: C[window, head] = K2 Q^T (m16n8k16, bf16 in, fp32
//     accumulate). A warp keeps 2 queries' Q^T in registers (64 regs) and streams 16-window A fragments of the
//     CTA's 512 K2 windows from shared memory (double-buffered cp.async tiles of 128), so each K2 fragment feeds
//     4 mma. Per head an online max / sum of exp2 over the windows its query sees, merged over the lanes at the
//     end: one (max, sum) pair per (query, head, split). Sub-chunks of <= 2 queries (decode) give all 8 warps
//     the same queries and interleave the 16-window tiles instead, merging the warps' pairs in shared memory; calls
//     of <= 2 queries take 128, 256 or 512 windows a CTA, the finest that fits one wave (select_blocks below): with
//     512 windows a CTA, the 4 CTAs of a 64K-key layer, each walking its four tiles one after another, took as long
//     as the 64 of a 1M-key layer (a layer's time was one CTA's chain of tiles, not the work; docs/performance.md,
//     "Measured reasons behind kernel choices").
//  2. lse_combine  one warp per (query, head): LSE2 in log2 units over the splits the query sees; -inf when it
//     sees no K2 window (its visible K1 windows then score +inf, as in the reference). Calls of <= 2 queries on the
//     mma.sync score kernel (decode's) skip it: each score_pool CTA combines its own 16 heads' partials (lse_of_row,
//     the same bits).
//  3. score_pool   grid (ceil(nq/16), ceil(nb/127), G), the same tiling over the 509 K1 windows 4 b0 - 1 .. that
//     cover blocks b0 .. b0+126 (fine geometry: ceil(nb/31) CTAs, the 125 windows of 31 blocks, one tile):
//     s[window] = sum over the 16 heads of exp2(tau log2(e) q_h.K1 - LSE2_h) (each lane sums its 4 heads, two
//     shuffles the quad's), rounded once to bf16, kept in shared memory, then max-pooled
//     into the blocks (bf16 bit patterns of non-negative scores order like the values): pooled [q, G, nb] 16-bit
//     keys are all that reaches global memory (a quarter of the window scores). The queries and the first K1 tile
//     are loaded before the kernel waits for the LSE kernel before it (pdl.cuh).
//  4. topk         grid (nq, G), 128 .. 1024 threads (topk_threads: 16 keys a thread for the few CTAs of decode,
//     so one CTA takes 16K blocks; 64 for the many CTAs of prefill): forced blocks, the exact top-(k_sel - forced)
//     of the others by a two-pass 8-bit radix select on the 16-bit keys (histogram increments aggregated per warp
//     with match.any, since most keys share their high byte), ties to the lower block index; ids ascending, -1
//     padding; the optional scores. Thread i owns the contiguous keys [i S, i S + S) of [nb] (S a multiple of 8:
//     16-byte loads of 8 keys), so thread order is block order: after the two histograms (each warp finds the
//     threshold bin itself by a suffix scan of 8 bins a lane), each thread counts its keys above the threshold
//     and those equal to it, ONE CTA-wide scan of the pair (packed in 64 bits) gives its output offset and its rank
//     among the ties, and it writes its ids in order. At most 5 barriers (2 when take is 0) whatever nb (the chunks
//     of 256 keys with two scans each that this replaced put two CTA-wide scans per chunk, nb / 128 in all, on a
//     decode call's critical path; docs/performance.md, "Measured reasons behind kernel choices").
//
// Cost: per query and kv group, (n1 + n2) windows x 16 heads x 256 FLOP on tensor cores and 16 (n1 + n2) exp2:
// docs/performance.md's 2560 N^2 FLOP + 10 N^2 exp over an N-token prompt and 8 layers; tensor- and exp-bound (the MUFU
// unit gives 16 exp2 per clock per SM; mma::exp2_ftz keeps each a single MUFU op). Skipped when every causal block of
// the sub-chunk's last query is chosen anyway.
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/pdl.cuh"
#include "gpu/mma.cuh"
#include "gpu/select_blocks.hpp"
#include "gpu/select_chunk.cuh"
#include "gpu/select_topk.hpp"
#include "gpu/launch_geometry.hpp"
#include "model/windows.hpp"

namespace salasim::gpu {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kWarps = 8, kThreads = kWarps * 32;
static_assert(kQT == 2 * kWarps, "2 queries per warp");
constexpr int kKeyTile = 128;        // compressed keys per shared-memory tile
constexpr int kPoolBlocks = 127;     // blocks per score_pool CTA: their 4 * 127 + 1 windows fit 4 tiles
constexpr int kPoolBlocksFine = 31;  // decode's: 4 * 31 + 1 windows, one tile
constexpr int kPoolWindows = 4 * kKeyTile;
constexpr int kSelectCtasPerSm =
    2;  // lse_partial and score_pool CTAs an SM (launch bounds; 70 / 86 KB of shared memory)
static_assert(kSelectSplitFine == kKeyTile && 4 * kPoolBlocksFine + 1 <= kKeyTile, "decode's CTAs take one tile");
constexpr int kLd = kHd + 8;  // bf16 row stride of the tiles (272 B)
constexpr int kTileElems = kKeyTile * kLd;
constexpr size_t kTileSmem = size_t(2 * kTileElems) * 2;                  // 2 stages: 69,632 B
constexpr size_t kPoolSmem = kTileSmem + size_t(kQT * kPoolWindows) * 2;  // + window scores: 86,016 B
constexpr float kLog2e = 1.4426950408889634f;

// Which queries of the CTA's tile a warp works on, and which of the 16-window m-tiles: prefill gives warp w the
// queries 2w, 2w+1 and every m-tile; a tile of <= 2 queries gives every warp queries 0, 1 and m-tiles w, w+8, ...
struct WarpRole {
  int q0;          // first of the warp's two tile queries
  int mt0, mstep;  // m-tiles mt0, mt0 + mstep, ...
  bool shared;     // several warps hold partial results of the same queries
};
__device__ WarpRole warp_role(int64_t nq_tile, int warp) {
  if (nq_tile <= 2) return WarpRole{0, warp, kWarps, true};
  return WarpRole{2 * warp, 0, 1, false};
}

// The CTA's queries (x 16 heads of group g) as Q^T B fragments: qf[i][ks][0..3] for query q0 + i, k-step ks:
// regs {0, 1} heads 0..7, {2, 3} heads 8..15. Staged through both tiles (256 rows; 32 for a tile of <= 2
// queries); ends with a barrier.
__device__ void load_queries(const Chunk& ch, int64_t tq0, int g, int q0, bf16* stage, uint32_t (&qf)[2][8][4]) {
  const int n_rows = (ch.nq - tq0 <= 2 ? 2 : kQT) * kRows;  // shared roles (warp_role) read queries 0 and 1 only
  for (int i = threadIdx.x; i < n_rows * (kHd / 8); i += kThreads) {
    const int r = i >> 4, piece = i & 15;
    const int64_t tl = tq0 + r / kRows;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (tl < ch.nq)
      v = *reinterpret_cast<const uint4*>(ch.q + (ch.t0 + tl) * ch.ldq + (int64_t(g) * kRows + r % kRows) * kHd +
                                          piece * 8);
    *reinterpret_cast<uint4*>(stage + r * kLd + piece * 8) = v;
  }
  __syncthreads();
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int ks = 0; ks < 8; ++ks)
      mma::ldmatrix_x4(qf[i][ks], mma::frag_b_nk_addr(stage + (q0 + i) * kRows * kLd + 16 * ks, kLd, lane));
  __syncthreads();
}

// Compressed keys e0 .. e0 + 127 of one kv head (ck: [n_avail, hd] rows) into a tile; rows outside [0, n_avail)
// zero-filled.
__device__ void load_keys(bf16* tile, const bf16* ck, int64_t e0, int64_t n_avail) {
  for (int i = threadIdx.x; i < kKeyTile * (kHd / 8); i += kThreads) {
    const int r = i >> 4, piece = i & 15;
    const int64_t e = e0 + r;
    const bool ok = e >= 0 && e < n_avail;
    mma::cp_async16(tile + r * kLd + piece * 8, ck + (ok ? e : 0) * kHd + piece * 8, ok ? 16 : 0);
  }
}

// The CTA's queries into qf (staged through the tiles), then key tiles e0 + 128 kt .. (kt < n_tiles) of ck through
// two shared-memory stages, double-buffered, body(kt, tile) called on each in order. (Issuing all of a decode CTA's
// tiles at once, the queries staged beside them, needed 148 KB a CTA: one CTA an SM, and score_pool lost more to the
// occupancy than it gained from the tiles in flight; docs/performance.md, "Measured reasons behind kernel choices".)
// ready() runs once the first tile is in flight, before any body (score_pool waits there for the kernel before it).
template <class Ready, class Body>
__device__ void for_key_tiles(const Chunk& ch, int64_t tq0, int g, int q0, bf16* tiles, int n_tiles, const bf16* ck,
                              int64_t e0, int64_t n_avail, uint32_t (&qf)[2][8][4], Ready&& ready, Body&& body) {
  load_queries(ch, tq0, g, q0, tiles, qf);
  load_keys(tiles, ck, e0, n_avail);
  mma::cp_async_commit();
  ready();
  for (int kt = 0; kt < n_tiles; ++kt) {
    const int st = kt & 1;
    mma::cp_async_wait<0>();
    __syncthreads();
    if (kt + 1 < n_tiles) load_keys(tiles + (st ^ 1) * kTileElems, ck, e0 + (kt + 1) * kKeyTile, n_avail);
    mma::cp_async_commit();
    body(kt, tiles + st * kTileElems);
  }
}

// C[window, head] of 16 windows (m-tile at `rows` of the tile) for the warp's two queries: acc[i][nt][e] is window
// g + 8 (e >> 1), head 8 nt + 2 c + (e & 1) of query q0 + i.
__device__ void tile_logits(float (&acc)[2][2][4], const uint32_t (&qf)[2][8][4], const bf16* rows, int lane) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) acc[i][nt][0] = acc[i][nt][1] = acc[i][nt][2] = acc[i][nt][3] = 0.f;
#pragma unroll
  for (int ks = 0; ks < 8; ++ks) {
    uint32_t a[4];
    mma::ldmatrix_x4(a, mma::frag_a_addr(rows + 16 * ks, kLd, lane));
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      mma::mma16816(acc[i][0], a, qf[i][ks][0], qf[i][ks][1]);
      mma::mma16816(acc[i][1], a, qf[i][ks][2], qf[i][ks][3]);
    }
  }
}

// k2: [G, k2_cap, hd]; n2c: K2 windows that exist for the sub-chunk's last query.
// part: [nq, H, nsplit] (max, sum) of exp2 over this CTA's split of the windows the query sees, log2 units.
__global__ void __launch_bounds__(kThreads, kSelectCtasPerSm)
    lse_partial_kernel(Chunk ch, const bf16* __restrict__ k2, int64_t k2_cap, int64_t n2c, int kernel2, int stride2,
                       int split_w, int64_t nsplit, float2* __restrict__ part) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* tiles = reinterpret_cast<bf16*>(smem);
  __shared__ float mrg[kWarps][2][kRows][2];  // shared roles: the warps' (max, sum) per query and head
  const int64_t split = blockIdx.y, e_begin = split * split_w, tq0 = int64_t(blockIdx.x) * kQT;
  const int g = blockIdx.z, warp = threadIdx.x / 32, lane = threadIdx.x % 32, gr = lane >> 2, c4 = lane & 3;
  const int64_t nq_tile = std::min<int64_t>(kQT, ch.nq - tq0);
  const WarpRole role = warp_role(nq_tile, warp);
  int lim[2];  // windows e_begin + [0, lim) are the ones query q0 + i sees (32-bit: the inner loop stays integer-light)
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int64_t tl = tq0 + role.q0 + i;
    const int64_t n2v = tl < ch.nq ? n_windows(ch.pos0 + ch.t0 + tl + 1, kernel2, stride2) : 0;
    lim[i] = int(std::min<int64_t>(std::max<int64_t>(n2v - e_begin, 0), split_w));
  }
  uint32_t qf[2][8][4];

  // lane: windows gr, gr + 8 of each m-tile; heads 2c4, 2c4+1 (n-tile 0) and 8+2c4, 9+2c4 (n-tile 1)
  float m[2][4], l[2][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int h = 0; h < 4; ++h) m[i][h] = -INFINITY, l[i][h] = 0.f;
  const bf16* ck = k2 + int64_t(g) * k2_cap * kHd;
  const int n_tiles = int(std::min<int64_t>(split_w, n2c - e_begin) + kKeyTile - 1) / kKeyTile;
  for_key_tiles(
      ch, tq0, g, role.q0, tiles, n_tiles, ck, e_begin, n2c, qf, [] {},
      [&](int kt, const bf16* tile) {
        for (int mt = role.mt0; mt < kKeyTile / 16; mt += role.mstep) {
          const int local = kt * kKeyTile + 16 * mt;      // window e_begin + local is row gr of the m-tile
          if (local >= lim[0] && local >= lim[1]) break;  // warp-uniform: neither query sees these
          float acc[2][2][4];
          tile_logits(acc, qf, tile + 16 * mt * kLd, lane);
#pragma unroll
          for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int h = 0; h < 4; ++h) {
              const int nt = h >> 1, e = h & 1;
              const float x0 = local + gr < lim[i] ? acc[i][nt][e] * ch.sc_log2 : -INFINITY;
              const float x1 = local + gr + 8 < lim[i] ? acc[i][nt][e + 2] * ch.sc_log2 : -INFINITY;
              const float tm = fmaxf(x0, x1);
              if (tm == -INFINITY) continue;
              if (tm > m[i][h]) {
                l[i][h] = m[i][h] > -INFINITY ? l[i][h] * exp2f(m[i][h] - tm) : 0.f;
                m[i][h] = tm;
              }
              l[i][h] += mma::exp2_ftz(x0 - m[i][h]) + mma::exp2_ftz(x1 - m[i][h]);
            }
        }
      });
  // merge over the 8 lanes of each head (lanes differing in gr), then over the warps of a shared role
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int h = 0; h < 4; ++h)
#pragma unroll
      for (int o = 4; o < 32; o <<= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, m[i][h], o), l2 = __shfl_xor_sync(0xffffffffu, l[i][h], o);
        merge_ml(m[i][h], l[i][h], m2, l2);
      }
  auto head_of = [&](int h) { return 8 * (h >> 1) + 2 * c4 + (h & 1); };
  if (role.shared) {
    if (gr == 0)
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int h = 0; h < 4; ++h) mrg[warp][i][head_of(h)][0] = m[i][h], mrg[warp][i][head_of(h)][1] = l[i][h];
    __syncthreads();
    if (warp != 0) return;
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int h = 0; h < 4; ++h)
        for (int w = 1; w < kWarps; ++w) merge_ml(m[i][h], l[i][h], mrg[w][i][head_of(h)][0], mrg[w][i][head_of(h)][1]);
  }
  if (gr != 0) return;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int64_t tl = tq0 + role.q0 + i;
    if (tl >= ch.nq) continue;
#pragma unroll
    for (int h = 0; h < 4; ++h)
      part[(tl * ch.H + int64_t(g) * kRows + head_of(h)) * nsplit + split] = make_float2(m[i][h], l[i][h]);
  }
}

// lse: [nq, H] LSE2 in log2 units from the partials of the splits each query sees (split_w K2 windows each). One warp
// per (query, head): the lanes load the splits side by side (one thread walking them waited on ns / 4 dependent
// loads, 8 round trips in a row for the 32 splits of a decode call at 1M keys; docs/performance.md, "Measured
// reasons behind kernel choices"), the max is a warp reduction, and the sum is lane l's splits l, l + 32, ... in
// order, then a fixed xor tree over the lanes: the same bits on every run, and no serial walk of the 256 splits of
// decode's 128-window partials at 2M keys.
// Row i = (query tl, head) of lse by one warp, in every lane (also score_pool's, for decode).
__device__ float lse_of_row(const Chunk& ch, int64_t i, int kernel2, int stride2, int split_w, int64_t nsplit,
                            const float2* __restrict__ part) {
  const int lane = threadIdx.x % 32;
  const int64_t tl = i / ch.H;
  const int64_t n2v = n_windows(ch.pos0 + ch.t0 + tl + 1, kernel2, stride2);
  const int64_t ns = (n2v + split_w - 1) / split_w;
  const float2* pp = part + i * nsplit;
  float M = -INFINITY;
  for (int64_t s = lane; s < ns; s += 32) M = fmaxf(M, pp[s].x);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
  if (M == -INFINITY) return -INFINITY;  // no K2 window visible yet: every visible K1 window scores +inf
  float L = 0.f;
  for (int64_t s = lane; s < ns; s += 32) {
    const float2 v = pp[s];
    if (v.x > -INFINITY) L = fmaf(v.y, exp2f(v.x - M), L);
  }
  L = warp_sum(L);
  return M + log2f(L);
}

constexpr int kCombineRows = 8;  // warps (rows) per lse_combine CTA
__global__ void __launch_bounds__(kCombineRows * 32)
    lse_combine_kernel(Chunk ch, int kernel2, int stride2, int split_w, int64_t nsplit, const float2* __restrict__ part,
                       float* __restrict__ lse) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t i = int64_t(blockIdx.x) * kCombineRows + threadIdx.x / 32;
  if (i >= ch.nq * ch.H) return;  // warp-uniform
  const float v = lse_of_row(ch, i, kernel2, stride2, split_w, nsplit, part);
  if (threadIdx.x % 32 == 0) lse[i] = v;
}

// How score_pool gets LSE2: from lse [nq, H] (lse_combine's), or, for a tile of <= 2 queries (decode), from the
// partials itself (lse_of_row: the same bits, and one launch a layer fewer).
struct LseSource {
  const float* lse;    // [nq, H], or nullptr: combine `part`
  const float2* part;  // [nq, H, nsplit] (lse_partial's)
  int kernel2, stride2, split_w;
  int64_t nsplit;
};

// k1: [G, k1_cap, hd]; n1c: K1 windows that exist for the sub-chunk's last query; lse (log2 units): see LseSource;
// pooled: [nq, G, nbs] 16-bit keys of blocks b0 .. b0 + 126 (those <= the query's block). kPoolSmem dynamic smem.
__global__ void __launch_bounds__(kThreads, kSelectCtasPerSm)
    score_pool_kernel(Chunk ch, const bf16* __restrict__ k1, int64_t k1_cap, int64_t n1c, int kernel, int stride,
                      int block, int pool_blocks, LseSource src, uint16_t* __restrict__ pooled, int64_t nbs) {
  // Launched with launch_pdl (pdl.cuh), always after lse_partial or lse_combine: the queries and K1 were written
  // before that kernel, so they are read before pdl_wait (the first tile's round trip overlaps the kernel before);
  // LSE2 is read after it (get_lse).
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* tiles = reinterpret_cast<bf16*>(smem);
  uint16_t* wsc = reinterpret_cast<uint16_t*>(smem + kTileSmem);  // [kQT][kPoolWindows] bf16 window scores
  const int64_t b0 = int64_t(blockIdx.y) * pool_blocks, tq0 = int64_t(blockIdx.x) * kQT;
  const int64_t w_begin = 4 * b0 - 1;  // windows 4 b - 1 .. 4 b + 3 overlap block b (kernel 32, stride 16, block 64)
  const int g = blockIdx.z, warp = threadIdx.x / 32, lane = threadIdx.x % 32, gr = lane >> 2, c4 = lane & 3;
  const int64_t nq_tile = std::min<int64_t>(kQT, ch.nq - tq0);
  const WarpRole role = warp_role(nq_tile, warp);
  // windows w_begin + [lo, lim[i]) are the ones query q0 + i sees: 32-bit local indices in the inner loop
  const int lo = w_begin < 0 ? int(-w_begin) : 0;
  const int n_tiles = (4 * pool_blocks + 1 + kKeyTile - 1) / kKeyTile;
  int lim[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int64_t tl = tq0 + role.q0 + i;
    const int64_t n1v = tl < ch.nq ? n_windows(ch.pos0 + ch.t0 + tl + 1, kernel, stride) : 0;
    lim[i] = int(std::min<int64_t>(std::max<int64_t>(n1v - w_begin, 0), n_tiles * kKeyTile));
  }
  float lse_r[2][4];
  // the partials' combine: queries 0, 1 of a tile of <= 2 (select_blocks passes no lse only when the call has <= 2
  // queries, so nq_tile <= 2 and role.q0 == 0 here)
  __shared__ float lse_s[2][kRows];
  const auto get_lse = [&] {
    pdl_begin();
    if (!src.lse) {
      for (int j = warp; j < nq_tile * kRows; j += kWarps) {  // warp-uniform
        const float v = lse_of_row(ch, (tq0 + j / kRows) * ch.H + int64_t(g) * kRows + j % kRows, src.kernel2,
                                   src.stride2, src.split_w, src.nsplit, src.part);
        if (lane == 0) lse_s[j / kRows][j % kRows] = v;
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int64_t tl = tq0 + role.q0 + i;
#pragma unroll
      for (int h = 0; h < 4; ++h) {
        const int head = 8 * (h >> 1) + 2 * c4 + (h & 1);
        lse_r[i][h] = tl >= ch.nq ? 0.f
                      : src.lse   ? src.lse[tl * ch.H + int64_t(g) * kRows + head]
                                  : lse_s[role.q0 + i][head];
      }
    }
  };
  uint32_t qf[2][8][4];
  const bf16* ck = k1 + int64_t(g) * k1_cap * kHd;
  for_key_tiles(ch, tq0, g, role.q0, tiles, n_tiles, ck, w_begin, n1c, qf, get_lse, [&](int kt, const bf16* tile) {
    for (int mt = role.mt0; mt < kKeyTile / 16; mt += role.mstep) {
      const int local = kt * kKeyTile + 16 * mt;  // window w_begin + local is row gr of the m-tile
      float acc[2][2][4] = {};
      if (local < lim[0] || local < lim[1])  // warp-uniform; else every key below is 0
        tile_logits(acc, qf, tile + 16 * mt * kLd, lane);
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float sum[2] = {0.f, 0.f};  // windows gr, gr + 8: this lane's 4 heads
        const bool any = local < lim[i];
        if (any)
#pragma unroll
          for (int h = 0; h < 4; ++h) {
            const int nt = h >> 1, e = h & 1;
            sum[0] += mma::exp2_ftz(acc[i][nt][e] * ch.sc_log2 - lse_r[i][h]);
            sum[1] += mma::exp2_ftz(acc[i][nt][e + 2] * ch.sc_log2 - lse_r[i][h]);
          }
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], 1);
          sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], 2);
          const int w = local + gr + 8 * r;
          // a window the query does not see scores 0 (the reference's zeroed score array): it never raises a max
          const uint16_t key = w >= lo && w < lim[i] ? __bfloat16_as_ushort(__float2bfloat16_rn(sum[r])) : uint16_t(0);
          if (c4 == 0) wsc[(role.q0 + i) * kPoolWindows + local + gr + 8 * r] = key;
        }
      }
    }
  });
  __syncthreads();
  // max-pool: block b0 + j takes local windows 4j .. 4j + 4 (a tile of <= 2 queries holds queries 0 and 1 only)
  pool_to_blocks(ch, wsc, kPoolWindows, nq_tile <= 2 ? 2 : kQT, tq0, b0, pool_blocks, block, g, pooled, nbs);
}

// ---- topk. One CTA per (query, kv group); its nb keys split into blockDim.x contiguous segments of S keys
// (S a multiple of 8, thread i owns blocks i S .. i S + S - 1), so thread order is block order and a thread reads
// its keys as 16-byte vectors of 8. Barriers do not grow with nb: zero the histograms, two histogram passes, one
// scan (the chunked loops of a CTA-wide stride they replace cost two scans per 256 keys, so their barriers grew with
// nb: docs/performance.md, "Measured reasons behind kernel choices").
constexpr int kTopkMaxThreads = 1024, kTopkMaxWarps = kTopkMaxThreads / 32;
constexpr int kTopkMinThreads = 128;
constexpr int64_t kTopkManyCtas = 256;  // a grid of this many CTAs or more fills an H200 (132 SMs) with small CTAs

// Keys b0 .. b0 + 7 of pk (b0 a multiple of 8), 0 from nb on: one 16-byte load where the 8 exist and pk is aligned.
__device__ inline void load_keys8(const uint16_t* __restrict__ pk, int b0, int nb, bool vec, uint32_t (&k)[8]) {
  if (vec && b0 + 8 <= nb) {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(pk + b0));
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < 4; ++e) k[2 * e] = w[e] & 0xffffu, k[2 * e + 1] = w[e] >> 16;  // little-endian: b0 + 2e low
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) k[e] = b0 + e < nb ? uint32_t(pk[b0 + e]) : 0u;
  }
}

// hist[bin] += 1 for every lane with bin >= 0, one atomic per distinct bin of the warp (most keys share their high
// byte). Every lane of the warp must call it.
__device__ inline void hist_add(int* hist, int bin) {
  const unsigned peers = __match_any_sync(0xffffffffu, bin);
  const int leader = __ffs(int(peers)) - 1;
  if (bin >= 0 && (threadIdx.x % 32) == leader) atomicAdd(&hist[bin], __popc(peers));
}

// The highest bin whose count plus the counts above it reaches `take` (0 < take <= the total), and how many of its
// entries are still needed: {bin, take - count above bin}. One warp: lane l holds bins 8l .. 8l + 7, a suffix scan
// over the lanes finds the lane, that lane walks its 8 bins. Every warp runs it on the same counts (no barrier to
// broadcast the answer).
__device__ int2 find_bin(const int* hist, int take) {
  const int lane = threadIdx.x % 32;
  const int4 lo = reinterpret_cast<const int4*>(hist)[2 * lane], hi = reinterpret_cast<const int4*>(hist)[2 * lane + 1];
  const int h[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  int sum = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) sum += h[j];
  int suffix = sum;  // bins >= 8 lane
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const int y = __shfl_down_sync(0xffffffffu, suffix, o);
    if (lane + o < 32) suffix += y;
  }
  const int L = 31 - __clz(int(__ballot_sync(0xffffffffu, suffix >= take)));
  int bin = 0, need = 0, above = suffix - sum;
  bool found = false;
#pragma unroll
  for (int j = 7; j >= 0; --j) {
    if (!found && above + h[j] >= take) bin = 8 * lane + j, need = take - above, found = true;
    above += h[j];
  }
  return make_int2(__shfl_sync(0xffffffffu, bin, L), __shfl_sync(0xffffffffu, need, L));
}

// Exclusive prefix sum of v over the CTA (blockDim.x <= 1024 threads, a multiple of 32); *total gets the sum. Every
// thread calls it once per kernel (warp_sums is not reused).
__device__ uint64_t block_exclusive_scan(uint64_t v, uint64_t* total) {
  __shared__ uint64_t warp_sums[kTopkMaxWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, n_warps = blockDim.x / 32;
  uint64_t x = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const uint64_t y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    uint64_t w = lane < n_warps ? warp_sums[lane] : 0;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const uint64_t y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    if (lane < n_warps) warp_sums[lane] = w;  // inclusive warp totals
  }
  __syncthreads();
  *total = warp_sums[n_warps - 1];
  return (warp > 0 ? warp_sums[warp - 1] : 0) + x - v;
}

struct SelectRule {
  int block, init_blocks, local_blocks, k_sel;
};

// The forced blocks of a query at block qb: [0, a_hi) and [b_lo, qb]; n_forced of them, n_cand others, and `take`:
// how many of the others are chosen.
struct Forced {
  int qb, a_hi, b_lo, n_forced, n_cand, take;
  __device__ Forced(const SelectRule& rule, int qb_) : qb(qb_) {
    const int nb = qb + 1;
    a_hi = std::min(rule.init_blocks, nb), b_lo = std::max(0, qb - rule.local_blocks);
    n_forced = a_hi + (qb - b_lo + 1) - std::max(0, a_hi - b_lo);  // |[0, a_hi) u [b_lo, qb]|
    n_cand = nb - n_forced;
    take = std::min(std::max(0, rule.k_sel - n_forced), n_cand);
  }
  __device__ bool operator()(int b) const { return b < a_hi || b >= b_lo; }  // b <= qb always
};

// The CTA's choice among entries 0 .. n - 1 of keys pk (any 2-byte alignment): every entry with forced(i), and the
// `take` entries with cand(i) of the largest keys, ties to the lower entry (take <= the candidates). Thread i owns
// the contiguous entries [i S, i S + S) (S a multiple of 8), so thread order is entry order and a thread reads its
// keys as 16-byte vectors of 8; a fixed 5 barriers whatever n: zero the histograms, two histogram passes (high byte,
// then the low byte under the chosen high byte), one scan. emit(pos, i, key) for each chosen entry, ascending, pos
// its rank among them, while pos < cap. Returns how many are chosen (all of them, past cap too). Every thread of the
// CTA calls it, once per kernel.
template <class IsForced, class IsCand, class Emit>
__device__ int select_top(const uint16_t* __restrict__ pk, int n, int take, int cap, IsForced forced, IsCand cand,
                          Emit emit) {
  __shared__ __align__(16) int hist[2][256];
  const int S = ((n + int(blockDim.x) - 1) / int(blockDim.x) + 7) / 8 * 8;  // keys per thread
  const int seg0 = int(threadIdx.x) * S, seg1 = std::min(seg0 + S, n);
  const int warp0 = int(threadIdx.x / 32) * 32 * S;  // the warp's first key: loops bounded by it stay warp-uniform
  const bool vec = reinterpret_cast<uintptr_t>(pk) % 16 == 0;

  // f(c, k) for the thread's chunks of 8 keys c = 0, 8, .. < S (k: keys seg0 + c ..., 0 from n on); uniform: stop
  // only where the whole warp is past n (the histograms' warp collectives), else at the segment's end. (Keeping a
  // decode CTA's 16 keys a thread in registers across the four passes, not reloading them from L1, bought nothing
  // measurable, so the reloads are not what bounds the kernel; docs/performance.md, "Measured reasons behind kernel
  // choices".)
  auto chunks = [&](bool uniform, auto f) {
    const int c_end = uniform ? std::min(S, n - warp0) : seg1 - seg0;
    for (int c = 0; c < c_end; c += 8) {
      uint32_t k[8];
      load_keys8(pk, seg0 + c, n, vec, k);
      f(c, k);
    }
  };

  // the take-th largest candidate key (thr) and how many candidates equal to it are taken (n_eq)
  int thr = 0x10000, n_eq = 0;  // take == 0: no candidate passes
  if (take > 0) {
    // h[bin_of(key)] += 1 over the candidates of the thread's segment (bin -1: not counted), then a barrier
    auto histogram = [&](int* h, auto bin_of) {
      chunks(true, [&](int c, const uint32_t(&k)[8]) {
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const int b = seg0 + c + e;
          hist_add(h, b < n && cand(b) ? bin_of(k[e]) : -1);
        }
      });
      __syncthreads();
    };
    for (int i = threadIdx.x; i < 2 * 256; i += blockDim.x) hist[i / 256][i % 256] = 0;
    __syncthreads();
    histogram(hist[0], [](uint32_t key) { return int(key >> 8); });
    const int2 hi = find_bin(hist[0], take);  // {high byte, still needed from it}
    histogram(hist[1], [&](uint32_t key) { return int(key >> 8) == hi.x ? int(key & 255) : -1; });
    const int2 lo = find_bin(hist[1], hi.y);
    thr = (hi.x << 8) | lo.x;
    n_eq = lo.y;
  }

  // emit ascending: forced, candidates above thr, and the first n_eq candidates equal to thr (lower entry wins).
  // Per thread: above = forced or above thr, eq = candidates equal to thr; one scan of both counts (eq in the high
  // word) gives the thread's rank among the ties and its output offset.
  auto each_key = [&](auto f) {  // f(i, key) for the entries of the thread's segment, ascending
    chunks(false, [&](int c, const uint32_t(&k)[8]) {
#pragma unroll
      for (int e = 0; e < 8; ++e)
        if (seg0 + c + e < seg1) f(seg0 + c + e, int(k[e]));
    });
  };
  int above = 0, eq = 0;
  each_key([&](int b, int key) {
    if (forced(b)) ++above;
    else if (cand(b) && key > thr) ++above;
    else if (cand(b) && key == thr) ++eq;
  });
  uint64_t total;
  const uint64_t before = block_exclusive_scan(uint64_t(eq) << 32 | uint64_t(above), &total);
  const int eq_before = int(before >> 32), eq_taken = std::min(std::max(n_eq - eq_before, 0), eq);
  int pos = int(before & 0xffffffffu) + std::min(eq_before, n_eq);  // chosen entries of the threads before this one
  if (above + eq_taken > 0 && pos < cap) {
    int eq_rank = eq_before;
    each_key([&](int b, int key) {
      const bool f = forced(b), c = !f && cand(b), tie = c && key == thr;
      if (f || (c && key > thr) || (tie && eq_rank < n_eq)) {
        if (pos < cap) emit(pos, b, key);
        ++pos;
      }
      eq_rank += tie;
    });
  }
  return int(total & 0xffffffffu) + std::min(int(total >> 32), n_eq);
}

// pooled: [nq, G, nbs] keys; blocks: [T, G, k_sel] (absolute query rows); scores_out: [T, G, n_blocks] or nullptr.
// Grid (nq, G), blockDim.x a multiple of 32 in [kTopkMinThreads, kTopkMaxThreads] (topk_threads). all-chosen
// queries (every causal block chosen: the sub-chunk may have skipped scoring) never read their keys.
// Block indices are int: validate bounds nb by 65535 x 127.
__global__ void __launch_bounds__(kTopkMaxThreads)
    topk_kernel(Chunk ch, SelectRule rule, const uint16_t* __restrict__ pooled, int64_t nbs,
                int32_t* __restrict__ blocks, float* __restrict__ scores_out, int64_t n_blocks) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t tl = blockIdx.x;
  const int g = blockIdx.y;
  const int64_t t = ch.t0 + tl;
  const Forced forced(rule, int((ch.pos0 + t) / rule.block));
  const int nb = forced.qb + 1;
  const uint16_t* pk = pooled + (tl * ch.G + g) * nbs;
  int32_t* out = blocks + (t * ch.G + g) * rule.k_sel;

  if (scores_out) {
    float* so = scores_out + (t * ch.G + g) * n_blocks;
    for (int64_t b = threadIdx.x; b < nb; b += blockDim.x)
      so[b] = forced(int(b)) ? INFINITY : __uint_as_float(uint32_t(pk[b]) << 16);
    for (int64_t b = nb + threadIdx.x; b < n_blocks; b += blockDim.x) so[b] = -INFINITY;
  }
  if (forced.take ==
      forced.n_cand) {  // every causal block is chosen (e.g. qb + 1 <= k_sel), the first k_sel if forced exceed it
    for (int i = threadIdx.x; i < rule.k_sel; i += blockDim.x) out[i] = i < nb ? i : -1;
    return;  // CTA-uniform
  }
  const int n_out = select_top(
      pk, nb, forced.take, rule.k_sel, forced, [&](int b) { return !forced(b); },
      [&](int pos, int b, int) { out[pos] = b; });
  for (int i = std::min(n_out, rule.k_sel) + threadIdx.x; i < rule.k_sel; i += blockDim.x) out[i] = -1;
}

// ---- split top-k (sub-chunks of <= kTopkSplitRows queries past kTopkSplitBlocks blocks: decode). One CTA per
// (query, group) covers every key of a query in the kernel above, so a decode step at 2M tokens (32K blocks) ran two
// CTAs over 16K keys each, the longest of its selection's kernels. Exact in two steps: each segment of kTopkSegment
// blocks chooses its own top `take` candidates, then one CTA chooses among the segments' choices. A candidate among
// the query's top `take` is among its segment's top `take` (fewer than take candidates of the segment rank above
// it), and the segments' choices, listed segment after segment in ascending block order, keep the tie rule (the
// lower block wins).
// Where the two launches pay: at 16K blocks (1M tokens) the second launch costs more than the split saves, at 32K
// (2M tokens) the split is faster, so the threshold sits between (docs/performance.md, "Measured reasons behind
// kernel choices").
constexpr int64_t kTopkSplitBlocks = 20480;
constexpr int kTopkSegThreads = int(kTopkSegment / 8);  // 8 keys a thread

// Grid (nq, G, nseg), kTopkSegThreads threads. cand_ids / cand_keys: [nq, G, nseg, kTopkCandMax], the segment's
// chosen blocks ascending then -1 (key 0) to the end of its slots.
__global__ void __launch_bounds__(kTopkSegThreads)
    topk_segment_kernel(Chunk ch, SelectRule rule, const uint16_t* __restrict__ pooled, int64_t nbs,
                        int32_t* __restrict__ cand_ids, uint16_t* __restrict__ cand_keys) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t tl = blockIdx.x, slot = ((tl * ch.G + blockIdx.y) * gridDim.z + blockIdx.z) * kTopkCandMax;
  const Forced forced(rule, int((ch.pos0 + ch.t0 + tl) / rule.block));
  const int s0 = int(blockIdx.z) * int(kTopkSegment), s1 = std::min(s0 + int(kTopkSegment), forced.qb + 1);
  int32_t* ids = cand_ids + slot;
  uint16_t* keys = cand_keys + slot;
  int n_out = 0;
  if (s0 < s1 && forced.take < forced.n_cand) {  // CTA-uniform; else topk_merge_kernel reads no candidate
    auto ov = [](int a0, int a1, int b0, int b1) { return std::max(0, std::min(a1, b1) - std::max(a0, b0)); };
    const int n_forced = ov(s0, s1, 0, forced.a_hi) + ov(s0, s1, forced.b_lo, forced.qb + 1) -
                         ov(s0, s1, std::max(0, forced.b_lo), std::min(forced.a_hi, forced.qb + 1));
    const int take = std::min(forced.take, (s1 - s0) - n_forced);
    n_out = select_top(
        pooled + (tl * ch.G + blockIdx.y) * nbs + s0, s1 - s0, take, kTopkCandMax, [](int) { return false; },
        [&](int i) { return !forced(s0 + i); },
        [&](int pos, int i, int key) { ids[pos] = s0 + i, keys[pos] = uint16_t(key); });
  }
  for (int i = n_out + threadIdx.x; i < kTopkCandMax; i += blockDim.x) ids[i] = -1, keys[i] = 0;
}

// Grid (nq, G), threads for nseg * kTopkCandMax entries (topk_threads). blocks: [T, G, k_sel]: the forced blocks
// [0, a_hi), the chosen candidates, the forced [b_lo, qb], -1 padding: ascending, as topk_kernel writes them.
__global__ void __launch_bounds__(kTopkMaxThreads)
    topk_merge_kernel(Chunk ch, SelectRule rule, int nseg, const int32_t* __restrict__ cand_ids,
                      const uint16_t* __restrict__ cand_keys, int32_t* __restrict__ blocks) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t tl = blockIdx.x, t = ch.t0 + tl;
  const Forced forced(rule, int((ch.pos0 + t) / rule.block));
  const int nb = forced.qb + 1;
  int32_t* out = blocks + (t * ch.G + blockIdx.y) * rule.k_sel;
  if (forced.take == forced.n_cand) {  // as topk_kernel
    for (int i = threadIdx.x; i < rule.k_sel; i += blockDim.x) out[i] = i < nb ? i : -1;
    return;  // CTA-uniform
  }
  const int64_t slot = (tl * ch.G + blockIdx.y) * int64_t(nseg) * kTopkCandMax;
  const int32_t* ids = cand_ids + slot;
  const int n_sel = select_top(
      cand_keys + slot, nseg * kTopkCandMax, forced.take, std::max(0, rule.k_sel - forced.a_hi),
      [](int) { return false; }, [&](int i) { return ids[i] >= 0; },
      [&](int pos, int i, int) { out[forced.a_hi + pos] = ids[i]; });
  const int lo = std::max(forced.b_lo, forced.a_hi), n_local = forced.qb + 1 - lo;  // the forced blocks past a_hi
  for (int i = threadIdx.x; i < forced.a_hi + n_local; i += blockDim.x) {
    const int pos = i < forced.a_hi ? i : forced.a_hi + n_sel + (i - forced.a_hi);
    if (pos < rule.k_sel) out[pos] = i < forced.a_hi ? i : lo + (i - forced.a_hi);
  }
  for (int i = forced.a_hi + n_sel + n_local + threadIdx.x; i < rule.k_sel; i += blockDim.x) out[i] = -1;
}

// Threads per topk CTA: enough that each holds at most `per` keys of the sub-chunk's last query (nbc blocks), a
// power of two in [kTopkMinThreads, kTopkMaxThreads]. A grid of few CTAs (decode: nq x G = 2 .. 8) takes 16 keys a
// thread, up to 1024 threads, so one CTA covers 16K blocks in one 16-byte vector pair per thread; many CTAs (prefill)
// take 64 a thread, and the grid fills the GPU.
int topk_threads(int64_t nbc, int64_t ctas) {
  const int64_t per = ctas >= kTopkManyCtas ? 64 : 16;
  int n = kTopkMinThreads;
  while (n < kTopkMaxThreads && n * per < nbc) n *= 2;
  return n;
}

// The split top-k's candidate slots ([min(nq, kTopkSplitRows), G, nseg, kTopkCandMax] ids and keys), when it is used.
struct TopkSplit {
  int32_t* ids = nullptr;
  uint16_t* keys = nullptr;
  int64_t nseg = 0;
};
// always: whatever nbc (the tests' entry, for the split's edges at any size)
bool use_split_topk(const Chunk& ch, const SelectRule& rule, int64_t nbc, const float* scores, const TopkSplit& sp,
                    bool always = false) {
  return sp.ids && !scores && ch.nq <= kTopkSplitRows && (always || nbc > kTopkSplitBlocks) &&
         rule.k_sel <= kTopkCandMax && sp.nseg == (nbc + kTopkSegment - 1) / kTopkSegment;
}

cudaError_t launch_topk(const Chunk& ch, const SelectRule& rule, int64_t nbc, const uint16_t* pooled, int64_t nbs,
                        int32_t* blocks, float* scores, int64_t n_blocks, const TopkSplit& sp, Stream s,
                        bool split_always = false) {
  if (use_split_topk(ch, rule, nbc, scores, sp, split_always)) {
    const dim3 grid(unsigned(ch.nq), unsigned(ch.G), unsigned(sp.nseg));
    const cudaError_t e =
        launch_pdl(topk_segment_kernel, grid, kTopkSegThreads, 0, s, ch, rule, pooled, nbs, sp.ids, sp.keys);
    if (e != cudaSuccess) return e;
    // <= 8 of the nseg * kTopkCandMax entries a thread
    return launch_pdl(topk_merge_kernel, dim3(unsigned(ch.nq), unsigned(ch.G)),
                      topk_threads(2 * sp.nseg * kTopkCandMax, 1), 0, s, ch, rule, int(sp.nseg), sp.ids, sp.keys,
                      blocks);
  }
  const int threads = topk_threads(nbc, ch.nq * ch.G);
  return launch_pdl(topk_kernel, dim3(unsigned(ch.nq), unsigned(ch.G)), threads, 0, s, ch, rule, pooled, nbs, blocks,
                    scores, n_blocks);
}

// The workspace carve-up is gpu/launch_geometry.hpp's, which the runner's memory plan uses too.
using Layout = SelectLayout;
Layout layout(int64_t rows, int64_t n2, int64_t nb, int H, int G) { return select_layout(rows, n2, nb, H, G); }

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// SMs of the current device (read once: the runner and the tests use one device).
int64_t sm_count() {
  static const int n = [] {
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return 132;  // an H200's, should the query fail (it only steers the grid shape)
    return v;
  }();
  return n;
}

template <class Op>
void validate(const SelectArgs& a, const Op& op, int64_t n1, int64_t n2, int64_t nb) {
  ARG_CHECK(a.hd == kHd && a.G > 0 && a.H == kRows * a.G, op, "the kernels are built for hd = 128 and H = 16 G");
  ARG_CHECK(a.kernel == 32 && a.stride == 16 && a.block == 64, op,
            "the kernels are built for the released rules: K1 kernel 32, stride 16, blocks of 64");
  ARG_CHECK(a.k_sel > 0, op, "k_sel must be positive");
  ARG_CHECK(a.init_blocks >= 0 && a.local_blocks >= 0, op, "init_blocks and local_blocks must be >= 0");
  ARG_CHECK(a.tau > 0.f, op, "tau must be positive");
  ARG_CHECK(a.k1_cap >= n1 && a.k2_cap >= n2, op, "k1_cap / k2_cap below the K1 / K2 windows of pos0 + T keys");
  ARG_CHECK(a.q && a.blocks && a.workspace && (n1 == 0 || a.k1) && (n2 == 0 || a.k2), op,
            "null q, k1, k2, blocks or workspace");
  ARG_CHECK(aligned16(a.q) && aligned16(a.k1) && aligned16(a.k2) && aligned16(a.workspace), op,
            "q, k1, k2 and the workspace must be 16-byte aligned");
  ARG_CHECK(a.ldq % 8 == 0 && a.ldq >= int64_t(a.H) * kHd, op, "ldq must be a multiple of 8 and >= H * hd");
  ARG_CHECK(!a.scores || a.n_blocks >= nb, op, "n_blocks is below the causal blocks of the last query");
  ARG_CHECK(a.G <= 65535 && (nb + kPoolBlocksFine - 1) / kPoolBlocksFine <= 65535, op,
            "grid too large (G, or block splits)");
}

}  // namespace

size_t select_blocks_workspace(int64_t T_max, int64_t len_max, int H, int G, int kernel, int stride) {
  const std::string op =
      op_desc("select_blocks_workspace",
              {{"T_max", T_max}, {"len_max", len_max}, {"H", H}, {"G", G}, {"kernel", kernel}, {"stride", stride}});
  ARG_CHECK(T_max > 0 && len_max > 0 && H > 0 && G > 0 && kernel > 0 && stride > 0, op, "arguments must be positive");
  return select_workspace_bytes(T_max, len_max, H, G, kernel, stride);
}

namespace {

// The call's description in error messages (built only when one is raised).
std::string op_text_of(const SelectArgs& a) {
  return op_desc("select_blocks", {{"T", a.T},
                                   {"pos0", a.pos0},
                                   {"H", a.H},
                                   {"G", a.G},
                                   {"hd", a.hd},
                                   {"kernel", a.kernel},
                                   {"stride", a.stride},
                                   {"block", a.block},
                                   {"k_sel", a.k_sel},
                                   {"k1_cap", a.k1_cap},
                                   {"k2_cap", a.k2_cap},
                                   {"n_blocks", a.n_blocks},
                                   {"workspace_bytes", int64_t(a.workspace_bytes)}});
}

// The dynamic shared-memory limits of the mma.sync kernels, raised once per process.
template <class Op>
void raise_smem_limits(const Op& op) {
  static bool attrs = false;
  if (attrs) return;
  CUDA_CHECK(cudaFuncSetAttribute(lse_partial_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kTileSmem)), op);
  CUDA_CHECK(cudaFuncSetAttribute(score_pool_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kPoolSmem)), op);
  attrs = true;
}

// Queries per sub-chunk: as many as the workspace holds (n2 K2 windows and nb blocks at the call's last query).
template <class Op>
int64_t sub_chunk_rows(const SelectArgs& a, int64_t n2, int64_t nb, const Op& op) {
  const size_t pq = select_per_query_bytes(n2, nb, a.H, a.G);
  int64_t rows = std::min<int64_t>({int64_t(a.workspace_bytes / pq), a.T, int64_t(0x7fffffff)});
  while (rows > 0 && layout(rows, n2, nb, a.H, a.G).total > a.workspace_bytes) --rows;
  ARG_CHECK(rows >= 1, op, "the workspace holds not even one query: size it with select_blocks_workspace");
  return rows;
}

}  // namespace

void select_blocks(const SelectArgs& a, Stream s) {
  const auto op = [&] { return op_text_of(a); };
  ARG_CHECK(a.T >= 0 && a.pos0 >= 0, op, "T and pos0 must be >= 0");
  if (a.T == 0) return;
  const int kernel2 = 4 * a.kernel, stride2 = 4 * a.stride;
  const int64_t len = a.pos0 + a.T;
  const int64_t n1 = n_windows(len, a.kernel, a.stride), n2 = n_windows(len, kernel2, stride2);
  const int64_t nb = (len - 1) / a.block + 1;  // causal blocks of the last query
  validate(a, op, n1, n2, nb);
  raise_smem_limits(op);
  const int64_t rows = sub_chunk_rows(a, n2, nb, op);
  const Layout L = layout(rows, n2, nb, a.H, a.G);
  // calls of <= 2 queries (decode) may spread each query over up to 4x the CTAs, down to one 128-key tile each
  // (launch_geometry.hpp sizes their partials), where those CTAs still fit one wave: a 64K-key decode step's 4 LSE and
  // 18 score CTAs become 16 and 68, a 1M-key step's 64 LSE CTAs 256, and each CTA's chain of tiles shortens. Past one
  // wave the coarser grid is faster: a fine CTA pays the same fixed latencies (queries, then keys, from memory) for
  // less work (docs/performance.md, "Measured reasons behind kernel choices"). Whether the finer grids may be taken
  // is decided by the call's T, not the sub-chunk's size, so that a smaller workspace never changes a prefill
  // query's grids or engine, hence its bits (a layout of <= 2 rows holds coarse splits too). Which finer grid a call
  // of 2 queries takes follows its sub-chunk's keys: split into 1-query sub-chunks (a workspace of one query), the
  // first query may take another LSE split width, so other fp32 sums, than in one sub-chunk of 2.
  const bool few = a.T <= kSelectFineRows;
  const bool wg =
      a.engine == SelectArgs::Engine::wgmma || (a.engine == SelectArgs::Engine::automatic && !few && wgmma_available());
  ARG_CHECK(!wg || wgmma_available(), op, "engine wgmma needs an sm_90a build on a compute capability 9.0 GPU");
  // automatic: the finest grid whose CTAs are all resident at once (kSelectCtasPerSm an SM, as the launch bounds and
  // shared memory allow), since past one wave a finer CTA pays the same fixed latencies for less work: whether a
  // finer grid of ctas_per_group CTAs a kv group is taken
  const auto fine = [&](int64_t ctas_per_group) {
    if (!few || a.geometry == SelectArgs::Geometry::coarse) return false;
    return a.geometry == SelectArgs::Geometry::fine || ctas_per_group * a.G <= kSelectCtasPerSm * sm_count();
  };
  // K2 windows a decode LSE CTA takes: 128, 256 or 512 (one, two or four tiles), the finest that fits one wave (1M
  // keys: 128, 256 CTAs; 2M: 256), where one fixed 512 left a 1M-key layer on 64 CTAs walking four tiles each in
  // turn (docs/performance.md, "Measured reasons behind kernel choices")
  const auto lse_split = [&](int64_t n2c) {
    for (int w = kSelectSplitFine; w < kSelectSplit; w *= 2)
      if (fine((n2c + w - 1) / w)) return w;
    return kSelectSplit;
  };
  auto* base = static_cast<unsigned char*>(a.workspace);
  auto* part = reinterpret_cast<float2*>(base + L.part);
  auto* lse = reinterpret_cast<float*>(base + L.lse);
  auto* pooled = reinterpret_cast<uint16_t*>(base + L.pooled);
  const auto* k1 = reinterpret_cast<const bf16*>(a.k1);
  const auto* k2 = reinterpret_cast<const bf16*>(a.k2);
  const SelectRule rule{a.block, a.init_blocks, a.local_blocks, a.k_sel};

  for (int64_t t0 = 0; t0 < a.T; t0 += rows) {
    const int64_t nq = std::min<int64_t>(rows, a.T - t0), last = a.pos0 + t0 + nq;  // last = keys the chunk sees
    const Chunk ch{reinterpret_cast<const bf16*>(a.q), a.ldq, a.pos0, t0, nq, a.G, a.H, a.tau * kLog2e};
    const int64_t n1c = n_windows(last, a.kernel, a.stride), n2c = n_windows(last, kernel2, stride2);
    const int64_t nbc = (last - 1) / a.block + 1;
    const unsigned qtiles = unsigned((nq + kQT - 1) / kQT);
    auto at = [&](const char* k) {
      return op() + " at queries from " + std::to_string(t0) + ", " + std::to_string(nq) + " of them: " + k;
    };
    // scores matter only where some query chooses among its blocks (or the scores are asked for)
    if (nbc > a.k_sel || a.scores) {
      const int split_w = lse_split(n2c);
      if (n2c > 0) {
        const dim3 grid(qtiles, unsigned((n2c + split_w - 1) / split_w), unsigned(a.G));
        CUDA_CHECK(wg ? launch_lse_partial_wg(ch, k2, a.k2_cap, n2c, kernel2, stride2, split_w, L.nsplit, part, s)
                      : launch_pdl(lse_partial_kernel, grid, kThreads, kTileSmem, s, ch, k2, a.k2_cap, n2c, kernel2,
                                   stride2, split_w, L.nsplit, part),
                   [&] { return at(wg ? "lse_partial_wg" : "lse_partial"); });
      }
      // the wgmma kernel reads whole K1 tiles: with no window yet (scores asked for at the first keys) the
      // mma.sync kernel writes the zero scores
      const bool wg_score = wg && n1c > 0;
      // decode's score kernel combines the partials itself (a tile of <= 2 queries: few), after lse_partial
      const bool fused = few && !wg_score && n2c > 0;
      if (!fused)
        CUDA_CHECK(launch_pdl(lse_combine_kernel, unsigned((nq * a.H + kCombineRows - 1) / kCombineRows),
                              kCombineRows * 32, 0, s, ch, kernel2, stride2, split_w, L.nsplit, part, lse),
                   [&] { return at("lse_combine"); });
      const LseSource src{fused ? nullptr : lse, part, kernel2, stride2, split_w, L.nsplit};
      const int pool_blocks = fine((nbc + kPoolBlocksFine - 1) / kPoolBlocksFine) ? kPoolBlocksFine
                              : wg_score                                          ? kWgPoolBlocks
                                                                                  : kPoolBlocks;
      const dim3 grid(qtiles, unsigned((nbc + pool_blocks - 1) / pool_blocks), unsigned(a.G));
      CUDA_CHECK(wg_score ? launch_score_pool_wg(ch, k1, a.k1_cap, n1c, a.kernel, a.stride, a.block, pool_blocks, lse,
                                                 pooled, L.nbs, s)
                          : launch_pdl(score_pool_kernel, grid, kThreads, kPoolSmem, s, ch, k1, a.k1_cap, n1c, a.kernel,
                                       a.stride, a.block, pool_blocks, src, pooled, L.nbs),
                 [&] { return at(wg_score ? "score_pool_wg" : "score_pool"); });
    }
    const TopkSplit sp{reinterpret_cast<int32_t*>(base + L.cand_ids), reinterpret_cast<uint16_t*>(base + L.cand_keys),
                       (nbc + kTopkSegment - 1) / kTopkSegment};
    CUDA_CHECK(launch_topk(ch, rule, nbc, pooled, L.nbs, a.blocks, a.scores, a.n_blocks, sp, s),
               [&] { return at("topk"); });
  }
}

}  // namespace salasim::gpu

namespace salasim::gpu::detail {

void topk_for_test(const TopkArgs& a, Stream s) {
  const auto op = [&] {
    return op_desc("topk_for_test", {{"T", a.T},
                                     {"pos0", a.pos0},
                                     {"G", a.G},
                                     {"nbs", a.nbs},
                                     {"block", a.block},
                                     {"k_sel", a.k_sel},
                                     {"n_blocks", a.n_blocks}});
  };
  ARG_CHECK(a.T > 0 && a.pos0 >= 0 && a.G > 0 && a.G <= 65535 && a.T <= 0x7fffffff && a.block > 0, op,
            "T, G, block must be positive (T, G within a grid) and pos0 >= 0");
  ARG_CHECK(a.k_sel > 0 && a.init_blocks >= 0 && a.local_blocks >= 0, op,
            "k_sel must be positive, init_blocks and local_blocks >= 0");
  const int64_t nbc = (a.pos0 + a.T - 1) / a.block + 1;
  ARG_CHECK(nbc <= 0x7fffffff - 8 * kTopkMaxThreads && a.nbs >= nbc && (!a.scores || a.n_blocks >= nbc), op,
            "nbs and n_blocks must cover the blocks of the last query (and those fit an int)");
  ARG_CHECK(a.keys && a.blocks, op, "null keys or blocks");
  const Chunk ch{nullptr, 0, a.pos0, 0, a.T, a.G, 0, 0.f};
  // the split top-k's candidate slots, as select_blocks' workspace holds them (used where select_blocks would)
  TopkSplit sp;
  sp.nseg = (nbc + kTopkSegment - 1) / kTopkSegment;
  const size_t n_cand = size_t(std::min<int64_t>(a.T, kTopkSplitRows) * a.G * sp.nseg) * kTopkCandMax;
  const bool split = a.split != TopkArgs::Split::never;
  Buffer<int32_t> ids(split ? n_cand : 0, "split top-k candidate ids");
  Buffer<uint16_t> keys(split ? n_cand : 0, "split top-k candidate keys");
  sp.ids = ids.get(), sp.keys = keys.get();
  CUDA_CHECK(launch_topk(ch, SelectRule{a.block, a.init_blocks, a.local_blocks, a.k_sel}, nbc, a.keys, a.nbs, a.blocks,
                         a.scores, a.n_blocks, sp, s, a.split == TopkArgs::Split::always),
             op);
  if (split) synchronize();  // the candidate buffers are freed on return
}

}  // namespace salasim::gpu::detail
