// Device helpers shared by the .cu files: bf16 loads/stores and block/warp reductions.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "gpu/pdl.cuh"

namespace salasim::gpu {

__device__ __forceinline__ float ld_bf16(const uint16_t* p) {
  return __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(p));
}
__device__ __forceinline__ void st_bf16(uint16_t* p, float v) {
  *reinterpret_cast<__nv_bfloat16*>(p) = __float2bfloat16_rn(v);
}
__device__ __forceinline__ float round_bf16_dev(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }
// The gate's expression, x * sigmoid(z) as x / (1 + e^-z) (gate.cu, rmsnorm.cu, gemv.cu: one expression, one set of
// bits).
__device__ __forceinline__ float gate_of(float x, float z) { return x / (1.0f + expf(-z)); }

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

// 8 consecutive bf16 (16 bytes, 16-byte aligned) to and from fp32.
__device__ __forceinline__ void unpack_bf16x8(const uint4& u, float (&v)[8]) {
  const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    v[2 * i] = __uint_as_float(w[i] << 16);
    v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}
__device__ __forceinline__ void ld_bf16x8(const uint16_t* p, float (&v)[8]) {
  unpack_bf16x8(*reinterpret_cast<const uint4*>(p), v);
}
__device__ __forceinline__ void st_bf16x8(uint16_t* p, const float (&v)[8]) {
  uint32_t w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const __nv_bfloat162 b = __floats2bfloat162_rn(v[2 * i], v[2 * i + 1]);
    w[i] = *reinterpret_cast<const uint32_t*>(&b);
  }
  *reinterpret_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
}
// Elements i .. i+7 of an RMSNorm's output before its rounding: v = x * inv * w in fp32, in that order. Every RMSNorm
// of the GPU path applies its weight here (rmsnorm.cu, residual_norm_row below, gemv.cu's fused residual), so all
// give the same bits. Generic pointers: global or shared memory.
__device__ __forceinline__ void rmsnorm_x8(const uint16_t* x, const uint16_t* w, float inv, float (&v)[8]) {
  float wv[8];
  ld_bf16x8(x, v);
  ld_bf16x8(w, wv);
#pragma unroll
  for (int j = 0; j < 8; ++j) v[j] = v[j] * inv * wv[j];
}
// The scaled residual add and the next rmsnorm of one row by one block of blockDim.x threads (D % 8 == 0, 16-byte
// aligned): hn = bf16(h + scale * b), then, when w is not null, y = bf16(rmsnorm(hn) * w) of the rounded hn. Thread t
// takes the 8-element pieces t * 8 + k * blockDim.x * 8, in that order, for both passes and the sum of squares, so a
// block of the same size gives the same bits wherever this runs (residual.cu; gemv.cu's fused prologue). hn may alias
// h and y may alias hn: a thread rereads only the pieces it wrote itself. Generic pointers: global or shared memory.
__device__ __forceinline__ void residual_norm_row(const uint16_t* h, const uint16_t* b, int D, float scale,
                                                  const uint16_t* w, float eps, uint16_t* hn, uint16_t* y) {
  float ss = 0;
  for (int i = threadIdx.x * 8; i < D; i += blockDim.x * 8) {
    float v[8], bv[8];
    ld_bf16x8(h + i, v);
    ld_bf16x8(b + i, bv);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      v[j] = round_bf16_dev(v[j] + scale * bv[j]);
      ss += v[j] * v[j];
    }
    st_bf16x8(hn + i, v);
  }
  if (!w) return;
  const float inv = rsqrtf(block_sum(ss) / float(D) + eps);
  for (int i = threadIdx.x * 8; i < D; i += blockDim.x * 8) {
    float v[8];
    rmsnorm_x8(hn + i, w + i, inv, v);
    st_bf16x8(y + i, v);
  }
}

// 1 / rms of the row x [n] (n % 8 == 0, 16-byte aligned) by one block: thread t sums the squares of the pieces
// t * 8 + k * blockDim.x * 8 in that order, then block_sum; every thread gets the result (rmsnorm.cu,
// rmsnorm_gate_row).
__device__ __forceinline__ float row_inv_rms(const uint16_t* x, int n, float eps) {
  float ss = 0;
  for (int i = threadIdx.x * 8; i < n; i += blockDim.x * 8) {
    float v[8];
    ld_bf16x8(x + i, v);
#pragma unroll
    for (int j = 0; j < 8; ++j) ss += v[j] * v[j];
  }
  return rsqrtf(block_sum(ss) / float(n) + eps);
}

// rmsnorm then the z gate of one row by one block (n % 8 == 0, 16-byte aligned): y = bf16(bf16(rmsnorm(x) * w) *
// sigmoid(z)), normed (when not null) = bf16(rmsnorm(x) * w). Thread t takes the pieces t * 8 + k * blockDim.x * 8
// in that order for the sum of squares and the output, so a block of the same size gives the same bits wherever this
// runs (rmsnorm.cu's rmsnorm_gate; gemv.cu's gated prologue). y may alias x: a thread rereads only its own pieces.
__device__ __forceinline__ void rmsnorm_gate_row(const uint16_t* x, const uint16_t* w, const uint16_t* z, int n,
                                                 float eps, uint16_t* y, uint16_t* normed) {
  const float inv = row_inv_rms(x, n, eps);
  for (int i = threadIdx.x * 8; i < n; i += blockDim.x * 8) {
    float v[8], wv[8], zv[8];
    ld_bf16x8(x + i, v);
    ld_bf16x8(w + i, wv);
    ld_bf16x8(z + i, zv);
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = round_bf16_dev(v[j] * inv * wv[j]);
    if (normed) st_bf16x8(normed + i, v);
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = gate_of(v[j], zv[j]);
    st_bf16x8(y + i, v);
  }
}

// The per-head qk-norm (when w is not null) and RoPE of one 128-dim head vector by one warp: lane l gets the
// rotated dims l, l + 32 (out[0], out[1]) and their rotate-half partners l + 64, l + 96 (out[2], out[3]), each
// rounded to bf16, the values rope.cu stores. The norm's output is rounded before the rotation, as HF does.
// p: the position (exact in fp32 below 2^24); inv_freq: [64] fp32.
__device__ __forceinline__ void norm_rope_head(const uint16_t* xh, const uint16_t* w, float eps, float p,
                                               const float* inv_freq, int lane, float (&out)[4]) {
  float v[4] = {ld_bf16(xh + lane), ld_bf16(xh + lane + 32), ld_bf16(xh + lane + 64), ld_bf16(xh + lane + 96)};
  if (w) {
    const float inv = rsqrtf(warp_sum(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]) / 128.0f + eps);
    for (int j = 0; j < 4; ++j) v[j] = round_bf16_dev(v[j] * inv * ld_bf16(w + lane + 32 * j));
  }
  for (int j = 0; j < 2; ++j) {
    float sn, cs;
    sincosf(p * inv_freq[lane + 32 * j], &sn, &cs);  // full-range sincosf: angles reach ~2e6 rad
    const float a = v[j], b = v[j + 2];
    out[j] = round_bf16_dev(a * cs - b * sn);
    out[j + 2] = round_bf16_dev(b * cs + a * sn);
  }
}

// Whether rows of n elements at p (row stride ld) can be read 8 at a time.
__host__ __device__ inline bool vec8_ok(const void* p, int64_t n, int64_t ld) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0 && n % 8 == 0 && ld % 8 == 0;
}

inline unsigned grid_1d(int64_t n, int threads) { return unsigned((n + threads - 1) / threads); }

}  // namespace salasim::gpu
