// Host declarations of the elementwise and normalisation ops of the CUDA path (one .cu each, named as in
// reference/ops.hpp). Row-major [T, n] activations with explicit row strides (ld, in elements), because fused
// projections leave q, k, v, z side by side in one row. bf16 in and out; arithmetic in fp32; one bf16 rounding per
// stored tensor, where the bf16 peer rounds (reference/tensor.hpp).
#pragma once
#include <cstdint>

#include "gpu/common.hpp"

namespace salasim::gpu {

// ---- embed.cu: h = bf16(E[token] * scale). E: [V, D]; tokens: [T] (device); h: [T, D]. checked: an id outside
// [0, V) throws (the call waits for the kernel); unchecked: the caller vouches for the ids (no wait).
void embed(const bf16_t* E, const int32_t* tokens, int64_t T, int D, int V, float scale, bf16_t* h, Stream s,
           bool checked = true);

// ---- greedy_token.cu: model/generate.hpp's greedy_token on the device: *token = the index of the largest finite
// logit (lowest among equals; 0 when none is finite). logits: [n] bf16. out, when not null (host-mapped memory):
// out[0] = the token, out[1] = 1 if every logit was finite, else 0.
void greedy_token(const bf16_t* logits, int64_t n, int32_t* token, int32_t* out, Stream s);

// ---- rmsnorm.cu: y = bf16(x / sqrt(mean(x^2) + eps) * w) per row. x: [T, n] (ldx); w: [n]; y: [T, n] (ldy).
void rmsnorm(const bf16_t* x, int64_t ldx, const bf16_t* w, int64_t T, int n, float eps, bf16_t* y, int64_t ldy,
             Stream s);

// ---- residual.cu: h = bf16(h + scale * b), then y = rmsnorm(h; w) when w != nullptr (the next pre-norm, fused).
// h, b, y: [T, D] (ld = D).
void residual(bf16_t* h, const bf16_t* b, int64_t T, int D, float scale, const bf16_t* w, float eps, bf16_t* y,
              Stream s);

// ---- rope.cu: Lightning q or k in place: per-head RMSNorm (w: [hd], nullptr = none), rounded to bf16, then
// rotate-half RoPE at positions pos0.. with angle = fp32(float(p) * inv_freq[i]), rounded to bf16.
// x: [T, H*hd] (ldx); inv_freq: [hd/2] fp32 on the device (the fp32 table of reference/rope.cpp).
void rope(bf16_t* x, int64_t ldx, int64_t T, int H, int hd, const bf16_t* w, float eps, int64_t pos0,
          const float* inv_freq, Stream s);
// q and k of the fused Lightning projection in one launch (k's heads follow q's in each row: k = q + H*hd), each
// with its own norm weight: the same values as rope(q, wq) and rope(k, wk), one launch instead of two (a decode step
// runs 24 of these, each so short that its launch is much of its cost: docs/decisions.md).
void rope_qk(bf16_t* q, int64_t ldx, int64_t T, int H, int hd, const bf16_t* wq, const bf16_t* wk, float eps,
             int64_t pos0, const float* inv_freq, Stream s);

// ---- gate.cu: y = bf16(x * sigmoid(z)). x: [T, n] (ldx); z: [T, n] (ldz); y: [T, n] (ldy), may alias x.
void gate(const bf16_t* x, int64_t ldx, const bf16_t* z, int64_t ldz, int64_t T, int n, bf16_t* y, int64_t ldy,
          Stream s);

// ---- rmsnorm.cu: y = gate(rmsnorm(x; w), z) in one pass (the Lightning o_norm and z gate), the bits of the two;
// normed: [T, n] (ld n) gets rmsnorm(x; w) too when not null (its tap). y may alias x.
void rmsnorm_gate(const bf16_t* x, int64_t ldx, const bf16_t* w, const bf16_t* z, int64_t ldz, int64_t T, int n,
                  float eps, bf16_t* y, int64_t ldy, bf16_t* normed, Stream s);

// ---- mlp.cu: act = bf16(silu(g) * u) with g = gu[:, :I], u = gu[:, I:2I]. gu: [T, 2I]; act: [T, I].
void mlp_act(const bf16_t* gu, int64_t T, int I, bf16_t* act, Stream s);

// ---- synth.cu: dst[i] = synth_bf16(key, first + i, amp) (model/synth.hpp), or 1.0 when ones.
void synth_fill(bf16_t* dst, int64_t n, uint64_t first, uint64_t key, float amp, bool ones, Stream s);

// ---- kv_append.cu: rows pos0 .. pos0+T-1 of the sparse layer's caches from the projection: for each kv group j,
// Kc[j, pos0 + t, :] = k[t, j*hd .. (j+1)*hd) and likewise V. k, v: [T, G*hd] (ld); Kc, Vc: [G, cap, hd].
void kv_append(const bf16_t* k, const bf16_t* v, int64_t ld, int64_t T, int G, int hd, bf16_t* Kc, bf16_t* Vc,
               int64_t cap, int64_t pos0, Stream s);

// ---- convert.cu: bf16 -> fp32 (for downloads of logits and taps).
void bf16_to_f32(const bf16_t* x, int64_t n, float* y, Stream s);

}  // namespace salasim::gpu
