// gla: simple GLA with a constant per-head decay (docs/spec.md §3), chunked on tensor cores for prefill and
// recurrent for decode and short pieces, as HF dispatches.
//
// Chunked form (§3.1; chunk C = 64, token j of a chunk of L tokens, lambda = exp(gamma), S_c entering chunk c):
//   o_j     = tau (lambda^(j+1) q_j S_c + sum_{i<=j} lambda^(j-i) (q_j . k_i) v_i)
//   S_{c+1} = lambda^L S_c + sum_i lambda^(L-1-i) k_i^T v_i
// Two engines (GlaEngine, gla.hpp): on Hopper, by default, one launch, gla_wgmma.cu (its header says how); the
// mma.sync kernels below everywhere else, and on request. A call of T tokens runs in segments of gla_segment_chunks(T)
// chunks (gpu/launch_geometry.hpp), three launches:
//   segment_state grid (segments, H), 8 warps: each segment's own decayed sum W_seg (entering state zero), the
//                 state update below with a 3-term split, so W_seg is as exact as fp32 accumulation allows
//   scan          grid (H, hd*hd/256): S_seg entering each segment (fp32, in place of W_seg), and the call's final S
//   chunk_fwd     grid (segments, H), 8 warps: from S_seg, chunk after chunk of its segment, the outputs and the
//                 state entering the next chunk (2-term split: it feeds bf16 outputs only)
// Inside a chunk everything is an m16n8k16 product (bf16 in, fp32 accumulate), the state S^T [v][k] lives in
// registers (warp w: value rows 16w..16w+15, all 128 keys, as mma accumulators):
//   P   = Q K^T, masked causal and decayed, split P = P_hi + P_lo in bf16          (6 warps, 16 x 32 tiles)
//   O^T = S^T_hi Q^T + S^T_lo Q^T, columns scaled by lambda^(t+1)                   (S^T as A straight from registers)
//   O^T += V^T P^T_hi + V^T P^T_lo, causal k-steps only, x tau, bf16 out
//   S^T = lambda^L S^T + sum_split (lambda^(L-1-i) v_i)^T_split K
// fp32 operands (decayed V, S, P) pass the bf16 tensor cores as 2 or 3 bf16 terms (gpu/mma.cuh split2/split3):
// 2 terms keep ~16 bits (errors ~2^-17, far under the outputs' bf16 rounding), 3 terms ~24 bits, so the carried
// state stays at fp32 accuracy (the float64 reference sees ~1e-7 relative), where fla keeps bf16 chunk states.
// Work per (64-token chunk, head): ~3.9K mma (16 MFLOP), of which the state updates are 60%; bytes: q, k, v, o once
// (64 KiB) plus the segment states. Recurrent: grid (H, hd/16), thread (key rows 16r.., value column j) owns 16
// state elements in registers; 256 CTAs for decode instead of one per head.
#include <algorithm>

#include "gpu/check.cuh"
#include "gpu/gla.hpp"
#include "gpu/gla_wgmma.hpp"
#include "gpu/kernels.cuh"
#include "gpu/mma.cuh"
#include "gpu/launch_geometry.hpp"
#include "gpu/tensor_map.hpp"

