// gemv: the single-token case of linear (decode), y = alpha * W x with W [out, in] bf16 row-major, fp32 accumulate,
// bf16 out. Decode streams every weight once per token, so this is a pure bandwidth kernel: what matters is bytes in
// flight per SM from the first cycle, and how soon the last of them land. A warp takes two rows (x's loads shared by
// both) over a slice of their columns; per batch a lane issues kUnroll 16-byte loads per row (8 weights each, streamed
// past the caches: each is read once a token) and the matching 16-byte pieces of x (from L1/L2: x is at most 96 KiB
// and every warp of the SM reads it), all before the first FMA. No shared-memory staging of x: the barrier it needed
// held every weight load back until x had arrived.
// gemv_mlp_act: the gate|up projection with mlp_act in its epilogue: a warp's two rows are gate row c and up row
// I + c, so it writes act[c] = bf16(silu(g) * u) from the bf16-rounded g and u, the bits of gemv then mlp_act, one
// launch and no gu round trip fewer per layer.
// cuBLAS stays available (linear.hpp: Gemv::cublas) so the two are measured side by side (bench/op_cases: gemv.*).
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/linear.hpp"

namespace salasim::gpu {

namespace {

constexpr int kWarps = 8, kUnroll = 4, kRows = 2;
constexpr int kStep = 32 * 8;  // elements a warp covers per load

// The weights of batch `base` (kUnroll 16-byte loads per row and lane; 0 at and past `end`).
__device__ __forceinline__ void load_weights(const uint16_t* const (&w)[kRows], int base, int end,
                                             uint4 (&wv)[kRows][kUnroll]) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int i = base + u * kStep;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      wv[r][u] = i < end ? __ldcs(reinterpret_cast<const uint4*>(w[r] + i)) : make_uint4(0, 0, 0, 0);
  }
}

// acc[r] += sum over [begin, end) of w[r][i] * x[i], the lane's share (lane * 8 + k * kStep); wv holds the first batch.
// SharedX: x was written by this kernel (the fused residual's prologue, in shared or global memory): ordinary loads,
// not the read-only path.
template <bool SharedX>
__device__ __forceinline__ void dot_rows(const uint16_t* const (&w)[kRows], const uint16_t* __restrict__ x, int begin,
                                         int end, int lane, uint4 (&wv)[kRows][kUnroll], float (&acc)[kRows]) {
  for (int base = begin + lane * 8; base < end; base += kUnroll * kStep) {
    if (base != begin + lane * 8) load_weights(w, base, end, wv);
    uint4 xv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kStep;
      const uint4* px = reinterpret_cast<const uint4*>(x + i);
      xv[u] = i < end ? (SharedX ? *px : __ldg(px)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float xf[8];
      unpack_bf16x8(xv[u], xf);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        float wf[8];
        unpack_bf16x8(wv[r][u], wf);
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[r] += wf[j] * xf[j];
      }
    }
  }
}

// The residual the fused form computes first (linear.hpp GemvResidual, as raw pointers).
struct ResidualArgs {
  const uint16_t* h;
  const uint16_t* b;
  float scale;
  const uint16_t* w;
  float eps;
  uint16_t* h_out;
  uint16_t* a_out;
};

// residual_norm_row (kernels.cuh) for rows of exactly kResPieces * 8 elements a thread: the same expressions in the
// same order, so the same bits, with each pass's loads issued together. The norm's weights (which no kernel writes)
// were staged in shared memory (ws) before pdl_wait, while the kernel before still ran; h and b are loaded at once;
// so the prologue waits on one L2 round trip where residual_norm_row waits on four. x lands in xs; the first CTA also
// writes h_out and a_out.
constexpr int kResPieces = 2;  // 4096-wide rows over 256 threads
__device__ __forceinline__ void residual_norm_fast(const uint16_t* h, const uint16_t* b, int D, float scale,
                                                   const uint16_t* ws, float eps, bool first, uint16_t* h_out,
                                                   uint16_t* a_out, uint16_t* xs) {
  uint4 hv[kResPieces], bv[kResPieces];
#pragma unroll
  for (int k = 0; k < kResPieces; ++k) {
    const int i = (threadIdx.x + k * blockDim.x) * 8;
    hv[k] = *reinterpret_cast<const uint4*>(h + i);
    bv[k] = *reinterpret_cast<const uint4*>(b + i);
  }
  float ss = 0;
#pragma unroll
  for (int k = 0; k < kResPieces; ++k) {
    const int i = (threadIdx.x + k * blockDim.x) * 8;
    float v[8], bf[8];
    unpack_bf16x8(hv[k], v);
    unpack_bf16x8(bv[k], bf);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      v[j] = round_bf16_dev(v[j] + scale * bf[j]);
      ss += v[j] * v[j];
    }
    st_bf16x8(xs + i, v);  // exact: v is already rounded
    if (first) st_bf16x8(h_out + i, v);
  }
  const float inv = rsqrtf(block_sum(ss) / float(D) + eps);
