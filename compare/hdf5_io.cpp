// Tap dumps and failure dumps in HDF5: the layout (docs/formats.md) written and read back, with checks that
// turn a foreign or damaged file into a message naming the file, the object and the expectation.
#include "compare/hdf5_io.hpp"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <filesystem>

#include "compare/h5_util.hpp"
#include "compare/hdf5_layout.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/output_file.hpp"

namespace salasim {

namespace {

constexpr int64_t kFormatVersion = 1;
const char* const kReserved[] = {"salasim_layout", "salasim_format_version", "scenario", "git_revision", "backend",
                                 "created"};

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool reserved(const std::string& key) {
  for (const char* r : kReserved)
    if (key == r) return true;
  return false;
}

}  // namespace

namespace dump_layout {

void check_name(const std::string& name, const std::string& file) {
  bool ok = name.size() > 1 && name[0] == '/' && name.back() != '/' && name.find("//") == std::string::npos;
  for (const char* bad : {"/./", "/../"}) ok = ok && (name + "/").find(bad) == std::string::npos;
  if (!ok) fail("{}: tap name '{}' is not a path like /prefill/layer_03/lightning/gla/out", file, name);
}

h5::Id create_file(const std::string& path, const std::string& at, const char* layout, const DumpInfo& info,
                   bool large_attrs) {
  h5::Id fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (large_attrs) H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  h5::Id f(h5::check(H5Fcreate(at.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), path,
                     "cannot create the HDF5 file (does its folder exist, is it writable?)"));
  h5::write_string_attr(f.get(), "salasim_layout", layout, path);
  h5::write_int_attr(f.get(), "salasim_format_version", kFormatVersion, path);
  h5::write_string_attr(f.get(), "scenario", info.scenario, path);
  h5::write_string_attr(f.get(), "git_revision", info.git_revision, path);
  h5::write_string_attr(f.get(), "backend", info.backend, path);
  h5::write_string_attr(f.get(), "created", info.created.empty() ? utc_now() : info.created, path);
  for (const auto& [k, v] : info.extra) {
    if (reserved(k) || k.empty()) fail("{}: extra file attribute '{}' is empty or a reserved name", path, k);
    h5::write_string_attr(f.get(), k, v, path);
  }
  return f;
}

void close_file(h5::Id& f, const std::string& path) {
  h5::check(H5Fclose(f.release()), path,
            "cannot finish the file (is the disk full?); nothing was written under its name");
}

}  // namespace dump_layout

namespace {

using dump_layout::check_name;
using dump_layout::create_file;
using dump_layout::write_dataset;

h5::Id open_file(const std::string& path, const char* layout) {
  require_regular_file(path, "an HDF5 file");  // a FIFO would block H5Fopen for good
  h5::Id f(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "not an HDF5 file (or not readable)"));
  if (!h5::has_attr(f.get(), "salasim_layout"))
    fail("{}: file attribute 'salasim_layout' is missing: not a salasim dump", path);
  const std::string got = h5::read_string_attr(f.get(), "salasim_layout", path, "file");
  if (got != layout) fail("{}: file attribute 'salasim_layout' is '{}', expected '{}'", path, got, layout);
  const int64_t v = h5::read_int_attr(f.get(), "salasim_format_version", path, "file");
  if (v != kFormatVersion) fail("{}: salasim_format_version is {}, this build reads {}", path, v, kFormatVersion);
  return f;
}

DumpInfo read_info(hid_t f, const std::string& path) {
  DumpInfo info;
  info.scenario = h5::read_string_attr(f, "scenario", path, "file");
  info.git_revision = h5::read_string_attr(f, "git_revision", path, "file");
  info.backend = h5::read_string_attr(f, "backend", path, "file");
  info.created = h5::read_string_attr(f, "created", path, "file");
  for (const std::string& k : h5::attr_names(f, path))
    if (!reserved(k)) info.extra[k] = h5::read_string_attr(f, k, path, "file");
  return info;
}

}  // namespace

namespace dump_layout {

// A dataset creation property list: contiguous, or (compress) one chunk holding the whole tensor, byte-shuffled and
// deflated. Shuffling groups the bytes of equal significance, so the 16 zero low bits of bf16 values stored as
// float32 and the repeated high bytes compress well (goldens shrink about 2x). Contiguous where deflate is missing.
h5::Id creation_plist(const std::vector<hsize_t>& dims, bool compress) {
  h5::Id dcpl(H5Pcreate(H5P_DATASET_CREATE));
  bool nonempty = !dims.empty();
  for (hsize_t d : dims) nonempty = nonempty && d > 0;
  if (compress && nonempty && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
    H5Pset_chunk(dcpl.get(), int(dims.size()), dims.data());
    H5Pset_shuffle(dcpl.get());
    H5Pset_deflate(dcpl.get(), 6);
  }
  return dcpl;
}

void write_dataset(hid_t loc, const std::string& rel, const Tap& t, FloatStorage storage, const std::string& file,
                   bool compress) {
  const std::string where = "dataset " + rel;
  if (int64_t(t.data.size()) != t.numel())
    fail("{}: {}: tap holds {} values, its shape needs {}", file, where, t.data.size(), t.numel());
  std::vector<hsize_t> dims(t.shape.begin(), t.shape.end());
  h5::Id space(dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr));
  h5::Id lcpl = intermediate_groups();

