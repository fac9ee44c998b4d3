// rmsnorm and the fused residual + rmsnorm: one block per row, fp32 sum of squares, one bf16 rounding.
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
__global__ void rmsnorm_kernel(const uint16_t* x, int64_t ldx, const uint16_t* w, int n, float eps, uint16_t* y,
                               int64_t ldy) {
  const int64_t r = blockIdx.x;
  const uint16_t* xr = x + r * ldx;
  float ss = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = ld_bf16(xr + i);
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss) / float(n) + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) st_bf16(y + r * ldy + i, ld_bf16(xr + i) * inv * ld_bf16(w + i));
}

// h = bf16(h + scale * b); y = rmsnorm(h) of the rounded h, as the peer computes it.
__global__ void residual_kernel(uint16_t* h, const uint16_t* b, int D, float scale, const uint16_t* w, float eps,
                                uint16_t* y) {
  const int64_t r = blockIdx.x;
  uint16_t* hr = h + r * D;
  float ss = 0;
  for (int i = threadIdx.x; i < D; i += blockDim.x) {
    const float v = round_bf16_dev(ld_bf16(hr + i) + scale * ld_bf16(b + r * D + i));
    st_bf16(hr + i, v);
    ss += v * v;
  }
  if (!w) return;
  const float inv = rsqrtf(block_sum(ss) / float(D) + eps);
  for (int i = threadIdx.x; i < D; i += blockDim.x) st_bf16(y + r * D + i, ld_bf16(hr + i) * inv * ld_bf16(w + i));
}
}  // namespace

void rmsnorm(const bf16_t* x, int64_t ldx, const bf16_t* w, int64_t T, int n, float eps, bf16_t* y, int64_t ldy,
             Stream s) {
  if (T == 0) return;
  rmsnorm_kernel<<<unsigned(T), 256, 0, s>>>(x, ldx, w, n, eps, y, ldy);
  CHECK_LAUNCH(op_desc("rmsnorm", {{"T", T}, {"n", n}}));
}

void residual(bf16_t* h, const bf16_t* b, int64_t T, int D, float scale, const bf16_t* w, float eps, bf16_t* y,
              Stream s) {
  if (T == 0) return;
  residual_kernel<<<unsigned(T), 256, 0, s>>>(h, b, D, scale, w, eps, y);
  CHECK_LAUNCH(op_desc("residual", {{"T", T}, {"D", D}}));
}

}  // namespace salasim::gpu
