// The op -> input taps map of the model's data flow, for failure dumps.
#include "compare/failure_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace salasim {

namespace {

// Inputs of each layer-level tap kind, as kinds of the same layer; "<prev>" stands for the previous layer's
// residual stream (or the embedding for layer 0).
const std::map<std::string, std::vector<std::string>>& inputs_by_kind() {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"input_norm/out", {"<prev>"}},
      {"residual/mid", {"<prev>", "lightning/o_proj/out", "sparse/o_proj/out"}},
      {"post_norm/out", {"residual/mid"}},
      {"mlp/act", {"post_norm/out"}},
      {"mlp/out", {"mlp/act"}},
      {"residual/h", {"residual/mid", "mlp/out"}},
      {"lightning/proj/q", {}},
      {"lightning/proj/k", {}},
      {"lightning/proj/v", {}},
      {"lightning/proj/z", {}},
      {"lightning/qk_rope/q", {"lightning/proj/q"}},
      {"lightning/qk_rope/k", {"lightning/proj/k"}},
      {"lightning/gla/out", {"lightning/qk_rope/q", "lightning/qk_rope/k", "lightning/proj/v"}},
      {"lightning/gla/state", {"lightning/qk_rope/k", "lightning/proj/v"}},
      {"lightning/o_norm/out", {"lightning/gla/out"}},
      {"lightning/gate/out", {"lightning/o_norm/out", "lightning/proj/z"}},
      {"lightning/o_proj/out", {"lightning/gate/out"}},
      {"sparse/proj/q", {}},
      {"sparse/proj/k", {}},
      {"sparse/proj/v", {}},
      {"sparse/proj/g", {}},
      {"sparse/compress_k/k1", {"sparse/proj/k"}},
      {"sparse/compress_k/k2", {"sparse/proj/k"}},
      {"sparse/select/scores", {"sparse/proj/q", "sparse/compress_k/k1", "sparse/compress_k/k2"}},
      {"sparse/select/blocks", {"sparse/proj/q", "sparse/compress_k/k1", "sparse/compress_k/k2", "sparse/select/scores"}},
      // the selection the backend was handed (teacher forcing) is the reference's select/blocks
      {"sparse/attn/out", {"sparse/proj/q", "sparse/proj/k", "sparse/proj/v", "sparse/select/blocks"}},
      {"sparse/gate/out", {"sparse/attn/out", "sparse/proj/g"}},
      {"sparse/o_proj/out", {"sparse/gate/out"}},
  };
  return m;
}

std::string dataset_name(const std::string& side, const std::string& tap) {
  std::string kind = tap_kind(tap);
  const int layer = tap_layer(tap);
  std::replace(kind.begin(), kind.end(), '/', '.');
  // the previous layer's tensors carry their layer, so they cannot collide with this layer's
  return fmt::format("{}.{}{}", side, layer >= 0 ? layer_dir(layer) + "." : "", kind);
}

}  // namespace

std::vector<std::string> op_input_taps(const std::string& name) {
  const std::string phase = fmt::format("/{}/", tap_phase(name));  // (fmt: GCC 12 -Wrestrict false positive on "/" + s)
  const std::string kind = tap_kind(name);
  const int layer = tap_layer(name);
  std::vector<std::string> out;
  if (layer < 0) {  // embed/out reads token ids only; final/norm reads the last residual (found by the caller)
    if (kind == "final/logits") out.push_back(phase + "final/norm");
    return out;
  }
  const std::string here = phase + layer_dir(layer) + "/";
  const std::string prev = layer == 0 ? phase + "embed/out" : phase + layer_dir(layer - 1) + "/residual/h";
  const auto it = inputs_by_kind().find(kind);
  if (it != inputs_by_kind().end())
    for (const std::string& k : it->second) out.push_back(k == "<prev>" ? prev : here + k);
  if (kind != "input_norm/out") out.push_back(here + "input_norm/out");
  return out;
}

void add_failure_inputs(std::vector<FailureEntry>& entries, const TapMap& ref, const TapMap& backend) {
  for (FailureEntry& e : entries) {
    std::vector<std::string> names = op_input_taps(e.name);
    if (tap_kind(e.name) == "final/norm") {  // the last layer's residual: the highest layer recorded
      const std::string phase = tap_phase(e.name);
      std::string last;
      int top = -1;
      for (const auto& [n, t] : ref)
        if (tap_phase(n) == phase && tap_kind(n) == "residual/h" && tap_layer(n) > top) top = tap_layer(n), last = n;
      if (top >= 0) names.push_back(last);
    }
    for (const std::string& n : names) {
      if (auto it = ref.find(n); it != ref.end()) e.inputs[dataset_name("reference", n)] = it->second;
      if (auto it = backend.find(n); it != backend.end()) e.inputs[dataset_name("backend", n)] = it->second;
    }
  }
}

}  // namespace salasim
