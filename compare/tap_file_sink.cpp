// Tap dumps written as the run goes: extendible datasets for appended taps, whole datasets for state-like ones.
#include "compare/tap_file_sink.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <type_traits>

#include "compare/hdf5_layout.hpp"
#include "model/error.hpp"

namespace salasim {

static_assert(std::is_same_v<hid_t, int64_t>, "TapFileSink keeps the file's hid_t as int64_t");

namespace {

// The HDF5 library of a plain build is not thread-safe, and the reference and the peer record from two threads
// (scenarios/truth_pair.hpp): every HDF5 call of these sinks goes through one lock.
std::mutex& h5_lock() {
  static std::mutex m;
  return m;
}

// Rows per chunk of an appended tap: the first append's rows (a prefill piece, one decode token), at most ~1 MiB
// per chunk, at least one row. Chunks of whole pieces keep writes to whole chunks; a decode tap's one-row chunk
// wastes nothing.
hsize_t chunk_rows(const std::vector<int64_t>& shape) {
  int64_t row_bytes = 8;
  for (size_t i = 1; i < shape.size(); ++i) row_bytes *= shape[i];
  return hsize_t(std::clamp<int64_t>(std::min<int64_t>(shape[0], (int64_t(1) << 20) / std::max<int64_t>(row_bytes, 1)),
                                     1, std::max<int64_t>(shape[0], 1)));
}

// `n` values as the file stores them: float64, or int64 after checking they are whole numbers.
struct Values {
  hid_t file_type = H5T_IEEE_F64LE, mem_type = H5T_NATIVE_DOUBLE;
  const char* dtype = "float64";
  std::vector<int64_t> ints;
  const void* buf = nullptr;
  Values(const double* data, size_t n, bool integer, const std::string& file, const std::string& where) : buf(data) {
    if (!integer) return;
    file_type = H5T_STD_I64LE, mem_type = H5T_NATIVE_INT64, dtype = "int64";
    ints = dump_layout::whole_numbers(data, n, file, where);
    buf = ints.data();
  }
};

}  // namespace

TapFileSink::TapFileSink(const std::string& path, const DumpInfo& info, bool keep_rows, bool replace)
    : path_(path), out_(std::make_unique<OutputFile>(path, replace, "")) {
  std::lock_guard<std::mutex> lock(h5_lock());
  h5::Quiet quiet;
  file_ = dump_layout::create_file(path, out_->temp(), "taps", info, keep_rows).release();
}

TapFileSink::~TapFileSink() {
  if (file_ < 0) return;  // closed (committed), or never created
  std::lock_guard<std::mutex> lock(h5_lock());
  h5::Quiet quiet;
  H5Fclose(file_);  // out_ then removes the temporary
}

void TapFileSink::append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer) {
  append_impl(name, shape, data, integer, nullptr);
}

void TapFileSink::append_rows(const std::string& name, const std::vector<int64_t>& shape, const double* data,
                              bool integer, const int64_t* rows) {
  if (!rows && !shape.empty() && shape[0] > 0) internal_fail("{}: tap {}: rows kept but not named", path_, name);
  static const int64_t none = 0;
  append_impl(name, shape, data, integer, rows ? rows : &none);
}

