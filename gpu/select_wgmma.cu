// The selection's two scoring passes on Hopper's warpgroup MMA (wgmma, sm_90a): lse_partial_wg and score_pool_wg, the
// functions of select_blocks.cu's lse_partial and score_pool (same grids, arguments and outputs) for prefill
// sub-chunks, where those mma.sync kernels stall on their own dependency chains (under Nsight Compute on the 1M chunk
// their tensor pipe is busy well under half the time, half their issue slots go unused, and the top stall is a
// fixed-latency dependency: docs/performance.md, "Measured reasons behind kernel choices").
//
// A CTA is 4 warpgroups (512 threads) and 16 queries; warp w takes query w, so its 16 rows of the warpgroup's M = 64
// are that query's 16 heads and its A operand (the query's Q, 16 heads x 128) stays in registers (32 a thread) for the
// whole CTA. Compressed keys are the B operand: tiles of 128 windows (K = 128, 32 KB, 128-byte swizzle) in a ring of
// 4 shared-memory stages filled by the tensor copy engine (TMA), shared by the 4 warpgroups, which run decoupled
// (for_tiles). A warpgroup takes a tile as 8 wgmma m64n128k16 (one per 16 of K) into 64 fp32 accumulators a thread,
// logits[head, window] for rows g, g + 8 (heads) and 32 windows; the products of one warpgroup run while the others
// take their exponentials. One CTA an SM (up to 162 KB of shared memory, ~127 registers a thread).
//
//  - lse_partial_wg: per head an online (max, sum) of exp2 over the windows of the CTA's split the query sees (one
//    rescale a tile), merged over the 4 lanes holding the head's other windows: the (max, sum) pairs of lse_partial.
//  - score_pool_wg: s[window] = sum over the 16 heads of exp2(logit - LSE2_h): the two heads of a thread first, then
//    a reduce-scatter over the 8 lanes holding the other heads (each step halves what a lane keeps: 28 shuffles a
//    tile, not 96), rounded once to bf16 into shared memory, then max-pooled into the blocks as score_pool does.
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "gpu/kernels.cuh"
#include "gpu/mma.cuh"
#include "gpu/pdl.cuh"
#include "gpu/select_chunk.cuh"
#include "gpu/hopper.cuh"
#include "gpu/tensor_map.hpp"
#include "model/windows.hpp"

