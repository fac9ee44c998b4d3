// Fuzz target: `salasim op`'s reader of a user's HDF5 inputs (compare/op_table.hpp read_op_inputs: the header
// checks against the op's definition in the registry, ops/op.hpp, then the op's own checks) and, for inputs it
// accepts, the op itself on the float64 reference and its bf16 peer (scenarios/op_reference.cpp run_op_reference),
// which must neither crash nor fail inside. The first byte picks the op of the registry; the second the form of the
// rest:
//   even: the bytes of an HDF5 file, read as `salasim op` reads them (in a child process first, as it does);
//   odd:  a file built through the HDF5 API from the op's definition: each input dataset present or not, under its name
//         or a misspelt one, of its rank or another, its sizes drawn per dimension symbol (so most files agree
//         between inputs and reach the op), of float or integer type, with values that include NaN and infinities;
//         each attribute absent, in range, just outside it, of the wrong type, or a string. Sizes stay small and
//         in-range integers modest, so the op runs in microseconds: what is fuzzed is the checking, not the arithmetic.
//         At every choice a byte of 0 takes the well-formed option, and bytes run out as 0: a built input with no
//         more bytes is a file the op accepts and runs (the seeds start there, so mutations begin inside the op).
#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "scenarios/op_backends.hpp"
#include "compare/op_table.hpp"
#include "fuzz/support.hpp"
#include "fuzz/support_h5.hpp"

using namespace salasim;
using fuzz::Bytes;