namespace salasim::gpu {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kHd = 128, kC = 64, kThreads = 256;
constexpr int kLd = kHd + 8;  // bf16 row stride of the Q/K/V/O tiles: 272 B puts ldmatrix's 8 rows in 8 bank groups
constexpr int kLdP = kC + 8;  // bf16 row stride of the P tiles (144 B)
constexpr int kTile = kC * kLd;
constexpr float kLog2e = 1.4426950408889634f;
constexpr size_t kStateSmem = size_t(2 * 2 * kTile) * 2;                        // 2 stages of K, V: 69,632 B
constexpr size_t kFwdSmem = size_t(2 * 3 * kTile + 2 * kC * kLdP + kTile) * 2;  // 2 x Q,K,V + P hi/lo + O: 140,288 B

// Rows t0 .. t0+63 of head h of x (row stride ld) into a [64][kLd] tile; rows >= L are zero-filled.
__device__ void load_chunk(bf16* tile, const uint16_t* x, int64_t ld, int64_t t0, int L, int h) {
  for (int i = threadIdx.x; i < kC * (kHd / 8); i += kThreads) {
    const int r = i >> 4, piece = i & 15;
    const uint16_t* src = x + (t0 + (r < L ? r : 0)) * ld + int64_t(h) * kHd + piece * 8;
    mma::cp_async16(tile + r * kLd + piece * 8, src, r < L ? 16 : 0);
  }
}

// The warp's rows of S^T ([v][k] fp32, row stride kHd) to and from its accumulators: s[j] covers keys 8j..8j+7.
__device__ void load_state(float (&s)[16][4], const float* St, int warp, int lane) {
  const int g = lane >> 2, c = lane & 3;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const float2 a = *reinterpret_cast<const float2*>(St + (16 * warp + g) * kHd + 8 * j + 2 * c);
    const float2 b = *reinterpret_cast<const float2*>(St + (16 * warp + g + 8) * kHd + 8 * j + 2 * c);
    s[j][0] = a.x, s[j][1] = a.y, s[j][2] = b.x, s[j][3] = b.y;
  }
}
__device__ void store_state(const float (&s)[16][4], float* St, int warp, int lane) {
  const int g = lane >> 2, c = lane & 3;
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    *reinterpret_cast<float2*>(St + (16 * warp + g) * kHd + 8 * j + 2 * c) = make_float2(s[j][0], s[j][1]);
    *reinterpret_cast<float2*>(St + (16 * warp + g + 8) * kHd + 8 * j + 2 * c) = make_float2(s[j][2], s[j][3]);
  }
}

// V^T A fragments of the warp's 16 value rows for the chunk's 4 k-steps of 16 tokens, from the V tile [t][v].
__device__ void load_vt(uint32_t (&vf)[4][4], const bf16* Vs, int warp, int lane) {
#pragma unroll
  for (int st = 0; st < 4; ++st)
    mma::ldmatrix_x4_trans(vf[st], mma::frag_a_km_addr(Vs + 16 * st * kLd + 16 * warp, kLd, lane));
}

// S^T <- lambda^L S^T + sum_i (lambda^(L-1-i) v_i)^T k_i over the chunk's tokens i < L, the decayed V split into NS
// bf16 terms. vf: the warp's V^T fragments; Ks: the K tile [t][k].
template <int NS>
__device__ void state_update(float (&s)[16][4], const uint32_t (&vf)[4][4], const bf16* Ks, float glog2, int L,
                             int lane) {
  const float dL = exp2f(glog2 * float(L));
#pragma unroll
  for (int j = 0; j < 16; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) s[j][e] *= dL;
  const int c = lane & 3;
#pragma unroll
  for (int st = 0; st < 4; ++st) {
    // A element (row, k) -> token i = 16 st + k: regs 0, 1 hold k = 2c, 2c+1; regs 2, 3 hold k = 2c+8, 2c+9
    float d[4];
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const int i = 16 * st + 2 * c + (x & 1) + (x >> 1) * 8;
      d[x] = i < L ? exp2f(glog2 * float(L - 1 - i)) : 0.f;
    }
    uint32_t a[NS][4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const float2 v = mma::unpack_bf16(vf[st][r]);
      const float x0 = v.x * d[(r >> 1) * 2], x1 = v.y * d[(r >> 1) * 2 + 1];
      if constexpr (NS == 3) mma::split3(x0, x1, a[0][r], a[1][r], a[2][r]);
      else mma::split2(x0, x1, a[0][r], a[1][r]);
    }
#pragma unroll
    for (int jj = 0; jj < 8; ++jj) {  // keys 16 jj .. 16 jj + 15: state n-tiles 2 jj, 2 jj + 1
      uint32_t b[4];
      mma::ldmatrix_x4_trans(b, mma::frag_b_kn_addr(Ks + 16 * st * kLd + 16 * jj, kLd, lane));
#pragma unroll
      for (int sp = 0; sp < NS; ++sp) {
        mma::mma16816(s[2 * jj], a[sp], b[0], b[1]);
        mma::mma16816(s[2 * jj + 1], a[sp], b[2], b[3]);
      }
    }
  }
}