namespace salasim::gpu {

namespace {

using bf16 = __nv_bfloat16;

constexpr int kGroups = 4;  // warpgroups per CTA
constexpr int kThreads = 128 * kGroups;
static_assert(kQT == 4 * kGroups, "one query per warp");
constexpr int kTile = 128;  // windows per tile: the N of one m64n128k16
constexpr int kStages = 4;
constexpr int kWarpsCta = kThreads / 32;
constexpr uint32_t kHalfBytes = kTile * 128;     // one K-half of a tile: 128 rows of 64 bf16, 16 KB
constexpr uint32_t kTileBytes = 2 * kHalfBytes;  // 32 KB
constexpr int kPoolWindows = 8 * kTile;          // score_pool_wg's windows a CTA: 4 * 255 + 1 <= 1024
constexpr int kLseSplits = 2;                    // LSE splits a CTA (2 x 512 windows: 8 tiles)
constexpr size_t kRingBytes = size_t(kStages) * kTileBytes;
constexpr size_t kSmem = 1024 + kRingBytes;                           // + slack to align the ring to 1024 B
constexpr size_t kPoolSmem = kSmem + size_t(kQT) * kPoolWindows * 2;  // + bf16 window scores: 164,864 B

// The warp's query (16 heads of kv group g) as A fragments, straight from global memory: qa[ks] is k-step ks
// (dims 16 ks ..), rows g = lane / 4 (head g) and g + 8; zeros past the sub-chunk.
__device__ void load_query_frags(const Chunk& ch, int64_t tl, int grp, int lane, uint32_t (&qa)[8][4]) {
  const int gr = lane >> 2, c = lane & 3;
  const bool ok = tl < ch.nq;
  const uint32_t* r0 =
      reinterpret_cast<const uint32_t*>(ch.q + (ch.t0 + (ok ? tl : 0)) * ch.ldq + (int64_t(grp) * kRows + gr) * kHd);
  const uint32_t* r1 = r0 + 8 * kHd / 2;  // head gr + 8
#pragma unroll
  for (int ks = 0; ks < 8; ++ks) {
    const int k = (16 * ks + 2 * c) / 2;  // u32 index of the bf16 pair
    qa[ks][0] = ok ? __ldg(r0 + k) : 0u;
    qa[ks][1] = ok ? __ldg(r1 + k) : 0u;
    qa[ks][2] = ok ? __ldg(r0 + k + 4) : 0u;
    qa[ks][3] = ok ? __ldg(r1 + k + 4) : 0u;
  }
}

// d[head row, window] = Q K^T for the warpgroup's 4 queries and the 128 windows of `tile`: 8 wgmma m64n128k16 (one
// per 16 of K), committed as one group and not waited on.
__device__ void tile_logits(float (&d)[64], const uint32_t (&qa)[8][4], const unsigned char* tile) {
  const uint32_t base = mma::smem_addr(tile);
  wg::fence_operand(d);
  wg::fence();
#pragma unroll
  for (int ks = 0; ks < 8; ++ks)
    wg::mma_m64n128k16(d, qa[ks], wg::desc_sw128(base + (ks >> 2) * kHalfBytes + (ks & 3) * 32), ks > 0);
  wg::commit();
}

// The ring's control words (static shared memory): full[s] completes when stage s's tile has landed; used[s] counts
// the warps that have finished with stage s (monotonic: the kWarpsCta-th of a round refills it).
struct RingCtl {
  uint64_t full[kStages];
  int used[kStages];
};

// Tile kt (windows e0 + 128 kt .., kv head grp of the map) into its stage: two boxes of 64 dims x 128 rows, 128-byte
// swizzled by the copy engine exactly as the wgmma descriptor reads them; rows past the map's extent read as zeros.
__device__ void issue_tile(RingCtl& ctl, unsigned char* ring, const CUtensorMap* map, int64_t e0, int kt, int grp) {
  const int s = kt % kStages;
  unsigned char* st = ring + s * kTileBytes;
  wg::mbar_arrive_expect_tx(&ctl.full[s], kTileBytes);
  const int row = int(e0 + int64_t(kt) * kTile);
  wg::tma_load_3d(st, map, 0, row, grp, &ctl.full[s]);
  wg::tma_load_3d(st + kHalfBytes, map, 64, row, grp, &ctl.full[s]);
}

// The ring: tiles e0 + 128 kt (kt < n_tiles, CTA-uniform) of the map through kStages stages, each warpgroup at its
// own pace. Thread 0 issues the first kStages tiles; after that the last warp to finish with a stage refills it, so
// no warpgroup waits for another except through a stage's data: one may run up to kStages - 1 tiles ahead of the
// slowest (a CTA barrier a tile kept the four in step: each tile cost the four warpgroups' products plus the last
// one's exponentials). A warpgroup's own products are waited on before its epilogue: what runs beside them is the
// other warpgroups' exponentials (two halves of a tile in flight by turns, 32 accumulators each, measured slower:
// the narrower products cost more than the overlap they bought; the halves again, each one's exponentials beside the
// next half's product with nothing serialized by ptxas, measured no faster: docs/performance.md, "Measured reasons
// behind kernel choices").
//
// Tiles kt < n_active (a prefix: the warpgroup's queries see windows only there; warp-uniform, so that ptxas keeps
// the products asynchronous) get epi(kt, d); every tile then gets done(kt). Ends with a CTA barrier.
template <class Epi, class Done>
__device__ void for_tiles(unsigned char* ring, int n_tiles, int n_active, const CUtensorMap* map, int64_t e0, int grp,
                          const uint32_t (&qa)[8][4], Epi&& epi, Done&& done) {
  __shared__ RingCtl ctl;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) wg::mbar_init(&ctl.full[s], 1), ctl.used[s] = 0;
    wg::fence_mbar_init();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int kt = 0; kt < n_tiles && kt < kStages; ++kt) issue_tile(ctl, ring, map, e0, kt, grp);
  auto ready = [&](int kt) { wg::mbar_wait(&ctl.full[kt % kStages], uint32_t(kt / kStages) & 1u); };
  auto release = [&](int kt) {  // the warp's products have read tile kt (waited on)
    __syncwarp();
    if (threadIdx.x % 32 == 0 && atomicAdd(&ctl.used[kt % kStages], 1) % kWarpsCta == kWarpsCta - 1 &&
        kt + kStages < n_tiles)
      issue_tile(ctl, ring, map, e0, kt + kStages, grp);
  };
  float d[64];
  for (int kt = 0; kt < n_active; ++kt) {
    ready(kt);
    tile_logits(d, qa, ring + (kt % kStages) * kTileBytes);
    wg::wait<0>();
    wg::fence_operand(d);
    release(kt);
    epi(kt, d);
    done(kt);
  }
  for (int kt = n_active; kt < n_tiles; ++kt) {  // the stages still pass through this warpgroup's count
    ready(kt);
    release(kt);
    done(kt);
  }
  __syncthreads();
}

