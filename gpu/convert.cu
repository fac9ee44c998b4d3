// bf16_to_f32: device bf16 -> fp32, exact (bf16 is a truncated fp32), for downloads of logits and taps.
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
__global__ void bf16_to_f32_kernel(const uint16_t* x, int64_t n, float* y) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = ld_bf16(x + i);
}
}  // namespace

void bf16_to_f32(const bf16_t* x, int64_t n, float* y, Stream s) {
  if (n == 0) return;
  CUDA_CHECK(launch_pdl(bf16_to_f32_kernel, grid_1d(n, 256), 256, 0, s, x, n, y), op_desc("bf16_to_f32", {{"n", n}}));
}

}  // namespace salasim::gpu
