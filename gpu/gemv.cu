// gemv: the single-token case of linear (decode), y = alpha * W x with W [out, in] bf16 row-major, fp32 accumulate,
// bf16 out. Decode streams every weight once per token, so this is a pure bandwidth kernel: what matters is bytes in
// flight per SM from the first cycle. Each warp takes kRows rows; per batch a lane issues kUnroll 16-byte loads per
// row (8 weights each, streamed past the caches: each is read once a token) and the matching 16-byte pieces of x (read from L1/L2: x is at most 96 KiB and every warp of
// the SM reads it), all before the first FMA. No shared-memory staging of x: the barrier it needed held every
// weight load back until x had arrived. Rows per warp: 2 where in <= 8192 (a warp reads 2 x in x 2 bytes per
// batch round), 1 for the 16384-wide MLP down projection so that its 4096 rows still fill every SM with warps.
// cuBLAS stays available (linear.hpp: set_gemv) so the two are measured side by side (bench/op_cases: gemv.*).
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/linear.hpp"

namespace salasim::gpu {

namespace {

constexpr int kWarps = 8, kUnroll = 4;

// The weights of batch `base` (kUnroll 16-byte loads per row and lane; 0 past `in`).
template <int R>
__device__ __forceinline__ void load_weights(const uint16_t* const (&w)[R], int base, int in, uint4 (&wv)[R][kUnroll]) {
  constexpr int kStep = 32 * 8;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int i = base + u * kStep;
#pragma unroll
    for (int r = 0; r < R; ++r) wv[r][u] = i < in ? __ldcs(reinterpret_cast<const uint4*>(w[r] + i)) : make_uint4(0, 0, 0, 0);
  }
}

// Grid ceil(out / (kWarps * R)), kWarps * 32 threads. Launched with programmatic dependent launch (pdl.cuh): the
// first batch of weights, which no kernel writes, is loaded before pdl_wait(), while the kernel that writes x (a norm,
// a gate, the MLP activation) still runs; x is read, and y written, only after it.
template <int R>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const uint16_t* __restrict__ W, const uint16_t* __restrict__ x,
                                                           int in, int out, float alpha, uint16_t* __restrict__ y) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t r0 = (int64_t(blockIdx.x) * kWarps + warp) * R;
  const int64_t rr = std::min<int64_t>(r0, out - 1);  // a warp past the last row idles (it still waits, below)
  const uint16_t* w[R];
#pragma unroll
  for (int r = 0; r < R; ++r) w[r] = W + std::min<int64_t>(rr + r, out - 1) * in;  // a missing last row repeats one
  constexpr int kStep = 32 * 8;  // elements a warp covers per load
  uint4 wv[R][kUnroll];
  if (r0 < out) load_weights(w, lane * 8, in, wv);
  pdl_wait();
  pdl_trigger();  // the small kernel after this one may now be scheduled; it waits for this one to end
  if (r0 >= out) return;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.f;
  for (int base = lane * 8; base < in; base += kUnroll * kStep) {
    if (base != lane * 8) load_weights(w, base, in, wv);
    uint4 xv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kStep;
      xv[u] = i < in ? __ldg(reinterpret_cast<const uint4*>(x + i)) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float xf[8];
      unpack_bf16x8(xv[u], xf);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float wf[8];
        unpack_bf16x8(wv[r][u], wf);
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[r] += wf[j] * xf[j];
      }
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = warp_sum(acc[r]);
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (r0 + r < out) st_bf16(y + r0 + r, alpha * acc[r]);
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
  const cudaError_t e = in <= 8192 ? launch_pdl(gemv_kernel<2>, grid_1d(out, kWarps * 2), kWarps * 32, 0, s, w, xx, in,
                                                out, alpha, yy)
                                   : launch_pdl(gemv_kernel<1>, grid_1d(out, kWarps), kWarps * 32, 0, s, w, xx, in, out,
                                                alpha, yy);
  CUDA_CHECK(e, op);
}

}  // namespace salasim::gpu
