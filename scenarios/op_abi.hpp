// The C ABI of a user's op implementation in a shared library (`salasim op NAME --backend lib:PATH.so`,
// include/salasim/op_abi.h): per op an argument struct whose fields follow the op's definition in the registry (its
// input tensors, attributes, sizes and output tensors, ops/io.hpp), and the header text itself, generated from the
// same fields, so the header users compile against and the struct salasim fills cannot disagree (a test keeps the
// header in the tree equal to abi_header(), and compiles it).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "ops/op.hpp"

namespace salasim::abi {

// Every field of an argument struct is 8 bytes (int64_t, double, a pointer) or a salasim_tensor (80 bytes, 8-byte
// aligned), so the fields lie one after another with no padding, in the header's order.
enum class FieldKind { Tensor, Int, Float, Text, Size };

struct Field {
  FieldKind kind = FieldKind::Tensor;
  std::string group;  // "in" (input tensors), "attr", "size", "out" (output tensors)
  std::string name;   // the C member: an input's, attribute's or size symbol's name, an output's op::output_name
  size_t offset = 0;  // bytes from the start of the argument struct
  int dtype = 0;      // tensors: SALASIM_BF16, SALASIM_F32 or SALASIM_I32
  const op::InputSpec* input = nullptr;
  const op::AttrSpec* attr = nullptr;
  const op::OutputSpec* output = nullptr;
  std::vector<std::string> dims;  // tensors: the symbolic shape
};

struct Layout {
  std::vector<Field> fields;  // in, attr, size, out; groups without members left out
  size_t size = 0;            // sizeof the argument struct
};

Layout layout(const op::OpSpec& s);
// The size symbols of an op, in order of first appearance in its inputs, then its outputs: "T", "H", "hd".
std::vector<std::string> size_symbols(const op::OpSpec& s);
// "salasim_op_gla", the function a library defines for op `s`.
std::string function_name(const op::OpSpec& s);
// The element type of an input or output under the ABI: what the CUDA path stores it in.
int input_dtype(const op::InputSpec& i);
int output_dtype(const op::OutputSpec& o);

// The text of include/salasim/op_abi.h.
std::string header();

}  // namespace salasim::abi
