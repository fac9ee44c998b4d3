// The lib: backend (scenarios/op_lib.hpp): the argument struct of an op filled field by field from its layout
// (scenarios/op_abi.hpp), host buffers in the ABI's element types, one call, the outputs read back.
#include "scenarios/op_lib.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

#include "model/bf16.hpp"
#include "model/error.hpp"
#include "salasim/op_abi.h"
#include "scenarios/op_abi.hpp"

namespace salasim {

namespace {

using OpFunction = int (*)(salasim_call*, const void*);

int64_t dim_value(const op::OpInputs& x, const std::string& d) {
  const size_t star = d.find('*');
  return star == std::string::npos ? x.dim(d) : x.dim(d.substr(0, star)) * x.dim(d.substr(star + 1));
}

// One tensor's host buffer and its descriptor (packed row-major strides).
struct HostTensor {
  std::vector<unsigned char> bytes;
  salasim_tensor t{};
};

size_t element_bytes(int dtype) { return dtype == SALASIM_BF16 ? 2 : 4; }

HostTensor make_buffer(const abi::Field& f, const op::OpInputs& x, bool present) {
  HostTensor b;
  b.t.dtype = f.dtype;
  b.t.rank = int32_t(f.dims.size());
  int64_t n = 1;
  for (size_t i = 0; i < f.dims.size(); ++i) n *= (b.t.shape[i] = dim_value(x, f.dims[i]));
  int64_t stride = 1;
  for (size_t i = f.dims.size(); i-- > 0;) b.t.stride[i] = stride, stride *= b.t.shape[i];
  if (present) b.bytes.assign(size_t(n) * element_bytes(f.dtype), 0);
  return b;
}

// Values already rounded as the CUDA path stores them (op::as_gpu_stores): each converts exactly.
void fill_input(HostTensor& b, const std::vector<double>& v, const std::string& name, const std::string& file) {
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char* at = b.bytes.data() + i * element_bytes(b.t.dtype);
    if (b.t.dtype == SALASIM_BF16) {
      const uint16_t h = bf16_from_float(float(v[i]));
      std::memcpy(at, &h, 2);
    } else if (b.t.dtype == SALASIM_F32) {
      const float f = float(v[i]);
      std::memcpy(at, &f, 4);
    } else {
      if (v[i] < INT32_MIN || v[i] > INT32_MAX)
        fail("{}: dataset '{}': element {} is {:.0f}, past the int32 the ABI passes it in", file, name, i, v[i]);
      const int32_t k = int32_t(v[i]);
      std::memcpy(at, &k, 4);
    }
  }
}

// NaN (INT32_MIN for block ids) everywhere, so an output the call claims but does not write fails its check.
void fill_sentinel(HostTensor& b) {
  const size_t n = b.bytes.size() / element_bytes(b.t.dtype);
  for (size_t i = 0; i < n; ++i) {
    unsigned char* at = b.bytes.data() + i * element_bytes(b.t.dtype);
    if (b.t.dtype == SALASIM_BF16) {
      const uint16_t h = 0x7fc0;
      std::memcpy(at, &h, 2);
    } else if (b.t.dtype == SALASIM_F32) {
      const float f = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(at, &f, 4);
    } else {
      const int32_t k = INT32_MIN;
      std::memcpy(at, &k, 4);
    }
  }
}

Tap read_output(const HostTensor& b, bool integer, int64_t order) {
  Tap t;
  t.shape.assign(b.t.shape, b.t.shape + b.t.rank);
  t.integer = integer;
  t.order = order;
  const size_t n = b.bytes.size() / element_bytes(b.t.dtype);
  t.data.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char* at = b.bytes.data() + i * element_bytes(b.t.dtype);
    if (b.t.dtype == SALASIM_BF16) {
      uint16_t h;
      std::memcpy(&h, at, 2);
      t.data[i] = double(float_from_bf16(h));
    } else if (b.t.dtype == SALASIM_F32) {
      float f;
      std::memcpy(&f, at, 4);
      t.data[i] = double(f);
    } else {
      int32_t k;
      std::memcpy(&k, at, 4);
      t.data[i] = double(k);
    }
  }
  return t;
}

