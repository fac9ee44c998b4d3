// sparse_attn / dense_attn on the GPU (docs/spec.md §4.5, §4.1): each query's 16 heads of one kv group attend to the
// keys j <= p of its selected 64-token blocks (dense: every block b <= p/64) with an fp32 online softmax.
//
// Launch: one CTA of 4 warps per (query t, kv group g): grid (T, G), 128 threads, 52,224 B dynamic shared memory.
// The group's 16 query heads x 128 dims are exactly one 16-row WMMA tile, held in registers as 8 bf16 A fragments.
// Per selected block: K_b, V_b (64 x 128 bf16 each) -> shared memory, keys past p (and so past the cache) zeroed;
// S = Q K_b^T on tensor cores (warp w: keys 16w..16w+15), fp32; online softmax in the log2 domain by 8 threads per
// head row; O = alpha O + P V_b on tensor cores (warp w: dims 32w..32w+31), with P split into bf16 hi + lo parts so
// the probabilities keep ~16 bits (P in bf16 alone would add a rounding the size of the output's own); O in fp32
// shared memory; finally O / l rounded once to bf16.
// Cost per (query, group, block): 64 keys x 16 heads x 128 dims x (2 + 2 x 2) FLOP = 786K FLOP on 32 KiB of K/V:
// 75 MFLOP and 3 MiB per (query, group) at 96 blocks. Neighbouring queries share most blocks (the 33 local ones
// always), so K/V come from L2 more than from HBM. Each block is a synchronous load -> MMA -> softmax -> MMA round
// (~1-2 us of latency), overlapped by the 4 CTAs an SM holds: a 16K-query prefill chunk (32K CTAs x 96 blocks) is
// ~6-12 ms per layer, 2-4x its FLOP floor (2.5e12 FLOP); cp.async double buffering of the next block is the next step.
// Decode (T = 1) runs only G = 2 CTAs of <= 96 serial blocks: ~0.1-0.2 ms per layer, latency-bound; a split over
// the block slots with a combine pass (flash-decoding) is the fix if decode latency matters.
#include <cuda_bf16.h>
#include <mma.h>

#include <cmath>
#include <cstdint>

#include "gpu/check.cuh"
#include "gpu/sparse_attn.hpp"

