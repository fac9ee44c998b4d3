// The compressed-key window count (docs/spec.md §4.2), shared by the reference, the memory models, the CUDA
// runner and its kernels: host and device code call this one function, so K1/K2 lengths cannot drift apart.
// Plain C++ outside nvcc; __host__ __device__ under it (as model/bf16.hpp does).
#pragma once
#include <cstdint>

#if !defined(SALASIM_HD)
#if defined(__CUDACC__)
#define SALASIM_HD __host__ __device__ __forceinline__
#else
#define SALASIM_HD inline
#endif
#endif

namespace salasim {

// Windows of `kernel` keys every `stride` keys that lie complete inside the first `len` keys:
// floor((len - kernel) / stride) + 1 once len >= kernel, else 0. K1: kernel 32, stride 16; K2: 128, 64.
SALASIM_HD int64_t n_windows(int64_t len, int64_t kernel, int64_t stride) {
  return len < kernel ? 0 : (len - kernel) / stride + 1;
}

}  // namespace salasim
