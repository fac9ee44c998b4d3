// select_blocks on the GPU (docs/spec.md §4.3-4.4): stage-1 block scores, max-pool, forced blocks and an exact top-k,
// the function of reference/select_blocks.cpp. Queries run in sub-chunks that fit the workspace; per sub-chunk of nq
// queries (n1 / n2 = K1 / K2 windows complete at its last query):
//
//  1. lse_partial  grid (ceil(nq/8), ceil(n2/512), G), 256 threads, 43,008 B static smem. A CTA takes 8 queries
//     (one per warp; a query's 16 heads of the group are one 16-row WMMA tile, held as 8 bf16 A fragments) against
//     512 K2 windows in 4 smem tiles of 128; logits on tensor cores (bf16 x bf16 -> fp32), then per head an online
//     max / sum of exp2 over the windows the query sees, one (max, sum) pair per (query, head, split).
//  2. lse_combine  one thread per (query, head): LSE2 in log2 units over the splits the query sees; -inf when it
//     sees no K2 window (its visible K1 windows then score +inf, as in the reference).
//  3. score        grid (ceil(nq/8), ceil(n1/512), G), the same tiling over K1: s[t, g, c] = sum over the 16 heads of
//     exp2(tau log2(e) q_h.K1_c - LSE2_h) in fp32, rounded once to bf16, written for the windows the query sees
//     (c < n1v(p)) only: the pooling reads no other.
//  4. select       grid (nq, G), 256 threads: max-pool into blocks b <= qb (bf16 bit patterns of non-negative scores
//     order like the values), forced blocks, the exact top-(k_sel - forced) by a two-pass 8-bit radix select on the
//     16-bit keys, ties to the lower block index; ids ascending, -1 padding; the optional score row.
//
// Cost: per query and kv group, (n1 + n2) windows x 16 heads x 256 FLOP on tensor cores and 16 (n1 + n2) exp2, i.e.
// docs/performance.md's 2560 N^2 FLOP + 10 N^2 exp over an N-token prompt and 8 layers. The grid's x runs over query tiles, so
// the CTAs resident at once share a few 512-window key splits: compressed keys come from HBM about once per sub-chunk
// (40 MiB per kv head at 2M keys) and from L2 otherwise, ~130 FLOP per HBM byte: tensor- and exp-bound, not
// memory-bound. The epilogue (fragment -> smem -> exp2 -> head sum) costs about as much issue time as the MMAs, so
// expect a fraction (1/4 .. 1/2) of the ~660 TFLOP/s mma.sync peak. Top-k reads a pooled row of n/64 16-bit keys
// three times: small beside the scoring.
//
// Workspace, per query of a sub-chunk (n1, n2 windows and nb blocks of the whole call):
//   H * ceil(n2/512) * 8 (LSE partials) + H * 4 (LSE2) + G * round8(n1) * 2 (bf16 scores) + G * round8(nb) * 2 (pooled)
// each section 256-byte aligned. select_blocks_workspace(T_max, len_max, ...) sizes min(T_max, 256 MiB / per-query)
// queries (at least one) for len_max keys: at 2M keys (H = 32, G = 2) 671,872 B per query, 399 queries, 256 MiB;
// at 64K keys 21,120 B per query; at 16K keys and T_max = 16384, 90 MB. select_blocks fits as many queries per
// sub-chunk as the workspace it is given holds.
#include <cuda_bf16.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gpu/check.cuh"
#include "gpu/select_blocks.hpp"
#include "model/runner_plan.hpp"
#include "model/windows.hpp"

