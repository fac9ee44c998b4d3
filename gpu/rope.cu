// rope with the Lightning qk-norm fused in front: one warp per (token, head); lane l holds dims l, l+32 of the
// first half and their partners l+64, l+96, so each rotate-half pair stays inside one lane. Heads h >= H_w0 of a
// row take the second norm weight (rope_qk: q's H heads, then k's H heads, in one launch).
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
  const uint16_t* w = h < H_w0 ? w0 : w1;
  float v[4] = {ld_bf16(xh + lane), ld_bf16(xh + lane + 32), ld_bf16(xh + lane + 64), ld_bf16(xh + lane + 96)};
  if (w) {  // per-head RMSNorm, stored as bf16 before the rotation (as HF rounds between the two)
    const float inv = rsqrtf(warp_sum(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) / float(kHd) + eps);
    for (int j = 0; j < 4; ++j) v[j] = round_bf16_dev(v[j] * inv * ld_bf16(w + lane + 32 * j));
  }
  const float p = float(pos0 + t);  // exact below 2^24
  for (int j = 0; j < 2; ++j) {
    const int i = lane + 32 * j;
    float sn, cs;
    sincosf(p * inv_freq[i], &sn, &cs);  // full-range sincosf: angles reach ~2e6 rad
    const float a = v[j], b = v[j + 2];
    st_bf16(xh + i, a * cs - b * sn);
    st_bf16(xh + i + 64, b * cs + a * sn);
  }
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
