// synth_fill: the counter-based synthetic weights of model/synth.hpp, generated in place on the device
// (bit-identical to the host generator: the same integer mixing and the same two float roundings).
#include "gpu/check.cuh"
#include "gpu/kernels.cuh"
#include "gpu/ops.hpp"
#include "model/synth.hpp"

namespace salasim::gpu {

namespace {
__global__ void synth_kernel(uint16_t* dst, int64_t n, uint64_t first, uint64_t key, float amp, bool ones) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = ones ? bf16_from_float(1.0f) : synth_bf16(key, first + uint64_t(i), amp);
}
}  // namespace

void synth_fill(bf16_t* dst, int64_t n, uint64_t first, uint64_t key, float amp, bool ones, Stream s) {
  if (n == 0) return;
  const unsigned blocks = unsigned(std::min<int64_t>((n + 255) / 256, 65536));
  synth_kernel<<<blocks, 256, 0, s>>>(dst, n, first, key, amp, ones);
  CHECK_LAUNCH(op_desc("synth_fill", {{"n", n}}));
}

}  // namespace salasim::gpu
