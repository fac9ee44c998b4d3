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

// Grid ceil(out / (kWarps * R)), kWarps * 32 threads.
template <int R>
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const uint16_t* __restrict__ W, const uint16_t* __restrict__ x,
                                                           int in, int out, float alpha, uint16_t* __restrict__ y) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t r0 = (int64_t(blockIdx.x) * kWarps + warp) * R;
  if (r0 >= out) return;
  const uint16_t* w[R];
#pragma unroll
  for (int r = 0; r < R; ++r) w[r] = W + std::min<int64_t>(r0 + r, out - 1) * in;  // a missing last row repeats one
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.f;
  constexpr int kStep = 32 * 8;  // elements a warp covers per load
  for (int base = lane * 8; base < in; base += kUnroll * kStep) {
    uint4 wv[R][kUnroll], xv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kStep;
      const bool ok = i < in;
#pragma unroll
      for (int r = 0; r < R; ++r) wv[r][u] = ok ? __ldcs(reinterpret_cast<const uint4*>(w[r] + i)) : make_uint4(0, 0, 0, 0);
      xv[u] = ok ? __ldg(reinterpret_cast<const uint4*>(x + i)) : make_uint4(0, 0, 0, 0);
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
  if (in <= 8192) {
    gemv_kernel<2><<<unsigned((out + kWarps * 2 - 1) / (kWarps * 2)), kWarps * 32, 0, s>>>(w, xx, in, out, alpha, yy);
  } else {
    gemv_kernel<1><<<unsigned((out + kWarps - 1) / kWarps), kWarps * 32, 0, s>>>(w, xx, in, out, alpha, yy);
  }
  CHECK_LAUNCH(op);
}

}  // namespace salasim::gpu