// W_seg^T for every segment: ws [nseg, H, hd(v), hd(k)] fp32. Grid (nseg, H), kThreads threads.
__global__ void __launch_bounds__(kThreads, 1)
    segment_state_kernel(const uint16_t* __restrict__ k, const uint16_t* __restrict__ v, int64_t ld, int64_t T,
                         const float* __restrict__ gamma, int64_t seg_chunks, float* __restrict__ ws) {
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* base = reinterpret_cast<bf16*>(smem);
  // stage st: K at base + st * kTile, V at base + (2 + st) * kTile (no pointer arrays: a run-time index would put
  // them in local memory)
  const int64_t seg = blockIdx.x, n_chunks = (T + kC - 1) / kC;
  const int h = blockIdx.y, H = gridDim.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const float glog2 = gamma[h] * kLog2e;
  const int64_t c_begin = seg * seg_chunks, c_end = std::min(c_begin + seg_chunks, n_chunks);
  float s[16][4] = {};
  load_chunk(base, k, ld, c_begin * kC, int(std::min<int64_t>(kC, T - c_begin * kC)), h);
  load_chunk(base + 2 * kTile, v, ld, c_begin * kC, int(std::min<int64_t>(kC, T - c_begin * kC)), h);
  mma::cp_async_commit();
  for (int64_t c = c_begin; c < c_end; ++c) {
    const int stage = int(c - c_begin) & 1;
    mma::cp_async_wait<0>();
    __syncthreads();  // chunk c is in `stage`; every warp is done with the other stage
    if (c + 1 < c_end) {
      const int Ln = int(std::min<int64_t>(kC, T - (c + 1) * kC));
      load_chunk(base + (stage ^ 1) * kTile, k, ld, (c + 1) * kC, Ln, h);
      load_chunk(base + (2 + (stage ^ 1)) * kTile, v, ld, (c + 1) * kC, Ln, h);
    }
    mma::cp_async_commit();
    uint32_t vf[4][4];
    load_vt(vf, base + (2 + stage) * kTile, warp, lane);
    state_update<3>(s, vf, base + stage * kTile, glog2, int(std::min<int64_t>(kC, T - c * kC)), lane);
  }
  store_state(s, ws + (seg * H + h) * int64_t(kHd * kHd), warp, lane);
}

// ws[seg] (W_seg^T) becomes the state entering seg (transposed); S [H, hd(k), hd(v)]: the call's entering state,
// updated to the state after it. Grid (H, hd*hd/256), 256 threads: thread e = (v, k) of the transposed state.
// A thread's walk is serial in its segments, but the loads of its W_seg are not: they are issued kScanBatch at a time
// before the batch's updates, so the walk waits on one load latency a batch, not one a segment (a 1M-token call's
// 512 segments had each thread wait 512 times, 344 cycles a load on the L1TEX scoreboard, the kernel 3.85 ms at 4%
// of the SM on the H200: bench/RESULTS.md). The updates themselves run in the same order: the same bits.
constexpr int kScanBatch = 16;
__global__ void scan_kernel(int64_t nseg, int64_t seg_chunks, int64_t T, const float* __restrict__ gamma,
                            float* __restrict__ S, float* __restrict__ ws) {
  const int h = blockIdx.x, H = gridDim.x;
  const int e = blockIdx.y * blockDim.x + threadIdx.x, vv = e / kHd, kk = e % kHd;
  const float glog2 = gamma[h] * kLog2e;
  float* Sh = S + int64_t(h) * kHd * kHd + kk * kHd + vv;
  float s = *Sh;
  const int64_t seg_stride = int64_t(H) * kHd * kHd;
  float* w0 = ws + int64_t(h) * kHd * kHd + e;  // segment seg's element at w0 + seg * seg_stride
  for (int64_t b = 0; b < nseg; b += kScanBatch) {
    float wc[kScanBatch];
#pragma unroll
    for (int i = 0; i < kScanBatch; ++i) wc[i] = b + i < nseg ? w0[(b + i) * seg_stride] : 0.f;
#pragma unroll
    for (int i = 0; i < kScanBatch; ++i) {
      const int64_t seg = b + i;
      if (seg >= nseg) break;
      const int64_t len = std::min(seg_chunks * kC, T - seg * seg_chunks * kC);
      w0[seg * seg_stride] = s;
      s = exp2f(glog2 * float(len)) * s + wc[i];
    }
  }
  *Sh = s;
}