void TapFileSink::append_impl(const std::string& name, const std::vector<int64_t>& shape, const double* data,
                              bool integer, const int64_t* rows) {
  std::lock_guard<std::mutex> lock(h5_lock());
  h5::Quiet quiet;
  if (file_ < 0) internal_fail("{}: tap {} arrived after the dump was closed", path_, name);
  if (shape.empty()) internal_fail("{}: appended tap {} has no rows dim", path_, name);
  const std::string where = "dataset " + name;
  const std::vector<hsize_t> dims(shape.begin(), shape.end());
  const Values v(data, size_t(shape_numel(shape)), integer, path_, where);
  auto it = taps_.find(name);
  if (it == taps_.end()) {
    dump_layout::check_name(name, path_);
    it = taps_.emplace(name, Written{shape, integer, true, false, int64_t(taps_.size()), rows != nullptr, {}}).first;
    it->second.shape[0] = 0;
  }
  Written& w = it->second;
  if (!w.appended || w.integer != integer || w.shape.size() != shape.size() ||
      !std::equal(shape.begin() + 1, shape.end(), w.shape.begin() + 1) || w.has_rows != (rows != nullptr))
    internal_fail("{}: tap {} appended with another type, trailing dims or row keeping than its first rows", path_,
                  name);
  if (rows) {
    for (int64_t i = 0; i < shape[0]; ++i) {
      if (!w.rows.empty() && rows[i] <= w.rows.back())
        internal_fail("{}: tap {}: kept row {} after row {} (rows must ascend)", path_, name, rows[i], w.rows.back());
      w.rows.push_back(rows[i]);
    }
  }
  const hsize_t row0 = hsize_t(w.shape[0]);
  w.shape[0] += shape[0];
  const std::vector<hsize_t> total(w.shape.begin(), w.shape.end());
  const bool exists = H5Lexists(file_, name.c_str(), H5P_DEFAULT) > 0;  // not when the first rows were none
  h5::Id ds;
  if (exists && w.extendible) {
    ds = h5::Id(h5::check(H5Dopen2(file_, name.c_str(), H5P_DEFAULT), path_, "cannot reopen " + where));
    h5::check(H5Dset_extent(ds.get(), total.data()), path_, "cannot extend " + where);
  } else {
    // The first rows; or more rows of a zero-width tap (no values, not chunkable: recreated at its new length).
    if (exists) h5::check(H5Ldelete(file_, name.c_str(), H5P_DEFAULT), path_, "cannot regrow " + where);
    w.extendible = true;  // a zero trailing dim cannot be a chunk dim
    for (size_t i = 1; i < dims.size(); ++i) w.extendible = w.extendible && dims[i] > 0;
    std::vector<hsize_t> maxdims = total, chunk = total;
    maxdims[0] = w.extendible ? H5S_UNLIMITED : total[0];
    chunk[0] = chunk_rows(shape);
    h5::Id space(H5Screate_simple(int(total.size()), total.data(), maxdims.data()));
    h5::Id dcpl(H5Pcreate(H5P_DATASET_CREATE));
    if (w.extendible) H5Pset_chunk(dcpl.get(), int(chunk.size()), chunk.data());
    // The `rows` attribute can pass the 64 KiB an attribute may take in the object header (8 bytes a row): dense
    // attribute storage (a heap beside the header, HDF5 1.8 and later, which h5py reads) holds any length.
    if (w.has_rows) H5Pset_attr_phase_change(dcpl.get(), 0, 0);
    h5::Id lcpl = dump_layout::intermediate_groups();
    ds =
        h5::Id(h5::check(H5Dcreate2(file_, name.c_str(), v.file_type, space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT),
                         path_, "cannot create " + where + " (is one tap name a prefix of another?)"));
  }
  if (shape_numel(shape) == 0) return;
  h5::Id fspace(H5Dget_space(ds.get()));
  std::vector<hsize_t> start(dims.size(), 0);
  start[0] = row0;
  h5::check(H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, dims.data(), nullptr), path_,
            "cannot select rows of " + where);
  h5::Id mspace(H5Screate_simple(int(dims.size()), dims.data(), nullptr));
  h5::check(H5Dwrite(ds.get(), v.mem_type, mspace.get(), fspace.get(), H5P_DEFAULT, v.buf), path_,
            "cannot write " + where + " (is the disk full?)");
}

void TapFileSink::replace(const std::string& name, Tap t) {
  std::lock_guard<std::mutex> lock(h5_lock());
  h5::Quiet quiet;
  if (file_ < 0) internal_fail("{}: tap {} arrived after the dump was closed", path_, name);
  auto it = taps_.find(name);
  if (it == taps_.end()) {
    dump_layout::check_name(name, path_);
    t.order = int64_t(taps_.size());
    taps_.emplace(name, Written{t.shape, t.integer, false, false, t.order, false, {}});
    return dump_layout::write_dataset(file_, name, t, FloatStorage::Float64, path_);
  }
  Written& w = it->second;
  t.order = w.order;
  if (w.appended) internal_fail("{}: tap {} replaced after rows were appended to it", path_, name);
  if (w.shape == t.shape && w.integer == t.integer) {  // the same shape: overwrite in place
    const std::string where = "dataset " + name;
    if (int64_t(t.data.size()) != t.numel())
      internal_fail("{}: {}: tap holds {} values, its shape needs {}", path_, where, t.data.size(), t.numel());
    h5::Id ds(h5::check(H5Dopen2(file_, name.c_str(), H5P_DEFAULT), path_, "cannot reopen " + where));
    const Values v(t.data.data(), t.data.size(), t.integer, path_, where);
    if (t.numel() > 0)
      h5::check(H5Dwrite(ds.get(), v.mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.buf), path_, "cannot write " + where);
    return;
  }
  h5::check(H5Ldelete(file_, name.c_str(), H5P_DEFAULT), path_, "cannot replace dataset " + name);
  w = Written{t.shape, t.integer, false, false, t.order, false, {}};
  dump_layout::write_dataset(file_, name, t, FloatStorage::Float64, path_);
}

int TapFileSink::close() {
  std::lock_guard<std::mutex> lock(h5_lock());
  h5::Quiet quiet;
  if (file_ < 0) internal_fail("{}: closed twice", path_);
  for (const auto& [name, w] : taps_) {
    if (!w.appended) continue;  // written whole, attributes and all
    h5::Id ds(h5::check(H5Dopen2(file_, name.c_str(), H5P_DEFAULT), path_, "cannot reopen dataset " + name));
    dump_layout::write_attrs(ds.get(), w.shape, w.integer ? "int64" : "float64", w.integer, w.order, path_);
    if (w.has_rows) h5::write_ints_attr(ds.get(), "rows", w.rows, path_);
  }
  const herr_t rc = H5Fclose(file_);
  file_ = -1;
  h5::check(rc, path_, "cannot finish the file (is the disk full?); nothing was written under its name");
  out_->commit();
  return int(taps_.size());
}

}  // namespace salasim
