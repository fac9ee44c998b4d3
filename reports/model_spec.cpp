// Loading either kind of model config, and the weight-format names.
#include "reports/model_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/memory.hpp"
#include "model/data_path.hpp"
#include "reports/context.hpp"

namespace salasim::reports {

const char* weight_format_name(WeightFormat f) { return f == WeightFormat::Bf16 ? "bf16" : "w4a16"; }

WeightFormat parse_weight_format(const std::string& s, const std::string& what) {
  if (s == "bf16") return WeightFormat::Bf16;
  if (s == "w4a16" || s == "gptq") return WeightFormat::W4A16;
  fail("{}: '{}' is not a weight format; expected bf16 or w4a16 (GPTQ 4-bit, group 128)", what, excerpt(s));
}

std::vector<WeightFormat> parse_weight_formats(const std::string& list, const std::string& what) {
  std::vector<WeightFormat> out;
  for (const std::string& entry : split_list(list)) out.push_back(parse_weight_format(entry, what));
  return out;
}

namespace {

const char* gemm_op(ModelKind kind, Component c) {
  switch (c) {
    case Component::LightningMixer: return "linear.lightning_mixer";
    case Component::SparseMixer: return kind == ModelKind::Sala ? "linear.sparse_mixer" : "linear.attention";
    case Component::Mlp: return "linear.mlp";
    case Component::LmHead: return "logits";
    default: return nullptr;  // embeddings are a gather, norms are elementwise
  }
}

std::vector<GemmGroup> gemm_groups(ModelKind kind, const std::vector<TensorSpec>& inv) {
  std::vector<GemmGroup> groups;
  for (const TensorSpec& t : inv) {
    const char* op = gemm_op(kind, t.component);
    if (!op || t.shape.size() != 2) continue;
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const GemmGroup& g) { return std::string_view(g.op) == op; });
    if (it == groups.end()) {
      groups.push_back(GemmGroup{op, t.component == Component::LmHead, t.component});
      it = groups.end() - 1;
    }
    it->params += double(t.numel());
    it->io_elems += double(t.rows() + t.cols());
    it->bytes_bf16 += double(t.numel() * 2);
    it->bytes_w4a16 += double(gptq_keeps_bf16(t) ? t.numel() * 2 : w4a16_matrix_bytes(t.rows(), t.cols()));
  }
  // Tied embeddings: the logits GEMM reads the embedding matrix.
  const bool has_head = std::any_of(groups.begin(), groups.end(), [](const GemmGroup& g) { return g.lm_head; });
  for (const TensorSpec& t : inv)
    if (!has_head && t.component == Component::Embed) {
      const double n = double(t.numel());
      groups.push_back(GemmGroup{"logits", true, Component::LmHead, n, double(t.rows() + t.cols()), 2 * n, 2 * n});
    }
  return groups;
}

}  // namespace

Model load_model(const std::string& path) {
  const std::string file = data_path(path);
  const json j = parse_json_file(file);
  if (!j.is_object()) fail("{}: expected a JSON object at the top level, got {}", file, json_type_name(j));
  Model m;
  m.path = path;
  m.name = std::filesystem::path(file).stem().string();
  JsonDoc d{j, file, ""};
  if (d.has("model_type") && d.string("model_type") == "minicpm_sala") {
    m.kind = ModelKind::Sala;
    m.sala = load_config(file);
    m.inventory = tensor_inventory(m.sala);
  } else {
    m.kind = ModelKind::Dense;
    m.dense = load_dense_config(file);
    m.inventory = dense_inventory(m.dense);
  }
  m.gemms = gemm_groups(m.kind, m.inventory);
  return m;
}

int64_t model_weight_bytes(const Model& m, WeightFormat f) {
  if (f == WeightFormat::W4A16) return weight_bytes_w4a16(m.inventory);
  int64_t bytes = 0;
  for (const TensorSpec& t : m.inventory) bytes += t.numel() * 2;
  return bytes;
}

int64_t model_kv_bytes_per_token(const Model& m) {
  return m.kind == ModelKind::Sala ? kv_bytes_per_token(m.sala) : dense_kv_bytes_per_token(m.dense);
}

}  // namespace salasim::reports
