// greedy_token: model/generate.hpp's greedy rule on the device: the index of the largest finite logit, the lowest
// index among equals, 0 when none is finite, and whether every logit was finite. A decode step that ends with it
// hands its token to the next step's embedding on the GPU (Runner::generate), so the host need not read the logits,
// pick the token and upload it between steps: it enqueues the next step while this one runs. One CTA: 73448 bf16
// logits are 147 KB, a short read even at one CTA's bandwidth, far less than the round trip through the host it saves
// (docs/performance.md, "Measured reasons behind kernel choices").
#include <cfloat>

#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"

namespace salasim::gpu {

namespace {
constexpr int kThreads = 1024;

// (v, i) beats (bv, bi): larger, or equal at a lower index; a sentinel (-inf, n) loses to every finite pair.
__device__ __forceinline__ bool beats(float v, int64_t i, float bv, int64_t bi) { return v > bv || (v == bv && i < bi); }

__global__ void __launch_bounds__(kThreads) greedy_kernel(const uint16_t* __restrict__ logits, int64_t n,
                                                          int32_t* token, int32_t* out) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  float best = -FLT_MAX;
  int64_t bi = n;
  bool finite = true;
  // Each thread walks its indices upward, so a strict > keeps its lowest index among equals.
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float v = ld_bf16(logits + i);
    if (!isfinite(v)) finite = false;
    else if (bi == n || v > best) best = v, bi = i;
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    const float v = __shfl_down_sync(0xffffffffu, best, o);
    const int64_t i = __shfl_down_sync(0xffffffffu, bi, o);
    if (i < n && (bi == n || beats(v, i, best, bi))) best = v, bi = i;
  }
  __shared__ float wv[kThreads / 32];
  __shared__ int64_t wi[kThreads / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) wv[warp] = best, wi[warp] = bi;
  const bool all_finite = __syncthreads_and(finite);
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kThreads / 32; ++w)
    if (wi[w] < n && (bi == n || beats(wv[w], wi[w], best, bi))) best = wv[w], bi = wi[w];
  const int32_t t = bi == n ? 0 : int32_t(bi);
  *token = t;
  if (out) {  // host-mapped memory: the step's token and finite flag, read by the host after the step's event
    out[0] = t;
    out[1] = all_finite ? 1 : 0;
    __threadfence_system();
  }
}
}  // namespace

void greedy_token(const bf16_t* logits, int64_t n, int32_t* token, int32_t* out, Stream s) {
  const auto op = [&] { return op_desc("greedy_token", {{"n", n}}); };
  ARG_CHECK(n > 0 && n <= INT32_MAX, op, "greedy_token needs 0 < n <= 2^31 - 1 logits");
  CUDA_CHECK(launch_pdl(greedy_kernel, 1, kThreads, 0, s, reinterpret_cast<const uint16_t*>(logits), n, token, out), op);
}

}  // namespace salasim::gpu