// Outputs of every chunk. ws[seg]: the state entering seg, transposed. Grid (nseg, H), kThreads threads.
__global__ void __launch_bounds__(kThreads, 1)
    chunk_fwd_kernel(const uint16_t* __restrict__ q, const uint16_t* __restrict__ k, const uint16_t* __restrict__ v,
                     int64_t ld, int64_t T, const float* __restrict__ gamma, float tau, const float* __restrict__ ws,
                     int64_t seg_chunks, uint16_t* __restrict__ o, int64_t ldo) {
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* base = reinterpret_cast<bf16*>(smem);
  // stage st: Q at base + st * kTile, K at base + (2 + st) * kTile, V at base + (4 + st) * kTile
  bf16* Ph = base + 6 * kTile;
  bf16* Pl = Ph + kC * kLdP;
  bf16* Os = Pl + kC * kLdP;
  const int64_t seg = blockIdx.x, n_chunks = (T + kC - 1) / kC;
  const int h = blockIdx.y, H = gridDim.y, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane >> 2, c4 = lane & 3;
  const float glog2 = gamma[h] * kLog2e;
  const int64_t c_begin = seg * seg_chunks, c_end = std::min(c_begin + seg_chunks, n_chunks);
  float s[16][4];
  load_state(s, ws + (seg * H + h) * int64_t(kHd * kHd), warp, lane);
  {
    const int L0 = int(std::min<int64_t>(kC, T - c_begin * kC));
    load_chunk(base, q, ld, c_begin * kC, L0, h);
    load_chunk(base + 2 * kTile, k, ld, c_begin * kC, L0, h);
    load_chunk(base + 4 * kTile, v, ld, c_begin * kC, L0, h);
    mma::cp_async_commit();
  }
  for (int64_t c = c_begin; c < c_end; ++c) {
    const int stage = int(c - c_begin) & 1;
    const int64_t t0 = c * kC;
    const int L = int(std::min<int64_t>(kC, T - t0));
    mma::cp_async_wait<0>();
    __syncthreads();  // chunk c is in `stage`; the previous chunk's reads of everything are done
    if (c + 1 < c_end) {
      const int Ln = int(std::min<int64_t>(kC, T - (c + 1) * kC));
      load_chunk(base + (stage ^ 1) * kTile, q, ld, (c + 1) * kC, Ln, h);
      load_chunk(base + (2 + (stage ^ 1)) * kTile, k, ld, (c + 1) * kC, Ln, h);
      load_chunk(base + (4 + (stage ^ 1)) * kTile, v, ld, (c + 1) * kC, Ln, h);
    }
    mma::cp_async_commit();
    const bf16* Qs = base + stage * kTile;
    const bf16* Ks = base + (2 + stage) * kTile;
    const bf16* Vs = base + (4 + stage) * kTile;

    // P[t][i] = lambda^(t-i) q_t . k_i for i <= t, else 0: tiles (rows 16 rt, cols 32 ch) on or below the diagonal
    if (warp < 6) {
      const int rt = warp < 2 ? warp : 2 + (warp - 2) / 2, ch = warp < 2 ? 0 : (warp - 2) % 2;
      float acc[4][4] = {};
#pragma unroll
      for (int ks = 0; ks < kHd / 16; ++ks) {
        uint32_t a[4];
        mma::ldmatrix_x4(a, mma::frag_a_addr(Qs + 16 * rt * kLd + 16 * ks, kLd, lane));
#pragma unroll
        for (int np = 0; np < 2; ++np) {
          uint32_t b[4];
          mma::ldmatrix_x4(b, mma::frag_b_nk_addr(Ks + (32 * ch + 16 * np) * kLd + 16 * ks, kLd, lane));
          mma::mma16816(acc[2 * np], a, b[0], b[1]);
          mma::mma16816(acc[2 * np + 1], a, b[2], b[3]);
        }
      }
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int t = 16 * rt + g + 8 * half, i = 32 * ch + 8 * nt + 2 * c4;
          const float p0 = i <= t ? acc[nt][2 * half] * exp2f(glog2 * float(t - i)) : 0.f;
          const float p1 = i + 1 <= t ? acc[nt][2 * half + 1] * exp2f(glog2 * float(t - i - 1)) : 0.f;
          uint32_t hi, lo;
          mma::split2(p0, p1, hi, lo);
          *reinterpret_cast<uint32_t*>(Ph + t * kLdP + i) = hi;
          *reinterpret_cast<uint32_t*>(Pl + t * kLdP + i) = lo;
        }
    }
    __syncthreads();  // P complete

    // O^T (value rows 16 warp .., tokens t as 8 n-tiles): inter-chunk part from the state
    float oacc[8][4] = {};
#pragma unroll
    for (int ks = 0; ks < kHd / 16; ++ks) {
      uint32_t ahi[4], alo[4];
      mma::split2(s[2 * ks][0], s[2 * ks][1], ahi[0], alo[0]);
      mma::split2(s[2 * ks][2], s[2 * ks][3], ahi[1], alo[1]);
      mma::split2(s[2 * ks + 1][0], s[2 * ks + 1][1], ahi[2], alo[2]);
      mma::split2(s[2 * ks + 1][2], s[2 * ks + 1][3], ahi[3], alo[3]);
#pragma unroll
      for (int jj = 0; jj < 4; ++jj) {
        uint32_t b[4];
        mma::ldmatrix_x4(b, mma::frag_b_nk_addr(Qs + 16 * jj * kLd + 16 * ks, kLd, lane));
        mma::mma16816(oacc[2 * jj], ahi, b[0], b[1]);
        mma::mma16816(oacc[2 * jj], alo, b[0], b[1]);
        mma::mma16816(oacc[2 * jj + 1], ahi, b[2], b[3]);
        mma::mma16816(oacc[2 * jj + 1], alo, b[2], b[3]);
      }
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {  // column t = 8j + 2c (+1): lambda^(t+1)
      const float d0 = exp2f(glog2 * float(8 * j + 2 * c4 + 1)), d1 = exp2f(glog2 * float(8 * j + 2 * c4 + 2));
      oacc[j][0] *= d0, oacc[j][1] *= d1, oacc[j][2] *= d0, oacc[j][3] *= d1;
    }
    // intra-chunk part: V^T P^T over the k-steps at or below the diagonal
    uint32_t vf[4][4];
    load_vt(vf, Vs, warp, lane);
#pragma unroll
    for (int st = 0; st < 4; ++st)
#pragma unroll
      for (int jj = st; jj < 4; ++jj) {
        uint32_t bh[4], bl[4];
        mma::ldmatrix_x4(bh, mma::frag_b_nk_addr(Ph + 16 * jj * kLdP + 16 * st, kLdP, lane));
        mma::ldmatrix_x4(bl, mma::frag_b_nk_addr(Pl + 16 * jj * kLdP + 16 * st, kLdP, lane));
        mma::mma16816(oacc[2 * jj], vf[st], bh[0], bh[1]);
        mma::mma16816(oacc[2 * jj], vf[st], bl[0], bl[1]);
        mma::mma16816(oacc[2 * jj + 1], vf[st], bh[2], bh[3]);
        mma::mma16816(oacc[2 * jj + 1], vf[st], bl[2], bl[3]);
      }
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int t = 8 * j + 2 * c4 + (e & 1), vv = 16 * warp + g + 8 * (e >> 1);
        Os[t * kLd + vv] = __float2bfloat16_rn(tau * oacc[j][e]);
      }
    __syncthreads();  // O tile complete
    for (int i = threadIdx.x; i < L * (kHd / 8); i += kThreads) {
      const int r = i >> 4, piece = i & 15;
      *reinterpret_cast<uint4*>(o + (t0 + r) * ldo + int64_t(h) * kHd + piece * 8) =
          *reinterpret_cast<const uint4*>(Os + r * kLd + piece * 8);
    }
    if (c + 1 < c_end) state_update<2>(s, vf, Ks, glog2, L, lane);
  }
}