#pragma unroll
  for (int k = 0; k < kResPieces; ++k) {
    const int i = (threadIdx.x + k * blockDim.x) * 8;
    float v[8];
    rmsnorm_x8(xs + i, ws + i, inv, v);
    st_bf16x8(xs + i, v);
    if (first) st_bf16x8(a_out + i, v);
  }
}

// The gate the gated form computes first (linear.hpp GemvGate, as raw pointers).
struct GateArgs {
  const uint16_t* a;
  const uint16_t* z;
  const uint16_t* w;
  float eps;
  uint16_t* x_out;
};

// The gated prologue for rows of exactly kResPieces * 8 elements a thread: with w, rmsnorm_gate_row (kernels.cuh),
// the same expressions in the same order; without, the gate alone (gate.cu's expression). a and z are loaded at once
// and the norm's weights were staged in shared memory (ws) before pdl_wait, so it waits on one L2 round trip. x lands
// in xs; the first CTA also writes x_out when there is one.
__device__ __forceinline__ void gate_fast(const GateArgs& g, int D, const uint16_t* ws, bool first, uint16_t* xs) {
  uint4 av[kResPieces], zv[kResPieces];
#pragma unroll
  for (int k = 0; k < kResPieces; ++k) {
    const int i = (threadIdx.x + k * blockDim.x) * 8;
    av[k] = *reinterpret_cast<const uint4*>(g.a + i);
    zv[k] = *reinterpret_cast<const uint4*>(g.z + i);
  }
  float inv = 0;
  if (g.w) {
    float ss = 0;
#pragma unroll
    for (int k = 0; k < kResPieces; ++k) {
      float v[8];
      unpack_bf16x8(av[k], v);
#pragma unroll
      for (int j = 0; j < 8; ++j) ss += v[j] * v[j];
    }
    inv = rsqrtf(block_sum(ss) / float(D) + g.eps);
  }
#pragma unroll
  for (int k = 0; k < kResPieces; ++k) {
    const int i = (threadIdx.x + k * blockDim.x) * 8;
    float v[8], zf[8];
    unpack_bf16x8(av[k], v);
    unpack_bf16x8(zv[k], zf);
    if (g.w) {
      float wf[8];
      ld_bf16x8(ws + i, wf);
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = round_bf16_dev(v[j] * inv * wf[j]);
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = gate_of(v[j], zf[j]);
    st_bf16x8(xs + i, v);
    if (first && g.x_out) st_bf16x8(g.x_out + i, v);
  }
}

// The gated prologue of any row width (in % 8 == 0): rmsnorm_gate_row, or the gate alone, into y.
__device__ __forceinline__ void gate_row(const GateArgs& g, int D, uint16_t* y) {
  if (g.w) return rmsnorm_gate_row(g.a, g.w, g.z, D, g.eps, y, nullptr);
  for (int i = threadIdx.x * 8; i < D; i += blockDim.x * 8) {
    float v[8], zf[8];
    ld_bf16x8(g.a + i, v);
    ld_bf16x8(g.z + i, zf);
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = gate_of(v[j], zf[j]);
    st_bf16x8(y + i, v);
  }
}

// What a GEMV computes before its dot products, beside x given: the residual and the norm after it (linear.hpp
// GemvResidual), or the gate of the mixer output (GemvGate); each of any row width or, "fast", of kResPieces *
// 2048-wide rows.
enum Prologue { kPlain = 0, kResidual = 1, kResidualFast = 2, kGate = 3, kGateFast = 4 };
struct PrologueArgs {
  ResidualArgs res;
  GateArgs gate;
};
constexpr bool fast_form(int R) { return R == kResidualFast || R == kGateFast; }

// A work item is kWarps / S row pairs, each split over S warps; warp w takes pair w / S of the item's and the columns
// [s * len, (s + 1) * len), s = w % S, len = in / S rounded up to 8, both rows at once; the S partial sums of a row
// are added in warp order after a barrier (deterministic). Act: W is the fused gate|up [2I, in] and "out" is I; pair
// c is rows c and I + c and writes act[c] (above); otherwise pair p is rows 2p, 2p + 1 of y.
// Why split every row: a warp streams only what its loads in flight carry over the memory latency, a small share of
// the bandwidth, so a warp that owned whole rows lived long, and the last wave's CTAs, finishing one by one, left the
// GPU partly idle for about a warp's lifetime at the end of every GEMV: 129 GEMVs a token. A warp owning 1024 columns
// (4096-wide rows: one batch of loads) or 2048 (16384-wide) has a quarter of a 4096-wide row's columns and lives
// about a quarter as long, and the tail shrinks with it (docs/performance.md, "Measured reasons behind kernel
// choices").
// Launched with programmatic dependent launch (pdl.cuh): the first batch of weights, which no kernel writes, is
// loaded before pdl_wait(), while the kernel that writes x (a norm, a gate, the MLP activation) still runs; x is read,
// and y written, only after it.
// The plain form has one CTA an item (grid = items). Res, the residual fused in (linear.hpp gemv_residual): the
// grid is what fits on the GPU at once and a CTA takes items blockIdx.x, + gridDim.x, ...; each CTA first computes
// the residual and the norm of the whole row into shared memory (residual_norm_row: the bits of residual.cu), CTA 0
// into h_out and a_out instead, and reads x from there. The norm is computed once a CTA, not once an item, and the
// next item's weights are loaded before this item's sums are reduced, so the loads stay in flight across items.
template <int S, bool Act, int R>
__global__ void __launch_bounds__(kWarps * 32, 4)
    gemv_kernel(const uint16_t* __restrict__ W, const uint16_t* __restrict__ x, int in, int out, float alpha,
                uint16_t* __restrict__ y, PrologueArgs pa) {
  constexpr int kPairs = kWarps / S;
  constexpr bool Res = R != kPlain;
  extern __shared__ __align__(16) uint16_t xs[];  // Res: the row x [in]; a fast form: then the norm's weights
  __shared__ float part[kWarps][kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, sl = warp % S;
  const int64_t n_pairs = Act ? out : (out + 1) / 2;
  const int64_t n_items = (n_pairs + kPairs - 1) / kPairs;
  const int len = (in / S + 7) / 8 * 8, begin = std::min(in, sl * len), end = std::min(in, begin + len);
  const uint16_t* w[kRows];
  const auto rows_of = [&](int64_t item) {
    const int64_t p = item * kPairs + warp / S;
    const int64_t pp = std::min<int64_t>(p, n_pairs - 1);  // a pair past the last one repeats it (and is not written)
    const int64_t r0 = Act ? pp : 2 * pp;
    const int64_t r1 = Act ? out + pp : std::min<int64_t>(2 * pp + 1, out - 1);  // a missing last row repeats one
    w[0] = W + r0 * in;
    w[1] = W + r1 * in;
  };
  int64_t item = blockIdx.x;
  rows_of(item);
  uint4 wv[kRows][kUnroll];
  load_weights(w, begin + lane * 8, end, wv);
  const uint16_t* norm_w = R == kGateFast ? pa.gate.w : pa.res.w;
  if (fast_form(R) && norm_w) {  // the norm's weights, which no kernel writes, staged before the wait
#pragma unroll
    for (int k = 0; k < kResPieces; ++k) {  // a thread stages the pieces it alone reads again: no barrier
      const int i = (threadIdx.x + k * blockDim.x) * 8;
      *reinterpret_cast<uint4*>(xs + in + i) = __ldg(reinterpret_cast<const uint4*>(norm_w + i));
    }
  }
  pdl_wait();
  pdl_trigger();  // the small kernel after this one may now be scheduled; it waits for this one to end
  const uint16_t* xx = x;
  if constexpr (Res) {
    const bool first = blockIdx.x == 0;
    const ResidualArgs& res = pa.res;
    if constexpr (R == kResidualFast) {
      residual_norm_fast(res.h, res.b, in, res.scale, xs + in, res.eps, first, res.h_out, res.a_out, xs);
      xx = xs;
    } else if constexpr (R == kResidual) {
      residual_norm_row(res.h, res.b, in, res.scale, res.w, res.eps, first ? res.h_out : xs, first ? res.a_out : xs);
      xx = first ? res.a_out : xs;
    } else if constexpr (R == kGateFast) {
      gate_fast(pa.gate, in, xs + in, first, xs);
      xx = xs;
    } else {
      uint16_t* dst = first && pa.gate.x_out ? pa.gate.x_out : xs;
      gate_row(pa.gate, in, dst);
      xx = dst;
    }
    __syncthreads();  // x whole before any warp reads it
  }
  for (;;) {
    float acc[kRows] = {};
    dot_rows<Res>(w, xx, begin, end, lane, wv, acc);
    const int64_t next = item + gridDim.x;
    if (next < n_items) {  // the next item's first batch, in flight while this one's sums are reduced
      rows_of(next);
      load_weights(w, begin + lane * 8, end, wv);
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] = warp_sum(acc[r]);
    if (lane == 0)
#pragma unroll
      for (int r = 0; r < kRows; ++r) part[warp][r] = acc[r];
    __syncthreads();
    const int t = threadIdx.x;  // Act: one thread per pair; otherwise one per row (pair t / kRows, row t % kRows)
    const int tp = Act ? t : t / kRows;
    const int64_t q = item * kPairs + tp;
    if (t < kPairs * (Act ? 1 : kRows) && q < n_pairs) {
      float sum[kRows] = {};
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int s = 0; s < S; ++s) sum[r] += part[tp * S + s][r];
      if (Act) {  // mlp_act of the rounded projections, the expression of mlp.cu
        const float g = round_bf16_dev(alpha * sum[0]), u = round_bf16_dev(alpha * sum[1]);
        st_bf16(y + q, g / (1.0f + expf(-g)) * u);
      } else {
        const int64_t r = 2 * q + t % kRows;
        if (r < out) st_bf16(y + r, alpha * sum[t % kRows]);
      }
    }
    if (next >= n_items) break;
    __syncthreads();  // part[] read before the next item writes it
    item = next;
  }
}

// Warps a row is split over: one batch of loads a warp up to 4096-wide rows, two for the 16384-wide down projection
// (whole rows a warp measured slower a decode step: docs/performance.md, "Measured reasons behind kernel choices").
int split_of(int in) { return in > 8192 ? 8 : 4; }

// Res: CTAs resident at once (the occupancy the launch bounds give, times the SMs), each taking items in turn.
template <int S, bool Act, int R>
cudaError_t launch_kernel(int64_t items, const uint16_t* w, const uint16_t* x, int in, int out, float alpha,
                          uint16_t* y, const PrologueArgs& pa, Stream s) {
  const auto kernel = gemv_kernel<S, Act, R>;
  const size_t smem = size_t(in) * 2 * (R == kPlain ? 0 : fast_form(R) ? 2 : 1);
  int64_t grid = items;
  if (R != kPlain) {  // asked once a form and shared-memory size (one device a process)
    static int resident = 0;
    static size_t resident_smem = 0;
    if (resident == 0 || resident_smem != smem) {
      resident_smem = smem;
      int dev = 0, sms = 0, per_sm = 0;
      cudaError_t e = cudaGetDevice(&dev);
      if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
      if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kWarps * 32, smem);
      if (e != cudaSuccess) return e;
      resident = std::max(1, per_sm) * sms;
    }
    grid = std::min<int64_t>(items, resident);
  }
  return launch_pdl(kernel, unsigned(grid), kWarps * 32, smem, s, w, x, in, out, alpha, y, pa);
}

