// gla on the GPU: the Lightning recurrence S_t = lambda S_{t-1} + k_t^T v_t, o_t = tau q_t S_t (docs/spec.md §3),
// fp32 arithmetic and fp32 state, bf16 in and out. Chunked form for prefill (>= 64 new tokens), recurrent for
// decode and short pieces, as HF dispatches.
#pragma once
#include "gpu/common.hpp"

namespace salasim::gpu {

// Workspace of gla_chunked for T tokens, enough for either engine (gla_workspace_size, gpu/launch_geometry.hpp). A
// call uses it from start to end: calls that may overlap (two streams) need one each.
size_t gla_workspace_bytes(int64_t T, int H, int hd);

// How gla_chunked runs: wgmma, one launch on Hopper, the segments chained (gla_wgmma.cu; an sm_90a build on a
// compute capability 9.0 GPU, else an argument error); mma_sync, three launches on any GPU (segment states, their
// scan, the outputs: gla.cu). automatic takes wgmma where it runs, else mma_sync. The two agree within the
// tolerance, not to the bit.
enum class GlaEngine { automatic, wgmma, mma_sync };

// q, k, v: [T, H*hd] with row stride ld (they sit side by side in the fused projection); gamma: [H] fp32 natural-log
// decays (device); S: [H, hd, hd] fp32 key-dim x value-dim, the entering state, updated in place; o: [T, H*hd]
// (row stride ldo). hd must be 128.
void gla_chunked(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                 const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, void* workspace, Stream s,
                 GlaEngine engine = GlaEngine::automatic);
void gla_recurrent(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                   const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, Stream s);
// gla_recurrent with rope_qk (ops.hpp) folded in: q and k are taken before the qk-norm and RoPE, which the kernel
// applies to each token's heads as it reads them (token t at position pos0 + t); the bits of rope_qk(q, ...) then
// gla_recurrent, except that q and k in memory are left as they were. One launch a decode step fewer per layer.
struct GlaRope {
  const bf16_t* wq = nullptr;  // [hd] q_norm weight, or null: no norm
  const bf16_t* wk = nullptr;  // [hd] k_norm weight, or null
  float eps = 0.0f;
  int64_t pos0 = 0;                 // position of q's first row
  const float* inv_freq = nullptr;  // [hd / 2] fp32 angle table (device)
};
void gla_recurrent_rope(const bf16_t* q, const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int H, int hd,
                        const GlaRope& rope, const float* gamma, float tau, float* S, bf16_t* o, int64_t ldo, Stream s);

}  // namespace salasim::gpu