// One CTA per (head, 16 value columns); thread (key rows 16r .. 16r+15, column j) keeps 16 state elements.
// Rope (gla_recurrent_rope): q and k arrive before the qk-norm and RoPE; warps 0 and 1 apply them to the token's q and
// k head (norm_rope_head, the bits rope_qk would store) straight into qs, ks; q and k in memory are left as they were.
// Every CTA of a head repeats that work (8 per head): 256 dims, far cheaper than the launch it replaces.
constexpr int kRecCols = 16;
template <bool Rope>
__global__ void __launch_bounds__(kHd)
    recurrent_kernel(const uint16_t* q, const uint16_t* k, const uint16_t* v, int64_t ld, int64_t T, const float* gamma,
                     float tau, float* S, uint16_t* o, int64_t ldo, GlaRope rope) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  __shared__ float qs[kHd], ks[kHd], vs[kRecCols], part[kHd / 16][kRecCols];
  const int h = blockIdx.x, col0 = blockIdx.y * kRecCols, tid = threadIdx.x, r = tid / kRecCols, j = tid % kRecCols;
  const int warp = tid / 32, lane = tid % 32;
  float* Sh = S + int64_t(h) * kHd * kHd;
  float s[16];
#pragma unroll
  for (int a = 0; a < 16; ++a) s[a] = Sh[(16 * r + a) * kHd + col0 + j];
  const float lambda = expf(gamma[h]);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t base = t * ld + int64_t(h) * kHd;
    if constexpr (Rope) {
      if (warp < 2) {
        float out[4];
        norm_rope_head((warp == 0 ? q : k) + base, warp == 0 ? rope.wq : rope.wk, rope.eps, float(rope.pos0 + t),
                       rope.inv_freq, lane, out);
        float* dst = warp == 0 ? qs : ks;
#pragma unroll
        for (int i = 0; i < 4; ++i) dst[lane + 32 * i] = out[i];
      }
    } else {
      qs[tid] = ld_bf16(q + base + tid);
      ks[tid] = ld_bf16(k + base + tid);
    }
    if (tid < kRecCols) vs[tid] = ld_bf16(v + base + col0 + tid);
    __syncthreads();
    const float vb = vs[j];
    float acc = 0;