__device__ unsigned char* aligned_ring(unsigned char* smem) {
  const uint32_t a = mma::smem_addr(smem);
  return smem + ((1024 - (a & 1023)) & 1023);
}

// Windows the query at chunk-local tl sees of a pass whose K windows are (kernel, stride): n_windows(p + 1).
__device__ int64_t windows_seen(const Chunk& ch, int64_t tl, int kernel, int stride) {
  return tl < ch.nq ? n_windows(ch.pos0 + ch.t0 + tl + 1, kernel, stride) : 0;
}

// What a warp of a CTA over windows w_begin + [0, span) (tiles of kTile) and queries tq0 .. tq0 + 15 takes: lim,
// its query's windows there are [.., lim); n_active, the tiles its warpgroup's queries see (0 for a warpgroup past
// the sub-chunk), broadcast from lane 0 so that ptxas sees it warp-uniform.
struct WarpLimits {
  int lim, n_active;
};
__device__ WarpLimits warp_limits(const Chunk& ch, int64_t tq0, int warp, int64_t w_begin, int span, int n_tiles,
                                  int kernel, int stride) {
  auto lim_of = [&](int64_t t) {
    return int(std::min<int64_t>(std::max<int64_t>(windows_seen(ch, t, kernel, stride) - w_begin, 0), span));
  };
  const int64_t wg_last = tq0 + 4 * (warp / 4) + 3;  // the warpgroup's last query (windows_seen grows with t)
  const int wg_lim = tq0 + 4 * (warp / 4) < ch.nq ? lim_of(std::min<int64_t>(wg_last, ch.nq - 1)) : 0;
  const int n_active = std::min(n_tiles, (wg_lim + kTile - 1) / kTile);
  return {lim_of(tq0 + warp), __shfl_sync(0xffffffffu, n_active, 0)};
}

