// gla_chunked in one pass on Hopper (GlaEngine::wgmma): the chunked form of gla.cu (its header states the math), one
// launch instead of three, every product a warpgroup MMA from shared memory tiles the copy engine brings. Not the
// default: measured on the H100 it is slower than the three launches (bench/RESULTS.md, "Issue 36, eighth session").
// Each chunk of walk 3 drains the tensor pipe five times (the waits below) with one CTA of two warpgroups an SM.
//
// A CTA (2 warpgroups, 256 threads) takes a segment of kGlaChainChunks chunks of one head, in the order of a ticket
// drawn at its start (gpu/launch_geometry.hpp): segment s of head h is ticket s H + h, so the CTA it waits for has
// drawn its ticket before, is resident, and waits only for earlier tickets itself. No deadlock, whatever the grid.
//   walk 1   chunk after chunk of the segment, K and V only: W_seg, the segment's own decayed sum (entering state 0),
//            the state update with the decayed V split in 3 bf16 terms, as gla.cu's segment_state
//   chain    S_in = the caller's S for segment 0, else the state segment s - 1 published; this CTA publishes
//            S_out = lambda^len S_in + W_seg (the scan's formula, link by link) for segment s + 1, or, the last
//            segment, writes it to S: the call's final state
//   walk 3   chunk after chunk again, Q, K and V: from S_in, the outputs and the state entering the next chunk
//            (2-term split), as gla.cu's chunk_fwd
// The state S^T [v][k] lives in registers as wgmma accumulators: warpgroup w the value rows 64 w .. 64 w + 63, all
// 128 keys (m64n128: 64 floats a thread). Per chunk of walk 3:
//   P   = Q K^T                   m64n32k16, A and B by descriptor, warpgroup w the columns 32 w ..; masked causal,
//                                 decayed, split P = P_hi + P_lo, to shared memory as a swizzled [t][i] box each
//   O^T = S^T_hi Q^T + S^T_lo Q^T m64n64k16, A from the state's registers, B = the Q tile (K-major); issued before P's
//                                 exponentials, which overlap it; columns scaled by lambda^(t+1)
//   O^T += V^T P^T_hi + V^T P^T_lo m64n64k16, A = V^T by ldmatrix, B = the P boxes (K-major)
//   S^T = lambda^L S^T + (decayed V^T)_split K   m64n128k16, B = the K tile MN-major; run for the segment's last
//                                 chunk too, its result unused: a wgmma under a condition makes ptxas serialize
//                                 every wgmma of the kernel (warning C7515)
// Tiles arrive by TMA (gpu/tensor_map.hpp, bf16_token_heads_map) in a ring of 2 stages, one iteration ahead; the
// stages hold Q, K, V of a chunk as two 64-token x 64-dim swizzled boxes each. The chain's state crosses CTAs through
// the workspace with .cg accesses (a ring slot is rewritten two segments later: L1 may hold a stale copy), ordered
// by a release store of the flag and an acquire load of it.
//
// The products, terms and their order are gla.cu's, but a wgmma may add inside an instruction in another order than
// mma.sync: the engines agree within the tolerance, not to the bit (tests/gpu/gla_test.cpp).
#include <algorithm>

#include "gpu/check.cuh"
#include "gpu/gla_wgmma.hpp"
#include "gpu/hopper.cuh"
#include "gpu/launch_geometry.hpp"
#include "gpu/tensor_map.hpp"

