// rope with the Lightning qk-norm fused in front: one warp per (token, head), norm_rope_head (kernels.cuh: lane l
// holds dims l, l+32 of the first half and their partners l+64, l+96, so each rotate-half pair stays inside one
// lane). Heads h >= H_w0 of a row take the second norm weight (rope_qk: q's H heads, then k's H heads, in one
// launch). gla_recurrent_rope (gla.cu) runs the same helper inside the decode GLA kernel.
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
constexpr int kHd = 128;

__global__ void rope_kernel(uint16_t* x, int64_t ldx, int64_t T, int H, int H_w0, const uint16_t* w0,
                            const uint16_t* w1, float eps, int64_t pos0, const float* inv_freq) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t item = int64_t(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;  // (token, head)
  if (item >= T * H) return;
  const int64_t t = item / H;
  const int h = int(item % H), lane = threadIdx.x & 31;
  uint16_t* xh = x + t * ldx + int64_t(h) * kHd;
  float out[4];
  norm_rope_head(xh, h < H_w0 ? w0 : w1, eps, float(pos0 + t), inv_freq, lane, out);
  for (int j = 0; j < 4; ++j) st_bf16(xh + lane + 32 * j, out[j]);
}
}  // namespace

void rope(bf16_t* x, int64_t ldx, int64_t T, int H, int hd, const bf16_t* w, float eps, int64_t pos0,
          const float* inv_freq, Stream s) {
  const auto op = [&] { return op_desc("rope", {{"T", T}, {"H", H}, {"hd", hd}, {"pos0", pos0}}); };
  if (hd != kHd) cuda_fail(cudaErrorInvalidValue, "rope needs head_dim 128", op(), __FILE__, __LINE__);
  if (T == 0) return;
  const int warps = 8;
  CUDA_CHECK(launch_pdl(rope_kernel, grid_1d(T * H, warps), warps * 32, 0, s, x, ldx, T, H, H, w, w, eps, pos0, inv_freq),
             op);
}

void rope_qk(bf16_t* q, int64_t ldx, int64_t T, int H, int hd, const bf16_t* wq, const bf16_t* wk, float eps,
             int64_t pos0, const float* inv_freq, Stream s) {
  const auto op = [&] { return op_desc("rope_qk", {{"T", T}, {"H", H}, {"hd", hd}, {"pos0", pos0}}); };
  if (hd != kHd) cuda_fail(cudaErrorInvalidValue, "rope needs head_dim 128", op(), __FILE__, __LINE__);
  if (ldx < int64_t(2) * H * hd) cuda_fail(cudaErrorInvalidValue, "rope_qk needs ldx >= 2 H hd (k follows q)", op(), __FILE__, __LINE__);
  if (T == 0) return;
  const int warps = 8;
  CUDA_CHECK(launch_pdl(rope_kernel, grid_1d(T * 2 * H, warps), warps * 32, 0, s, q, ldx, T, 2 * H, H, wq, wk, eps, pos0,
                        inv_freq),
             op);
}

}  // namespace salasim::gpu