namespace salasim::gpu {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kHd = 128;        // head dim the kernels are built for
constexpr int kRows = 16;       // query heads per kv group: one WMMA M tile per query
constexpr int kQT = 8;          // queries per CTA, one per warp
constexpr int kThreads = kQT * 32;
constexpr int kKeyTile = 128;   // compressed keys per shared-memory tile
constexpr int kSplit = kSelectSplit;  // compressed keys per CTA (4 tiles)
constexpr int kLdT = kHd + 8;   // bf16 row stride of the tile: +16 B spreads fragment rows over the banks
constexpr float kLog2e = 1.4426950408889634f;

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major>;
using FragBt = wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major>;  // K^T from key rows
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

__host__ __device__ inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Shapes and positions of one sub-chunk of queries: chunk-local query tl is absolute query t0 + tl at position
// pos0 + t0 + tl.
struct Chunk {
  const __nv_bfloat16* q;  // [T, H*hd], row stride ldq
  int64_t ldq;
  int64_t pos0, t0, nq;
  int G, H;
  float sc_log2;  // tau * log2(e): logits in log2 units
};

// Copies 16-byte pieces of `rows` rows x kHd bf16 into the shared tile (row stride kLdT). src(r) is row r's source,
// nullptr for a row to zero-fill.
template <class Src>
__device__ void load_tile(__nv_bfloat16* tile, int rows, Src src) {
  constexpr int kChunks = kHd / 8;
  for (int i = threadIdx.x; i < rows * kChunks; i += blockDim.x) {
    const int r = i / kChunks, ch = i % kChunks;
    const __nv_bfloat16* s = src(r);
    uint4 v = make_uint4(0, 0, 0, 0);
    if (s) v = *reinterpret_cast<const uint4*>(s + ch * 8);
    *reinterpret_cast<uint4*>(tile + r * kLdT + ch * 8) = v;
  }
}

// The CTA's 8 queries (x 16 heads of group g) into registers: warp w gets query tq0 + w as 8 A fragments (zeros
// for a query past the sub-chunk). Uses `tile` as staging; ends with a barrier, so the tile is free afterwards.
__device__ void load_queries(const Chunk& ch, int64_t tq0, int g, __nv_bfloat16* tile, FragA (&qa)[kHd / 16]) {
  load_tile(tile, kQT * kRows, [&](int r) -> const __nv_bfloat16* {
    const int64_t tl = tq0 + r / kRows;
    if (tl >= ch.nq) return nullptr;
    return ch.q + (ch.t0 + tl) * ch.ldq + (int64_t(g) * kRows + r % kRows) * kHd;
  });
  __syncthreads();
  const int warp = threadIdx.x / 32;
  for (int k = 0; k < kHd / 16; ++k) wmma::load_matrix_sync(qa[k], tile + warp * kRows * kLdT + k * 16, kLdT);
  __syncthreads();
}

// Compressed keys e0 .. e0 + kKeyTile - 1 of one kv head (ck: [n_avail, hd] rows), zero past n_avail.
__device__ void load_keys(__nv_bfloat16* tile, const __nv_bfloat16* ck, int64_t e0, int64_t n_avail) {
  load_tile(tile, kKeyTile, [&](int r) -> const __nv_bfloat16* {
    return e0 + r < n_avail ? ck + (e0 + r) * kHd : nullptr;
  });
}

// logits 16 heads x 16 keys (keys j*16 .. j*16+15 of the tile) of the warp's query, fp32.
__device__ void tile_logits(FragC& acc, const FragA (&qa)[kHd / 16], const __nv_bfloat16* tile, int j) {
  wmma::fill_fragment(acc, 0.f);
  for (int k = 0; k < kHd / 16; ++k) {
    FragBt kb;
    wmma::load_matrix_sync(kb, tile + j * 16 * kLdT + k * 16, kLdT);
    wmma::mma_sync(acc, qa[k], kb, acc);
  }
}

// Position of the last query a CTA holds (its visibility bounds the CTA's useful key range).
__device__ int64_t last_position(const Chunk& ch, int64_t tq0) {
  const int64_t tl_last = (tq0 + kQT < ch.nq ? tq0 + kQT : ch.nq) - 1;
  return ch.pos0 + ch.t0 + tl_last;
}

// k2: [G, k2_cap, hd]; n2c: K2 windows that exist for the sub-chunk's last query.
// part: [nq, H, nsplit] (max, sum) of exp2 over this CTA's split of the windows the query sees, log2 units.
__global__ void __launch_bounds__(kThreads) lse_partial_kernel(Chunk ch, const __nv_bfloat16* __restrict__ k2,
                                                               int64_t k2_cap, int64_t n2c, int kernel2, int stride2,
                                                               int64_t nsplit, float2* __restrict__ part) {
  __shared__ __align__(128) __nv_bfloat16 tile[kKeyTile * kLdT];
  __shared__ __align__(128) float stage[kQT][16 * 16];
  const int64_t split = blockIdx.y, e_begin = split * kSplit, tq0 = int64_t(blockIdx.x) * kQT;
  const int g = blockIdx.z;
  if (e_begin >= n_windows(last_position(ch, tq0) + 1, kernel2, stride2)) return;  // no query here sees these

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t tl = tq0 + warp;
  const bool active = tl < ch.nq;
  const int64_t n2v = active ? n_windows(ch.pos0 + ch.t0 + tl + 1, kernel2, stride2) : 0;
  FragA qa[kHd / 16];
  load_queries(ch, tq0, g, tile, qa);

  // lane: head row = lane % 16, key columns 2i + half of every 16-key tile (stage is column-major: conflict-free)
  const int row = lane % 16, half = lane / 16;
  float m = -INFINITY, l = 0.f;
  const __nv_bfloat16* ck = k2 + int64_t(g) * k2_cap * kHd;
  for (int kt = 0; kt < kSplit / kKeyTile; ++kt) {
    const int64_t e0 = e_begin + int64_t(kt) * kKeyTile;
    if (e0 >= n2c) break;  // CTA-uniform
    load_keys(tile, ck, e0, n2c);
    __syncthreads();
    if (active) {
      for (int j = 0; j < kKeyTile / 16; ++j) {
        FragC acc;
        tile_logits(acc, qa, tile, j);
        wmma::store_matrix_sync(stage[warp], acc, 16, wmma::mem_col_major);  // stage[c * 16 + r]
        __syncwarp();
        float x[8];
        float bmax = -INFINITY;
        for (int i = 0; i < 8; ++i) {
          const int c = 2 * i + half;
          x[i] = e0 + j * 16 + c < n2v ? stage[warp][c * 16 + row] * ch.sc_log2 : -INFINITY;
          bmax = fmaxf(bmax, x[i]);
        }
        __syncwarp();
        if (bmax > -INFINITY) {
          const float m_new = fmaxf(m, bmax);
          float sum = 0.f;
          for (int i = 0; i < 8; ++i) sum += exp2f(x[i] - m_new);  // masked: exp2(-inf) = 0
          l = l * exp2f(m - m_new) + sum;                          // first time: m = -inf, l = 0
          m = m_new;
        }
      }
    }
    __syncthreads();
  }
  // merge the two halves of each head row
  const float m_o = __shfl_xor_sync(0xffffffffu, m, 16), l_o = __shfl_xor_sync(0xffffffffu, l, 16);
  const float M = fmaxf(m, m_o);
  float L = 0.f;
  if (M > -INFINITY) L = (m > -INFINITY ? l * exp2f(m - M) : 0.f) + (m_o > -INFINITY ? l_o * exp2f(m_o - M) : 0.f);
  if (active && half == 0) part[(tl * ch.H + int64_t(g) * kRows + row) * nsplit + split] = make_float2(M, L);
}

// lse: [nq, H] LSE2 in log2 units from the partials of the splits each query sees.
__global__ void lse_combine_kernel(Chunk ch, int kernel2, int stride2, int64_t nsplit,
                                   const float2* __restrict__ part, float* __restrict__ lse) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= ch.nq * ch.H) return;
  const int64_t tl = i / ch.H;
  const int64_t n2v = n_windows(ch.pos0 + ch.t0 + tl + 1, kernel2, stride2);
  const int64_t ns = (n2v + kSplit - 1) / kSplit;
  const float2* pp = part + i * nsplit;
  float M = -INFINITY;
  for (int64_t s = 0; s < ns; ++s) M = fmaxf(M, pp[s].x);
  if (M == -INFINITY) {  // no K2 window visible yet: every visible K1 window scores +inf
    lse[i] = -INFINITY;
    return;
  }
  float L = 0.f;
  for (int64_t s = 0; s < ns; ++s)
    if (pp[s].x > -INFINITY) L += pp[s].y * exp2f(pp[s].x - M);
  lse[i] = M + log2f(L);
}