#pragma unroll
    for (int a = 0; a < 16; ++a) {
      s[a] = lambda * s[a] + ks[16 * r + a] * vb;
      acc += qs[16 * r + a] * s[a];
    }
    part[r][j] = acc;
    __syncthreads();
    if (tid < kRecCols) {
      float sum = 0;
#pragma unroll
      for (int rr = 0; rr < kHd / 16; ++rr) sum += part[rr][tid];
      st_bf16(o + t * ldo + int64_t(h) * kHd + col0 + tid, tau * sum);
    }
  }
#pragma unroll
  for (int a = 0; a < 16; ++a) Sh[(16 * r + a) * kHd + col0 + j] = s[a];
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

size_t gla_workspace_bytes(int64_t T, int H, int hd) { return gla_workspace_size(T, H, hd); }

void gla_chunked(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                 const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, void* workspace, Stream s,
                 GlaEngine engine) {
  const auto op = [&] { return op_desc("gla_chunked", {{"T", T}, {"H", H}, {"hd", hd}, {"ld", ld}, {"ldo", ldo}}); };
  if (hd != kHd) cuda_fail(cudaErrorInvalidValue, "gla needs head_dim 128", op(), __FILE__, __LINE__);
  if (T == 0) return;
  if (ld % 8 || ldo % 8 || !aligned16(q) || !aligned16(k) || !aligned16(v) || !aligned16(o) || !aligned16(workspace))
    cuda_fail(cudaErrorInvalidValue, "gla_chunked needs 16-byte aligned q, k, v, o, workspace and ld, ldo % 8 == 0",
              op(), __FILE__, __LINE__);
  ARG_CHECK(engine != GlaEngine::wgmma || wgmma_available(), op,
            "engine wgmma needs an sm_90a build on a compute capability 9.0 GPU");
  if (engine == GlaEngine::wgmma || (engine == GlaEngine::automatic && wgmma_available())) {
    gla_chunked_wgmma(q, k, v, ld, T, H, gamma, tau, S, o, ldo, workspace, s);
    return;
  }
  static bool attrs = false;  // raise the dynamic shared-memory limits once per process
  if (!attrs) {
    CUDA_CHECK(cudaFuncSetAttribute(segment_state_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kStateSmem)),
               op);
    CUDA_CHECK(cudaFuncSetAttribute(chunk_fwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kFwdSmem)), op);
    attrs = true;
  }
  const int64_t per = gla_segment_chunks(T), nseg = gla_segments(T);
  float* W = static_cast<float*>(workspace);
  segment_state_kernel<<<dim3(unsigned(nseg), unsigned(H)), kThreads, kStateSmem, s>>>(k, v, ld, T, gamma, per, W);
  CHECK_LAUNCH([&] { return op() + " segment_state"; });
  scan_kernel<<<dim3(unsigned(H), unsigned(kHd * kHd / 256)), 256, 0, s>>>(nseg, per, T, gamma, S, W);
  CHECK_LAUNCH([&] { return op() + " scan"; });
  chunk_fwd_kernel<<<dim3(unsigned(nseg), unsigned(H)), kThreads, kFwdSmem, s>>>(q, k, v, ld, T, gamma, tau, W, per, o,
                                                                                 ldo);
  CHECK_LAUNCH([&] { return op() + " chunk_fwd"; });
}