template <bool Act, int R>
cudaError_t launch_gemv(const bf16_t* W, const bf16_t* x, int in, int out, bf16_t* y, float alpha,
                        const PrologueArgs& res, Stream s) {
  const int64_t pairs = Act ? out : (out + 1) / 2;
  const auto* w = reinterpret_cast<const uint16_t*>(W);
  const auto* xx = reinterpret_cast<const uint16_t*>(x);
  auto* yy = reinterpret_cast<uint16_t*>(y);
  // Programmatic stream serialization (pdl.cuh launch_pdl): the kernel waits before it touches x or y.
  if (split_of(in) == 8) return launch_kernel<8, Act, R>(grid_1d(pairs, kWarps / 8), w, xx, in, out, alpha, yy, res, s);
  return launch_kernel<4, Act, R>(grid_1d(pairs, kWarps / 4), w, xx, in, out, alpha, yy, res, s);
}

PrologueArgs raw(const GemvResidual& r) {
  PrologueArgs pa = {};
  pa.res = {reinterpret_cast<const uint16_t*>(r.h),
            reinterpret_cast<const uint16_t*>(r.b),
            r.scale,
            reinterpret_cast<const uint16_t*>(r.w),
            r.eps,
            reinterpret_cast<uint16_t*>(r.h_out),
            reinterpret_cast<uint16_t*>(r.a_out)};
  return pa;
}
PrologueArgs raw(const GemvGate& g) {
  PrologueArgs pa = {};
  pa.gate = {reinterpret_cast<const uint16_t*>(g.a), reinterpret_cast<const uint16_t*>(g.z),
             reinterpret_cast<const uint16_t*>(g.w), g.eps, reinterpret_cast<uint16_t*>(g.x_out)};
  return pa;
}
// Whether two [n] bf16 ranges overlap.
bool overlap(const bf16_t* p, const bf16_t* q, int n) { return p && q && p < q + n && q < p + n; }

}  // namespace