// k1: [G, k1_cap, hd]; n1c: K1 windows that exist for the sub-chunk's last query; lse: [nq, H] (log2 units);
// scores: [nq, G, n1s] bf16 bits, written for c < n1v(p) of each query only.
__global__ void __launch_bounds__(kThreads) score_kernel(Chunk ch, const __nv_bfloat16* __restrict__ k1,
                                                         int64_t k1_cap, int64_t n1c, int kernel, int stride,
                                                         const float* __restrict__ lse, uint16_t* __restrict__ scores,
                                                         int64_t n1s) {
  __shared__ __align__(128) __nv_bfloat16 tile[kKeyTile * kLdT];
  __shared__ __align__(128) float stage[kQT][16 * 16];
  const int64_t e_begin = int64_t(blockIdx.y) * kSplit, tq0 = int64_t(blockIdx.x) * kQT;
  const int g = blockIdx.z;
  if (e_begin >= n_windows(last_position(ch, tq0) + 1, kernel, stride)) return;  // no query here sees these

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t tl = tq0 + warp;
  const bool active = tl < ch.nq;
  const int64_t n1v = active ? n_windows(ch.pos0 + ch.t0 + tl + 1, kernel, stride) : 0;
  // lane: key column col of every 16-key tile, head rows 2i + half (stage is row-major: conflict-free)
  const int col = lane % 16, half = lane / 16;
  float lse_r[8];
  for (int i = 0; i < 8; ++i) lse_r[i] = active ? lse[tl * ch.H + int64_t(g) * kRows + 2 * i + half] : 0.f;
  FragA qa[kHd / 16];
  load_queries(ch, tq0, g, tile, qa);

  uint16_t* srow = scores + (tl * ch.G + g) * n1s;
  const __nv_bfloat16* ck = k1 + int64_t(g) * k1_cap * kHd;
  for (int kt = 0; kt < kSplit / kKeyTile; ++kt) {
    const int64_t e0 = e_begin + int64_t(kt) * kKeyTile;
    if (e0 >= n1c) break;  // CTA-uniform
    load_keys(tile, ck, e0, n1c);
    __syncthreads();
    if (active) {
      for (int j = 0; j < kKeyTile / 16; ++j) {
        FragC acc;
        tile_logits(acc, qa, tile, j);
        wmma::store_matrix_sync(stage[warp], acc, 16, wmma::mem_row_major);  // stage[r * 16 + c]
        __syncwarp();
        float v = 0.f;
        for (int i = 0; i < 8; ++i) v += exp2f(stage[warp][(2 * i + half) * 16 + col] * ch.sc_log2 - lse_r[i]);
        __syncwarp();
        v += __shfl_xor_sync(0xffffffffu, v, 16);  // the other 8 heads
        const int64_t c = e0 + j * 16 + col;
        if (half == 0 && c < n1v) srow[c] = __bfloat16_as_ushort(__float2bfloat16_rn(v));
      }
    }
    __syncthreads();
  }
}

