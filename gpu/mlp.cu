// mlp_act: act = bf16(silu(g) * u), reading the fused gate|up projection [T, 2I].
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
__global__ void mlp_act_kernel(const uint16_t* gu, int64_t T, int I, uint16_t* act) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= T * I) return;
  const int64_t r = i / I, c = i % I;
  const float g = ld_bf16(gu + r * 2 * I + c), u = ld_bf16(gu + r * 2 * I + I + c);
  st_bf16(act + i, g / (1.0f + expf(-g)) * u);
}
// The same, 8 elements per thread with 16-byte accesses (I % 8 == 0, aligned rows).
__global__ void mlp_act_vec_kernel(const uint16_t* gu, int64_t T, int I, uint16_t* act) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 8;
  if (i >= T * I) return;
  const int64_t r = i / I, c = i % I;
  float g[8], u[8], a[8];
  ld_bf16x8(gu + r * 2 * I + c, g);
  ld_bf16x8(gu + r * 2 * I + I + c, u);
#pragma unroll
  for (int j = 0; j < 8; ++j) a[j] = g[j] / (1.0f + expf(-g[j])) * u[j];
  st_bf16x8(act + i, a);
}
}  // namespace

void mlp_act(const bf16_t* gu, int64_t T, int I, bf16_t* act, Stream s) {
  if (T == 0) return;
  const auto op = [&] { return op_desc("mlp_act", {{"T", T}, {"I", I}}); };
  if (vec8_ok(gu, I, 2 * int64_t(I)) && vec8_ok(act, I, I))
    CUDA_CHECK(launch_pdl(mlp_act_vec_kernel, grid_1d(T * I / 8, 256), 256, 0, s, gu, T, I, act), op());
  else
    CUDA_CHECK(launch_pdl(mlp_act_kernel, grid_1d(T * I, 256), 256, 0, s, gu, T, I, act), op());
}

}  // namespace salasim::gpu
