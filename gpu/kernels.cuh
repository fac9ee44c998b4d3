// Device helpers shared by the .cu files: bf16 loads/stores and block/warp reductions.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

namespace salasim::gpu {

__device__ __forceinline__ float ld_bf16(const uint16_t* p) { return __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(p)); }
__device__ __forceinline__ void st_bf16(uint16_t* p, float v) { *reinterpret_cast<__nv_bfloat16*>(p) = __float2bfloat16_rn(v); }
__device__ __forceinline__ float round_bf16_dev(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float part[32];
  __syncthreads();  // part[] may still be read by a previous call
  v = warp_sum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  const int nw = blockDim.x >> 5;
  float t = lane < nw ? part[lane] : 0.0f;
  return warp_sum(t);
}

inline unsigned grid_1d(int64_t n, int threads) { return unsigned((n + threads - 1) / threads); }

}  // namespace salasim::gpu