// As lse_partial_kernel (select_blocks.cu): part [nq, H, nsplit] (max, sum) of exp2 over each split's windows the
// query sees. A CTA takes kLseSplits consecutive splits of split_w windows (a multiple of 128), blockIdx.y kLseSplits
// apart, so that its fixed costs (the queries, the first tile's latency) spread over more tiles.
__global__ void __launch_bounds__(kThreads, 1)
    lse_partial_wg_kernel(const __grid_constant__ CUtensorMap k2map, Chunk ch, int64_t n2c, int kernel2, int stride2,
                          int split_w, int64_t nsplit, float2* __restrict__ part) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* ring = aligned_ring(smem);
  const int64_t split0 = int64_t(blockIdx.y) * kLseSplits, e_begin = split0 * split_w, tq0 = int64_t(blockIdx.x) * kQT;
  const int span = kLseSplits * split_w, tiles_per_split = split_w / kTile;
  const int grp = blockIdx.z, warp = threadIdx.x / 32, lane = threadIdx.x % 32, c = lane & 3, gr = lane >> 2;
  const int64_t tl = tq0 + warp;
  const int n_tiles = int(std::min<int64_t>(span, n2c - e_begin) + kTile - 1) / kTile;
  const WarpLimits wl = warp_limits(ch, tq0, warp, e_begin, span, n_tiles, kernel2, stride2);
  uint32_t qa[8][4];
  load_query_frags(ch, tl, grp, lane, qa);
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // heads gr, gr + 8
  auto epi = [&](int kt, const float(&d)[64]) {
    const int local = kt * kTile;  // window e_begin + local + n is column n of the tile
    // windows the query does not see read as -inf (exp2 0), tested only in the tile where its windows end; the
    // accumulators themselves stay untouched (ptxas serializes products whose registers are written in between)
    auto body = [&](auto masked) {
      auto logit = [&](int j, int e, int r) {
        return masked && local + 8 * j + 2 * c + e >= wl.lim ? -INFINITY : d[4 * j + 2 * r + e];
      };
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float tm = -INFINITY;  // the tile's max logit (scaling by sc_log2 > 0 keeps the order)
#pragma unroll
        for (int j = 0; j < 16; ++j) tm = fmaxf(tm, fmaxf(logit(j, 0, r), logit(j, 1, r)));
        if (tm == -INFINITY) continue;
        tm *= ch.sc_log2;
        if (tm > m[r]) {
          l[r] = m[r] > -INFINITY ? l[r] * exp2f(m[r] - tm) : 0.f;
          m[r] = tm;
        }
        float sum[2] = {0.f, 0.f};  // two chains of dependent adds, not one
#pragma unroll
        for (int j = 0; j < 16; ++j)
#pragma unroll
          for (int e = 0; e < 2; ++e) sum[e] += mma::exp2_ftz(logit(j, e, r) * ch.sc_log2 - m[r]);
        l[r] += sum[0] + sum[1];
      }
    };
    if (local + kTile <= wl.lim) body(std::false_type{});
    else body(std::true_type{});
  };
  auto done = [&](int kt) {
    if ((kt + 1) % tiles_per_split != 0 && kt + 1 != n_tiles) return;
    // the split's last tile: merge over the 4 lanes of each head (lanes differing in c) in a fixed tree, write, reset
    float mm[2] = {m[0], m[1]}, ll[2] = {l[0], l[1]};
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int o = 1; o < 4; o <<= 1)
        merge_ml(mm[r], ll[r], __shfl_xor_sync(0xffffffffu, mm[r], o), __shfl_xor_sync(0xffffffffu, ll[r], o));
    const int64_t split = split0 + kt / tiles_per_split;
    if (c == 0 && tl < ch.nq)
#pragma unroll
      for (int r = 0; r < 2; ++r)
        part[(tl * ch.H + int64_t(grp) * kRows + gr + 8 * r) * nsplit + split] = make_float2(mm[r], ll[r]);
    m[0] = m[1] = -INFINITY, l[0] = l[1] = 0.f;
  };
  for_tiles(ring, n_tiles, wl.n_active, &k2map, e_begin, grp, qa, epi, done);
}