namespace salasim::gpu {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kHd = 128, kC = 64, kThreads = 256;
constexpr int kBox = kC * 64;               // one box: 64 tokens x 64 dims
constexpr uint32_t kBoxBytes = kBox * 2;    // 8 KB
constexpr int kTile = 2 * kBox;             // a chunk of one head: dims 0..63, then 64..127
constexpr uint32_t kTileBytes = kTile * 2;  // 16 KB
constexpr int kLdO = kHd + 8;               // bf16 row stride of the O staging tile, as gla.cu's
constexpr int kRing = 64 * kThreads;        // floats of one state in the ring: element e of thread x at e 256 + x
constexpr float kLog2e = 1.4426950408889634f;
// Shared memory from a 1024-aligned base: stage st (0, 1) holds Q, K, V as tiles 3 st, 3 st + 1, 3 st + 2; then P hi
// and P lo (a box each), the O staging tile, the stages' barriers; and the alignment's slack.
constexpr uint32_t kOffP = 6 * kTileBytes, kOffO = kOffP + 2 * kBoxBytes, kOffBar = kOffO + kC * kLdO * 2;
constexpr size_t kSmem = kOffBar + 2 * 8 + 1024;

// Element (row, col) of a tile of swizzled boxes, col a multiple of 2: the 16-byte piece j of a 128-byte box row lies
// at piece j ^ (row % 8) (gpu/tensor_map.hpp).
__device__ __forceinline__ int sw(int row, int col) {
  return (col >> 6) * kBox + row * 64 + ((((col & 63) >> 3) ^ (row & 7)) << 3) + (col & 7);
}

__device__ __forceinline__ uint32_t ld_acquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

// V^T A fragments of the warp's 16 value rows (v0 ..) for the chunk's 4 k-steps of 16 tokens, from the V tile [t][v].
__device__ __forceinline__ void load_vt(uint32_t (&vf)[4][4], const bf16* Vs, int v0, int lane) {
#pragma unroll
  for (int st = 0; st < 4; ++st)
    mma::ldmatrix_x4_trans(vf[st], Vs + sw(16 * st + (lane & 7) + 8 * (lane >> 4), v0 + 8 * ((lane >> 3) & 1)));
}

// The state update's A operand: (lambda^(L-1-i) v_i)^T for the chunk's tokens i < L (0 past L), split in NS bf16
// terms, as gla.cu's state_update.
template <int NS>
__device__ __forceinline__ void decayed_vt(uint32_t (&a)[4][NS][4], const uint32_t (&vf)[4][4], float glog2, int L,
                                           int lane) {
  const int c = lane & 3;
#pragma unroll
  for (int st = 0; st < 4; ++st) {
    float d[4];
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const int i = 16 * st + 2 * c + (x & 1) + (x >> 1) * 8;
      d[x] = i < L ? exp2f(glog2 * float(L - 1 - i)) : 0.f;
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const float2 v = mma::unpack_bf16(vf[st][r]);
      const float x0 = v.x * d[(r >> 1) * 2], x1 = v.y * d[(r >> 1) * 2 + 1];
      if constexpr (NS == 3) mma::split3(x0, x1, a[st][0][r], a[st][1][r], a[st][2][r]);
      else mma::split2(x0, x1, a[st][0][r], a[st][1][r]);
    }
  }
}

// Issues S^T += sum_split A_split K (4 k-steps x NS terms of m64n128k16, K MN-major at shared address ka), one commit
// group, not waited on. s must already be scaled by lambda^L.
template <int NS>
__device__ __forceinline__ void issue_state_update(float (&s)[64], uint32_t (&a)[4][NS][4], uint32_t ka) {
#pragma unroll
  for (int st = 0; st < 4; ++st)
#pragma unroll
    for (int sp = 0; sp < NS; ++sp) wg::fence_operand(a[st][sp]);
  wg::fence_operand(s);
  wg::fence();
#pragma unroll
  for (int st = 0; st < 4; ++st) {  // tokens 16 st ..: rows 16 st .. of both K boxes (2 atoms of 8 rows, 2048 B)
    const uint64_t dk = wg::desc_sw128_mn(ka + st * 2048, kBoxBytes);
#pragma unroll
    for (int sp = 0; sp < NS; ++sp) wg::mma_m64n128k16<true>(s, a[st][sp], dk, true);
  }
  wg::commit();
}

// S^T's A fragments of k-steps 4 half .. 4 half + 3 (keys 64 half ..), split in 2 bf16 terms: the accumulators of
// n-tiles 2 ks and 2 ks + 1 are, element for element, k-step ks's A fragment (gpu/mma.cuh).
__device__ __forceinline__ void state_frags(uint32_t (&hi)[4][4], uint32_t (&lo)[4][4], const float (&s)[64],
                                            int half) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const int j = 8 * (4 * half + kk);  // s index of n-tile 2 ks
    mma::split2(s[j + 0], s[j + 1], hi[kk][0], lo[kk][0]);
    mma::split2(s[j + 2], s[j + 3], hi[kk][1], lo[kk][1]);
    mma::split2(s[j + 4], s[j + 5], hi[kk][2], lo[kk][2]);
    mma::split2(s[j + 6], s[j + 7], hi[kk][3], lo[kk][3]);
  }
}

