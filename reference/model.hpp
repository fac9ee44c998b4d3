// The whole model in float64 (or its bf16-emulating peer): prefill of token ids, possibly in pieces, and decode
// one token at a time, with the caches the GPU keeps (GLA state per Lightning layer; KV cache and compressed
// keys K1/K2 per sparse layer), recording named taps on request.
//
// Dense or sparse (docs/spec.md §4.1, §4.6), per call as in HF: a prefill is sparse for every query iff the prompt's
// TOTAL length >= dense_len, however it is split into pieces (positions are absolute, SGLang-style); a decode step
// at position p is sparse iff p + 1 >= dense_len. Pieces then give exactly the one-call result.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "model/config.hpp"
#include "model/generate.hpp"
#include "reference/ops.hpp"
#include "reference/recorder.hpp"
#include "reference/weights.hpp"

namespace salasim::ref {

struct RefModel;

struct RefOptions {
  Num num = f64();
  RopeAngles rope = RopeAngles::Fp32;
  bool record_scores = true;  // record sparse/select/scores when taps are on (needed for the tie band)
  // Teacher forcing (verify): when set, sparse attention uses these selections ("/<phase>/layer_NN/sparse/select/
  // blocks" taps, rows by position within the phase) instead of its own, which it still computes and records.
  // One near-tie then cannot move every later layer away from the reference.
  const TapMap* forced_selection = nullptr;
  // The same from a source that is still filling (the reference running beside the peer): fills `sel`'s blocks from
  // rows [row0, row0 + sel.T) of the selection tap `name`, waiting for them if need be. Wins over forced_selection.
  std::function<void(const std::string& name, int64_t row0, Selection& sel)> forced_source = nullptr;
  // Called from the running thread after each layer of each call (a prefill piece or a decode step), where the
  // model's phase and len (tokens before the call) and `rows` (the call's tokens) say how far it got: progress lines.
  std::function<void(const RefModel& m, int layer, int64_t rows)> on_layer = nullptr;
};

struct SparseCache {
  std::vector<Mat> K, V;    // per kv head: [capacity, hd]; rows [0, len) valid
  std::vector<Mat> K1, K2;  // per kv head: complete compressed-key windows so far
};

struct RefModel {
  ModelConfig cfg;
  std::shared_ptr<const RefWeights> w;
  RefOptions opt;
  RopeTable rope_tab;
  std::vector<double> gamma;                // Lightning decay per head
  std::vector<std::vector<Mat>> gla_state;  // per layer (Lightning only): H x [hd, hd]
  std::vector<SparseCache> kv;              // per layer (sparse only)
  int64_t len = 0;                          // tokens consumed
  int64_t prefill_total = -1;               // total prompt length of the prefill under way
  int decode_steps = 0;
  std::string phase = "prefill";  // of the call under way: the tap phase and the forced-selection lookup
  int64_t phase_row0 = 0;         // row of the call's first token within its phase

  RefModel(const ModelConfig& c, std::shared_ptr<const RefWeights> weights, RefOptions o = {});

  // Starts a prefill of total_len tokens (fixes dense/sparse); feed them with prefill_piece.
  void begin_prefill(int64_t total_len);
  // Feeds the next piece of the prompt. Returns the logits of the piece's last token: [1, V].
  Mat prefill_piece(const std::vector<int32_t>& tokens, TapRecorder* taps = nullptr);
  // begin_prefill + one piece.
  Mat prefill(const std::vector<int32_t>& tokens, TapRecorder* taps = nullptr);
  // One generated token at position len. Returns [1, V]. Taps go to phase decode_NNNN.
  Mat decode(int32_t token, TapRecorder* taps = nullptr);
};

// Greedy generation from a fresh model (model/generate.hpp: the one loop every backend shares). With
// o.record_selection, each step's selections are the sparse layers' own (select/blocks, select/scores taps).
Generation generate(RefModel& m, const std::vector<int32_t>& prompt, const GenerateOptions& o);

// The mixers, exposed for layer-level checks. a: [T, D] normed input at positions pos0..; returns [T, D].
Mat lightning_mixer(const RefModel& m, int layer, const Mat& a, int64_t pos0, std::vector<Mat>& state,
                    TapRecorder* taps);
Mat sparse_mixer(const RefModel& m, int layer, const Mat& a, int64_t pos0, bool sparse, int64_t n_blocks,
                 SparseCache& cache, TapRecorder* taps);
// The mixers' q, k and v projections of the layer input a (docs/spec.md §3 step 1, §4 step 1), recorded as
// <prefix>proj/q, proj/k and proj/v. a: [T, D]; W.q, W.k, W.v: [out, D] (each mixer's own widths).
struct Qkv {
  Mat q, k, v;
};
Qkv project_qkv(const Mat& a, const LayerWeights& W, const std::string& prefix, TapRecorder* taps, const Num& num);

// The mixers' common tail (docs/spec.md §3 steps 8-9, §4 steps 3-4): the sigmoid output gate x * sigmoid(z) when
// `gated`, then o_proj, recorded as <prefix>gate/out and <prefix>o_proj/out. x, z: [T, n]; Wo: [D, n]. Returns [T, D].
Mat gate_o_proj(Mat x, const Mat& z, bool gated, const Mat& Wo, const std::string& prefix, TapRecorder* taps,
                const Num& num);

void cache_append(SparseCache& cache, const Mat& k, const Mat& v, int64_t pos0, int hd);
// Replaces sel's blocks by rows [row0, row0 + sel.T) of the forced selection tap `name`.
void use_forced_selection(const TapMap& forced, const std::string& name, int64_t row0, Selection& sel);

}  // namespace salasim::ref
