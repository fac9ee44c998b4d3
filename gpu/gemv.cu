// gemv: the single-token case of linear (decode), y = alpha * W x with W [out, in] bf16 row-major, fp32 accumulate,
// bf16 out. Decode streams every weight once per token, so this is a pure bandwidth kernel: what matters is bytes in
// flight per SM from the first cycle. Each warp takes kRows rows; per batch a lane issues kUnroll 16-byte loads per
// row (8 weights each, streamed past the caches: each is read once a token) and the matching 16-byte pieces of x (read
// from L1/L2: x is at most 96 KiB and every warp of the SM reads it), all before the first FMA. No shared-memory
// staging of x: the barrier it needed held every weight load back until x had arrived. Two rows per warp (a warp
// reads 2 x in x 2 bytes per batch round, x's loads shared by both rows).
// Wider rows (in > 8192: the MLP down projection, 16384) are split over kSplit warps of the CTA, each summing a
// contiguous quarter of both its rows, the partial sums added in warp order after a barrier (deterministic). Whole
// 32 KB rows a warp ran at 0.64 of HBM bandwidth against 0.82-0.99 for the 8 KB rows of the other shapes, and
// doubling the loads in flight did not change it (bench/RESULTS.md); a quarter row is the 8 KB shape again.
// gemv_mlp_act: the gate|up projection with mlp_act in its epilogue: a warp's two rows are gate row c and up row
// I + c, so it writes act[c] = bf16(silu(g) * u) from the bf16-rounded g and u, the bits of gemv then mlp_act, one
// launch and no gu round trip fewer per layer.
// cuBLAS stays available (linear.hpp: set_gemv) so the two are measured side by side (bench/op_cases: gemv.*).
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/linear.hpp"

namespace salasim::gpu {

namespace {

constexpr int kWarps = 8, kUnroll = 4, kRows = 2, kSplit = 4;
constexpr int kStep = 32 * 8;  // elements a warp covers per load

// The weights of batch `base` (kUnroll 16-byte loads per row and lane; 0 at and past `end`).
__device__ __forceinline__ void load_weights(const uint16_t* const (&w)[kRows], int base, int end,
                                             uint4 (&wv)[kRows][kUnroll]) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int i = base + u * kStep;
#pragma unroll
    for (int r = 0; r < kRows; ++r) wv[r][u] = i < end ? __ldcs(reinterpret_cast<const uint4*>(w[r] + i)) : make_uint4(0, 0, 0, 0);
  }
}

// acc[r] += sum over [begin, end) of w[r][i] * x[i], the lane's share (lane * 8 + k * kStep); wv holds the first batch.
__device__ __forceinline__ void dot_rows(const uint16_t* const (&w)[kRows], const uint16_t* __restrict__ x, int begin,
                                         int end, int lane, uint4 (&wv)[kRows][kUnroll], float (&acc)[kRows]) {
  for (int base = begin + lane * 8; base < end; base += kUnroll * kStep) {
    if (base != begin + lane * 8) load_weights(w, base, end, wv);
    uint4 xv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kStep;
      xv[u] = i < end ? __ldg(reinterpret_cast<const uint4*>(x + i)) : make_uint4(0, 0, 0, 0);
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

// Grid ceil(out / (kWarps * kRows)), kWarps * 32 threads, one row pair a warp. Act: W is the fused gate|up [2I, in]
// and "out" is I; pair c is rows c and I + c and writes act[c] (above); otherwise rows 2p, 2p + 1 write y.
// Launched with programmatic dependent launch (pdl.cuh): the first batch of weights, which no kernel writes, is
// loaded before pdl_wait(), while the kernel that writes x (a norm, a gate, the MLP activation) still runs; x is read,
// and y written, only after it.
template <bool Act>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const uint16_t* __restrict__ W, const uint16_t* __restrict__ x,
                                                           int in, int out, float alpha, uint16_t* __restrict__ y) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t p = int64_t(blockIdx.x) * kWarps + warp;  // the warp's row pair
  const int64_t n_pairs = Act ? out : (out + 1) / 2;
  const int64_t pp = std::min<int64_t>(p, n_pairs - 1);  // a warp past the last pair idles (it still waits, below)
  int64_t row[kRows];
  row[0] = Act ? pp : 2 * pp;
  row[1] = Act ? out + pp : std::min<int64_t>(2 * pp + 1, out - 1);  // a missing last row repeats one
  const uint16_t* w[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) w[r] = W + row[r] * in;
  uint4 wv[kRows][kUnroll];
  if (p < n_pairs) load_weights(w, lane * 8, in, wv);
  pdl_wait();
  pdl_trigger();  // the small kernel after this one may now be scheduled; it waits for this one to end
  if (p >= n_pairs) return;
  float acc[kRows] = {};
  dot_rows(w, x, 0, in, lane, wv, acc);
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = warp_sum(acc[r]);
  if (lane != 0) return;
  if (Act) {  // mlp_act of the rounded projections, the expression of mlp.cu
    const float g = round_bf16_dev(alpha * acc[0]), u = round_bf16_dev(alpha * acc[1]);
    st_bf16(y + pp, g / (1.0f + expf(-g)) * u);
  } else {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (2 * p + r < out) st_bf16(y + 2 * p + r, alpha * acc[r]);
  }
}