// One CTA a (segment, head), taken in ticket order. sync: [2][H] flags (the slot's segment index + 1) and the ticket
// counter, zeroed before the launch; ring: [2][H] states of kRing floats.
__global__ void __launch_bounds__(kThreads, 1)
    onepass_kernel(const __grid_constant__ CUtensorMap qmap, const __grid_constant__ CUtensorMap kmap,
                   const __grid_constant__ CUtensorMap vmap, int64_t T, int64_t nseg, int H,
                   const float* __restrict__ gamma, float tau, float* __restrict__ S, uint32_t* __restrict__ sync,
                   float* __restrict__ ring, uint16_t* __restrict__ o, int64_t ldo) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ uint32_t ticket;
  unsigned char* smem = smem_raw + ((1024 - (mma::smem_addr(smem_raw) & 1023)) & 1023);
  bf16* tiles = reinterpret_cast<bf16*>(smem);
  bf16* Ph = reinterpret_cast<bf16*>(smem + kOffP);
  bf16* Pl = Ph + kBox;
  bf16* Os = reinterpret_cast<bf16*>(smem + kOffO);
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem + kOffBar);
  const int tid = threadIdx.x, wgi = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, c4 = lane & 3;
  const int v0 = 64 * wgi + 16 * warp;  // the warp's first value row of S^T and O^T
  if (tid == 0) {
    ticket = atomicAdd(sync + 2 * H, 1u);
    wg::mbar_init(&bar[0], 1);
    wg::mbar_init(&bar[1], 1);
    wg::fence_mbar_init();
  }
  __syncthreads();
  const int64_t seg = int64_t(ticket) / H, n_chunks = (T + kC - 1) / kC;
  const int h = int(ticket % uint32_t(H));
  const int64_t c_begin = seg * kGlaChainChunks, c_end = std::min(c_begin + kGlaChainChunks, n_chunks);
  const int n = int(c_end - c_begin);
  const float glog2 = gamma[h] * kLog2e;

  // Walk iteration it (0 .. 2n - 1) takes chunk c_begin + it % n from stage it % 2; walk 1 (it < n) needs no Q.
  const auto issue = [&](int it) {
    const int st = it & 1;
    const bool with_q = it >= n;
    const int t0 = int((c_begin + (with_q ? it - n : it)) * kC);
    uint64_t* b = &bar[st];
    wg::mbar_arrive_expect_tx(b, (with_q ? 3 : 2) * kTileBytes);
    bf16* base = tiles + 3 * st * kTile;
    for (int half = 0; half < 2; ++half) {
      if (with_q) wg::tma_load_3d(base + half * kBox, &qmap, 64 * half, h, t0, b);
      wg::tma_load_3d(base + kTile + half * kBox, &kmap, 64 * half, h, t0, b);
      wg::tma_load_3d(base + 2 * kTile + half * kBox, &vmap, 64 * half, h, t0, b);
    }
  };
  // Top of iteration it: its stage has landed, and every warp is done with the other stage (generic reads ordered
  // before the copy engine's writes; the wgmma reads waited for), which then takes iteration it + 1.
  const auto begin = [&](int it) {
    wg::mbar_wait(&bar[it & 1], uint32_t(it >> 1) & 1);
    wg::fence_proxy_async_smem();
    __syncthreads();
    if (tid == 0 && it + 1 < 2 * n) issue(it + 1);
    __syncwarp();  // converged again before the aligned wgmma instructions
  };
  if (tid == 0) issue(0);

  // 1. W_seg
  float s[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) s[i] = 0.f;
  for (int it = 0; it < n; ++it) {
    begin(it);
    const int L = int(std::min<int64_t>(kC, T - (c_begin + it) * kC));
    const bf16* Ks = tiles + (3 * (it & 1) + 1) * kTile;
    uint32_t vf[4][4], a[4][3][4];
    load_vt(vf, Ks + kTile, v0, lane);
    decayed_vt<3>(a, vf, glog2, L, lane);
    const float dL = exp2f(glog2 * float(L));
#pragma unroll
    for (int i = 0; i < 64; ++i) s[i] *= dL;
    issue_state_update<3>(s, a, mma::smem_addr(Ks));
    wg::wait<0>();
    wg::fence_operand(s);
  }

  // 2. The chain. Thread x's element e is (v = v0 + g + 8 (e % 4 / 2), k = 8 (e / 4) + 2 c4 + e % 2).
  {
    const int64_t len = std::min<int64_t>(kGlaChainChunks * kC, T - c_begin * kC);
    const float dl = exp2f(glog2 * float(len));
    float* Sh = S + int64_t(h) * kHd * kHd;  // [k][v]
    const auto s_index = [&](int e) { return (8 * (e >> 2) + 2 * c4 + (e & 1)) * kHd + v0 + g + 8 * ((e >> 1) & 1); };
    if (seg > 0) {
      if (tid == 0)
        while (ld_acquire(sync + ((seg - 1) & 1) * H + h) != uint32_t(seg)) {}
      __syncthreads();
    }
    const bool last = seg == nseg - 1;
    const float* in = ring + (((seg - 1) & 1) * H + h) * int64_t(kRing) + tid;
    float* out = ring + ((seg & 1) * H + h) * int64_t(kRing) + tid;
#pragma unroll
    for (int e = 0; e < 64; ++e) {
      const float sin = seg == 0 ? Sh[s_index(e)] : __ldcg(in + e * kThreads);
      const float sout = dl * sin + s[e];
      if (last) Sh[s_index(e)] = sout;
      else __stcg(out + e * kThreads, sout);
      s[e] = sin;
    }
    __threadfence();
    __syncthreads();
    if (tid == 0 && !last) st_release(sync + (seg & 1) * H + h, uint32_t(seg + 1));
  }

  // 3. The outputs, chunk after chunk from S_in.
  for (int it = n; it < 2 * n; ++it) {
    begin(it);
    const int64_t t0 = (c_begin + (it - n)) * kC;
    const int L = int(std::min<int64_t>(kC, T - t0));
    const bf16* Qs = tiles + 3 * (it & 1) * kTile;
    const bf16* Ks = Qs + kTile;
    const uint32_t qa = mma::smem_addr(Qs), ka = mma::smem_addr(Ks);
    // P = Q K^T, this warpgroup's 32 columns: one group
    float p[16];
    wg::fence_operand(p);
    wg::fence();
#pragma unroll
    for (int ks = 0; ks < 8; ++ks) {
      const uint32_t koff = (ks >> 2) * kBoxBytes + (ks & 3) * 32;
      wg::mma_m64n32k16_ss(p, wg::desc_sw128(qa + koff), wg::desc_sw128(ka + koff + wgi * 4096), ks > 0);
    }
    wg::commit();
    // O^T = S^T Q^T, keys 0..63: a second group, running under P's exponentials
    float oacc[32];
    uint32_t sh[4][4], sl[4][4];
    state_frags(sh, sl, s, 0);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) wg::fence_operand(sh[kk]), wg::fence_operand(sl[kk]);
    wg::fence_operand(oacc);
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint64_t dq = wg::desc_sw128(qa + kk * 32);
      wg::mma_m64n64k16(oacc, sh[kk], dq, kk > 0);
      wg::mma_m64n64k16(oacc, sl[kk], dq, true);
    }
    wg::commit();
    wg::wait<1>();
    wg::fence_operand(p);
    // P[t][i] = lambda^(t-i) q_t . k_i for i <= t, else 0; rows t of warp w: 16 w + g (+ 8)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int t = 16 * warp + g + 8 * half, i = 32 * wgi + 8 * j + 2 * c4;
        const float p0 = i <= t ? p[4 * j + 2 * half] * exp2f(glog2 * float(t - i)) : 0.f;
        const float p1 = i + 1 <= t ? p[4 * j + 2 * half + 1] * exp2f(glog2 * float(t - i - 1)) : 0.f;
        uint32_t hi, lo;
        mma::split2(p0, p1, hi, lo);
        *reinterpret_cast<uint32_t*>(Ph + sw(t, i)) = hi;
        *reinterpret_cast<uint32_t*>(Pl + sw(t, i)) = lo;
      }
    wg::fence_proxy_async_smem();  // P's generic writes before the other warpgroup's wgmma reads them
    // keys 64..127
    wg::wait<0>();
    wg::fence_operand(oacc);
    state_frags(sh, sl, s, 1);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) wg::fence_operand(sh[kk]), wg::fence_operand(sl[kk]);
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint64_t dq = wg::desc_sw128(qa + kBoxBytes + kk * 32);
      wg::mma_m64n64k16(oacc, sh[kk], dq, true);
      wg::mma_m64n64k16(oacc, sl[kk], dq, true);
    }
    wg::commit();
    uint32_t vf[4][4];
    load_vt(vf, Ks + kTile, v0, lane);
    __syncthreads();  // P complete
    wg::wait<0>();
    wg::fence_operand(oacc);
