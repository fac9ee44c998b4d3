// rmsnorm: one block per row, fp32 sum of squares, one bf16 rounding (the fused residual + rmsnorm is residual.cu).
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

}  // namespace

void rmsnorm(const bf16_t* x, int64_t ldx, const bf16_t* w, int64_t T, int n, float eps, bf16_t* y, int64_t ldy,
             Stream s) {
  if (T == 0) return;
  rmsnorm_kernel<<<unsigned(T), 256, 0, s>>>(x, ldx, w, n, eps, y, ldy);
  CHECK_LAUNCH(op_desc("rmsnorm", {{"T", T}, {"n", n}}));
}

}  // namespace salasim::gpu