namespace salasim::gpu {

namespace {

namespace wmma = nvcuda::wmma;

constexpr int kHd = 128;     // head dim the kernel is built for
constexpr int kRows = 16;    // query heads per kv group (H / G): one WMMA M tile
constexpr int kBlock = 64;   // keys per selection block
constexpr int kThreads = 128;
constexpr int kLdKV = kHd + 8;     // bf16 row stride of K/V tiles: +16 B keeps the fragment loads off one bank
constexpr int kLdS = kBlock + 4;   // fp32 logits row stride
constexpr int kLdP = kBlock + 8;   // bf16 probabilities row stride
constexpr int kLdO = kHd + 4;      // fp32 output accumulator row stride
constexpr float kLog2e = 1.4426950408889634f;

// Dynamic shared memory layout (byte offsets, each a multiple of 128).
constexpr int kOffK = 0;
constexpr int kOffV = kOffK + kBlock * kLdKV * 2;  // 17,408
constexpr int kOffS = kOffV + kBlock * kLdKV * 2;  // 34,816
constexpr int kOffP = kOffS + kRows * kLdS * 4;    // 39,168
constexpr int kOffPl = kOffP + kRows * kLdP * 2;   // 41,472
constexpr int kOffO = kOffPl + kRows * kLdP * 2;   // 43,776
constexpr int kSmemBytes = kOffO + kRows * kLdO * 4;  // 52,224
static_assert(kOffV % 128 == 0 && kOffS % 128 == 0 && kOffP % 128 == 0 && kOffPl % 128 == 0 && kOffO % 128 == 0);

using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major>;
using FragBt = wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major>;  // K^T from K rows
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major>;   // V rows
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

// Copies `rows` rows of kHd bf16 from src (row stride ld elements) into a shared tile (row stride kLdKV); rows at
// or past `valid` are zero-filled instead of read (so garbage past the cache can never reach a product as NaN).
__device__ void load_rows(__nv_bfloat16* tile, const __nv_bfloat16* src, int64_t ld, int rows, int valid) {
  constexpr int kChunks = kHd / 8;  // 16-byte pieces per row
  for (int i = threadIdx.x; i < rows * kChunks; i += blockDim.x) {
    const int r = i / kChunks, ch = i % kChunks;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < valid) v = *reinterpret_cast<const uint4*>(src + int64_t(r) * ld + ch * 8);
    *reinterpret_cast<uint4*>(tile + r * kLdKV + ch * 8) = v;
  }
}

// q: [T, H*hd] (row stride ldq); K, V: [G, cap, hd]; blocks: [T, G, k_sel] or nullptr (dense);
// out: [T, H*hd] (row stride ldo). Grid (T, G), kThreads threads.
__global__ void __launch_bounds__(kThreads) attn_kernel(const __nv_bfloat16* __restrict__ q, int64_t ldq, int64_t pos0,
                                                        const __nv_bfloat16* __restrict__ K,
                                                        const __nv_bfloat16* __restrict__ V, int64_t cap, int G,
                                                        float sc_log2, const int32_t* __restrict__ blocks, int k_sel,
                                                        __nv_bfloat16* __restrict__ out, int64_t ldo) {
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* Ks = reinterpret_cast<__nv_bfloat16*>(smem + kOffK);
  __nv_bfloat16* Vs = reinterpret_cast<__nv_bfloat16*>(smem + kOffV);
  float* Ss = reinterpret_cast<float*>(smem + kOffS);
  __nv_bfloat16* Ph = reinterpret_cast<__nv_bfloat16*>(smem + kOffP);
  __nv_bfloat16* Pl = reinterpret_cast<__nv_bfloat16*>(smem + kOffPl);
  float* Os = reinterpret_cast<float*>(smem + kOffO);

  const int64_t t = blockIdx.x;
  const int g = blockIdx.y;
  const int warp = threadIdx.x / 32;
  const int64_t p = pos0 + t, qb = p / kBlock;
  const __nv_bfloat16* Kg = K + int64_t(g) * cap * kHd;
  const __nv_bfloat16* Vg = V + int64_t(g) * cap * kHd;

  // Q (heads g*16 .. g*16+15 of query t) through the K tile into registers: every warp needs all 8 k-steps.
  load_rows(Ks, q + t * ldq + int64_t(g) * kRows * kHd, kHd, kRows, kRows);
  __syncthreads();
  FragA qa[kHd / 16];
  for (int k = 0; k < kHd / 16; ++k) wmma::load_matrix_sync(qa[k], Ks + k * 16, kLdKV);
  for (int i = threadIdx.x; i < kRows * kLdO; i += blockDim.x) Os[i] = 0.f;
  __syncthreads();

  // Softmax ownership: thread (row r, sub) handles head r, key columns sub + 8i and output dims 16 sub .. 16 sub + 15.
  const int r = threadIdx.x / 8, sub = threadIdx.x % 8;
  float m = -INFINITY, l = 0.f;  // running max (log2 units) and sum of row r, identical in its 8 threads

  const int64_t n_iter = blocks ? k_sel : qb + 1;
  const int32_t* brow = blocks ? blocks + (t * G + g) * k_sel : nullptr;
  for (int64_t it = 0; it < n_iter; ++it) {
    const int64_t b = brow ? int64_t(brow[it]) : it;
    if (b < 0 || b > qb) continue;  // unused slot (or a block past the query: it holds no key j <= p); CTA-uniform
    const int64_t j0 = b * kBlock;
    const int valid = p - j0 + 1 < kBlock ? int(p - j0 + 1) : kBlock;  // keys j0 .. p of this block; >= 1 as b <= qb
    load_rows(Ks, Kg + j0 * kHd, kHd, kBlock, valid);
    load_rows(Vs, Vg + j0 * kHd, kHd, kBlock, valid);
    __syncthreads();

    {  // S = Q K_b^T: warp w computes keys 16w .. 16w+15
      FragC acc;
      wmma::fill_fragment(acc, 0.f);
      for (int k = 0; k < kHd / 16; ++k) {
        FragBt kb;
        wmma::load_matrix_sync(kb, Ks + warp * 16 * kLdKV + k * 16, kLdKV);
        wmma::mma_sync(acc, qa[k], kb, acc);
      }
      wmma::store_matrix_sync(Ss + warp * 16, acc, kLdS, wmma::mem_row_major);
    }
    __syncthreads();

    {  // online softmax of row r over this block's keys; rescales row r of O by alpha
      float x[kBlock / 8];
      float bmax = -INFINITY;
      for (int i = 0; i < kBlock / 8; ++i) {
        const int c = sub + 8 * i;
        x[i] = c < valid ? Ss[r * kLdS + c] * sc_log2 : -INFINITY;
        bmax = fmaxf(bmax, x[i]);
      }
      for (int o = 1; o < 8; o <<= 1) bmax = fmaxf(bmax, __shfl_xor_sync(0xffffffffu, bmax, o));
      const float m_new = fmaxf(m, bmax);   // finite: key j0 <= p is valid
      const float alpha = exp2f(m - m_new);  // 0 on the first block (m = -inf)
      float psum = 0.f;
      for (int i = 0; i < kBlock / 8; ++i) {
        const int c = sub + 8 * i;
        const float pv = exp2f(x[i] - m_new);  // 0 for masked keys
        const __nv_bfloat16 hi = __float2bfloat16_rn(pv);
        Ph[r * kLdP + c] = hi;
        Pl[r * kLdP + c] = __float2bfloat16_rn(pv - __bfloat162float(hi));
        psum += pv;
      }
      for (int o = 1; o < 8; o <<= 1) psum += __shfl_xor_sync(0xffffffffu, psum, o);
      l = l * alpha + psum;
      m = m_new;
      for (int i = 0; i < kHd / 8; ++i) Os[r * kLdO + sub * (kHd / 8) + i] *= alpha;
    }
    __syncthreads();

    // O += P V_b: warp w owns output dims 32w .. 32w+31 (two 16-wide tiles)
    for (int n = 0; n < 2; ++n) {
      const int col0 = warp * 32 + n * 16;
      FragC acc;
      wmma::load_matrix_sync(acc, Os + col0, kLdO, wmma::mem_row_major);
      for (int kk = 0; kk < kBlock / 16; ++kk) {
        FragA ph, pl;
        FragB vb;
        wmma::load_matrix_sync(ph, Ph + kk * 16, kLdP);
        wmma::load_matrix_sync(pl, Pl + kk * 16, kLdP);
        wmma::load_matrix_sync(vb, Vs + kk * 16 * kLdKV + col0, kLdKV);
        wmma::mma_sync(acc, ph, vb, acc);
        wmma::mma_sync(acc, pl, vb, acc);
      }
      wmma::store_matrix_sync(Os + col0, acc, kLdO, wmma::mem_row_major);
    }
    __syncthreads();  // K/V/P tiles and O are reused by the next block
  }

  // out = O / l, one bf16 rounding; a row that saw no key (a selection without blocks) is written as 0, not NaN
  const float inv = l > 0.f ? 1.f / l : 0.f;
  __nv_bfloat16* orow = out + t * ldo + (int64_t(g) * kRows + r) * kHd + sub * (kHd / 8);
  for (int i = 0; i < kHd / 8; ++i) orow[i] = __float2bfloat16_rn(Os[r * kLdO + sub * (kHd / 8) + i] * inv);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

void sparse_attn(const AttnArgs& a, Stream s) {
  const std::string op =
      op_desc(a.blocks ? "sparse_attn" : "dense_attn", {{"T", a.T}, {"pos0", a.pos0}, {"H", a.H}, {"G", a.G},
                                                        {"hd", a.hd}, {"cap", a.cap}, {"block", a.block},
                                                        {"k_sel", a.k_sel}, {"ldq", a.ldq}, {"ldo", a.ldo}});
  ARG_CHECK(a.T >= 0 && a.pos0 >= 0, op, "T and pos0 must be >= 0");
  if (a.T == 0) return;
  ARG_CHECK(a.hd == kHd && a.G > 0 && a.H == kRows * a.G, op, "the kernel is built for hd = 128 and H = 16 G");
  ARG_CHECK(a.block == kBlock, op, "the kernel is built for 64-token blocks");
  ARG_CHECK(a.pos0 + a.T <= a.cap, op, "keys 0 .. pos0 + T - 1 exceed the cache capacity cap");
  ARG_CHECK(!a.blocks || a.k_sel > 0, op, "k_sel must be positive");
  ARG_CHECK(a.T <= 0x7fffffff && a.G <= 65535, op, "grid (T, G) too large");
  ARG_CHECK(a.q && a.K && a.V && a.out, op, "null q, K, V or out");
  ARG_CHECK(aligned16(a.q) && aligned16(a.K) && aligned16(a.V) && aligned16(a.out), op,
            "q, K, V and out must be 16-byte aligned");
  ARG_CHECK(a.ldq % 8 == 0 && a.ldo % 8 == 0 && a.ldq >= int64_t(a.H) * kHd && a.ldo >= int64_t(a.H) * kHd, op,
            "ldq and ldo must be multiples of 8 and >= H * hd");
  ARG_CHECK(a.tau > 0.f, op, "tau must be positive");
  CUDA_CHECK(cudaFuncSetAttribute(attn_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes), op);
  attn_kernel<<<dim3(unsigned(a.T), unsigned(a.G)), kThreads, kSmemBytes, s>>>(
      reinterpret_cast<const __nv_bfloat16*>(a.q), a.ldq, a.pos0, reinterpret_cast<const __nv_bfloat16*>(a.K),
      reinterpret_cast<const __nv_bfloat16*>(a.V), a.cap, a.G, a.tau * kLog2e, a.blocks, a.k_sel,
      reinterpret_cast<__nv_bfloat16*>(a.out), a.ldo);
  CHECK_LAUNCH(op);
}

}  // namespace salasim::gpu