#pragma unroll
    for (int j = 0; j < 8; ++j) {  // column t = 8j + 2c (+1): lambda^(t+1)
      const float d0 = exp2f(glog2 * float(8 * j + 2 * c4 + 1)), d1 = exp2f(glog2 * float(8 * j + 2 * c4 + 2));
      oacc[4 * j] *= d0, oacc[4 * j + 1] *= d1, oacc[4 * j + 2] *= d0, oacc[4 * j + 3] *= d1;
    }
    // O^T += V^T P^T (P is zero above the diagonal)
    const uint32_t pha = mma::smem_addr(Ph), pla = mma::smem_addr(Pl);
#pragma unroll
    for (int st = 0; st < 4; ++st) wg::fence_operand(vf[st]);
    wg::fence_operand(oacc);
    wg::fence();
#pragma unroll
    for (int st = 0; st < 4; ++st) {
      wg::mma_m64n64k16(oacc, vf[st], wg::desc_sw128(pha + st * 32), true);
      wg::mma_m64n64k16(oacc, vf[st], wg::desc_sw128(pla + st * 32), true);
    }
    wg::commit();
    // the state entering the next chunk, issued before O is written out
    uint32_t a[4][2][4];
    decayed_vt<2>(a, vf, glog2, L, lane);
    wg::wait<0>();
    wg::fence_operand(oacc);
    const float dL = exp2f(glog2 * float(L));
