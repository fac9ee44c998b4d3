// The argument structs of the op ABI and the header text (scenarios/op_abi.hpp), both from the op registry.
#include "scenarios/op_abi.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "model/error.hpp"
#include "salasim/op_abi.h"

namespace salasim::abi {

namespace {

constexpr size_t kScalarBytes = 8;

void add_symbols(const std::vector<std::string>& dims, std::vector<std::string>& out) {
  for (const std::string& d : dims) {
    const size_t star = d.find('*');
    for (const std::string& s : star == std::string::npos
                                    ? std::vector<std::string>{d}
                                    : std::vector<std::string>{d.substr(0, star), d.substr(star + 1)})
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
}

const char* dtype_c(int t) { return t == SALASIM_BF16 ? "bf16" : t == SALASIM_F32 ? "f32" : "i32"; }

std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string bit_name(const op::OpSpec& s, const op::OutputSpec& o) {
  return fmt::format("SALASIM_{}_{}", upper(s.name), upper(op::output_name(o)));
}

// Plain ASCII for a C comment: the registry's texts use "§" for the spec's sections.
std::string ascii(std::string s) {
  for (size_t at; (at = s.find("§")) != std::string::npos;) s.replace(at, std::string("§").size(), "section ");
  for (size_t at; (at = s.find("*/")) != std::string::npos;) s.replace(at, 2, "* /");
  return s;
}

std::string c_type(const Field& f) {
  switch (f.kind) {
    case FieldKind::Tensor: return "salasim_tensor";
    case FieldKind::Int:
    case FieldKind::Size: return "int64_t";
    case FieldKind::Float: return "double";
    case FieldKind::Text: return "const char*";
  }
  return "";
}

// `bit`: an output's SALASIM_<OP>_<OUTPUT>, the bit of salasim_call.not_written that leaves it out.
std::string field_comment(const Field& f, const std::string& bit) {
  switch (f.kind) {
    case FieldKind::Tensor:
      if (f.input)
        return fmt::format("{} {}: {}{}", op::format_dims(f.dims), dtype_c(f.dtype), f.input->doc,
                           f.input->optional ? "; optional: data NULL when absent" : "");
      return fmt::format("{} {}, {}: {}", op::format_dims(f.dims), dtype_c(f.dtype), bit, f.output->doc);
    case FieldKind::Int:
      return fmt::format("[{}, {}]: {}{}", f.attr->lo, f.attr->hi, f.attr->doc,
                         f.attr->fallback.empty() ? "" : " (default " + f.attr->fallback + ")");
    case FieldKind::Float: return fmt::format("in {}: {}", f.attr->range.interval(), f.attr->doc);
    case FieldKind::Text: return fmt::format("\"{}\": {}", fmt::join(f.attr->choices, "\", \""), f.attr->doc);
    case FieldKind::Size: return "";
  }
  return "";
}

// The fixed part of the header: the types every op shares, the calling convention, bf16 conversions.
constexpr const char* kPreamble = R"(/* clang-format off */
/* salasim op ABI: an op implementation in a shared library, checked against salasim's float64 reference with
 * the project's tolerance table by `salasim op NAME --backend lib:PATH.so` and `salasim op --sweep --backend
 * lib:PATH.so` (docs/check-your-implementation.md).
 *
 * Generated from salasim's op registry (ops/<name>.cpp) by `salasim op --abi-header`; a test keeps this copy equal
 * to it. Plain C (C99 or C++); build a library against it, for example
 *     c++ -std=c++17 -O2 -shared -fPIC -I include my_ops.cpp -o my_ops.so
 *
 * A library defines salasim_op_abi_version(), returning the SALASIM_OP_ABI_VERSION it was built with, and one
 * function per op it implements:
 *     int salasim_op_NAME(salasim_call* call, const salasim_NAME_args* args);
 * salasim looks each up by name, so a library implements any subset of the ops (an op it lacks is skipped, with a
 * line saying so, when a sweep reaches it).
 *
 * The call:
 *   - call->device is SALASIM_DEVICE_CPU (what `salasim op` passes): every pointer is host memory and call->stream
 *     is NULL; or SALASIM_DEVICE_CUDA: every pointer is memory of the current CUDA device and call->stream is the
 *     cudaStream_t to enqueue on (salasim synchronizes it after the call returns).
 *   - Inputs are read-only. Outputs are memory of their own (never overlapping an input), filled with NaN (integer
 *     outputs: INT32_MIN) before the call, so an output left unwritten fails its check.
 *   - Return SALASIM_OP_OK with every output written, except those whose bits (SALASIM_<OP>_<OUTPUT>) the function
 *     sets in call->not_written: those are skipped (reported, not compared): an implementation without a final
 *     state or without block scores sets their bits. SALASIM_OP_UNSUPPORTED: these sizes or attributes are not
 *     supported (the case is skipped; call->message says why). SALASIM_OP_ERROR: the call failed (the case fails;
 *     call->message says why).
 *   - Calls come one at a time, from one thread.
 *
 * Tensors: `data` points at element [0, ..., 0]; shape[i] and stride[i] (in elements) for i < rank. The last
 * dimension is contiguous (stride 1); other strides may be larger than a packed tensor's (a view of a wider
 * buffer): an implementation that needs packed tensors checks and returns SALASIM_OP_UNSUPPORTED otherwise. Element
 * types are those of salasim's CUDA path: SALASIM_BF16 (the upper 16 bits of an IEEE float, round to nearest even:
 * salasim_bf16_from_float), SALASIM_F32, SALASIM_I32. Attributes are int64_t, double, or a NUL-terminated choice;
 * sizes are the symbols of the op's table (`salasim op NAME --help`), as int64_t.
 */
#ifndef SALASIM_OP_ABI_H
#define SALASIM_OP_ABI_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SALASIM_OP_ABI_VERSION 1

/* element types of salasim_tensor.dtype */
#define SALASIM_BF16 1
#define SALASIM_F32 2
#define SALASIM_I32 3

/* salasim_call.device */
#define SALASIM_DEVICE_CPU 0
#define SALASIM_DEVICE_CUDA 1

/* what an op function returns */
#define SALASIM_OP_OK 0
#define SALASIM_OP_UNSUPPORTED 1
#define SALASIM_OP_ERROR 2

#define SALASIM_MAX_RANK 4
#define SALASIM_MESSAGE_BYTES 512

typedef struct salasim_tensor {
  void* data;    /* element [0, ..., 0]; NULL: an optional input that is absent */
  int32_t dtype; /* SALASIM_BF16, SALASIM_F32 or SALASIM_I32 */
  int32_t rank;
  int64_t shape[SALASIM_MAX_RANK];
  int64_t stride[SALASIM_MAX_RANK]; /* in elements; stride[rank - 1] == 1 */
} salasim_tensor;

typedef struct salasim_call {
  int32_t abi_version;                 /* SALASIM_OP_ABI_VERSION of the salasim calling */
  int32_t device;                      /* SALASIM_DEVICE_CPU or SALASIM_DEVICE_CUDA */
  void* stream;                        /* cudaStream_t under SALASIM_DEVICE_CUDA, else NULL */
  uint32_t not_written;                /* out: bits of the outputs left out (skipped, not compared) */
  char message[SALASIM_MESSAGE_BYTES]; /* out: why, with SALASIM_OP_UNSUPPORTED or SALASIM_OP_ERROR */
} salasim_call;

/* bf16 <-> float: bf16 is the upper half of an IEEE float; rounding to nearest, ties to even, NaN kept NaN. */
static inline float salasim_float_from_bf16(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint16_t salasim_bf16_from_float(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

int32_t salasim_op_abi_version(void);
)";

constexpr const char* kEnd = R"(#ifdef __cplusplus
}
#endif

#endif /* SALASIM_OP_ABI_H */
)";

}  // namespace

int input_dtype(const op::InputSpec& i) {
  return i.dtype == op::DType::Int ? SALASIM_I32 : i.fp32 ? SALASIM_F32 : SALASIM_BF16;
}
int output_dtype(const op::OutputSpec& o) {
  return o.dtype == op::DType::Int ? SALASIM_I32 : o.fp32 ? SALASIM_F32 : SALASIM_BF16;
}

std::vector<std::string> size_symbols(const op::OpSpec& s) {
  std::vector<std::string> v;
  for (const op::InputSpec& i : s.inputs) add_symbols(i.dims, v);
  for (const op::OutputSpec& o : s.outputs) add_symbols(o.dims, v);
  return v;
}

std::string function_name(const op::OpSpec& s) { return "salasim_op_" + s.name; }

Layout layout(const op::OpSpec& s) {
  Layout l;
  auto add = [&](Field f) {
    f.offset = l.size;
    l.size += f.kind == FieldKind::Tensor ? sizeof(salasim_tensor) : kScalarBytes;
    l.fields.push_back(std::move(f));
  };
  for (const op::InputSpec& i : s.inputs) {
    Field f;
    f.kind = FieldKind::Tensor, f.group = "in", f.name = i.name, f.dtype = input_dtype(i), f.input = &i;
    f.dims = i.dims;
    add(f);
  }
  for (const op::AttrSpec& a : s.attrs) {
    Field f;
    f.kind = a.kind == op::AttrKind::Int     ? FieldKind::Int
             : a.kind == op::AttrKind::Float ? FieldKind::Float
                                             : FieldKind::Text;
    f.group = "attr", f.name = a.name, f.attr = &a;
    add(f);
  }
  for (const std::string& sym : size_symbols(s)) {
    Field f;
    f.kind = FieldKind::Size, f.group = "size", f.name = sym;
    add(f);
  }
  for (const op::OutputSpec& o : s.outputs) {
    Field f;
    f.kind = FieldKind::Tensor, f.group = "out", f.name = op::output_name(o), f.dtype = output_dtype(o);
    f.output = &o, f.dims = o.dims;
    add(f);
  }
  static_assert(sizeof(salasim_tensor) % kScalarBytes == 0 && alignof(salasim_tensor) == kScalarBytes);
  return l;
}

std::string header() {
  std::string h = kPreamble;
  for (const op::OpSpec& s : op::registry()) {
    const Layout l = layout(s);
    h += fmt::format("\n/* {}: {} (docs/spec.md {}) */\ntypedef struct salasim_{}_args {{\n", s.name, ascii(s.summary),
                     ascii(s.section), s.name);
    for (const char* group : {"in", "attr", "size", "out"}) {
      std::vector<const Field*> fs;
      for (const Field& f : l.fields)
        if (f.group == group) fs.push_back(&f);
      if (fs.empty()) continue;
      h += "  struct {\n";
      if (std::string(group) == "size") {
        std::vector<std::string> names;
        for (const Field* f : fs) names.push_back(f->name);
        h += fmt::format("    int64_t {};\n", fmt::join(names, ", "));
      }
      for (const Field* f : fs) {
        if (f->kind == FieldKind::Size) continue;
        const std::string member = fmt::format("    {} {};", c_type(*f), f->name);
        const std::string bit = f->output ? bit_name(s, *f->output) : "";
        h += fmt::format("{:<30} /* {} */\n", member, ascii(field_comment(*f, bit)));
      }
      h += fmt::format("  }} {};\n", group);
    }
    h += fmt::format("}} salasim_{}_args;\n", s.name);
    for (size_t i = 0; i < s.outputs.size(); ++i)
      h += fmt::format("#define {} (1u << {})\n", bit_name(s, s.outputs[i]), i);
    h += fmt::format("int {}(salasim_call* call, const salasim_{}_args* args);\n", function_name(s), s.name);
  }
  return h + "\n" + kEnd;
}

}  // namespace salasim::abi
