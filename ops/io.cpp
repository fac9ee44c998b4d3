// The checks of an op's inputs (ops/io.hpp), driven by the op's declaration in the registry (ops/op.hpp).
#include "ops/io.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cmath>
#include <set>

#include "model/bf16.hpp"
#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"
#include "ops/op.hpp"

namespace salasim::op {

namespace {

AttrSpec attr(std::string name, AttrKind kind, std::string doc, std::string fallback = "") {
  AttrSpec a;
  a.name = std::move(name), a.kind = kind, a.doc = std::move(doc), a.fallback = std::move(fallback);
  return a;
}

bool product(const std::string& d, std::string* a, std::string* b) {
  const size_t star = d.find('*');
  if (star == std::string::npos) return false;
  *a = d.substr(0, star), *b = d.substr(star + 1);
  return true;
}

std::string dtype_name(DType t) { return t == DType::Float ? "float" : "integer"; }

std::string shape_text(const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// Element `flat` of a row-major tensor of `shape` as its index, "[2, 3]".
std::string index_of(size_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = int64_t(flat % size_t(shape[d]));
    flat /= size_t(shape[d]);
  }
  return shape_text(idx);
}

// Binds the symbols of one dataset's dims. Returns false when a product has neither factor bound yet (retried
// after the other datasets); throws when a size disagrees with what is bound.
bool bind(OpInputs& x, std::map<std::string, std::string>& origin, const InputSpec& s, const InputDataset& d) {
  auto expected = [&] {
    std::vector<std::string> v;
    for (const std::string& dim : s.dims) {
      std::string a, b;
      if (product(dim, &a, &b))
        v.push_back(x.dims.count(a) && x.dims.count(b) ? std::to_string(x.dims[a] * x.dims[b]) : dim);
      else v.push_back(x.dims.count(dim) ? std::to_string(x.dims[dim]) : dim);
    }
    return fmt::format("[{}]", fmt::join(v, ", "));
  };
  auto bad = [&](size_t i, const std::string& why) {
    fail("{}: dataset '{}': expected shape {} = {}, found {}: dim {} {}", x.file, s.name, format_dims(s.dims),
         expected(), shape_text(d.shape), i, why);
  };
  auto set = [&](const std::string& sym, int64_t v, size_t i) {
    const auto it = x.dims.find(sym);
    if (it == x.dims.end()) {
      x.dims[sym] = v;
      origin[sym] = fmt::format("dataset '{}' dim {}", s.name, i);
    } else if (it->second != v) {
      bad(i, fmt::format("is {}, but {} = {} (from {})", v, sym, it->second, origin[sym]));
    }
  };
  for (size_t i = 0; i < s.dims.size(); ++i) {
    std::string a, b;
    if (!product(s.dims[i], &a, &b)) continue;
    const bool ha = x.dims.count(a) > 0, hb = x.dims.count(b) > 0;
    if (!ha && !hb) return false;
  }
  for (size_t i = 0; i < s.dims.size(); ++i) {
    const int64_t v = d.shape[i];
    std::string a, b;
    if (!product(s.dims[i], &a, &b)) {
      set(s.dims[i], v, i);
      continue;
    }
    if (x.dims.count(a) && x.dims.count(b)) {
      if (x.dims[a] * x.dims[b] != v)
        bad(i, fmt::format("is {}, but {} = {} x {} = {} ({} from {}, {} from {})", v, s.dims[i], x.dims[a], x.dims[b],
                           x.dims[a] * x.dims[b], a, origin[a], b, origin[b]));
      continue;
    }
    const std::string& known = x.dims.count(a) ? a : b;
    const std::string& other = x.dims.count(a) ? b : a;
    if (x.dims[known] <= 0 || v % x.dims[known] != 0)
      bad(i, fmt::format("is {}, not a multiple of {} = {} (from {})", v, known, x.dims[known], origin[known]));
    set(other, v / x.dims[known], i);
  }
  return true;
}

void check_attrs(OpInputs& x, const OpSpec& s, const InputFile& f, std::map<std::string, std::string>& origin) {
  for (const AttrSpec& a : s.attrs) {
    const auto it = f.attrs.find(a.name);
    const std::string need = fmt::format("{} needs attribute '{}' ({}: {})", s.name, a.name,
                                         a.kind == AttrKind::Int     ? "integer"
                                         : a.kind == AttrKind::Float ? "float"
                                                                     : "string",
                                         a.doc);
    if (it == f.attrs.end() && a.fallback.empty())
      fail("{}: attribute '{}' is missing from the root group: {}", x.file, a.name, need);
    if (a.kind == AttrKind::Choice) {
      const std::string v = it == f.attrs.end() ? a.fallback : it->second.text;
      if (it != f.attrs.end() && it->second.number)
        fail("{}: attribute '{}' is a number; expected a string, one of: {}", x.file, a.name,
             fmt::join(a.choices, ", "));
      bool ok = false;
      for (const std::string& c : a.choices) ok = ok || c == v;
      if (!ok)
        fail("{}: attribute '{}' is '{}'; expected one of: {}", x.file, a.name, excerpt(v), fmt::join(a.choices, ", "));
      x.choices[a.name] = v;
      continue;
    }
    double v = 0;
    if (it == f.attrs.end()) {
      v = std::stod(a.fallback);
    } else {
      if (!it->second.number)
        fail("{}: attribute '{}' is a string ('{}'); {}", x.file, a.name, excerpt(it->second.text), need);
      v = it->second.value;
    }
    if (!std::isfinite(v)) fail("{}: attribute '{}' is {}; expected a finite number", x.file, a.name, v);
    if (a.kind == AttrKind::Int) {
      if (v != std::floor(v)) fail("{}: attribute '{}' is {}; expected a whole number", x.file, a.name, v);
      if (v < double(a.lo) || v > double(a.hi))
        fail("{}: attribute '{}' is {:.0f}; expected a whole number in [{}, {}]", x.file, a.name, v, a.lo, a.hi);
      if (!a.binds.empty()) {
        x.dims[a.binds] = int64_t(v);
        origin[a.binds] = "attribute '" + a.name + "'";
      }
    } else if (!a.range.contains(v)) {
      fail("{}: attribute '{}' is {}; expected a float in {} ({}): {}", x.file, a.name, v, a.range.interval(),
           a.range.why, need);
    }
    x.numbers[a.name] = v;
  }
}

void check_headers_of(OpInputs& x, const OpSpec& s, const InputFile& f) {
  std::map<std::string, std::string> origin;
  check_attrs(x, s, f, origin);
  std::vector<const InputSpec*> pending;
  for (const InputSpec& i : s.inputs) {
    const auto it = f.datasets.find(i.name);
    if (it == f.datasets.end()) {
      if (i.optional) continue;
      fail("{}: dataset '{}' is missing: {} needs {} {} ({}: {}) at the root of the file", x.file, i.name, s.name,
           i.name, format_dims(i.dims), dtype_name(i.dtype), i.doc);
    }
    const InputDataset& d = it->second;
    const bool type_ok = i.dtype == DType::Float ? d.floating : d.integer;
    if (!type_ok)
      fail("{}: dataset '{}': expected dtype {} ({}), found {}", x.file, i.name, dtype_name(i.dtype),
           i.dtype == DType::Float ? "float16, float32 or float64, read as float64"
                                   : "int8 .. int64 or uint8 .. uint64",
           d.type);
    if (d.shape.size() != i.dims.size())
      fail("{}: dataset '{}': expected rank {} {}, found rank {} {}", x.file, i.name, i.dims.size(),
           format_dims(i.dims), d.shape.size(), shape_text(d.shape));
    pending.push_back(&i);
  }
  if (!f.unlisted.empty()) {  // a misspelt name must not be ignored (an optional input would silently default)
    std::vector<std::string> ds, as;
    for (const InputSpec& i : s.inputs) ds.push_back(i.name);
    for (const AttrSpec& a : s.attrs) as.push_back(a.name);
    fail("{}: {} at the root: not an input of {} (datasets: {}; attributes: {}; `salasim op {} --help`)", x.file,
         excerpt(fmt::format("{}", fmt::join(f.unlisted, ", "))), s.name, fmt::join(ds, ", "),
         as.empty() ? "none" : fmt::format("{}", fmt::join(as, ", ")), s.name);
  }
  // Bind in table order; a product whose factors are both unknown waits for a later dataset.
  while (!pending.empty()) {
    std::vector<const InputSpec*> later;
    for (const InputSpec* i : pending)
      if (!bind(x, origin, *i, f.datasets.at(i->name))) later.push_back(i);
    if (later.size() == pending.size())
      internal_fail("op {}: the dims of dataset '{}' cannot be resolved from the table", s.name, later[0]->name);
    pending = later;
  }
  static const std::set<std::string> may_be_zero = {"N1", "N2"};
  for (const auto& [sym, v] : x.dims)
    if (v <= 0 && !may_be_zero.count(sym))
      fail("{}: {} = 0 (from {}); {} needs at least one", x.file, sym, origin[sym], sym);
}

// What the op will hold, its inputs and its outputs as float64, refused before anything is read or made when it
// would not fit in this machine's memory.
void check_fits(const std::string& path, double bytes, double share, const std::string& what) {
  const double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (have > 0 && bytes > share * have)
    fail("{}: {} need {:.1f} GB as float64, and this machine has {:.1f} GB", path, what, bytes / 1e9, have / 1e9);
}

}  // namespace

InputSpec in(std::string name, std::vector<std::string> dims, std::string doc, DType t) {
  return InputSpec{std::move(name), std::move(dims), t, std::move(doc), false};
}
AttrSpec num(std::string name, std::string doc, const FloatRange& range) {
  AttrSpec a = attr(std::move(name), AttrKind::Float, std::move(doc));
  a.range = range;
  return a;
}
AttrSpec whole(std::string name, int64_t lo, int64_t hi, std::string doc, std::string fallback) {
  AttrSpec a = attr(std::move(name), AttrKind::Int, std::move(doc), std::move(fallback));
  a.lo = lo, a.hi = hi;
  return a;
}
AttrSpec choice(std::string name, std::string doc, std::vector<std::string> choices) {
  AttrSpec a = attr(std::move(name), AttrKind::Choice, std::move(doc), choices.at(0));  // the first is the default
  a.choices = std::move(choices);
  return a;
}
OutputSpec out(std::string tap, std::vector<std::string> dims, std::string doc, DType t) {
  return OutputSpec{std::move(tap), std::move(dims), t, std::move(doc)};
}
std::string output_name(const OutputSpec& o) { return o.tap.substr(o.tap.rfind('/') + 1); }

const InputDataset& OpInputs::tensor(const std::string& input) const {
  const auto it = tensors.find(input);
  if (it == tensors.end()) internal_fail("op {}: input '{}' was not read", spec->name, input);
  return it->second;
}
int64_t OpInputs::i(const std::string& attr) const { return int64_t(f(attr)); }
double OpInputs::f(const std::string& attr) const {
  const auto it = numbers.find(attr);
  if (it == numbers.end()) internal_fail("op {}: attribute '{}' was not read", spec->name, attr);
  return it->second;
}
const std::string& OpInputs::choice(const std::string& attr) const {
  const auto it = choices.find(attr);
  if (it == choices.end()) internal_fail("op {}: attribute '{}' was not read", spec->name, attr);
  return it->second;
}
int64_t OpInputs::dim(const std::string& symbol) const {
  const auto it = dims.find(symbol);
  if (it == dims.end()) internal_fail("op {}: size {} is not bound", spec->name, symbol);
  return it->second;
}

void check_headers(OpInputs& x, const InputFile& f) { check_headers_of(x, *x.spec, f); }

void check_heads_per_group(const OpInputs& x) {
  if (x.dim("H") % x.dim("G") != 0)
    fail(
        "{}: {} query heads (H from dataset 'q') do not split evenly over {} kv heads (G from the keys): H must be "
        "a multiple of G",
        x.file, x.dim("H"), x.dim("G"));
}

void check_cache(const OpInputs& x) {
  const int64_t need = x.i("pos0") + x.dim("T");
  if (x.dim("L") < need)
    fail("{}: datasets 'k' and 'v' hold {} cached positions; queries at pos0 = {} .. {} need keys 0 .. {} (L >= {})",
         x.file, x.dim("L"), x.i("pos0"), need - 1, need - 1, need);
}

void check_input_sizes(const std::string& path, const InputFile& h) {
  double bytes = 0;
  for (const auto& [n, d] : h.datasets) bytes += 8.0 * double(checked_numel(d.shape, path + ": dataset " + n));
  check_fits(path, bytes, 0.8, "the inputs");
}

OpInputs finish_inputs(OpInputs x, InputFile& f) {
  const OpSpec& s = *x.spec;
  for (auto& [n, d] : f.datasets) {
    for (size_t i = 0; i < d.data.size(); ++i)
      if (!std::isfinite(d.data[i]))
        fail("{}: dataset '{}': element {} is {}; the op's inputs must be finite", x.file, n, index_of(i, d.shape),
             d.data[i]);
    x.tensors[n] = std::move(d);
  }
  if (s.check) s.check(x);
  double out_bytes = 0;
  for (const OutputSpec& u : s.outputs) {
    double n = 8;
    for (const std::string& dim : u.dims) {
      std::string a, b;
      n *= product(dim, &a, &b) ? double(x.dim(a)) * double(x.dim(b)) : double(x.dim(dim));
    }
    out_bytes += n;
  }
  check_fits(x.file, out_bytes, 0.5, s.name + "'s outputs");
  return x;
}

std::string format_dims(const std::vector<std::string>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

std::string op_help(const OpSpec& s) {
  std::string o = fmt::format("{}: {} (spec {})\n  wraps {}\n  inputs (datasets at the root of --in):\n", s.name,
                              s.summary, s.section, s.library);
  for (const InputSpec& i : s.inputs)
    o += fmt::format("    {:<8} {:<14} {:<8} {}{}{}\n", i.name, format_dims(i.dims), dtype_name(i.dtype), i.doc,
                     i.optional ? " (optional)" : "", i.fp32 ? " [fp32 on the GPU]" : "");
  if (!s.attrs.empty()) o += "  attributes (of the root group):\n";
  for (const AttrSpec& a : s.attrs) {
    std::string kind = a.kind == AttrKind::Int     ? fmt::format("int [{}, {}]", a.lo, a.hi)
                       : a.kind == AttrKind::Float ? "float in " + a.range.interval()
                                                   : fmt::format("{}", fmt::join(a.choices, "|"));
    o += fmt::format("    {:<12} {:<22} {}{}\n", a.name, kind, a.doc,
                     a.fallback.empty() ? "" : fmt::format(" (default {})", a.fallback));
  }
  o += "  outputs (datasets of the --out tap dump, float64 or int64):\n";
  for (const OutputSpec& u : s.outputs)
    o += fmt::format("    {:<26} {:<14} {:<8} {}{}\n", u.tap, format_dims(u.dims), dtype_name(u.dtype), u.doc,
                     u.fp32 ? " [fp32 on the GPU]" : "");
  for (const std::string& n : s.notes) o += "  note: " + n + "\n";
  return o;
}

std::string all_ops_help() {
  std::string o;
  for (const OpSpec& s : registry()) {
    if (!o.empty()) o += '\n';
    o += op_help(s);
  }
  return o;
}

OpInputs make_op_inputs(const OpSpec& s, InputFile f, const std::string& label) {
  OpInputs x;
  x.spec = &s;
  x.file = label;
  for (const auto& [n, d] : f.datasets)
    if (d.data.size() != size_t(checked_numel(d.shape, label + ": dataset " + n)))
      internal_fail("{}: dataset '{}' holds {} values for shape {}", label, n, d.data.size(), shape_text(d.shape));
  check_headers(x, f);
  check_input_sizes(label, f);
  return finish_inputs(std::move(x), f);
}

InputFile input_file(const OpInputs& x) {
  InputFile f;
  f.path = x.file;
  for (const auto& [n, d] : x.tensors) f.datasets[n] = d;
  for (const AttrSpec& a : x.spec->attrs) {
    InputAttr& v = f.attrs[a.name];
    if (a.kind == AttrKind::Choice) v.text = x.choice(a.name);
    else v.number = true, v.integer = a.kind == AttrKind::Int, v.value = x.f(a.name);
  }
  return f;
}

OpInputs as_gpu_stores(const OpInputs& x) {
  OpInputs r = x;
  for (const InputSpec& i : x.spec->inputs) {
    auto it = r.tensors.find(i.name);
    if (it == r.tensors.end() || i.dtype != DType::Float) continue;
    for (size_t k = 0; k < it->second.data.size(); ++k) {
      double& v = it->second.data[k];
      const double was = v;
      v = i.fp32 ? round_fp32(v) : round_bf16(v);
      if (!std::isfinite(v))
        fail("{}: dataset '{}': element {} is {:g}, past the largest finite {} the CUDA path stores it in", x.file,
             i.name, index_of(k, it->second.shape), was, i.fp32 ? "fp32" : "bf16");
    }
  }
  return r;
}

}  // namespace salasim::op
