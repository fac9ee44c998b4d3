// The op -> input taps map of the model's data flow, for failure dumps: each tap kind's inputs as the op that
// produces it declares them (ops/op.hpp TapDef::inputs).
#include "compare/failure_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "ops/op.hpp"

namespace salasim {

namespace {

std::string dataset_name(const std::string& side, const std::string& tap) {
  std::string kind = tap_kind(tap);
  const int layer = tap_layer(tap);
  std::replace(kind.begin(), kind.end(), '/', '.');
  // the previous layer's tensors carry their layer, so they cannot collide with this layer's
  return fmt::format("{}.{}{}", side, layer >= 0 ? layer_dir(layer) + "." : "", kind);
}

// The declared inputs of a kind ("<prev>": the layer's input stream; "<last>": the last layer's output, found by
// add_failure_inputs among the recorded taps); none for a kind no op declares.
std::vector<std::string> declared_inputs(const std::string& kind) {
  const op::TapDef* t = op::find_tap(kind);
  return t ? t->inputs : std::vector<std::string>{};
}

}  // namespace

std::vector<std::string> op_input_taps(const std::string& name) {
  const std::string phase = fmt::format("/{}/", tap_phase(name));  // (fmt: GCC 12 -Wrestrict false positive on "/" + s)
  const std::string kind = tap_kind(name);
  const int layer = tap_layer(name);
  std::vector<std::string> out;
  if (layer < 0) {  // embed/out reads token ids only; final/logits the final norm; final/norm the last layer
    for (const std::string& k : declared_inputs(kind))
      if (k != "<last>") out.push_back(phase + k);
    return out;
  }
  const std::string here = phase + layer_dir(layer) + "/";
  const std::string prev = layer == 0 ? phase + "embed/out" : phase + layer_dir(layer - 1) + "/residual/h";
  for (const std::string& k : declared_inputs(kind)) out.push_back(k == "<prev>" ? prev : here + k);
  if (kind != "input_norm/out") out.push_back(here + "input_norm/out");
  return out;
}

void add_failure_inputs(std::vector<FailureEntry>& entries, const TapMap& ref, const TapMap& backend) {
  for (FailureEntry& e : entries) {
    std::vector<std::string> names = op_input_taps(e.name);
    const std::vector<std::string> declared = declared_inputs(tap_kind(e.name));
    if (std::count(declared.begin(), declared.end(), "<last>")) {  // the highest layer's residual recorded
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
