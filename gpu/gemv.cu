// gemv: the single-token case of linear (decode), y = alpha * W x with W [out, in] bf16 row-major, fp32 accumulate,
// bf16 out. Decode streams every weight once per token, so this is a pure bandwidth kernel: x is staged in shared
// memory as fp32, each warp takes two rows and its lanes read them in 16-byte pieces, two independent sums per lane
// keeping 2 x in/256 loads in flight. cuBLAS stays available (linear.hpp: set_gemv) so the two are measured side
// by side (bench/op_cases: gemv.*).
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/linear.hpp"

namespace salasim::gpu {

namespace {

constexpr int kWarps = 8, kRowsPerWarp = 2;

// Grid ceil(out / 16), kWarps * 32 threads, in * 4 bytes of dynamic shared memory.
__global__ void __launch_bounds__(kWarps * 32) gemv_kernel(const uint16_t* __restrict__ W, const uint16_t* __restrict__ x,
                                                           int in, int out, float alpha, uint16_t* __restrict__ y) {
  extern __shared__ float xs[];
  for (int i = threadIdx.x * 8; i < in; i += blockDim.x * 8) {
    float v[8];
    ld_bf16x8(x + i, v);
#pragma unroll
    for (int j = 0; j < 8; ++j) xs[i + j] = v[j];
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t r0 = (int64_t(blockIdx.x) * kWarps + warp) * kRowsPerWarp;
  if (r0 >= out) return;
  const bool two = r0 + 1 < out;
  const uint16_t* w0 = W + r0 * in;
  const uint16_t* w1 = two ? w0 + in : w0;
  float a0 = 0.f, a1 = 0.f;
#pragma unroll 4
  for (int i = lane * 8; i < in; i += 32 * 8) {
    float u[8], v[8];
    ld_bf16x8(w0 + i, u);
    ld_bf16x8(w1 + i, v);
    const float4 xa = *reinterpret_cast<const float4*>(xs + i), xb = *reinterpret_cast<const float4*>(xs + i + 4);
    const float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      a0 += u[j] * xv[j];
      a1 += v[j] * xv[j];
    }
  }
  a0 = warp_sum(a0);
  a1 = warp_sum(a1);
  if (lane == 0) {
    st_bf16(y + r0, alpha * a0);
    if (two) st_bf16(y + r0 + 1, alpha * a1);
  }
}

}  // namespace

bool gemv_supported(const bf16_t* x, const bf16_t* W, int in) {
  return in % 8 == 0 && in <= 48 * 1024 && vec8_ok(x, in, in) && vec8_ok(W, in, in);
}

void gemv(const bf16_t* W, const bf16_t* x, int in, int out, bf16_t* y, float alpha, Stream s) {
  const auto op = [&] { return op_desc("gemv", {{"in", in}, {"out", out}}); };
  ARG_CHECK(gemv_supported(x, W, in), op, "gemv needs in % 8 == 0, in <= 49152 and 16-byte aligned x and W");
  const size_t smem = size_t(in) * 4;
  static size_t raised = 48 * 1024;
  if (smem > raised) {
    CUDA_CHECK(cudaFuncSetAttribute(gemv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)), op);
    raised = smem;
  }
  const unsigned grid = unsigned((out + kWarps * kRowsPerWarp - 1) / (kWarps * kRowsPerWarp));
  gemv_kernel<<<grid, kWarps * 32, smem, s>>>(W, x, in, out, alpha, y);
  CHECK_LAUNCH(op);
}

}  // namespace salasim::gpu
