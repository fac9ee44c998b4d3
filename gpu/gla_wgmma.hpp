// gla_chunked's one-pass engine on Hopper (GlaEngine::wgmma, gpu/gla.hpp; gpu/gla_wgmma.cu). Internal to gpu/: gla.cu
// calls it where the caller's engine (or automatic, on an sm_90a build on a compute capability 9.0 GPU) says so.
#pragma once
#include "gpu/common.hpp"

namespace salasim::gpu {

// Arguments as gla_chunked's (hd = 128, checked there); workspace: at least gla_chain_bytes(H)
// (gpu/launch_geometry.hpp), used by one call at a time (the flags and the ring of states are reset per call, so two
// calls on two streams need two workspaces).
void gla_chunked_wgmma(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H,
                       const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, void* workspace, Stream s);

}  // namespace salasim::gpu
