// A C ABI over a few CUDA-path ops, for bench/peers.py: Python (ctypes) hands over device pointers of torch tensors,
// so our kernels and the peers (fla, torch SDPA) run on the same inputs in one process and one stream.
// Every function returns 0, or 1 with the message in salasim_last_error().
#include <cstdint>
#include <string>

#include "gpu/gla.hpp"
#include "gpu/sparse_args.hpp"
#include "model/error.hpp"

namespace {
thread_local std::string last_error;
template <class F>
int guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
    return 1;
  }
}
salasim::gpu::Stream as_stream(void* s) { return salasim::gpu::Stream(static_cast<CUstream_st*>(s)); }
}  // namespace

extern "C" {

const char* salasim_last_error() { return last_error.c_str(); }

size_t salasim_gla_workspace_bytes(int64_t T, int H, int hd) { return salasim::gpu::gla_workspace_bytes(T, H, hd); }

// q, k, v: [T, H*hd] bf16 with row stride ld; gamma: [H] fp32; S: [H, hd, hd] fp32 in/out; o: [T, H*hd] (ldo).
int salasim_gla_chunked(const void* q, const void* k, const void* v, int64_t ld, int64_t T, int H, int hd,
                        const float* gamma, float tau, float* S, void* o, int64_t ldo, void* workspace, void* stream) {
  using salasim::gpu::bf16_t;
  return guarded([&] {
    salasim::gpu::gla_chunked(static_cast<const bf16_t*>(q), static_cast<const bf16_t*>(k),
                              static_cast<const bf16_t*>(v), ld, T, H, hd, gamma, tau, S, static_cast<bf16_t*>(o), ldo,
                              workspace, as_stream(stream));
  });
}

// Causal GQA attention: q [T, H*hd] (ldq), K, V [G, cap, hd], out [T, H*hd] (ldo); queries at positions 0 .. T-1.
int salasim_dense_attn(const void* q, int64_t ldq, int64_t T, const void* K, const void* V, int64_t cap, int H, int G,
                       int hd, float tau, void* out, int64_t ldo, void* stream) {
  using salasim::gpu::bf16_t;
  return guarded([&] {
    salasim::SparseRules r;
    r.heads = H, r.groups = G, r.hd = hd, r.tau = tau;
    salasim::gpu::SparseCache c;
    c.K = static_cast<const bf16_t*>(K), c.V = static_cast<const bf16_t*>(V), c.cap = cap;
    const salasim::gpu::AttnArgs a = salasim::gpu::attn_args(r, {static_cast<const bf16_t*>(q), ldq, T, 0}, c, nullptr,
                                                             static_cast<bf16_t*>(out), ldo, {});
    if (T <= salasim::kAttnSplitMaxT) salasim::fail("salasim_dense_attn: T must exceed {}", salasim::kAttnSplitMaxT);
    salasim::gpu::dense_attn(a, as_stream(stream));
  });
}

}  // extern "C"
