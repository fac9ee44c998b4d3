// The architecture page of the report bundle: architecture.html (one self-contained file: inline SVG and CSS, no
// script, no network) with a parameter treemap, the forward flow of one Lightning and one sparse layer beside the
// reference source lines, the layer-by-layer comparison, the VRAM chart, VRAM by component and the per-op costs at
// a chosen context; the treemap and the flow also as
// treemap.svg and flow.svg. With a checkpoint every count is compared with its safetensors headers and every
// disagreement is drawn in red.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/inventory.hpp"
#include "reports/forward_flow.hpp"
#include "reports/hardware.hpp"
#include "reports/model_spec.hpp"
#include "reports/plots.hpp"
#include "reports/treemap.hpp"
#include "reports/workspace.hpp"

namespace salasim::reports {

// Parameters per tensor name from the inventory and, when given, from a checkpoint's headers.
struct CountCheck {
  std::string checkpoint;  // "" when there is none
  std::map<std::string, int64_t> expected, actual;
  std::vector<std::string> issues;  // missing / extra / mis-shaped / mis-typed tensors (model/weights.hpp)
  std::vector<std::string> failed;  // every displayed count that disagrees, named
  int compared = 0;                 // displayed counts compared
  bool on() const { return !checkpoint.empty(); }
};
CountCheck count_check(const std::vector<TensorSpec>& inv, const std::string& checkpoint);

// One displayed count: the inventory's sum over the tensors `keep` selects, and the checkpoint's.
struct Checked {
  int64_t expected = 0, actual = 0;
  bool checked = false, ok = true;
};
Checked check_sum(CountCheck& k, const std::string& what, const std::function<bool(const std::string&)>& keep);
int tensor_layer(const std::string& name);  // "model.layers.17.mlp..." -> 17; -1 outside the layers

// The treemap's tree: non-layer tensors, the Lightning layers, the sparse layers; inside a layer its tensors.
TreeNode parameter_tree(const ModelConfig& c, const std::vector<TensorSpec>& inv, CountCheck& k);

// SVG parts (architecture_svg.cpp).
std::string flow_svg(const ModelConfig& c, const std::vector<TensorSpec>& inv, CountCheck& k,
                     std::vector<std::string>* unresolved);
std::string layer_bars_svg(const ModelConfig& c, const std::vector<TensorSpec>& inv, CountCheck& k);
std::string vram_svg(const std::vector<Plot>& vram);

struct ArchitectureInput {
  const Model* model = nullptr;  // a MiniCPM-SALA model
  std::string checkpoint;        // folder (or .safetensors file) to check every count against; "" for none
  std::vector<Plot> vram;        // the bundle's VRAM plots, one per card (same series, each with its card's memory)
  std::string command;           // the command that wrote the page
  // VRAM by component at each of `contexts` and the per-op table at `op_context`, timed on `hw` (the report's
  // first card; a profile without a name is the h200's).
  std::vector<int64_t> contexts;
  int64_t op_context = 65536;
  WorkspaceParams ws;
  HwProfile hw;
};

struct ArchitectureOutcome {
  std::vector<std::string> files;       // architecture.html, treemap.svg, flow.svg
  std::vector<std::string> mismatches;  // checkpoint issues and disagreeing counts; empty when all match
  int compared = 0;                     // counts compared with the checkpoint
  std::vector<std::string> unresolved;  // reference source lines not found in the source tree
};

ArchitectureOutcome write_architecture(const std::string& dir, const ArchitectureInput& in);

}  // namespace salasim::reports
