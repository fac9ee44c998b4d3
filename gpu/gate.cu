// gate: y = bf16(x * sigmoid(z)), the Lightning z gate and the sparse o_gate.
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
__global__ void gate_kernel(const uint16_t* x, int64_t ldx, const uint16_t* z, int64_t ldz, int64_t T, int n,
                            uint16_t* y, int64_t ldy) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= T * n) return;
  const int64_t r = i / n, c = i % n;
  const float zv = ld_bf16(z + r * ldz + c);
  st_bf16(y + r * ldy + c, gate_of(ld_bf16(x + r * ldx + c), zv));
}
// The same, 8 elements per thread with 16-byte accesses.
__global__ void gate_vec_kernel(const uint16_t* x, int64_t ldx, const uint16_t* z, int64_t ldz, int64_t T, int n,
                                uint16_t* y, int64_t ldy) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * 8;
  if (i >= T * n) return;
  const int64_t r = i / n, c = i % n;
  float xv[8], zv[8];
  ld_bf16x8(x + r * ldx + c, xv);
  ld_bf16x8(z + r * ldz + c, zv);
#pragma unroll
  for (int j = 0; j < 8; ++j) xv[j] = gate_of(xv[j], zv[j]);
  st_bf16x8(y + r * ldy + c, xv);
}
}  // namespace

void gate(const bf16_t* x, int64_t ldx, const bf16_t* z, int64_t ldz, int64_t T, int n, bf16_t* y, int64_t ldy,
          Stream s) {
  if (T == 0) return;
  const auto op = [&] { return op_desc("gate", {{"T", T}, {"n", n}}); };
  if (vec8_ok(x, n, ldx) && vec8_ok(z, n, ldz) && vec8_ok(y, n, ldy))
    CUDA_CHECK(launch_pdl(gate_vec_kernel, grid_1d(T * n / 8, 256), 256, 0, s, x, ldx, z, ldz, T, n, y, ldy), op());
  else
    CUDA_CHECK(launch_pdl(gate_kernel, grid_1d(T * n, 256), 256, 0, s, x, ldx, z, ldz, T, n, y, ldy), op());
}

}  // namespace salasim::gpu