bool gemv_supported(const bf16_t* x, const bf16_t* W, int in) {
  return in % 8 == 0 && vec8_ok(x, in, in) && vec8_ok(W, in, in);
}

void gemv(const bf16_t* W, const bf16_t* x, int in, int out, bf16_t* y, float alpha, Stream s) {
  const auto op = [&] { return op_desc("gemv", {{"in", in}, {"out", out}}); };
  ARG_CHECK(gemv_supported(x, W, in), op, "gemv needs in % 8 == 0 and 16-byte aligned x and W");
  if (out <= 0) return;
  CUDA_CHECK((launch_gemv<false, kPlain>(W, x, in, out, y, alpha, {}, s)), op);
}

void gemv_mlp_act(const bf16_t* W, const bf16_t* x, int in, int I, bf16_t* act, float alpha, Stream s) {
  const auto op = [&] { return op_desc("gemv_mlp_act", {{"in", in}, {"I", I}}); };
  ARG_CHECK(gemv_supported(x, W, in), op, "gemv_mlp_act needs in % 8 == 0 and 16-byte aligned x and W");
  if (I <= 0) return;
  CUDA_CHECK((launch_gemv<true, kPlain>(W, x, in, I, act, alpha, {}, s)), op);
}

bool gemv_residual_supported(const GemvResidual& r, const bf16_t* W, int in) {
  return in <= kGemvResidualMaxIn && gemv_supported(r.h, W, in) && vec8_ok(r.b, in, in) && vec8_ok(r.w, in, in) &&
         vec8_ok(r.h_out, in, in) && vec8_ok(r.a_out, in, in) && r.h_out != r.h;
}

