// Every op of MiniCPM-SALA in float64 (docs/spec.md is the math; section numbers below point into it).
// One file per op (reference/<op>.cpp). Shapes: T rows (tokens), D hidden, H heads, hd head dim,
// G kv heads (= kv groups), all row-major.
#pragma once
#include <cstdint>
#include <vector>

#include "model/sparse_rules.hpp"
#include "model/windows.hpp"
#include "reference/tensor.hpp"

namespace salasim::ref {

// ---- embed.cpp: h = E[x] * scale_emb (§2 step 1) ----
// E: [V, D]; tokens: T ids in [0, V). Returns [T, D].
Mat embed(const Mat& E, const std::vector<int32_t>& tokens, double scale, const Num& num);

// ---- linear.cpp: y = x W^T, no bias ----
// x: [T, in]; W: [out, in]. Returns [T, out].
Mat linear(const Mat& x, const Mat& W, const Num& num);

// ---- rmsnorm.cpp: x / sqrt(mean(x^2) + eps) * w (§2.1) ----
// x: [T, n]; w: [n]. Returns [T, n].
Mat rmsnorm(const Mat& x, const Vec& w, double eps, const Num& num);
// Per-head RMSNorm: x: [T, H*hd]; w: [hd] shared by the heads.
Mat rmsnorm_heads(const Mat& x, const Vec& w, int hd, double eps, const Num& num);

// ---- rope.cpp: rotate-half RoPE on all hd dims (§2.1) ----
enum class RopeAngles {
  Fp32,  // the angle table as fp32 code builds it (HF, the GPU): fp32 inv_freq, fp32 product p * inv_freq
  Exact  // float64 angles; differs from the model's fp32 angles by up to ~0.1 rad near p = 2M
};
struct RopeTable {
  int hd = 0;
  RopeAngles mode = RopeAngles::Fp32;
  std::vector<double> inv_freq;   // [hd/2], float64
  std::vector<float> inv_freq32;  // [hd/2], as fp32 code computes it
  double angle(int64_t pos, int i) const;
};
RopeTable rope_table(int hd, double theta, RopeAngles mode);
// x: [T, H*hd] at positions pos0 .. pos0+T-1; rotated in place.
void rope(Mat& x, int64_t pos0, const RopeTable& t, const Num& num);

// ---- gla.cpp: simple GLA with a constant per-head decay, inclusive of the current token (§3 step 6) ----
// q, k, v: [T, H*hd]; gamma: [H] natural-log decay per token (< 0); S: H states [hd(key), hd(value)],
// the state entering the call, updated to the state after it. Returns o: [T, H*hd] (before o_norm).
Mat gla_recurrent(const Mat& q, const Mat& k, const Mat& v, const std::vector<double>& gamma, double tau,
                  std::vector<Mat>& S, const Num& num);
// Chunked form (§3.1), chunk C = 64 by default; equal to the recurrence.
Mat gla_chunked(const Mat& q, const Mat& k, const Mat& v, const std::vector<double>& gamma, double tau,
                std::vector<Mat>& S, const Num& num, int chunk = 64);
// Closed form for one position t (0-based within the call), from the entering state S0:
// o_t = tau * sum_{s<=t} lambda^(t-s) (q_t . k_s) v_s + tau * lambda^(t+1) q_t S0. Returns [H*hd].
RowVec gla_closed_form(const Mat& q, const Mat& k, const Mat& v, const std::vector<double>& gamma, double tau,
                       const std::vector<Mat>& S0, int64_t t);
// The same for one query row q_t: [H*hd] alone (spot checks hand over the queries of chosen positions only);
// k, v: [>= t+1, H*hd] from the call's first token.
RowVec gla_closed_form(const RowVec& q_t, const Mat& k, const Mat& v, const std::vector<double>& gamma, double tau,
                       const std::vector<Mat>& S0, int64_t t);

// ---- compress_k.cpp: mean-pooled compressed keys K1 (32/16) and K2 (128/64) (§4.2) ----
using salasim::n_windows;  // model/windows.hpp: floor((len - kernel)/stride) + 1, or 0
// k: [len, hd] raw keys of one kv head. Returns [n_windows(len), hd].
Mat compress_k(const Mat& k, int64_t len, int kernel, int stride, const Num& num);
// Appends to ck ([n_old, hd]) the windows that keys [0, len) complete: the incremental form.
void compress_k_append(Mat& ck, const Mat& k, int64_t len, int kernel, int stride, const Num& num);

// ---- select_blocks.cpp: stage-1 block scores, max-pool, forced blocks, top-k (§4.3, §4.4) ----
// The head shapes and rules (model/sparse_rules.hpp), the same struct the GPU path takes.
using SelectParams = SparseRules;
struct Selection {
  int64_t T = 0, G = 0, K = 0;
  std::vector<int32_t> blocks;  // [T, G, K]: selected block ids ascending, -1 in unused slots
  int64_t NB = 0;
  std::vector<double> scores;  // [T, G, NB] pooled scores when asked: +inf forced, -inf future, else S_g(b)
  const int32_t* row(int64_t t, int64_t g) const { return blocks.data() + (t * G + g) * K; }
};
// q: [T, H*hd] at positions pos0..; k1[g]: [>= n1(pos0+T), hd], k2[g]: [>= n2(pos0+T), hd] compressed keys;
// n_blocks: width of the score array (blocks of the whole sequence); scores recorded when want_scores.
Selection select_blocks(const Mat& q, int64_t pos0, const std::vector<Mat>& k1, const std::vector<Mat>& k2,
                        const SelectParams& sp, int64_t n_blocks, bool want_scores, const Num& num);

// ---- sparse_attn.cpp: attention over the selected 64-token blocks, causal (§4.5) ----
// q: [T, H*hd] at positions pos0..; K[g], V[g]: [>= pos0+T, hd] cached keys/values. Returns [T, H*hd].
Mat sparse_attn(const Mat& q, int64_t pos0, const std::vector<Mat>& K, const std::vector<Mat>& V, const Selection& sel,
                int block, double tau, const Num& num);

// ---- dense_attn.cpp: causal GQA softmax attention over every key <= p (§4.1) ----
Mat dense_attn(const Mat& q, int64_t pos0, const std::vector<Mat>& K, const std::vector<Mat>& V, int hd, double tau,
               const Num& num);

// ---- gate.cpp: x * sigmoid(z) (Lightning z gate §3 step 8, sparse o_gate §4 step 3) ----
Mat gate(const Mat& x, const Mat& z, const Num& num);

// ---- mlp.cpp: silu(gate) * up (§2.1); the projections are linear() ----
Mat mlp_act(const Mat& g, const Mat& u, const Num& num);

// ---- residual.cpp: h + scale * branch (§2 step 2), in place ----
void residual(Mat& h, const Mat& branch, double scale, const Num& num);

// ---- logits.cpp: logits = W_lm (h / divisor) (§2 step 4) ----
// h: [T, D] after the final norm; W: [V, D]. Returns [T, V].
Mat logits(const Mat& h, const Mat& W, double divisor, const Num& num);

}  // namespace salasim::ref