  hid_t file_type = H5T_IEEE_F64LE, mem_type = H5T_NATIVE_DOUBLE;
  const char* dtype = "float64";
  const void* buf = t.data.data();
  std::vector<int64_t> ints;
  std::vector<float> floats;
  if (t.integer) {
    file_type = H5T_STD_I64LE, mem_type = H5T_NATIVE_INT64, dtype = "int64";
    ints = whole_numbers(t.data.data(), t.data.size(), file, where);
    buf = ints.data();
  } else if (storage == FloatStorage::Float32) {
    file_type = H5T_IEEE_F32LE, mem_type = H5T_NATIVE_FLOAT, dtype = "float32";
    floats.assign(t.data.begin(), t.data.end());  // rounds to nearest; out of range becomes +-inf
    buf = floats.data();
  }
  h5::Id dcpl = creation_plist(dims, compress);
  h5::Id ds(h5::check(H5Dcreate2(loc, rel.c_str(), file_type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT), file,
                      "cannot create " + where + " (is one tap name a prefix of another?)"));
  if (t.numel() > 0)
    h5::check(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), file, "cannot write " + where);
  write_attrs(ds.get(), t.shape, dtype, t.integer, t.order, file);
}

h5::Id intermediate_groups() {
  h5::Id lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  return lcpl;
}

std::vector<int64_t> whole_numbers(const double* v, size_t n, const std::string& file, const std::string& where) {
  std::vector<int64_t> ints;
  ints.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!(std::fabs(v[i]) < 0x1p62) || v[i] != std::floor(v[i]))
      fail("{}: {}: integer tap holds {}, expected whole numbers", file, where, v[i]);
    ints.push_back(int64_t(v[i]));
  }
  return ints;
}

void write_attrs(hid_t ds, const std::vector<int64_t>& shape, const char* dtype, bool integer, int64_t order,
                 const std::string& file) {
  h5::write_ints_attr(ds, "shape", shape, file);
  h5::write_string_attr(ds, "dtype", dtype, file);
  h5::write_int_attr(ds, "integer", integer ? 1 : 0, file);
  h5::write_int_attr(ds, "order", order, file);
}

}  // namespace dump_layout

namespace {

// A tap's `rows` attribute (chosen rows only): one absolute row per row of the tap, ascending, none negative.
std::vector<int64_t> read_rows(hid_t ds, const Tap& t, const std::string& path, const std::string& file) {
  const std::string where = "dataset " + path;
  // At most one per row (the dataset's rows were checked against what the file stores).
  std::vector<int64_t> rows = h5::read_ints_attr(ds, "rows", file, where, t.shape.empty() ? 0 : t.shape[0]);
  if (t.shape.empty() || int64_t(rows.size()) != t.shape[0])
    fail("{}: {}: attribute 'rows' lists {} rows, expected one per row of its shape {}", file, where, rows.size(),
         format_shape(t.shape));
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i] < 0 || (i > 0 && rows[i] <= rows[i - 1]))
      fail("{}: {}: attribute 'rows' is not ascending non-negative row numbers (item {} is {})", file, where, i,
           rows[i]);
  return rows;
}

Tap read_dataset(hid_t ds, const std::string& path, const std::string& file) {
  const std::string where = "dataset " + path;
  h5::Id type(h5::check(H5Dget_type(ds), file, where + ": cannot read its type"));
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) fail("{}: {}: holds neither floats nor integers", file, where);
  // Dims checked against overflow and against what the file really stores, before anything is allocated.
  const h5::DatasetExtent extent = h5::dataset_extent(ds, file, where);

  Tap t;
  t.shape = extent.shape;
  const std::vector<int64_t> shape_attr = h5::read_ints_attr(ds, "shape", file, where);
  if (shape_attr != t.shape)
    fail("{}: {}: attribute 'shape' is {} but the dataset's shape is {}", file, where, format_shape(shape_attr),
         format_shape(t.shape));
  const std::string dtype = h5::read_string_attr(ds, "dtype", file, where);
  if (dtype != "float64" && dtype != "float32" && dtype != "int64")
    fail("{}: {}: attribute 'dtype' is '{}', expected float64, float32 or int64", file, where, dtype);
  const int64_t integer = h5::read_int_attr(ds, "integer", file, where);
  if (integer != 0 && integer != 1) fail("{}: {}: attribute 'integer' is {}, expected 0 or 1", file, where, integer);
  t.integer = integer == 1;
  if (t.integer != (cls == H5T_INTEGER))
    fail("{}: {}: attribute 'integer' is {} but the data are {}", file, where, integer,
         cls == H5T_INTEGER ? "integers" : "floats");
  t.order = h5::read_int_attr(ds, "order", file, where);
  t.data.resize(size_t(extent.numel));
  if (!t.data.empty())
    h5::check(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data.data()), file,
              "cannot read " + where);
  return t;
}

}  // namespace

