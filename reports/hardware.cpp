// Hardware profile parsing, with errors naming the file, the field and the expectation.
#include "reports/hardware.hpp"

#include <filesystem>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/data_path.hpp"

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
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       std::filesystem::path(name_or_path).extension() == ".json";
  return data_path(is_path ? name_or_path : "reports/hw/" + name_or_path + ".json");
}

namespace {

double positive_number(const JsonDoc& d, const char* key) {
  double v = d.number(key);
  if (!(v > 0)) d.bad(key, "a positive number");
  return v;
}

double factor(const JsonDoc& d, const char* key) {
  double v = d.number(key);
  if (!(v > 0 && v <= 10)) d.bad(key, "an efficiency factor in (0, 10] (1.0 = the ceiling)");
  return v;
}

}  // namespace

HwProfile load_hw(const std::string& name_or_path) {
  const std::string path = hw_file(name_or_path);
  if (!std::filesystem::exists(path))
    fail("--hw {}: no hardware profile {} (known: h200, a6000d, rtx5090, or a path to a JSON file)", name_or_path,
         path);
  const json j = parse_json_file(path);
  if (!j.is_object()) fail("{}: expected a JSON object at the top level, got {}", path, json_type_name(j));
  JsonDoc d{j, path, ""};
  HwProfile hw;
  hw.file = path;
  hw.name = d.string("name");
  hw.gpu = d.string("gpu");
  hw.memory_bytes = d.integer("memory_bytes", 1);
  hw.bf16_flops = positive_number(d, "bf16_tensor_flops");
  hw.bandwidth = positive_number(d, "memory_bandwidth_bytes_per_s");
  hw.exp_per_s = positive_number(d, "exp_per_s");
  hw.source = d.string("source");
  hw.uncertainty = d.has("uncertainty") ? d.string("uncertainty") : "";
  JsonDoc e = d.object("efficiency");
  for (int i = 0; i < kOpClasses; ++i) hw.efficiency.prefill[i] = factor(e, op_class_name(op_class(i)));
  hw.efficiency.decode = factor(e, "decode");
  return hw;
}

}  // namespace salasim::reports
