// gla_chunked in one pass on Hopper (GlaEngine::wgmma): the chunked form of gla.cu (its header states the math), one
// launch instead of three, every product a warpgroup MMA from shared-memory tiles that the copy engine brings.
//
// A CTA (2 warpgroups, 256 threads) takes a segment of kGlaChainChunks chunks of one head, in the order of a ticket
// drawn at its start (gpu/launch_geometry.hpp): segment s of head h is ticket s H + h, so the CTA it waits for has
// drawn its ticket before, is resident, and waits only for earlier tickets itself. No deadlock, whatever the grid.
//   walk 1   chunk after chunk of the segment, K and V only: W_seg, the segment's own decayed sum (entering state 0),
//            each chunk's values decayed to the segment's end (lambda^(len-1-j) v_j, token j of the segment) and
//            split in 3 bf16 terms, so the products accumulate into one sum with no rescale between chunks and
//            none waits for the one before (as gla.cu's segment_state, which rescales chunk by chunk: the same sum
//            to fp32 rounding)
//   chain    S_in = the caller's S for segment 0, else the state segment s - 1 published; this CTA publishes
//            S_out = lambda^len S_in + W_seg (the scan's formula, link by link) for segment s + 1, or, the last
//            segment, writes it to S: the call's final state
//   walk 3   chunk after chunk again, Q, K and V: from S_in, the outputs and the state entering the next chunk
//            (2-term split), as gla.cu's chunk_fwd
// The state S^T [v][k] lives in registers as wgmma accumulators: warpgroup w the value rows 64 w .. 64 w + 63, all
// 128 keys (m64n128: 64 floats a thread). A chunk of walk 3 is three groups of products:
//   G1  P = Q K^T, this warpgroup's 32 key columns     m64n32k16, A and B by descriptor
//   G2  O_inter^T = S^T_hi Q^T + S^T_lo Q^T            m64n64k16, A = S^T's split, written to shared memory first
//       S^T = lambda^L S^T + (decayed V^T)_split K      m64n128k16, A in registers, B = the K tile MN-major
//   G3  O_intra^T = V^T P^T_hi + V^T P^T_lo           m64n64k16, A = the V tile MN-major, B = the P boxes
// G2, the bulk, runs while P's mask, decay and split run on the other pipes (after G1's wait); G3 needs both
// warpgroups' halves of P. Then O = tau (lambda^(t+1) O_inter + O_intra), the inter-chunk term scaled before it is
// added as gla.cu does, staged through shared memory to coalesced stores. The state S^T is copied to the split
// before G2 rescales it in place.
// Tiles arrive by TMA (gpu/tensor_map.hpp, bf16_token_heads_map) in a ring of 3 slots, two iterations ahead; a slot
// holds Q, K, V of a chunk as two 64-token x 64-dim swizzled boxes each (walk 1 leaves Q out). Walk 1 reads K and V
// with L2 evict-last, so walk 3's second read of them finds more of them in the L2; walk 3's reads are their last
// (evict-first). The chain's state crosses CTAs through the workspace with .cg accesses (a ring slot is rewritten two
// segments later: L1 may hold a stale copy), ordered by a release store of the flag and an acquire load of it.
//
// The products, terms and their order are gla.cu's, except that W_seg's chunks are decayed to the segment's end and
// O_intra is summed apart from O_inter; and a wgmma may add inside an instruction in another order than mma.sync: the
// engines agree within the tolerance, not to the bit (tests/gpu/gla_test.cpp).
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
constexpr int kBox = kC * 64;               // one box: 64 rows x 64 bf16 (128 B a row)
constexpr uint32_t kBoxBytes = kBox * 2;    // 8 KB
constexpr int kTile = 2 * kBox;             // a chunk of one head: dims 0..63, then 64..127
constexpr uint32_t kTileBytes = kTile * 2;  // 16 KB
constexpr int kSlots = 3;                   // the copy ring
constexpr int kLdO = 64 + 8;                // bf16 row stride of a warpgroup's O staging tile [t][64 values]
constexpr int kRing = 64 * kThreads;  // floats of one state in the chain's ring: element e of thread x at e 256 + x
constexpr float kLog2e = 1.4426950408889634f;
// Shared memory from a 1024-aligned base: slot r holds Q, K, V as tiles 3 r, 3 r + 1, 3 r + 2; then each
// warpgroup's S^T split (hi: 2 boxes [v][k], keys 0..63 then 64..127; lo: 2 more), which after G2 also stages its O
// tile; then P hi and P lo (a box [t][i] each); the slots' barriers and the ticket; and the alignment's slack.
constexpr uint32_t kOffFrag = kSlots * 3 * kTileBytes, kFragBytes = 2 * kTileBytes;
constexpr uint32_t kOffP = kOffFrag + 2 * kFragBytes, kOffBar = kOffP + 2 * kBoxBytes;
constexpr size_t kSmem = kOffBar + kSlots * 8 + 8 + 1024;
static_assert(kSmem <= 227 * 1024, "the one-pass GLA's shared memory exceeds sm_90's 227 KB a block");

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