// Rows split over kSplit warps: grid ceil(out / (kWarps / kSplit * kRows)); warp w takes pair w / kSplit of the
// CTA's and the columns [s * len, (s + 1) * len) for s = w % kSplit, len = in / kSplit rounded up to 8.
__global__ void __launch_bounds__(kWarps * 32) gemv_split_kernel(const uint16_t* __restrict__ W,
                                                                 const uint16_t* __restrict__ x, int in, int out,
                                                                 float alpha, uint16_t* __restrict__ y) {
  constexpr int kPairs = kWarps / kSplit;
  __shared__ float part[kWarps][kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, sl = warp % kSplit;
  const int64_t p = int64_t(blockIdx.x) * kPairs + warp / kSplit, n_pairs = (out + 1) / 2;
  const int64_t pp = std::min<int64_t>(p, n_pairs - 1);
  const int len = (in / kSplit + 7) / 8 * 8, begin = std::min(in, sl * len), end = std::min(in, begin + len);
  const uint16_t* w[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) w[r] = W + std::min<int64_t>(2 * pp + r, out - 1) * in;
  uint4 wv[kRows][kUnroll];
  load_weights(w, begin + lane * 8, end, wv);
  pdl_wait();
  pdl_trigger();
  float acc[kRows] = {};
  dot_rows(w, x, begin, end, lane, wv, acc);
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = warp_sum(acc[r]);
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < kRows; ++r) part[warp][r] = acc[r];
  __syncthreads();
  const int t = threadIdx.x;  // one thread per row of the CTA: pair t / kRows, row t % kRows
  if (t >= kPairs * kRows) return;
  const int64_t row = 2 * (int64_t(blockIdx.x) * kPairs + t / kRows) + t % kRows;
  if (row >= out) return;
  float sum = 0.f;
#pragma unroll
  for (int s = 0; s < kSplit; ++s) sum += part[(t / kRows) * kSplit + s][t % kRows];
  st_bf16(y + row, alpha * sum);
}

}  // namespace

bool gemv_supported(const bf16_t* x, const bf16_t* W, int in) {
  return in % 8 == 0 && vec8_ok(x, in, in) && vec8_ok(W, in, in);
}

void gemv(const bf16_t* W, const bf16_t* x, int in, int out, bf16_t* y, float alpha, Stream s) {
  const auto op = [&] { return op_desc("gemv", {{"in", in}, {"out", out}}); };
  ARG_CHECK(gemv_supported(x, W, in), op, "gemv needs in % 8 == 0 and 16-byte aligned x and W");
  if (out <= 0) return;
  const auto* w = reinterpret_cast<const uint16_t*>(W);
  const auto* xx = reinterpret_cast<const uint16_t*>(x);
  auto* yy = reinterpret_cast<uint16_t*>(y);
  // Programmatic stream serialization (pdl.cuh launch_pdl): the kernel waits before it touches x or y.
  const cudaError_t e =
      in <= 8192 ? launch_pdl(gemv_kernel<false>, grid_1d(out, kWarps * kRows), kWarps * 32, 0, s, w, xx, in, out, alpha, yy)
                 : launch_pdl(gemv_split_kernel, grid_1d(out, kWarps / kSplit * kRows), kWarps * 32, 0, s, w, xx, in,
                              out, alpha, yy);
  CUDA_CHECK(e, op);
}

void gemv_mlp_act(const bf16_t* W, const bf16_t* x, int in, int I, bf16_t* act, float alpha, Stream s) {
  const auto op = [&] { return op_desc("gemv_mlp_act", {{"in", in}, {"I", I}}); };
  ARG_CHECK(gemv_supported(x, W, in), op, "gemv_mlp_act needs in % 8 == 0 and 16-byte aligned x and W");
  if (I <= 0) return;
  CUDA_CHECK(launch_pdl(gemv_kernel<true>, grid_1d(I, kWarps), kWarps * 32, 0, s, reinterpret_cast<const uint16_t*>(W),
                        reinterpret_cast<const uint16_t*>(x), in, I, alpha, reinterpret_cast<uint16_t*>(act)),
             op);
}

}  // namespace salasim::gpu
