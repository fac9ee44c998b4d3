// The tensor inventory derived from a config (docs/spec.md §12) and the parameter count (§6).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/dtype.hpp"

namespace salasim {

// Rows of the parameter table, in docs/spec.md §6 order.
enum class Component { Embed, LmHead, FinalNorm, Mlp, LayerNorms, LightningMixer, SparseMixer };
constexpr int kComponents = 7;
const char* component_name(Component c);

struct TensorSpec {
  std::string name;            // HF name, e.g. "model.layers.3.self_attn.q_proj.weight"
  std::vector<int64_t> shape;  // [out, in] for Linear weights (y = W x)
  DType dtype = DType::BF16;
  Component component = Component::Embed;
  int layer = -1;              // -1 for embed / final norm / lm_head
  double init_std = 0;         // synthetic weights: uniform with this std; 0 means all ones (norm weights)

  int64_t numel() const;
  int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  int64_t cols() const;  // product of the trailing dims
};

std::vector<TensorSpec> tensor_inventory(const ModelConfig& c);
const TensorSpec* find_tensor(const std::vector<TensorSpec>& inv, const std::string& name);

// HF names, one place.
std::string layer_prefix(int layer);  // "model.layers.{i}."
std::string tensor_name_embed();
std::string tensor_name_final_norm();
std::string tensor_name_lm_head(const ModelConfig& c);  // embed name when tied

struct ComponentRow {
  Component component;
  std::string label;  // "MLP (gate+up+down)"
  int64_t each = 0;   // parameters of one instance
  int64_t count = 0;  // instances
  int64_t total() const { return each * count; }
};

struct ParamCount {
  std::vector<ComponentRow> rows;
  int64_t total = 0;
  int64_t lightning_layer = 0;  // one full Lightning layer: mixer + MLP + its two norms
  int64_t sparse_layer = 0;
  int n_lightning = 0, n_sparse = 0;
  int64_t bf16_bytes = 0;
};

// Counts by summing the inventory's tensors, so it follows any config.
ParamCount count_params(const ModelConfig& c, const std::vector<TensorSpec>& inv);

}  // namespace salasim
