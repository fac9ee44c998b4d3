// Counter-based synthetic weights, shared by host and device so both produce bit-identical values.
//
// Formula (documented in docs/model.md "Synthetic weights"):
//   tid       = fnv1a64(tensor name)                       (host only; passed to kernels)
//   key       = mix64(seed ^ mix64(tid))
//   bits(i)   = mix64(key + (i + 1) * 0x9E3779B97F4A7C15)  (SplitMix64 output at counter i)
//   unit(i)   = (int(bits >> 40) - 2^23) * 2^-23           (exact float, uniform on [-1, 1))
//   w(i)      = bf16_rn(unit(i) * amp),  amp = float(std * sqrt(3))
// Both multiplications are single float roundings (the first is exact), so host and device agree.
#pragma once
#include <cstdint>
#include <string_view>

#include "model/bf16.hpp"

namespace salasim {

SALASIM_HD uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

SALASIM_HD uint64_t synth_key(uint64_t seed, uint64_t tensor_id) { return mix64(seed ^ mix64(tensor_id)); }

SALASIM_HD float synth_unit(uint64_t key, uint64_t i) {
  uint64_t b = mix64(key + (i + 1) * 0x9e3779b97f4a7c15ull);
  int32_t m = int32_t(b >> 40) - (1 << 23);
  return float(m) * 0x1p-23f;
}

SALASIM_HD uint16_t synth_bf16(uint64_t key, uint64_t i, float amp) { return bf16_from_float(synth_unit(key, i) * amp); }

inline uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace salasim
