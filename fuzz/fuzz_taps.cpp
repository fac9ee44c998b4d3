// Fuzz target: the HDF5 tap reader (read_taps, read_failures) and `salasim diff`'s comparison of what it read.
// The first byte picks the form of the rest:
//   even: the bytes of an HDF5 file (seeds: dumps written by salasim's own writer), read as salasim reads them,
//         in a child process first (compare/h5_util.hpp crash_guard: libhdf5 1.10 crashes on some damaged files);
//   odd:  a list of operations that build a file through the HDF5 API: groups, datasets of any dims (chunked and
//         never written when large, so [2^62+1, 4] costs a few bytes), attributes of the wrong type or length,
//         hard links (a second path to an object, a link back to the root), soft and external links. Mutating raw
//         bytes mostly trips HDF5's checksums; this form reaches the reader's own checks.
#include <hdf5.h>

#include <string>
#include <vector>

#include "compare/h5_util.hpp"
#include "compare/hdf5_io.hpp"
#include "compare/report.hpp"
#include "fuzz/support.hpp"
#include "fuzz/support_h5.hpp"

using namespace salasim;
using fuzz::Bytes;
using fuzz::ints_attr;
using fuzz::string_attr;

namespace {

const char* const kParts[] = {"prefill", "decode_0000", "layer_00", "layer_01", "sparse", "select", "blocks",
                              "scores", "lightning", "gla", "out", "state", "embed", "final", "logits", "inputs",
                              "reference", "backend", "difference", "q"};
const hsize_t kDims[] = {0, 1, 2, 3, 4, 7, 64, hsize_t(1) << 20, hsize_t(1) << 26, hsize_t(1) << 32,
                         (hsize_t(1) << 62) + 1, hsize_t(1) << 40};

std::string path_from(Bytes& b) {
  std::string p;
  const int depth = 1 + b.next() % 6;
  for (int i = 0; i < depth; ++i) p += std::string("/") + kParts[b.next() % (sizeof kParts / sizeof kParts[0])];
  return p;
}

// One attribute of a fuzzed kind: integers (0-4 of them), a string, or a float.
void fuzzed_attr(hid_t obj, const char* name, Bytes& b) {
  const uint8_t kind = b.next() % 3;
  if (kind == 0) {
    std::vector<int64_t> v(b.next() % 5);
    for (int64_t& x : v) x = int64_t(kDims[b.next() % (sizeof kDims / sizeof kDims[0])]) - (b.next() % 3);
    ints_attr(obj, name, v);
  } else if (kind == 1) {
    const char* const kStrings[] = {"taps", "failures", "float64", "float32", "int64", "1", "", "x"};
    string_attr(obj, name, kStrings[b.next() % 8]);
  } else {
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    const double v = double(b.next()) / 3;
    if (a >= 0) H5Awrite(a, H5T_NATIVE_DOUBLE, &v), H5Aclose(a);
    H5Sclose(s);
  }
}

void add_dataset(hid_t f, const std::string& path, Bytes& b) {
  const int rank = b.next() % 4;
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  for (hsize_t& d : dims) d = kDims[b.next() % (sizeof kDims / sizeof kDims[0])];
  const hid_t types[] = {H5T_IEEE_F64LE, H5T_IEEE_F32LE, H5T_STD_I64LE, H5T_STD_I8LE, H5T_STD_U64LE};
  const uint8_t ti = b.next() % 5;
  const hid_t type = types[ti];
  const size_t elem = H5Tget_size(type);
  hsize_t numel = 1, bytes = 0;
  bool huge = false;
  for (hsize_t d : dims) huge = huge || __builtin_mul_overflow(numel, d, &numel);
  huge = huge || __builtin_mul_overflow(numel, hsize_t(elem), &bytes) || bytes > 4096;  // large: never written
  const uint8_t flags = b.next();
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if ((huge || (flags & 1)) && rank > 0) {
    std::vector<hsize_t> chunk(dims.size(), 1);
    H5Pset_chunk(dcpl, rank, chunk.data());
    if (flags & 2) H5Pset_deflate(dcpl, 1);
    if (flags & 4) H5Pset_shuffle(dcpl);
  }
  hid_t space = rank ? H5Screate_simple(rank, dims.data(), nullptr) : H5Screate(H5S_SCALAR);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t ds = H5Dcreate2(f, path.c_str(), type, space, lcpl, dcpl, H5P_DEFAULT);
  if (ds >= 0) {
    if (!huge && numel > 0) {
      std::vector<uint8_t> buf(numel * elem);
      for (uint8_t& x : buf) x = b.next();
      H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
    }
    std::vector<int64_t> shape(dims.begin(), dims.end());
    if (flags & 8) shape.push_back(1);  // a shape attribute that disagrees
    if (!(flags & 16)) ints_attr(ds, "shape", shape);
    const char* dtype = ti == 0 ? "float64" : ti == 1 ? "float32" : "int64";
    if (!(flags & 32)) string_attr(ds, "dtype", dtype);
    if (!(flags & 64)) ints_attr(ds, "integer", {ti >= 2 ? 1 : 0});
    if (!(flags & 128)) ints_attr(ds, "order", {int64_t(b.next())});
    else fuzzed_attr(ds, "order", b);
    H5Dclose(ds);
  }
  H5Pclose(lcpl);
  H5Sclose(space);
  H5Pclose(dcpl);
}

std::string build_file(Bytes b) {
  const std::string path = fuzz::scratch_dir() + "/built.h5";
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return path;
  const uint8_t head = b.next();
  string_attr(f, "salasim_layout", head % 4 == 3 ? "x" : head % 2 ? "failures" : "taps");
  ints_attr(f, "salasim_format_version", {head & 4 ? 2 : 1});
  if (!(head & 8)) string_attr(f, "scenario", "fuzz");
  for (const char* k : {"git_revision", "backend", "created"}) string_attr(f, k, "fuzz");
  if (head & 16) fuzzed_attr(f, "extra", b);
  std::vector<std::string> made = {"/"};
  for (int op = 0; op < 32 && b.more(); ++op) {
    const uint8_t code = b.next() % 7;
    const std::string p = path_from(b);
    const std::string& old = made[b.next() % made.size()];
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    bool ok = true;
    switch (code) {
      case 0: {
        hid_t g = H5Gcreate2(f, p.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT);
        ok = g >= 0;
        if (ok) H5Gclose(g);
        break;
      }
      case 1:
      case 2: add_dataset(f, p, b); break;
      case 3: ok = H5Lcreate_hard(f, old.c_str(), f, p.c_str(), lcpl, H5P_DEFAULT) >= 0; break;
      case 4: ok = H5Lcreate_soft(old.c_str(), f, p.c_str(), lcpl, H5P_DEFAULT) >= 0; break;
      case 5: ok = H5Lcreate_external("/etc/passwd", "/", f, p.c_str(), lcpl, H5P_DEFAULT) >= 0; break;
      default: {
        hid_t o = H5Oopen(f, old.c_str(), H5P_DEFAULT);
        const char* const kAttrs[] = {"shape", "dtype", "integer", "order", "salasim_layout", "scenario"};
        if (o >= 0) fuzzed_attr(o, kAttrs[b.next() % 6], b), H5Oclose(o);
        ok = false;
      }
    }
    if (ok) made.push_back(p);
    H5Pclose(lcpl);
  }
  H5Fclose(f);
  return path;
}

// Both readers and `diff`'s comparison, in this process: a crash here is salasim's and aborts.
void read_all(const std::string& path) {
  fuzz::expect_clean([&] {
    const TapDump d = read_taps_unguarded(path);
    const CompareReport r = compare_taps(d.taps, nullptr, d.taps);  // what `salasim diff A A` does with it
    format_report(r, PrintOptions{});
  });
  fuzz::expect_clean([&] { read_failures_unguarded(path); });
}

// Raw bytes may crash or hang libhdf5 itself (damaged global heaps do, in 1.10.8): as salasim does (read_taps), they are
// read in a child process first (one child for both readers, to keep the fuzzer fast), and only a file the child
// survives is read here. A built file is well-formed HDF5 written by the library, so it goes straight to read_all.
void read_raw(const std::string& path) {
  try {
    h5::crash_guard(
        path,
        [&] {
          try {
            read_taps_unguarded(path);
          } catch (const Error&) {
          }
          read_failures_unguarded(path);
        },
        5.0);  // the library loops forever on some files: stop well before libFuzzer's -timeout (20 s)
  } catch (const Error&) {
    return;  // the HDF5 library crashed or looped on it: salasim reports that as bad input
  }
  read_all(path);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // the builder's own failures are expected and silent
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    read_raw(fuzz::write_scratch("raw.h5", data + 1, size - 1));
  } else {
    read_all(build_file(Bytes{data + 1, size - 1}));
  }
  return 0;
}