// Exclusive prefix sum of v over the CTA (kThreads threads); *total gets the sum. Every thread must call it.
__device__ int block_exclusive_scan(int v, int* total) {
  __shared__ int warp_sums[kThreads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int x = v;
  for (int o = 1; o < 32; o <<= 1) {
    const int y = __shfl_up_sync(0xffffffffu, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    int w = lane < kThreads / 32 ? warp_sums[lane] : 0;
    for (int o = 1; o < 32; o <<= 1) {
      const int y = __shfl_up_sync(0xffffffffu, w, o);
      if (lane >= o) w += y;
    }
    if (lane < kThreads / 32) warp_sums[lane] = w;  // inclusive warp totals
  }
  __syncthreads();
  const int before = warp > 0 ? warp_sums[warp - 1] : 0;
  *total = warp_sums[kThreads / 32 - 1];
  __syncthreads();  // warp_sums is reused by the next call
  return before + x - v;
}

struct SelectRule {
  int block, init_blocks, local_blocks, k_sel, kernel, stride;
};

// scores: [nq, G, n1s] bf16 bits; pooled: [nq, G, nbs] scratch; blocks: [T, G, k_sel] (absolute query rows);
// scores_out: [T, G, n_blocks] or nullptr. Grid (nq, G), kThreads threads.
__global__ void __launch_bounds__(kThreads) select_kernel(Chunk ch, SelectRule rule, const uint16_t* __restrict__ scores,
                                                          int64_t n1s, uint16_t* __restrict__ pooled, int64_t nbs,
                                                          int32_t* __restrict__ blocks, float* __restrict__ scores_out,
                                                          int64_t n_blocks) {
  __shared__ int hist[256];
  __shared__ int pick[4];
  const int64_t tl = blockIdx.x;
  const int g = blockIdx.y;
  const int64_t t = ch.t0 + tl, p = ch.pos0 + t, qb = p / rule.block, nb = qb + 1;
  const int64_t n1v = n_windows(p + 1, rule.kernel, rule.stride);
  const uint16_t* srow = scores + (tl * ch.G + g) * n1s;
  uint16_t* pk = pooled + (tl * ch.G + g) * nbs;
  int32_t* out = blocks + (t * ch.G + g) * rule.k_sel;
  float* so = scores_out ? scores_out + (t * ch.G + g) * n_blocks : nullptr;

  auto forced = [&](int64_t b) { return b < rule.init_blocks || (b >= qb - rule.local_blocks && b <= qb); };
  // |[0, min(init, nb)) u [max(0, qb - local), qb]|
  const int64_t a_hi = std::min<int64_t>(rule.init_blocks, nb), b_lo = std::max<int64_t>(0, qb - rule.local_blocks);
  const int64_t n_forced = a_hi + (qb - b_lo + 1) - std::max<int64_t>(0, a_hi - b_lo);
  const int64_t n_cand = nb - n_forced;
  const int64_t take = std::min<int64_t>(std::max<int64_t>(0, rule.k_sel - n_forced), n_cand);
  const bool all = take == n_cand;  // every causal block is chosen (e.g. qb + 1 <= k_sel)

  // 1. pooled keys of the unforced causal blocks: max over the visible K1 windows overlapping the block (0 if none)
  if (!all || so) {
    for (int64_t b = threadIdx.x; b < nb; b += blockDim.x) {
      uint16_t key = 0;
      const bool f = forced(b);
      if (!f) {
        const int64_t c_lo = std::max<int64_t>(0, floor_div(rule.block * b - rule.kernel, rule.stride) + 1);
        const int64_t c_hi = std::min<int64_t>(n1v - 1, (rule.block * b + rule.block - 1) / rule.stride);
        for (int64_t c = c_lo; c <= c_hi; ++c) key = srow[c] > key ? srow[c] : key;
      }
      pk[b] = key;
      if (so) so[b] = f ? INFINITY : __uint_as_float(uint32_t(key) << 16);
    }
    if (so)
      for (int64_t b = nb + threadIdx.x; b < n_blocks; b += blockDim.x) so[b] = -INFINITY;
  }
  __syncthreads();

  // 2. the take-th largest candidate key (thr) and how many candidates equal to it are taken (n_eq)
  int thr = 0x10000, n_eq = 0;  // take == 0: no candidate passes
  if (!all && take > 0) {
    for (int i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    for (int64_t b = threadIdx.x; b < nb; b += blockDim.x)
      if (!forced(b)) atomicAdd(&hist[pk[b] >> 8], 1);
    __syncthreads();
    if (threadIdx.x == 0) {
      int64_t above = 0;
      for (int bin = 255; bin >= 0; --bin) {
        if (above + hist[bin] >= take) {
          pick[0] = bin;
          pick[1] = int(take - above);  // still needed from this high byte
          break;
        }
        above += hist[bin];
      }
    }
    __syncthreads();
    const int hi = pick[0], need = pick[1];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    for (int64_t b = threadIdx.x; b < nb; b += blockDim.x)
      if (!forced(b) && (pk[b] >> 8) == hi) atomicAdd(&hist[pk[b] & 255], 1);
    __syncthreads();
    if (threadIdx.x == 0) {
      int above = 0;
      for (int bin = 255; bin >= 0; --bin) {
        if (above + hist[bin] >= need) {
          pick[2] = (hi << 8) | bin;
          pick[3] = need - above;
          break;
        }
        above += hist[bin];
      }
    }
    __syncthreads();
    thr = pick[2];
    n_eq = pick[3];
  }

  // 3. emit ascending: forced, keys above thr, and the first n_eq keys equal to thr (lower block index wins)
  int64_t n_out = 0, eq_seen = 0;  // CTA-uniform
  for (int64_t base = 0; base < nb && n_out < rule.k_sel; base += blockDim.x) {
    const int64_t b = base + threadIdx.x;
    const bool in = b < nb, f = in && forced(b), cand = in && !f;
    const int key = cand && !all ? int(pk[b]) : 0;
    const bool eq = cand && !all && key == thr;
    int eq_total = 0, sel_total = 0;
    const int eq_rank = block_exclusive_scan(eq ? 1 : 0, &eq_total);
    const bool sel = in && (all || f || (cand && key > thr) || (eq && eq_seen + eq_rank < n_eq));
    const int pos = block_exclusive_scan(sel ? 1 : 0, &sel_total);
    if (sel && n_out + pos < rule.k_sel) out[n_out + pos] = int32_t(b);
    n_out += sel_total;
    eq_seen += eq_total;
  }
  for (int64_t i = std::min<int64_t>(n_out, rule.k_sel) + threadIdx.x; i < rule.k_sel; i += blockDim.x) out[i] = -1;
}

// The workspace carve-up is model/runner_plan.hpp's, which the runner's memory plan uses too.
using Layout = SelectLayout;
Layout layout(int64_t rows, int64_t n1, int64_t n2, int64_t nb, int H, int G) { return select_layout(rows, n1, n2, nb, H, G); }
size_t per_query_bytes(int64_t n1, int64_t n2, int64_t nb, int H, int G) {
  return select_per_query_bytes(n1, n2, nb, H, G);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

void validate(const SelectArgs& a, const std::string& op, int64_t n1, int64_t n2, int64_t nb) {
  ARG_CHECK(a.hd == kHd && a.G > 0 && a.H == kRows * a.G, op, "the kernels are built for hd = 128 and H = 16 G");
  ARG_CHECK(a.kernel > 0 && a.stride > 0 && a.block > 0 && a.k_sel > 0, op,
            "kernel, stride, block and k_sel must be positive");
  ARG_CHECK(a.init_blocks >= 0 && a.local_blocks >= 0, op, "init_blocks and local_blocks must be >= 0");
  ARG_CHECK(a.tau > 0.f, op, "tau must be positive");
  ARG_CHECK(a.k1_cap >= n1 && a.k2_cap >= n2, op,
            "k1_cap / k2_cap below the K1 / K2 windows of pos0 + T keys");
  ARG_CHECK(a.q && a.blocks && a.workspace && (n1 == 0 || a.k1) && (n2 == 0 || a.k2), op,
            "null q, k1, k2, blocks or workspace");
  ARG_CHECK(aligned16(a.q) && aligned16(a.k1) && aligned16(a.k2) && aligned16(a.workspace), op,
            "q, k1, k2 and the workspace must be 16-byte aligned");
  ARG_CHECK(a.ldq % 8 == 0 && a.ldq >= int64_t(a.H) * kHd, op, "ldq must be a multiple of 8 and >= H * hd");
  ARG_CHECK(!a.scores || a.n_blocks >= nb, op, "n_blocks is below the causal blocks of the last query");
  ARG_CHECK(a.G <= 65535 && (n1 + kSplit - 1) / kSplit <= 65535, op, "grid too large (G, or K1 splits)");
}

}  // namespace

size_t select_blocks_workspace(int64_t T_max, int64_t len_max, int H, int G, int kernel, int stride) {
  const std::string op = op_desc("select_blocks_workspace", {{"T_max", T_max}, {"len_max", len_max}, {"H", H},
                                                             {"G", G}, {"kernel", kernel}, {"stride", stride}});
  ARG_CHECK(T_max > 0 && len_max > 0 && H > 0 && G > 0 && kernel > 0 && stride > 0, op,
            "arguments must be positive");
  return select_workspace_bytes(T_max, len_max, H, G, kernel, stride);
}

void select_blocks(const SelectArgs& a, Stream s) {
  const std::string op = op_desc(
      "select_blocks", {{"T", a.T}, {"pos0", a.pos0}, {"H", a.H}, {"G", a.G}, {"hd", a.hd}, {"kernel", a.kernel},
                        {"stride", a.stride}, {"block", a.block}, {"k_sel", a.k_sel}, {"k1_cap", a.k1_cap},
                        {"k2_cap", a.k2_cap}, {"n_blocks", a.n_blocks}, {"workspace_bytes", int64_t(a.workspace_bytes)}});
  ARG_CHECK(a.T >= 0 && a.pos0 >= 0, op, "T and pos0 must be >= 0");
  if (a.T == 0) return;
  const int kernel2 = 4 * a.kernel, stride2 = 4 * a.stride;
  const int64_t len = a.pos0 + a.T;
  const int64_t n1 = n_windows(len, a.kernel, a.stride), n2 = n_windows(len, kernel2, stride2);
  const int64_t nb = (len - 1) / a.block + 1;  // causal blocks of the last query
  validate(a, op, n1, n2, nb);

  // as many queries per sub-chunk as the workspace holds: layout(r) needs at least r * pq bytes and at most
  // 4 x 255 more, so start at the upper bound and step down
  const size_t pq = per_query_bytes(n1, n2, nb, a.H, a.G);
  int64_t rows = std::min<int64_t>({int64_t(a.workspace_bytes / pq), a.T, int64_t(0x7fffffff)});
  while (rows > 0 && layout(rows, n1, n2, nb, a.H, a.G).total > a.workspace_bytes) --rows;
  ARG_CHECK(rows >= 1, op, "the workspace holds not even one query: size it with select_blocks_workspace");
  const Layout L = layout(rows, n1, n2, nb, a.H, a.G);
  auto* base = static_cast<unsigned char*>(a.workspace);
  auto* part = reinterpret_cast<float2*>(base + L.part);
  auto* lse = reinterpret_cast<float*>(base + L.lse);
  auto* scores = reinterpret_cast<uint16_t*>(base + L.scores);
  auto* pooled = reinterpret_cast<uint16_t*>(base + L.pooled);
  const auto* k1 = reinterpret_cast<const __nv_bfloat16*>(a.k1);
  const auto* k2 = reinterpret_cast<const __nv_bfloat16*>(a.k2);
  const SelectRule rule{a.block, a.init_blocks, a.local_blocks, a.k_sel, a.kernel, a.stride};

  for (int64_t t0 = 0; t0 < a.T; t0 += rows) {
    const int64_t nq = std::min<int64_t>(rows, a.T - t0), last = a.pos0 + t0 + nq;  // last = keys the chunk sees
    const Chunk ch{reinterpret_cast<const __nv_bfloat16*>(a.q), a.ldq, a.pos0, t0, nq, a.G, a.H,
                   a.tau * kLog2e};
    const int64_t n1c = n_windows(last, a.kernel, a.stride), n2c = n_windows(last, kernel2, stride2);
    const unsigned qtiles = unsigned((nq + kQT - 1) / kQT);
    const std::string at = op + " at queries from " + std::to_string(t0) + ", " + std::to_string(nq) + " of them";
    if (n2c > 0) {
      const dim3 grid(qtiles, unsigned((n2c + kSplit - 1) / kSplit), unsigned(a.G));
      lse_partial_kernel<<<grid, kThreads, 0, s>>>(ch, k2, a.k2_cap, n2c, kernel2, stride2, L.nsplit, part);
      CHECK_LAUNCH(at + ": lse_partial");
    }
    lse_combine_kernel<<<unsigned((nq * a.H + 255) / 256), 256, 0, s>>>(ch, kernel2, stride2, L.nsplit, part, lse);
    CHECK_LAUNCH(at + ": lse_combine");
    if (n1c > 0) {
      const dim3 grid(qtiles, unsigned((n1c + kSplit - 1) / kSplit), unsigned(a.G));
      score_kernel<<<grid, kThreads, 0, s>>>(ch, k1, a.k1_cap, n1c, a.kernel, a.stride, lse, scores, L.n1s);
      CHECK_LAUNCH(at + ": score");
    }
    select_kernel<<<dim3(unsigned(nq), unsigned(a.G)), kThreads, 0, s>>>(ch, rule, scores, L.n1s, pooled, L.nbs,
                                                                         a.blocks, a.scores, a.n_blocks);
    CHECK_LAUNCH(at + ": select");
  }
}

}  // namespace salasim::gpu
