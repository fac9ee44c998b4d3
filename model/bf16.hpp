// bf16 <-> float conversions shared by host and device code (round to nearest even, NaN kept quiet),
// and the host-side rounding helpers the bf16-emulating reference uses.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SALASIM_HD __host__ __device__ __forceinline__
#else
#define SALASIM_HD inline
#endif

namespace salasim {

SALASIM_HD uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}

SALASIM_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// Same result as CUDA's __float2bfloat16_rn for every input.
SALASIM_HD uint16_t bf16_from_float(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x0040u);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

SALASIM_HD float float_from_bf16(uint16_t b) { return bits_float(uint32_t(b) << 16); }

// Host only: round a double to the nearest bf16 value (ties to even), directly, without a float step
// (a double -> float -> bf16 chain can round twice).
inline double round_bf16(double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  if (std::fabs(x) < 0x1p-126) return double(float_from_bf16(bf16_from_float(float(x))));  // bf16 subnormals
  uint64_t u;
  std::memcpy(&u, &x, 8);
  u += 0xfffffffffffull + ((u >> 45) & 1u);  // half of the 45 dropped bits, minus one, plus the kept lsb: ties to even
  u &= ~0x1fffffffffffull;
  double r;
  std::memcpy(&r, &u, 8);
  if (std::fabs(r) > 0x1.fep127) return std::copysign(INFINITY, x);  // past bf16's largest finite value
  return r;
}

inline double round_fp32(double x) { return double(float(x)); }

}  // namespace salasim
