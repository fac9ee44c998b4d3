// A model the reports can evaluate: MiniCPM-SALA (model/config.hpp) or the dense comparator
// (reports/dense_config.hpp), told apart by config.json's model_type; plus the weight format.
#pragma once
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/inventory.hpp"
#include "reports/dense_config.hpp"

namespace salasim::reports {

enum class ModelKind { Sala, Dense };
enum class WeightFormat { Bf16, W4A16 };  // W4A16: GPTQ 4-bit, group 128 (model/memory.hpp)

const char* weight_format_name(WeightFormat f);  // "bf16", "w4a16"
WeightFormat parse_weight_format(const std::string& s, const std::string& what = "--weights");
std::vector<WeightFormat> parse_weight_formats(const std::string& list, const std::string& what = "--weights");

// The Linear weights of one part of the model (e.g. every MLP matrix of every layer), summed, for the GEMM costs.
struct GemmGroup {
  const char* op = "";   // its latency-model entry: "linear.mlp", "linear.lightning_mixer", ..., "logits"
  bool lm_head = false;  // applied to the last position of a call only
  Component component = Component::Mlp;
  double params = 0;      // sum of rows x cols
  double io_elems = 0;    // sum of rows + cols: activations read and written per token
  double bytes_bf16 = 0;  // weight bytes in each format
  double bytes_w4a16 = 0;
};

struct Model {
  ModelKind kind = ModelKind::Sala;
  std::string path;   // as given on the command line or in a data file (printed in commands)
  std::string name;   // file stem: "minicpm-sala-9b", "qwen3-8b"
  ModelConfig sala;   // kind == Sala
  DenseConfig dense;  // kind == Dense
  std::vector<TensorSpec> inventory;
  std::vector<GemmGroup> gemms;  // from the inventory, once
};

// Reads `path` (resolved like every data path) and dispatches on model_type ("minicpm_sala" or dense).
Model load_model(const std::string& path);

int64_t model_weight_bytes(const Model& m, WeightFormat f);
int64_t model_kv_bytes_per_token(const Model& m);

}  // namespace salasim::reports