// The state update's A operand: (lambda^(L-1-i+after) v_i)^T for the chunk's tokens i < L (0 past L), split in NS
// bf16 terms, as gla.cu's state_update; `after` tokens follow the chunk before the end the sum is decayed to (0 in
// walk 3; walk 1 decays to the segment's end).
template <int NS>
__device__ __forceinline__ void decayed_vt(uint32_t (&a)[4][NS][4], const uint32_t (&vf)[4][4], float glog2, int L,
                                           int after, int lane) {
  const int c = lane & 3;
#pragma unroll
  for (int st = 0; st < 4; ++st) {
    float d[4];
#pragma unroll
    for (int x = 0; x < 4; ++x) {
      const int i = 16 * st + 2 * c + (x & 1) + (x >> 1) * 8;
      d[x] = i < L ? exp2f(glog2 * float(L - 1 - i + after)) : 0.f;
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

// Issues S^T += sum_split A_split K (4 k-steps x NS terms of m64n128k16, K MN-major at shared address ka) into the
// open group. s must already be scaled.
template <int NS>
__device__ __forceinline__ void issue_state_update(float (&s)[64], const uint32_t (&a)[4][NS][4], uint32_t ka) {
#pragma unroll
  for (int st = 0; st < 4; ++st) {  // tokens 16 st ..: rows 16 st .. of both K boxes (2 atoms of 8 rows, 2048 B)
    const uint64_t dk = wg::desc_sw128_mn(ka + st * 2048, kBoxBytes);
#pragma unroll
    for (int sp = 0; sp < NS; ++sp) wg::mma_m64n128k16<true>(s, a[st][sp], dk, true);
  }
}
template <int NS>
__device__ __forceinline__ void fence_a(uint32_t (&a)[4][NS][4]) {
#pragma unroll
  for (int st = 0; st < 4; ++st)
#pragma unroll
    for (int sp = 0; sp < NS; ++sp) wg::fence_operand(a[st][sp]);
}

// S^T (this warpgroup's accumulators) split in 2 bf16 terms into the warpgroup's hi and lo tiles [v - 64 w][k]
// (swizzled boxes, the K-major A of G2). Element e of a thread is (v row 16 warp + g + 8 (e % 4 / 2),
// k = 8 (e / 4) + 2 c + e % 2).
__device__ __forceinline__ void store_state_split(bf16* hi, bf16* lo, const float (&s)[64], int warp, int g, int c4) {
#pragma unroll
  for (int e = 0; e < 64; e += 2) {
    const int row = 16 * warp + g + 8 * ((e >> 1) & 1), k = 8 * (e >> 2) + 2 * c4;
    uint32_t h, l;
    mma::split2(s[e], s[e + 1], h, l);
    *reinterpret_cast<uint32_t*>(hi + sw(row, k)) = h;
    *reinterpret_cast<uint32_t*>(lo + sw(row, k)) = l;
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
  unsigned char* smem = smem_raw + ((1024 - (mma::smem_addr(smem_raw) & 1023)) & 1023);
  bf16* tiles = reinterpret_cast<bf16*>(smem);
  const int tid = threadIdx.x, wgi = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, c4 = lane & 3;
  bf16* Fh = reinterpret_cast<bf16*>(smem + kOffFrag + wgi * kFragBytes);  // this warpgroup's S^T split, hi
  bf16* Fl = Fh + kTile;                                                   // lo
  bf16* Os = Fh;  // this warpgroup's O staging tile [t][kLdO], once G2 has read the split
  bf16* Ph = reinterpret_cast<bf16*>(smem + kOffP);
  bf16* Pl = Ph + kBox;
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem + kOffBar);
  uint32_t* ticket = reinterpret_cast<uint32_t*>(smem + kOffBar + kSlots * 8);
  const int v0 = 64 * wgi + 16 * warp;  // the warp's first value row of S^T and O^T
  if (tid == 0) {
    *ticket = atomicAdd(sync + 2 * H, 1u);
    for (int r = 0; r < kSlots; ++r) wg::mbar_init(&bar[r], 1);
    wg::fence_mbar_init();
  }
  __syncthreads();
  const int64_t seg = int64_t(*ticket) / H, n_chunks = (T + kC - 1) / kC;
  const int h = int(*ticket % uint32_t(H));
  const int64_t c_begin = seg * kGlaChainChunks, c_end = std::min(c_begin + kGlaChainChunks, n_chunks);
  const int n = int(c_end - c_begin);
  const int len = int(std::min<int64_t>(kGlaChainChunks * kC, T - c_begin * kC));  // the segment's tokens
  const float glog2 = gamma[h] * kLog2e;

  // Iteration it (0 .. 2n - 1) takes chunk c_begin + it % n from slot it % 3; walk 1 (it < n) needs no Q. Thread 0
  // issues iteration it + 2 once every thread is done with slot (it - 1) % 3, the one it reuses.
  const auto issue = [&](int it) {
    const int r = it % kSlots;
    const bool walk3 = it >= n;
    const int t0 = int((c_begin + (walk3 ? it - n : it)) * kC);
    const uint64_t pol = walk3 ? wg::policy_evict_first() : wg::policy_evict_last();
    uint64_t* b = &bar[r];
    wg::mbar_arrive_expect_tx(b, (walk3 ? 3 : 2) * kTileBytes);
    bf16* base = tiles + 3 * r * kTile;
    for (int half = 0; half < 2; ++half) {
      if (walk3) wg::tma_load_3d_hint(base + half * kBox, &qmap, 64 * half, h, t0, b, pol);
      wg::tma_load_3d_hint(base + kTile + half * kBox, &kmap, 64 * half, h, t0, b, pol);
      wg::tma_load_3d_hint(base + 2 * kTile + half * kBox, &vmap, 64 * half, h, t0, b, pol);
    }
  };
  const auto landed = [&](int it) { wg::mbar_wait(&bar[it % kSlots], uint32_t(it / kSlots) & 1); };
  // Called by every thread once it is done with slot (it - 1) % 3 (its generic reads, and its wgmma reads waited
  // for): the copy engine may then overwrite it with iteration it + 2.
  const auto refill = [&](int it) {
    wg::fence_proxy_async_smem();
    __syncthreads();
    if (tid == 0 && it + 2 < 2 * n) issue(it + 2);
    __syncwarp();  // converged again before the aligned ldmatrix and wgmma instructions
  };
  if (tid == 0) issue(0), issue(1);  // 2 n >= 2; slot 2 is filled by refill(0)

  // 1. W_seg. Two buffers of the state update's operand, so a chunk's products are issued before the previous
  // chunk's have completed (a wgmma reads its register operand until its group completes).
  float s[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) s[i] = 0.f;
  const auto walk1_step = [&](int it, uint32_t(&a)[4][3][4], uint32_t(&a_prev)[4][3][4]) {
    landed(it);
    const int L = int(std::min<int64_t>(kC, T - (c_begin + it) * kC));
    const bf16* Ks = tiles + (3 * (it % kSlots) + 1) * kTile;
    uint32_t vf[4][4];
    load_vt(vf, Ks + kTile, v0, lane);
    decayed_vt<3>(a, vf, glog2, L, len - kC * it - L, lane);
    fence_a(a);
    wg::fence_operand(s);
    wg::fence();
    issue_state_update<3>(s, a, mma::smem_addr(Ks));
    wg::commit();
    wg::wait<1>();  // the previous chunk's products: its slot and a_prev are free
    fence_a(a_prev);
    refill(it);
  };
  uint32_t a0[4][3][4], a1[4][3][4];
  for (int it = 0; it < n; it += 2) {
    walk1_step(it, a0, a1);
    if (it + 1 < n) walk1_step(it + 1, a1, a0);
  }
  wg::wait<0>();
  fence_a(a0);
  fence_a(a1);
  wg::fence_operand(s);

  // 2. The chain. Thread x's element e is (v = v0 + g + 8 (e % 4 / 2), k = 8 (e / 4) + 2 c4 + e % 2).
  {
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
    // 16 loads in flight before their stores: a store to `out` may alias `in` for all the compiler knows, so a
    // load after it waits for it, and one load a store left the chain link 64 L2 round trips long (Nsight Compute
    // on the 1M case: a quarter of the kernel's stall samples on this loop, most on the loads' scoreboard).
#pragma unroll
    for (int e0 = 0; e0 < 64; e0 += 16) {
      float sin[16];
#pragma unroll
      for (int j = 0; j < 16; ++j) sin[j] = seg == 0 ? Sh[s_index(e0 + j)] : __ldcg(in + (e0 + j) * kThreads);
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        const float sout = dl * sin[j] + s[e0 + j];
        if (last) Sh[s_index(e0 + j)] = sout;
        else __stcg(out + (e0 + j) * kThreads, sout);
        s[e0 + j] = sin[j];
      }
    }
    __threadfence();
    __syncthreads();
    if (tid == 0 && !last) st_release(sync + (seg & 1) * H + h, uint32_t(seg + 1));
  }

  // 3. The outputs, chunk after chunk from S_in.
  const uint32_t fha = mma::smem_addr(Fh), fla = mma::smem_addr(Fl);
  const uint32_t pha = mma::smem_addr(Ph), pla = mma::smem_addr(Pl);
  for (int it = n; it < 2 * n; ++it) {
    landed(it);
    const int64_t t0 = (c_begin + (it - n)) * kC;
    const int L = int(std::min<int64_t>(kC, T - t0));
    const bf16* Qs = tiles + 3 * (it % kSlots) * kTile;
    const bf16* Ks = Qs + kTile;
    const bf16* Vs = Ks + kTile;
    const uint32_t qa = mma::smem_addr(Qs), ka = mma::smem_addr(Ks), va = mma::smem_addr(Vs);
    // G1: P = Q K^T, this warpgroup's 32 columns
    float p[16];
    wg::fence_operand(p);
    wg::fence();
#pragma unroll
    for (int ks = 0; ks < 8; ++ks) {
      const uint32_t koff = (ks >> 2) * kBoxBytes + (ks & 3) * 32;
      wg::mma_m64n32k16_ss(p, wg::desc_sw128(qa + koff), wg::desc_sw128(ka + koff + wgi * 4096), ks > 0);
    }
    wg::commit();
    // S_c's split for G2, then the state update's operand; S^T is scaled for the update once the split holds S_c
    store_state_split(Fh, Fl, s, warp, g, c4);
    wg::fence_proxy_async_smem();  // the split's generic writes before the warpgroup's wgmma reads them
    wg::bar_sync(1 + wgi, 128);
    uint32_t vf[4][4], a[4][2][4];
    load_vt(vf, Vs, v0, lane);
    decayed_vt<2>(a, vf, glog2, L, 0, lane);
    const float dL = exp2f(glog2 * float(L));
#pragma unroll
    for (int i = 0; i < 64; ++i) s[i] *= dL;
    // G2: O_inter^T = S^T Q^T (2 terms), and S^T = lambda^L S^T + (decayed V^T) K (2 terms)
    float oi[32];
    fence_a(a);
    wg::fence_operand(oi);
    wg::fence_operand(s);
    wg::fence();
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      const uint32_t koff = (kk >> 2) * kBoxBytes + (kk & 3) * 32;
      const uint64_t dq = wg::desc_sw128(qa + koff);
      wg::mma_m64n64k16_ss(oi, wg::desc_sw128(fha + koff), dq, kk > 0);
      wg::mma_m64n64k16_ss(oi, wg::desc_sw128(fla + koff), dq, true);
    }
    issue_state_update<2>(s, a, ka);
    wg::commit();
    // P[t][i] = lambda^(t-i) q_t . k_i for i <= t, else 0; rows t of warp w: 16 w + g (+ 8)
    wg::wait<1>();
    wg::fence_operand(p);
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
    // Both halves of P written (generic writes before the wgmma reads); every thread is done with slot (it - 1) % 3
    refill(it);
    // G3: O_intra^T = V^T P^T (P is zero above the diagonal)
    float oa[32];
    wg::fence_operand(oa);
    wg::fence();
#pragma unroll
    for (int st = 0; st < 4; ++st) {  // tokens 16 st ..: rows 16 st .. of this warpgroup's V box
      const uint64_t dv = wg::desc_sw128_mn(va + wgi * kBoxBytes + st * 2048, kBoxBytes);
      wg::mma_m64n64k16_ss<true>(oa, dv, wg::desc_sw128(pha + st * 32), st > 0);
      wg::mma_m64n64k16_ss<true>(oa, dv, wg::desc_sw128(pla + st * 32), true);
    }
    wg::commit();
    wg::wait<0>();
    wg::fence_operand(oi);
    wg::fence_operand(oa);
    wg::fence_operand(s);
    fence_a(a);
    // The staging tile overlays the split G2 read for every warp's rows: all four warps past their wait first (the
    // PTX ISA does not say that one warp's wait covers the warpgroup's reads of shared memory)
    wg::bar_sync(1 + wgi, 128);
    // O = tau (lambda^(t+1) O_inter + O_intra); column t = 8 j + 2 c (+1) of O^T, rows v - 64 w = 16 warp + g (+8)
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float d0 = exp2f(glog2 * float(8 * j + 2 * c4 + 1)), d1 = exp2f(glog2 * float(8 * j + 2 * c4 + 2));
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int t = 8 * j + 2 * c4 + (e & 1), vl = 16 * warp + g + 8 * (e >> 1);
        const float x = (e & 1 ? d1 : d0) * oi[4 * j + e] + oa[4 * j + e];
        Os[t * kLdO + vl] = __float2bfloat16_rn(tau * x);
      }
    }
    wg::bar_sync(1 + wgi, 128);
    for (int i = tid & 127; i < L * 8; i += 128) {
      const int r = i >> 3, piece = i & 7;
      *reinterpret_cast<uint4*>(o + (t0 + r) * ldo + int64_t(h) * kHd + 64 * wgi + piece * 8) =
          *reinterpret_cast<const uint4*>(Os + r * kLdO + piece * 8);
    }
    // The staging read before the next split overwrites it; both warpgroups' G3 done before the next P is written
    __syncthreads();
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
