// compress_k on the GPU (docs/spec.md §4.2): window c of the compressed keys = mean of keys [stride c, stride c + kernel),
// summed in fp32 and rounded once to bf16, written only for the windows the new keys complete.
//
// Launch: one thread per output element (g, c, dim), a grid-stride loop over G * n_new * hd elements, 256 threads
// per CTA. Consecutive threads take consecutive dims, so every key row is read as one coalesced 256 B line.
// Cost: each key is read kernel/stride times (2 for both K1 and K2): at a 16K-token prefill chunk that is
// 16384 * 2 kv heads * 256 B * 2 = 16 MiB per window kind, ~5 us at HBM speed, and ~1 FLOP per byte read.
#include <cuda_bf16.h>

#include <algorithm>

#include "gpu/check.cuh"
#include "gpu/compress_k.hpp"
#include "gpu/pdl.cuh"
#include "model/windows.hpp"

namespace salasim::gpu {

namespace {

// K: [G, cap, hd] bf16; ck: [G, ccap, hd] bf16. Writes windows c in [c0, c0 + nc) of every kv head.
__global__ void compress_k_kernel(const __nv_bfloat16* __restrict__ K, int64_t cap, int G, int hd, int64_t c0,
                                  int64_t nc, int kernel, int stride, __nv_bfloat16* __restrict__ ck, int64_t ccap) {
  pdl_begin();  // launched with launch_pdl (pdl.cuh)
  const int64_t total = int64_t(G) * nc * hd;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t d = i % hd;
    const int64_t c = c0 + (i / hd) % nc;
    const int64_t g = i / (hd * nc);
    const __nv_bfloat16* src = K + (g * cap + int64_t(stride) * c) * hd + d;
    float sum = 0.f;
    for (int j = 0; j < kernel; ++j) sum += __bfloat162float(src[int64_t(j) * hd]);
    ck[(g * ccap + c) * hd + d] = __float2bfloat16_rn(sum / float(kernel));  // IEEE division: one rounding to fp32
  }
}

}  // namespace

void compress_k(const bf16_t* K, int64_t cap, int G, int hd, int64_t len_old, int64_t len, int kernel, int stride,
                bf16_t* ck, int64_t ccap, Stream s) {
  const auto op = [&] {
    return op_desc("compress_k", {{"G", G}, {"hd", hd}, {"cap", cap}, {"len_old", len_old}, {"len", len},
                                  {"kernel", kernel}, {"stride", stride}, {"ccap", ccap}});
  };
  ARG_CHECK(kernel > 0 && stride > 0 && G > 0 && hd > 0, op, "kernel, stride, G and hd must be positive");
  ARG_CHECK(0 <= len_old && len_old <= len, op, "expected 0 <= len_old <= len");
  ARG_CHECK(len <= cap, op, "len exceeds the key cache capacity cap");
  const int64_t n_old = n_windows(len_old, kernel, stride), n_new = n_windows(len, kernel, stride);
  ARG_CHECK(n_new <= ccap, op, "the windows of len keys exceed the compressed-key capacity ccap");
  if (n_new == n_old) return;  // decode steps that complete no window
  ARG_CHECK(K && ck, op, "null K or ck");
  const int64_t total = int64_t(G) * (n_new - n_old) * hd;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((total + threads - 1) / threads, 132 * 64);
  CUDA_CHECK(launch_pdl(compress_k_kernel, unsigned(blocks), threads, 0, s, reinterpret_cast<const __nv_bfloat16*>(K),
                        cap, G, hd, n_old, n_new - n_old, kernel, stride, reinterpret_cast<__nv_bfloat16*>(ck), ccap),
             op);
}

}  // namespace salasim::gpu