// v[j] (j < 2n) summed with the lane `o` apart, each of the pair keeping half: the lane whose bit `o` is clear keeps
// j < n, the other j >= n; kept[j'] is then entry j' + n * bit of the pair's sum.
template <int N>
__device__ __forceinline__ void halve(const float (&v)[2 * N][2], float (&kept)[N][2], int o, bool bit) {
#pragma unroll
  for (int j = 0; j < N; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const float send = bit ? v[j][e] : v[j + N][e], mine = bit ? v[j + N][e] : v[j][e];
      kept[j][e] = mine + __shfl_xor_sync(0xffffffffu, send, o);
    }
}

// As score_pool_kernel (select_blocks.cu): pooled [nq, G, nbs] 16-bit keys of blocks b0 .. b0 + pool_blocks - 1
// (4 pool_blocks + 1 <= kPoolWindows).
__global__ void __launch_bounds__(kThreads, 1)
    score_pool_wg_kernel(const __grid_constant__ CUtensorMap k1map, Chunk ch, int64_t n1c, int kernel, int stride,
                         int block, int pool_blocks, const float* __restrict__ lse, uint16_t* __restrict__ pooled,
                         int64_t nbs) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  extern __shared__ __align__(1024) unsigned char smem[];
  unsigned char* ring = aligned_ring(smem);
  uint16_t* wsc = reinterpret_cast<uint16_t*>(ring + kRingBytes);  // [kQT][kPoolWindows] bf16 window scores
  const int64_t b0 = int64_t(blockIdx.y) * pool_blocks, tq0 = int64_t(blockIdx.x) * kQT;
  const int64_t w_begin = 4 * b0 - 1;  // windows 4 b - 1 .. 4 b + 3 overlap block b (kernel 32, stride 16, block 64)
  const int grp = blockIdx.z, warp = threadIdx.x / 32, lane = threadIdx.x % 32, c = lane & 3, gr = lane >> 2;
  const int64_t tl = tq0 + warp;
  const int lo = w_begin < 0 ? int(-w_begin) : 0;  // windows w_begin + [lo, lim) are the ones query tl sees
  const int n_tiles = (4 * pool_blocks + 1 + kTile - 1) / kTile;
  const WarpLimits wl = warp_limits(ch, tq0, warp, w_begin, n_tiles * kTile, n_tiles, kernel, stride);
  const float* lse_q = lse + (tl < ch.nq ? tl : 0) * ch.H + int64_t(grp) * kRows;
  const float lse0 = tl < ch.nq ? lse_q[gr] : 0.f, lse1 = tl < ch.nq ? lse_q[gr + 8] : 0.f;
  uint32_t qa[8][4];
  load_query_frags(ch, tl, grp, lane, qa);
  const bool b0bit = (lane >> 2) & 1, b1bit = (lane >> 3) & 1, b2bit = (lane >> 4) & 1;
  const int jsel = 8 * b0bit + 4 * b1bit + 2 * b2bit;  // the column groups jsel, jsel + 1 this lane ends with
  uint16_t* wq = wsc + warp * kPoolWindows;
  auto epi = [&](int kt, const float(&d)[64]) {
    float v[16][2];  // column group j (windows 128 kt + 8 j + 2 c + e): heads gr and gr + 8
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        v[j][e] = mma::exp2_ftz(d[4 * j + e] * ch.sc_log2 - lse0) + mma::exp2_ftz(d[4 * j + 2 + e] * ch.sc_log2 - lse1);
    float v8[8][2], v4[4][2], v2[2][2];
    halve<8>(v, v8, 4, b0bit);
    halve<4>(v8, v4, 8, b1bit);
    halve<2>(v4, v2, 16, b2bit);
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int w = kt * kTile + 8 * (jsel + i) + 2 * c;
      // a window the query does not see scores 0 (the reference's zeroed score array): it never raises a max
      const uint32_t k0 = w >= lo && w < wl.lim ? __bfloat16_as_ushort(__float2bfloat16_rn(v2[i][0])) : 0u;
      const uint32_t k1v = w + 1 >= lo && w + 1 < wl.lim ? __bfloat16_as_ushort(__float2bfloat16_rn(v2[i][1])) : 0u;
      *reinterpret_cast<uint32_t*>(wq + w) = k0 | (k1v << 16);
    }
  };
  auto done = [&](int kt) {  // tiles past the warpgroup's queries: their windows score 0
    if (kt < wl.n_active) return;
    for (int i = lane; i < kTile / 2; i += 32) reinterpret_cast<uint32_t*>(wq + kt * kTile)[i] = 0u;
  };
  for_tiles(ring, n_tiles, wl.n_active, &k1map, w_begin, grp, qa, epi, done);
  // max-pool (for_tiles ended with a CTA barrier): block b0 + j takes local windows 4j .. 4j + 4
  pool_to_blocks(ch, wsc, kPoolWindows, kQT, tq0, b0, pool_blocks, block, grp, pooled, nbs);
}

