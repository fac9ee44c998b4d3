// Long-context spot checks (docs/design.md "Scale"): where the float64 reference cannot rerun the whole model (the full
// config at 256K-2048K tokens), a backend hands over one layer's inputs and outputs at a few query positions, and
// the reference recomputes exactly those: the block selection and sparse attention of each query (sparse layers),
// the GLA output through its closed form and the state after a window (Lightning layers). Each is gated like a
// tap of `salasim verify`: float64 on the handed-over inputs is the truth, the bf16-emulating peer on the same
// inputs sets the allowance, selections are compared as sets inside the tie band.
//
// Everything a backend hands over is a flat row-major float32 array with its shape (SpotTensor): a device buffer
// copied to the host as it is (bf16 bits through from_bf16, fp32 as they are), no layout change needed beyond the
// shapes below.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compare/report.hpp"
#include "model/config.hpp"
#include "model/taps.hpp"

namespace salasim {

struct SpotTensor {
  std::vector<int64_t> shape;  // row-major
  std::vector<float> data;     // bf16 tensors hold their exact values (bf16 -> float is exact)
  int64_t numel() const;
  bool empty() const { return shape.empty(); }
  // n = product of shape elements of bf16 bit patterns (what a bf16 device buffer holds), or fp32 values.
  static SpotTensor from_bf16(std::vector<int64_t> shape, const uint16_t* bits);
  static SpotTensor from_f32(std::vector<int64_t> shape, const float* values);
};

// Which layers and query positions to hand over. Positions are absolute positions in the prompt (prefill
// queries), ascending, all in [window_start, prompt length).
struct SpotRequest {
  std::vector<int> layers;
  std::vector<int64_t> positions;
  int64_t window_start = 0;  // Lightning: the GLA state entering this position is handed over (state0)
};

// Sparse (InfLLM-v2) layer, docs/spec.md §4. N = positions, H query heads, G kv heads, hd head dim,
// K = K_sel (topk + window/block), NB = ceil(len / block).
struct SparseSpot {
  SpotTensor q;        // [N, H*hd]   the layer's queries at `positions` (proj/q, bf16)
  SpotTensor k_cache;  // [G, len, hd] every raw key of the sequence (bf16): the reference compresses it itself
  SpotTensor v_cache;  // [G, len, hd] every value (bf16)
  SpotTensor k1, k2;   // optional: the backend's compressed keys [G, n1(len), hd] and [G, n2(len), hd] (bf16)
  SpotTensor blocks;   // [N, G, K] the backend's selection: block ids ascending, -1 in unused slots
  SpotTensor scores;   // [N, G, NB] the backend's pooled block scores (+inf forced, -inf future)
  SpotTensor attn;     // [N, H*hd] the backend's attention output over its selection (attn/out, before the gate)
};

// Lightning layer, docs/spec.md §3: a window of W tokens [window_start, window_start + W) that ends at or after the
// last position. H = lightning heads, hd = lightning head dim.
struct LightningSpot {
  int64_t window_start = 0;
  SpotTensor state0;  // [H, hd, hd] fp32 GLA state entering window_start (key dim x value dim)
  SpotTensor q;       // [N, H*hd] the queries at `positions` after qk-norm and RoPE (qk_rope/q, bf16)
  SpotTensor k;       // [W, H*hd] the window's keys after qk-norm and RoPE (qk_rope/k, bf16)
  SpotTensor v;       // [W, H*hd] the window's values (proj/v, bf16)
  SpotTensor out;     // [N, H*hd] the backend's GLA output at `positions` (gla/out, before o_norm)
  SpotTensor state1;  // optional [H, hd, hd]: the backend's state after the window's last token
};

struct SpotInput {
  int layer = 0;
  Mixer mixer = Mixer::Sparse;
  int64_t len = 0;                  // tokens of the prefill: keys 0 .. len-1 exist; the sparse rule needs len >= dense_len
  std::vector<int64_t> positions;   // N query positions, ascending
  SparseSpot sparse;                // filled when mixer == Sparse
  LightningSpot lightning;          // filled when mixer == Lightning
};

// The positions every backend hands over for a prompt of `len` tokens: n positions ending at len - 1, spread
// evenly over the last `window` tokens (window_start = len - window rounded down to a multiple of 64, so the GLA's
// 64-token chunks stay on the grid of a prefill that starts at 0), where every query has real block choices.
SpotRequest spot_request(int64_t len, int n, std::vector<int> layers, int64_t window = 1024);
// The taps a backend records to hand `req` over (checked: positions inside [window_start, prompt_len), layers of c):
// the sparse layers' q, compressed keys, selection and attention output; the Lightning layers' post-RoPE q/k, v and
// GLA output.
std::vector<std::string> spot_tap_patterns(const ModelConfig& c, const SpotRequest& req, int64_t prompt_len);
// The default layers: the deepest sparse and the deepest Lightning layer (they carry the most upstream error).
std::vector<int> default_spot_layers(const ModelConfig& c);

struct SpotCheck {
  CompareReport report;  // one row per spot tap: "/spot/layer_NN/sparse/select/blocks", ".../attn/out", ...
  TapMap ref, peer, backend;  // the taps compared: row n of each is positions[n] of its layer
};

// Recomputes every spot in float64 and in the bf16 peer from the handed-over inputs, and compares the backend's
// outputs with compare_taps. Sparse attention is recomputed over the BACKEND's selection (what its kernel
// attended to), so a tie-band swap in the selection does not move the attention check; the selection itself is
// compared against the reference's, inside the tie band. A malformed input (wrong shape, position outside the
// window, a sparse layer below dense_len) is a salasim::Error naming the layer, the field and the expected shape.
SpotCheck check_spots(const ModelConfig& c, const std::vector<SpotInput>& spots);

}  // namespace salasim