OpRun call(const std::string& spec, OpFunction fn, const op::OpInputs& x0) {
  const op::OpInputs x = op::as_gpu_stores(x0);
  const op::OpSpec& s = *x.spec;
  const abi::Layout l = abi::layout(s);
  std::vector<unsigned char> args(l.size, 0);
  std::vector<HostTensor> buffers;  // inputs, then outputs, in field order
  buffers.reserve(l.fields.size());
  std::vector<std::pair<size_t, const abi::Field*>> outputs;  // index into buffers
  for (const abi::Field& f : l.fields) {
    unsigned char* at = args.data() + f.offset;
    switch (f.kind) {
      case abi::FieldKind::Tensor: {
        const bool present = f.output || x.has(f.name);
        HostTensor& b = buffers.emplace_back(make_buffer(f, x, present));
        if (f.input && present) fill_input(b, x.tensor(f.name).data, f.name, x.file);
        if (f.output) {
          fill_sentinel(b);
          outputs.emplace_back(buffers.size() - 1, &f);
        }
        b.t.data = present ? b.bytes.data() : nullptr;
        std::memcpy(at, &b.t, sizeof b.t);
        break;
      }
      case abi::FieldKind::Int: {
        const int64_t v = x.i(f.name);
        std::memcpy(at, &v, 8);
        break;
      }
      case abi::FieldKind::Float: {
        const double v = x.f(f.name);
        std::memcpy(at, &v, 8);
        break;
      }
      case abi::FieldKind::Text: {
        const char* v = x.choice(f.name).c_str();
        std::memcpy(at, &v, sizeof v);
        break;
      }
      case abi::FieldKind::Size: {
        const int64_t v = x.dim(f.name);
        std::memcpy(at, &v, 8);
        break;
      }
    }
  }
  // The descriptors were copied before later buffers were added: reserve() kept every buffer in place.
  salasim_call c{};
  c.abi_version = SALASIM_OP_ABI_VERSION;
  c.device = SALASIM_DEVICE_CPU;
  c.stream = nullptr;
  const int rc = fn(&c, args.data());
  c.message[sizeof c.message - 1] = '\0';
  const std::string who = spec + " " + abi::function_name(s);
  const std::string message = c.message[0] ? std::string(": ") + c.message : "";
  OpRun r;
  if (rc == SALASIM_OP_UNSUPPORTED) {
    r.skip = who + " does not take this case" + message;
    return r;
  }
  if (rc != SALASIM_OP_OK) {
    r.failed = rc == SALASIM_OP_ERROR
                   ? fmt::format("{} failed{}", who, message)
                   : fmt::format("{} returned {}, not SALASIM_OP_OK, _UNSUPPORTED or _ERROR{}", who, rc, message);
    return r;
  }
  if (c.not_written >> s.outputs.size())
    r.failed = fmt::format("{} set not_written = {:#x}; {} has {} output(s), bits 0 .. {}", who, c.not_written, s.name,
                           s.outputs.size(), s.outputs.size() - 1);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const op::OutputSpec& o = *outputs[i].second->output;
    if (c.not_written & (1u << i)) r.not_produced.push_back(o.tap);
    else r.taps[o.tap] = read_output(buffers[outputs[i].first], o.dtype == op::DType::Int, int64_t(i));
  }
  return r;
}

}  // namespace

OpBackend lib_backend(const std::string& spec) {
  const std::string path = spec.substr(4);
  std::error_code ec;
  if (path.empty() || !std::filesystem::is_regular_file(path, ec))
    fail("--backend '{}': expected lib:PATH, PATH a shared library (a .so built against include/salasim/op_abi.h)",
         spec);
  // A path, never a name for the loader to search: a relative one is taken from the working folder.
  const std::string full = std::filesystem::absolute(path).string();
  dlerror();
  // Kept loaded to the end of the process: a library may register destructors or threads that outlive a call.
  void* handle = dlopen(full.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) fail("--backend {}: cannot load the library: {}", spec, dlerror());
  auto version = reinterpret_cast<int32_t (*)()>(dlsym(handle, "salasim_op_abi_version"));
  if (!version)
    fail(
        "--backend {}: the library defines no salasim_op_abi_version() (include/salasim/op_abi.h: it returns the "
        "SALASIM_OP_ABI_VERSION it was built with)",
        spec);
  if (const int32_t v = version(); v != SALASIM_OP_ABI_VERSION)
    fail(
        "--backend {}: the library was built for op ABI version {}; this salasim calls version {} (rebuild it "
        "against this salasim's include/salasim/op_abi.h)",
        spec, v, SALASIM_OP_ABI_VERSION);
  return [spec, handle](const op::OpInputs& x) {
    const std::string name = abi::function_name(*x.spec);
    auto fn = reinterpret_cast<OpFunction>(dlsym(handle, name.c_str()));
    if (!fn) {
      OpRun r;
      r.skip = fmt::format("{} defines no {}", spec, name);
      return r;
    }
    return call(spec, fn, x);
  };
}

}  // namespace salasim