bool attrs_set = false;  // the dynamic shared-memory limits, raised once per process
cudaError_t set_attrs() {
  if (attrs_set) return cudaSuccess;
  cudaError_t e = cudaFuncSetAttribute(lse_partial_wg_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem));
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(score_pool_wg_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kPoolSmem));
  attrs_set = e == cudaSuccess;
  return e;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ const int kBuiltWgmma = 1;
#else
__device__ const int kBuiltWgmma = 0;
#endif

}  // namespace

bool wgmma_available() {
  static const bool ok = [] {
    int dev = 0, major = 0, minor = 0, built = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
      return false;
    if (major != 9 || minor != 0 || !tensor_maps_available()) return false;
    if (cudaMemcpyFromSymbol(&built, kBuiltWgmma, sizeof built) != cudaSuccess) {
      (void)cudaGetLastError();  // no image for this device: not available, and no sticky error left behind
      return false;
    }
    return built == 1;
  }();
  return ok;
}

cudaError_t launch_lse_partial_wg(const Chunk& ch, const bf16* k2, int64_t k2_cap, int64_t n2c, int kernel2,
                                  int stride2, int split_w, int64_t nsplit, float2* part, Stream s) {
  if (split_w % kTile != 0) return cudaErrorInvalidValue;
  if (const cudaError_t e = set_attrs(); e != cudaSuccess) return e;
  CUtensorMap map;
  if (const cudaError_t e = bf16_rows_map(&map, k2, k2_cap, n2c, ch.G, kTile); e != cudaSuccess) return e;
  const int64_t splits = (n2c + split_w - 1) / split_w;
  const dim3 grid(unsigned((ch.nq + kQT - 1) / kQT), unsigned((splits + kLseSplits - 1) / kLseSplits), unsigned(ch.G));
  return launch_pdl(lse_partial_wg_kernel, grid, kThreads, kSmem, s, map, ch, n2c, kernel2, stride2, split_w, nsplit,
                    part);
}

cudaError_t launch_score_pool_wg(const Chunk& ch, const bf16* k1, int64_t k1_cap, int64_t n1c, int kernel, int stride,
                                 int block, int pool_blocks, const float* lse, uint16_t* pooled, int64_t nbs,
                                 Stream s) {
  if (4 * pool_blocks + 1 > kPoolWindows) return cudaErrorInvalidValue;
  if (const cudaError_t e = set_attrs(); e != cudaSuccess) return e;
  CUtensorMap map;
  if (const cudaError_t e = bf16_rows_map(&map, k1, k1_cap, n1c, ch.G, kTile); e != cudaSuccess) return e;
  const int64_t nbc = (ch.pos0 + ch.t0 + ch.nq - 1) / block + 1;
  const dim3 grid(unsigned((ch.nq + kQT - 1) / kQT), unsigned((nbc + pool_blocks - 1) / pool_blocks), unsigned(ch.G));
  return launch_pdl(score_pool_wg_kernel, grid, kThreads, kPoolSmem, s, map, ch, n1c, kernel, stride, block,
                    pool_blocks, lse, pooled, nbs);
}

}  // namespace salasim::gpu