namespace {

template <class T, size_t N>
const T& pick(const T (&v)[N], Bytes& b) {
  return v[b.next() % N];
}

// Sizes a dimension symbol takes: mostly small, then the edges the reader must refuse before allocating.
const int64_t kSizes[] = {1, 2, 3, 4, 1, 2, 4, 8, 16, 5, 0, 64, 1 << 20, int64_t(1) << 40};

int64_t dim_size(const std::string& dim, std::map<std::string, int64_t>& sym, Bytes& b) {
  auto one = [&](const std::string& s) {
    auto it = sym.find(s);
    if (it == sym.end() || b.next() % 16 == 15) return sym[s] = pick(kSizes, b);  // 1 in 16: disagree with the others
    return it->second;
  };
  const size_t star = dim.find('*');
  if (star == std::string::npos) return one(dim);
  const int64_t a = one(dim.substr(0, star)), c = one(dim.substr(star + 1));
  return a > (int64_t(1) << 40) / std::max<int64_t>(c, 1) ? int64_t(1) << 40 : a * c;
}

double value(Bytes& b) {
  const uint8_t v = b.next();
  switch (v % 16) {
    case 0:
    case 1:
    case 2: return double(v / 16);  // small whole numbers, as block ids are
    case 13: return std::numeric_limits<double>::quiet_NaN();
    case 14: return std::numeric_limits<double>::infinity();
    case 15: return 1e300;
    default: return double(int(v) - 128) / 16.0;
  }
}

void add_dataset(hid_t f, const op::InputSpec& in, std::map<std::string, int64_t>& sym, Bytes& b) {
  const uint8_t how = b.next();
  std::string name = in.name;
  if (how % 16 == 15) name += "_";  // a misspelt name: refused, never ignored
  std::vector<hsize_t> dims;
  for (const std::string& d : in.dims) dims.push_back(hsize_t(dim_size(d, sym, b)));
  if (how % 16 == 14) dims.push_back(2);                 // one rank too many
  if (how % 16 == 13 && !dims.empty()) dims.pop_back();  // one too few
  const bool want_int = in.dtype == op::DType::Int;
  const bool flip = how % 16 == 12;  // the other kind of number
  const hid_t type =
      (want_int != flip) ? (how & 16 ? H5T_STD_I8LE : H5T_STD_I64LE) : (how & 16 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
  hsize_t numel = 1;
  bool huge = false;
  for (hsize_t d : dims) huge = huge || __builtin_mul_overflow(numel, d, &numel);
  huge = huge || numel > 4096;  // large: chunked and never written, so the file claims what it does not store
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (huge && !dims.empty()) {
    std::vector<hsize_t> chunk(dims.size(), 1);
    H5Pset_chunk(dcpl, int(dims.size()), chunk.data());
  }
  hid_t space = dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t ds = H5Dcreate2(f, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (ds >= 0) {
    if (!huge && numel > 0) {
      std::vector<double> v(numel);
      for (double& x : v) x = value(b);
      // gla's decays are < 0 (its table says so): made so unless bit 5 asks for the values as drawn, which the
      // reader must then refuse when one is >= 0.
      if (in.name == "gamma" && !(how & 32))
        for (double& x : v) x = -std::fabs(x) - 0.0625;
      if (H5Tget_class(type) == H5T_INTEGER) {
        std::vector<int64_t> iv(numel);
        for (size_t i = 0; i < numel; ++i) iv[i] = std::isfinite(v[i]) && std::fabs(v[i]) < 1e18 ? int64_t(v[i]) : -1;
        H5Dwrite(ds, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, iv.data());
      } else {
        H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
      }
    }
    H5Dclose(ds);
  }
  H5Sclose(space);
  H5Pclose(dcpl);
}

void add_attr(hid_t f, const op::AttrSpec& a, const std::map<std::string, int64_t>& sym, Bytes& b) {
  const uint8_t how = b.next() % 12;
  if (how == 11) return;  // absent: the default, or an error naming it
  if (how == 10) return fuzz::string_attr(f, a.name.c_str(), "x");
  if (a.kind == op::AttrKind::Choice) {
    if (how == 9) return fuzz::number_attr(f, a.name.c_str(), 1, true);
    return fuzz::string_attr(f, a.name.c_str(), a.choices.empty() ? "" : a.choices[b.next() % a.choices.size()]);
  }
  if (a.kind == op::AttrKind::Float) {
    // Inside the attribute's range first (1 where it allows it), then its ends and just past them, then zero,
    // negative, non-finite, huge and denormal.
    const FloatRange& r = a.range;
    const double inf = std::numeric_limits<double>::infinity();
    const double inside = r.contains(1.0) ? 1.0 : r.lo > 0 ? std::sqrt(r.lo * r.hi) : (r.lo + r.hi) / 2;
    const double v[] = {inside,
                        r.hi,
                        r.lo_open ? std::nextafter(r.lo, inf) : r.lo,
                        std::nextafter(r.hi, inf),
                        r.lo_open ? r.lo : std::nextafter(r.lo, -inf),
                        0.5,
                        0.125,
                        2.0,
                        0.0,
                        -1.0,
                        std::numeric_limits<double>::quiet_NaN(),
                        inf,
                        1e308,
                        4.9e-324};
    return fuzz::number_attr(f, a.name.c_str(), pick(v, b), how == 9);  // 9: the number stored as an integer
  }
  // Int: in range and modest (the sizes an op allocates follow from these), or just outside, or not whole, or a
  // whole number stored as a float.
  double v = double(a.lo) + double(b.next() % 9);
  if (!a.binds.empty() && sym.count(a.binds) && how < 6) v = double(sym.at(a.binds));
  if (v > double(a.hi)) v = double(a.hi);
  if (how == 6) v = double(a.lo) - 1;
  if (how == 7) v = double(a.hi) + 1;
  if (how == 8) v += 0.5;
  fuzz::number_attr(f, a.name.c_str(), v, how != 8 && how != 9);
}

std::string build_file(const op::OpSpec& s, Bytes b) {
  const std::string path = fuzz::scratch_dir() + "/op_in.h5";
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return path;
  std::map<std::string, int64_t> sym;
  for (const op::AttrSpec& a : s.attrs)  // sizes attributes bind come first, as the reader binds them
    if (!a.binds.empty()) sym[a.binds] = 2 * (1 + b.next() % 4);  // even: head_dim must be
  for (const op::InputSpec& in : s.inputs)
    if (b.next() % 8 != 0 || !in.optional) add_dataset(f, in, sym, b);
  for (const op::AttrSpec& a : s.attrs) add_attr(f, a, sym, b);
  if (b.next() % 32 == 31) fuzz::number_attr(f, "unknown", 1, true);  // refused, never ignored
  H5Fclose(f);
  return path;
}

void read_and_run(const op::OpSpec& s, const std::string& path, bool guarded, bool peer) {
  fuzz::expect_clean([&] {
    const op::OpInputs x = op::read_op_inputs(s, path, guarded);
    run_op_reference(x, peer);
  });
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // the builder's own failures are expected and silent
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const op::OpSpec& s = op::registry()[data[0] % op::registry().size()];
  const bool peer = data[1] & 2;
  if (data[1] % 2 == 0) read_and_run(s, fuzz::write_scratch("op_raw.h5", data + 2, size - 2), true, peer);
  else read_and_run(s, build_file(s, Bytes{data + 2, size - 2}), false, peer);
  return 0;
}
