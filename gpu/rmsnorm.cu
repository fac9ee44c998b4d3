// rmsnorm: one block per row, fp32 sum of squares, one bf16 rounding (the fused residual + rmsnorm is residual.cu).
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
__global__ void rmsnorm_kernel(const uint16_t* x, int64_t ldx, const uint16_t* w, int n, float eps, uint16_t* y,
                               int64_t ldy) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
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

// The same with 16-byte accesses (n % 8 == 0, aligned rows).
__global__ void rmsnorm_vec_kernel(const uint16_t* x, int64_t ldx, const uint16_t* w, int n, float eps, uint16_t* y,
                                   int64_t ldy) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t r = blockIdx.x;
  const uint16_t* xr = x + r * ldx;
  const float inv = row_inv_rms(xr, n, eps);
  for (int i = threadIdx.x * 8; i < n; i += blockDim.x * 8) {
    float v[8];
    rmsnorm_x8(xr + i, w + i, inv, v);
    st_bf16x8(y + r * ldy + i, v);
  }
}

// rmsnorm_vec then gate_vec (gate.cu) in one pass, rmsnorm_gate_row (kernels.cuh): the same expressions in the same
// order, so the same bits; normed (ld n) also gets the rounded norm when not null (the o_norm tap).
__global__ void rmsnorm_gate_vec_kernel(const uint16_t* x, int64_t ldx, const uint16_t* w, const uint16_t* z,
                                        int64_t ldz, int n, float eps, uint16_t* y, int64_t ldy, uint16_t* normed) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t r = blockIdx.x;
  rmsnorm_gate_row(x + r * ldx, w, z + r * ldz, n, eps, y + r * ldy, normed ? normed + r * n : nullptr);
}

}  // namespace

void rmsnorm_gate(const bf16_t* x, int64_t ldx, const bf16_t* w, const bf16_t* z, int64_t ldz, int64_t T, int n,
                  float eps, bf16_t* y, int64_t ldy, bf16_t* normed, Stream s) {
  if (T == 0) return;
  const auto op = [&] { return op_desc("rmsnorm_gate", {{"T", T}, {"n", n}}); };
  const bool vec = vec8_ok(x, n, ldx) && vec8_ok(y, n, ldy) && vec8_ok(w, n, n) && vec8_ok(z, n, ldz) &&
                   (!normed || vec8_ok(normed, n, n));
  if (!vec) {  // the two ops one after the other (the same values)
    bf16_t* mid = normed ? normed : y;
    rmsnorm(x, ldx, w, T, n, eps, mid, normed ? n : ldy, s);
    return gate(mid, normed ? n : ldy, z, ldz, T, n, y, ldy, s);
  }
  CUDA_CHECK(launch_pdl(rmsnorm_gate_vec_kernel, unsigned(T), 256, 0, s, x, ldx, w, z, ldz, n, eps, y, ldy, normed),
             op());
}

void rmsnorm(const bf16_t* x, int64_t ldx, const bf16_t* w, int64_t T, int n, float eps, bf16_t* y, int64_t ldy,
             Stream s) {
  if (T == 0) return;
  const auto op = [&] { return op_desc("rmsnorm", {{"T", T}, {"n", n}}); };
  if (vec8_ok(x, n, ldx) && vec8_ok(y, n, ldy) && vec8_ok(w, n, n))
    CUDA_CHECK(launch_pdl(rmsnorm_vec_kernel, unsigned(T), 256, 0, s, x, ldx, w, n, eps, y, ldy), op());
  else CUDA_CHECK(launch_pdl(rmsnorm_kernel, unsigned(T), 256, 0, s, x, ldx, w, n, eps, y, ldy), op());
}

}  // namespace salasim::gpu
