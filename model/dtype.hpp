// Element types of checkpoint tensors, with safetensors' spelling.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace salasim {

enum class DType { BF16, F16, F32, F64, I64, I32, I16, I8, U8, BOOL, F8_E4M3, F8_E5M2, U16, U32, U64 };

std::string_view dtype_name(DType t);             // "BF16"
std::optional<DType> dtype_from_name(std::string_view s);
int dtype_size(DType t);                          // bytes per element
bool dtype_is_float_readable(DType t);            // BF16, F16, F32, F64: convertible to float

}  // namespace salasim
