// gla on the GPU: the Lightning recurrence S_t = lambda S_{t-1} + k_t^T v_t, o_t = tau q_t S_t (docs/spec.md §3),
// fp32 arithmetic and fp32 state, bf16 in and out. Chunked form for prefill (>= 64 new tokens), recurrent for
// decode and short pieces, as HF dispatches.
#pragma once
#include "gpu/common.hpp"

namespace salasim::gpu {

// Workspace of gla_chunked for T tokens: one [hd, hd] fp32 state per (64-token chunk, head).
size_t gla_workspace_bytes(int64_t T, int H, int hd);

// q, k, v: [T, H*hd] with row stride ld (they sit side by side in the fused projection); gamma: [H] fp32 natural-log
// decays (device); S: [H, hd, hd] fp32 key-dim x value-dim, the entering state, updated in place; o: [T, H*hd]
// (row stride ldo). hd must be 128.
void gla_chunked(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                 const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, void* workspace, Stream s);
void gla_recurrent(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                   const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, Stream s);

}  // namespace salasim::gpu
