// Hardware profile parsing, with errors naming the file, the field and the expectation.
#include "reports/hardware.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/data_path.hpp"
#include "model/limits.hpp"

namespace salasim::reports {

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::Gemm: return "gemm";
    case OpClass::Select: return "select";
    case OpClass::SparseAttn: return "sparse_attn";
    case OpClass::DenseAttn: return "dense_attn";
    case OpClass::Gla: return "gla";
    case OpClass::Other: return "other";
  }
  return "?";
}

std::string hw_file(const std::string& name_or_path) {
  const bool is_path =
      name_or_path.find('/') != std::string::npos || std::filesystem::path(name_or_path).extension() == ".json";
  return data_path(is_path ? name_or_path : "reports/hw/" + name_or_path + ".json");
}

std::string known_hw() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(data_path("reports/hw"), ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

HwProfile load_hw(const std::string& name_or_path) {
  const std::string path = hw_file(name_or_path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    fail("--hw {}: no hardware profile {} (known: {}, or a path to a JSON file)", excerpt(name_or_path), excerpt(path),
         known_hw());
  const json j = parse_json_file(path);
  if (!j.is_object()) fail("{}: expected a JSON object at the top level, got {}", path, json_type_name(j));
  JsonDoc d{j, path, ""};
  HwProfile hw;
  hw.file = path;
  hw.name = d.string("name");
  hw.gpu = d.string("gpu");
  // Each ceiling in a range around real cards (model/limits.hpp): a typo of orders of magnitude is refused.
  hw.memory_bytes = d.integer("memory_bytes", 1, kMaxHwMemoryBytes);
  hw.bf16_flops = d.number("bf16_tensor_flops", kHwFlops);
  hw.bandwidth = d.number("memory_bandwidth_bytes_per_s", kHwBandwidth);
  hw.exp_per_s = d.number("exp_per_s", kHwExp);
  hw.source = d.string("source");
  hw.uncertainty = d.has("uncertainty") ? d.string("uncertainty") : "";
  JsonDoc e = d.object("efficiency");
  for (int i = 0; i < kOpClasses; ++i) hw.efficiency.prefill[i] = e.number(op_class_name(op_class(i)), kHwEfficiency);
  hw.efficiency.decode = e.number("decode", kHwEfficiency);
  return hw;
}

}  // namespace salasim::reports