void gemv_residual(const bf16_t* W, const GemvResidual& r, int in, int out, bf16_t* y, float alpha, bool act,
                   Stream s) {
  const auto op = [&] { return op_desc(act ? "gemv_residual_mlp_act" : "gemv_residual", {{"in", in}, {"out", out}}); };
  ARG_CHECK(
      gemv_residual_supported(r, W, in), op,
      "gemv_residual needs in % 8 == 0, in <= 16384, 16-byte aligned W, h, b, w, h_out and a_out, and h_out != h");
  if (out <= 0) return;
  const bool fast = in == kResPieces * kWarps * 32 * 8;
  cudaError_t e;
  if (act)
    e = fast ? launch_gemv<true, kResidualFast>(W, nullptr, in, out, y, alpha, raw(r), s)
             : launch_gemv<true, kResidual>(W, nullptr, in, out, y, alpha, raw(r), s);
  else
    e = fast ? launch_gemv<false, kResidualFast>(W, nullptr, in, out, y, alpha, raw(r), s)
             : launch_gemv<false, kResidual>(W, nullptr, in, out, y, alpha, raw(r), s);
  CUDA_CHECK(e, op);
}

bool gemv_gate_supported(const GemvGate& g, const bf16_t* W, int in) {
  return in <= kGemvGateMaxIn && gemv_supported(g.a, W, in) && vec8_ok(g.z, in, in) && (!g.w || vec8_ok(g.w, in, in)) &&
         (!g.x_out || vec8_ok(g.x_out, in, in)) && !overlap(g.x_out, g.a, in) && !overlap(g.x_out, g.z, in);
}

void gemv_gate(const bf16_t* W, const GemvGate& g, int in, int out, bf16_t* y, float alpha, Stream s) {
  const auto op = [&] { return op_desc(g.w ? "gemv_norm_gate" : "gemv_gate", {{"in", in}, {"out", out}}); };
  ARG_CHECK(
      gemv_gate_supported(g, W, in), op,
      "gemv_gate needs in % 8 == 0, in <= 16384, 16-byte aligned W, a, z, w and x_out, and x_out apart from a and z");
  if (out <= 0) return;
  const bool fast = in == kResPieces * kWarps * 32 * 8;
  CUDA_CHECK((fast ? launch_gemv<false, kGateFast>(W, nullptr, in, out, y, alpha, raw(g), s)
                   : launch_gemv<false, kGate>(W, nullptr, in, out, y, alpha, raw(g), s)),
             op);
}

}  // namespace salasim::gpu