namespace {
// gla_recurrent and gla_recurrent_rope: one grid (H, hd / kRecCols) of the recurrent kernel; name: the op in errors.
template <bool Rope>
void launch_recurrent(const char* name, const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H,
                      int hd, const GlaRope& rope, const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo,
                      Stream s) {
  const auto op = [&] { return op_desc(name, {{"T", T}, {"H", H}, {"hd", hd}, {"pos0", rope.pos0}}); };
  if (hd != kHd) cuda_fail(cudaErrorInvalidValue, "gla needs head_dim 128", op(), __FILE__, __LINE__);
  if (Rope && !rope.inv_freq)
    cuda_fail(cudaErrorInvalidValue, "gla_recurrent_rope needs the inv_freq table", op(), __FILE__, __LINE__);
  if (T == 0) return;
  CUDA_CHECK(launch_pdl(recurrent_kernel<Rope>, dim3(unsigned(H), unsigned(kHd / kRecCols)), kHd, 0, s, q, k, v, ld, T,
                        gamma, tau, S, o, ldo, rope),
             op);
}
}  // namespace

void gla_recurrent(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                   const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, Stream s) {
  launch_recurrent<false>("gla_recurrent", q, k, v, ld, T, H, hd, GlaRope{}, gamma, tau, S, o, ldo, s);
}

void gla_recurrent_rope(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                        const GlaRope& rope, const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo,
                        Stream s) {
  launch_recurrent<true>("gla_recurrent_rope", q, k, v, ld, T, H, hd, rope, gamma, tau, S, o, ldo, s);
}

}  // namespace salasim::gpu
