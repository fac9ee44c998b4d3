// Named intermediate tensors ("taps") that the reference and the GPU path record on request and the harness
// compares. One naming scheme everywhere (reference, GPU, HDF5 paths, tolerance rows):
//
//   /<phase>/<where>/<op>/<tensor>
//   phase:  prefill | decode_0000, decode_0001, ...
//   where:  embed | layer_00 .. layer_NN | final
//   e.g.    /prefill/layer_03/lightning/qk_rope/q   /prefill/layer_00/sparse/select/blocks
//           /decode_0002/layer_05/mlp/out           /prefill/final/logits
//
// The tap *kind* drops the phase and layer ("lightning/qk_rope/q"): tolerance rows are per kind.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/shape.hpp"

namespace salasim {

struct Tap {
  std::vector<int64_t> shape;  // row-major
  std::vector<double> data;    // float taps; integer taps (block ids, -1 = none) hold exact integers
  bool integer = false;
  int64_t order = 0;  // recording order within a run: "first divergence" means the lowest order that fails

  int64_t numel() const { return shape_numel(shape); }
};

using TapMap = std::map<std::string, Tap>;

// Which taps to record: empty records none; "*" records all. Otherwise a name is recorded when one of the
// patterns matches its start: the name after the phase ("layer_03/", "final/", "layer_03/lightning/gla/out"), or,
// for a pattern that starts with '/', the full name ("/prefill/final/logits", "/prefill/" = the prefill's taps).
// Patterns are globs: '*' matches any run of characters within one path part (never a '/'), '?' one character
// ("layer_*/residual/h", "/decode_*/final/norm", "layer_0?/mlp/"); a plain pattern is a prefix, as before.
struct TapFilter {
  std::vector<std::string> patterns;
  static TapFilter all() { return TapFilter{{"*"}}; }
  bool any() const { return !patterns.empty(); }
  bool match(const std::string& name) const;
};

// True when glob `pattern` matches the start of `text` ('*' within one path part, '?' one character, no '/').
bool glob_prefix_match(const std::string& pattern, const std::string& text);

// True for taps whose first dimension is not tokens: "lightning/gla/state", "sparse/compress_k/k1|k2" (the state of
// the whole sequence so far) and "final/logits" (the last token only). The others have one row per token.
bool whole_sequence_tap(const std::string& name);

// "/prefill/layer_03/lightning/gla/out" -> "lightning/gla/out"; "/decode_0001/final/logits" -> "final/logits".
std::string tap_kind(const std::string& name);
// "/prefill/layer_03/..." -> 3; -1 when the tap has no layer.
int tap_layer(const std::string& name);
// "/prefill/layer_03/..." -> "prefill".
std::string tap_phase(const std::string& name);

std::string layer_dir(int layer);        // "layer_03"
std::string decode_phase(int step);      // "decode_0003"

}  // namespace salasim