void write_taps(const std::string& path, const TapMap& taps, const DumpInfo& info, FloatStorage storage, bool compress,
                bool replace) {
  for (const auto& [name, t] : taps) check_name(name, path);
  OutputFile out(path, replace, "");
  h5::Quiet quiet;
  h5::Id f = create_file(path, out.temp(), "taps", info);
  for (const auto& [name, t] : taps) write_dataset(f.get(), name, t, storage, path, compress);
  dump_layout::close_file(f, path);
  out.commit();
}

TapDump read_taps(const std::string& path) {
  h5::crash_guard(path, [&] { read_taps_unguarded(path); });
  return read_taps_unguarded(path);
}

FailureDump read_failures(const std::string& path) {
  h5::crash_guard(path, [&] { read_failures_unguarded(path); });
  return read_failures_unguarded(path);
}

TapDump read_taps_unguarded(const std::string& path) {
  h5::Quiet quiet;
  h5::Id f = open_file(path, "taps");
  TapDump d;
  d.info = read_info(f.get(), path);
  h5::walk(f.get(), "", path, [&](const std::string& p, hid_t ds) {
    const Tap& t = d.taps[p] = read_dataset(ds, p, path);
    if (h5::has_attr(ds, "rows")) d.rows[p] = read_rows(ds, t, p, path);
  });
  if (d.taps.empty()) fail("{}: a tap dump without taps (no datasets); nothing to compare", path);
  return d;
}

void write_failures(const std::string& path, const std::vector<FailureEntry>& entries, const DumpInfo& info,
                    bool replace) {
  OutputFile out(path, replace, "");
  h5::Quiet quiet;
  h5::Id f = create_file(path, out.temp(), "failures", info);
  for (const FailureEntry& e : entries) {
    check_name(e.name, path);
    if (!e.reference && !e.backend)
      fail("{}: failure entry {} has neither a reference nor a backend tensor", path, e.name);
    h5::Id lcpl = dump_layout::intermediate_groups();
    h5::Id g(h5::check(H5Gcreate2(f.get(), e.name.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), path,
                       "cannot create group " + e.name + " (listed twice, or a prefix of another name?)"));
    if (e.reference) write_dataset(g.get(), "reference", *e.reference, FloatStorage::Float64, path);
    if (e.backend) write_dataset(g.get(), "backend", *e.backend, FloatStorage::Float64, path);
    if (e.reference && e.backend && e.reference->shape == e.backend->shape &&
        e.reference->integer == e.backend->integer && int64_t(e.reference->data.size()) == e.reference->numel() &&
        e.backend->data.size() == e.reference->data.size()) {
      Tap d = *e.backend;
      for (size_t i = 0; i < d.data.size(); ++i) d.data[i] -= e.reference->data[i];
      write_dataset(g.get(), "difference", d, FloatStorage::Float64, path);
    }
    for (const auto& [n, t] : e.inputs) {
      if (n.empty() || n.find('/') != std::string::npos || n == "." || n == "..")
        fail("{}: input '{}' of {}: expected a name without '/'", path, n, e.name);
      write_dataset(g.get(), "inputs/" + n, t, FloatStorage::Float64, path);
    }
  }
  dump_layout::close_file(f, path);
  out.commit();
}

FailureDump read_failures_unguarded(const std::string& path) {
  h5::Quiet quiet;
  h5::Id f = open_file(path, "failures");
  FailureDump d;
  d.info = read_info(f.get(), path);
  std::map<std::string, FailureEntry> by_name;
  h5::walk(f.get(), "", path, [&](const std::string& p, hid_t ds) {
    const size_t slash = p.rfind('/');
    const std::string parent = p.substr(0, slash), leaf = p.substr(slash + 1);
    const size_t pslash = parent.rfind('/');
    if (pslash != std::string::npos && parent.substr(pslash + 1) == "inputs") {
      const std::string owner = parent.substr(0, pslash);
      by_name[owner].name = owner;
      by_name[owner].inputs[leaf] = read_dataset(ds, p, path);
      return;
    }
    if (leaf != "reference" && leaf != "backend" && leaf != "difference")
      fail("{}: dataset {} is not reference, backend, difference or inputs/<name> of a failing tap", path, p);
    FailureEntry& e = by_name[parent];
    e.name = parent;
    if (leaf == "reference") e.reference = read_dataset(ds, p, path);
    if (leaf == "backend") e.backend = read_dataset(ds, p, path);
  });
  for (auto& [n, e] : by_name) d.entries.push_back(std::move(e));
  return d;
}

std::vector<FailureEntry> failure_entries(const CompareReport& report, const TapMap& ref, const TapMap& backend) {
  std::vector<FailureEntry> out;
  for (const TapResult& row : report.rows) {
    if (row.pass) continue;
    FailureEntry e;
    e.name = row.name;
    if (auto it = ref.find(row.name); it != ref.end()) e.reference = it->second;
    if (auto it = backend.find(row.name); it != backend.end()) e.backend = it->second;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace salasim
