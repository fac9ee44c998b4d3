// dtype names and sizes as the safetensors format spells them.
#include "model/dtype.hpp"

#include <array>
#include <utility>

namespace salasim {

namespace {
struct Row {
  DType t;
  std::string_view name;
  int size;
};
constexpr std::array<Row, 15> kRows{{{DType::BF16, "BF16", 2},    {DType::F16, "F16", 2},
                                     {DType::F32, "F32", 4},      {DType::F64, "F64", 8},
                                     {DType::I64, "I64", 8},      {DType::I32, "I32", 4},
                                     {DType::I16, "I16", 2},      {DType::I8, "I8", 1},
                                     {DType::U8, "U8", 1},        {DType::BOOL, "BOOL", 1},
                                     {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E5M2, "F8_E5M2", 1},
                                     {DType::U16, "U16", 2},      {DType::U32, "U32", 4},
                                     {DType::U64, "U64", 8}}};
}  // namespace

std::string_view dtype_name(DType t) {
  for (const Row& r : kRows)
    if (r.t == t) return r.name;
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view s) {
  for (const Row& r : kRows)
    if (r.name == s) return r.t;
  return std::nullopt;
}

int dtype_size(DType t) {
  for (const Row& r : kRows)
    if (r.t == t) return r.size;
  return 0;
}

bool dtype_is_float_readable(DType t) {
  return t == DType::BF16 || t == DType::F16 || t == DType::F32 || t == DType::F64;
}

}  // namespace salasim
