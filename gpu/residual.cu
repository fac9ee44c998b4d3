// residual: the scaled residual add h + (scale_depth / sqrt(L)) * branch, fused with the next pre-norm (rmsnorm of
// the rounded h), one block per row: the residual stream is read once and the norm's input never round-trips.
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
// h = bf16(h + scale * b); y = rmsnorm(h) of the rounded h, as the peer computes it.
__global__ void residual_kernel(uint16_t* h, const uint16_t* b, int D, float scale, const uint16_t* w, float eps,
                                uint16_t* y) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
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
// The same with 16-byte accesses (D % 8 == 0, aligned rows), in place.
__global__ void residual_vec_kernel(uint16_t* h, const uint16_t* b, int D, float scale, const uint16_t* w, float eps,
                                    uint16_t* y) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t r = blockIdx.x;
  residual_norm_row(h + r * D, b + r * D, D, scale, w, eps, h + r * D, w ? y + r * D : nullptr);
}
}  // namespace

void residual(bf16_t* h, const bf16_t* b, int64_t T, int D, float scale, const bf16_t* w, float eps, bf16_t* y,
              Stream s) {
  if (T == 0) return;
  const auto op = [&] { return op_desc("residual", {{"T", T}, {"D", D}}); };
  if (vec8_ok(h, D, D) && vec8_ok(b, D, D) && (!w || (vec8_ok(w, D, D) && vec8_ok(y, D, D))))
    CUDA_CHECK(launch_pdl(residual_vec_kernel, unsigned(T), 256, 0, s, h, b, D, scale, w, eps, y), op());
  else
    CUDA_CHECK(launch_pdl(residual_kernel, unsigned(T), 256, 0, s, h, b, D, scale, w, eps, y), op());
}

}  // namespace salasim::gpu