#pragma unroll
    for (int i = 0; i < 64; ++i) s[i] *= dL;
    issue_state_update<2>(s, a, ka);
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int t = 8 * j + 2 * c4 + (e & 1), vv = v0 + g + 8 * (e >> 1);
        Os[t * kLdO + vv] = __float2bfloat16_rn(tau * oacc[4 * j + e]);
      }
    wg::wait<0>();
    wg::fence_operand(s);
    __syncthreads();  // O tile complete
    for (int i = tid; i < L * (kHd / 8); i += kThreads) {
      const int r = i >> 4, piece = i & 15;
      *reinterpret_cast<uint4*>(o + (t0 + r) * ldo + int64_t(h) * kHd + piece * 8) =
          *reinterpret_cast<const uint4*>(Os + r * kLdO + piece * 8);
    }
  }
}

}  // namespace

void gla_chunked_wgmma(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H,
                       const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, void* workspace, Stream s) {
  const auto op = [&] { return op_desc("gla_chunked (wgmma)", {{"T", T}, {"H", H}, {"ld", ld}, {"ldo", ldo}}); };
  CUtensorMap qm, km, vm;
  CUDA_CHECK(bf16_token_heads_map(&qm, q, T, ld, H, kC), op);
  CUDA_CHECK(bf16_token_heads_map(&km, k, T, ld, H, kC), op);
  CUDA_CHECK(bf16_token_heads_map(&vm, v, T, ld, H, kC), op);
  static bool attr = false;  // raise the dynamic shared-memory limit once per process
  if (!attr) {
    CUDA_CHECK(cudaFuncSetAttribute(onepass_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)), op);
    attr = true;
  }
  // workspace: the flags and the ticket counter (zeroed for each call), then the ring from the next 256 bytes
  const size_t sync_words = size_t(2 * H + 1), sync_bytes = 256 * ((sync_words * 4 + 255) / 256);
  auto* sync = static_cast<uint32_t*>(workspace);
  auto* ring = reinterpret_cast<float*>(static_cast<unsigned char*>(workspace) + sync_bytes);
  CUDA_CHECK(cudaMemsetAsync(sync, 0, sync_words * 4, s), op);
  const int64_t nseg = gla_chain_segments(T);
  onepass_kernel<<<unsigned(nseg * H), kThreads, kSmem, s>>>(qm, km, vm, T, nseg, H, gamma, tau, S, sync, ring,
                                                             reinterpret_cast<uint16_t*>(o), ldo);
  CHECK_LAUNCH(op);
}

}  // namespace salasim::gpu
