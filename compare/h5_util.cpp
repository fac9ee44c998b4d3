// HDF5 C API helpers: identifiers, string/int attributes (h5py-friendly: variable-length UTF-8 strings, int64),
// and a recursive walk built on calls whose signatures are the same in HDF5 1.10, 1.12 and 1.14.
#include "compare/h5_util.hpp"

#include <fcntl.h>
#include <fmt/ranges.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>

#include "model/checked.hpp"
#include "model/error.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/common_interface_defs.h>
#define SALASIM_ASAN 1
#endif
#endif

namespace salasim::h5 {

Id& Id::operator=(Id&& o) noexcept {
  if (this != &o) {
    Id dead(id_);
    id_ = o.id_;
    o.id_ = -1;
  }
  return *this;
}

Id::~Id() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: break;
  }
}

Quiet::Quiet() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}
Quiet::~Quiet() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

hid_t check(hid_t id, const std::string& file, const std::string& what) {
  if (id < 0) fail("{}: {}", file, what);
  return id;
}
void check(herr_t rc, const std::string& file, const std::string& what) {
  if (rc < 0) fail("{}: {}", file, what);
}

namespace {
Id utf8_vlen_string() {
  Id t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

Id open_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where,
             const char* expected) {
  if (!has_attr(obj, name)) fail("{}: {}: attribute '{}' is missing (expected {})", file, where, name, expected);
  return Id(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), file, where + ": cannot open attribute '" + name + "'"));
}
}  // namespace

void write_string_attr(hid_t obj, const std::string& name, const std::string& value, const std::string& file) {
  Id type = utf8_vlen_string();
  Id space(H5Screate(H5S_SCALAR));
  Id attr(check(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), file,
                "cannot create attribute '" + name + "'"));
  const char* p = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &p), file, "cannot write attribute '" + name + "'");
}

void write_int_attr(hid_t obj, const std::string& name, int64_t value, const std::string& file) {
  Id space(H5Screate(H5S_SCALAR));
  Id attr(check(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), file,
                "cannot create attribute '" + name + "'"));
  check(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), file, "cannot write attribute '" + name + "'");
}

void write_ints_attr(hid_t obj, const std::string& name, const std::vector<int64_t>& values, const std::string& file) {
  const hsize_t n = values.size();
  // A zero-length list (a scalar's shape) is a null dataspace; h5py reads it as h5py.Empty.
  Id space(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL));
  Id attr(check(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), file,
                "cannot create attribute '" + name + "'"));
  if (n) check(H5Awrite(attr.get(), H5T_NATIVE_INT64, values.data()), file, "cannot write attribute '" + name + "'");
}

bool has_attr(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

std::string read_string_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where) {
  Id attr = open_attr(obj, name, file, where, "a string");
  Id type(H5Aget_type(attr.get()));
  Id space(H5Aget_space(attr.get()));
  if (H5Tget_class(type.get()) != H5T_STRING || H5Sget_simple_extent_npoints(space.get()) != 1)
    fail("{}: {}: attribute '{}' is not a single string", file, where, name);
  constexpr size_t kMaxString = size_t(1) << 20;  // our longest attribute, the list of hashed sources, is ~2 kB
  if (H5Tis_variable_str(type.get()) > 0) {
    Id mem = utf8_vlen_string();
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));  // ASCII strings (h5py's bytes, other writers) read as they are
    char* p = nullptr;
    check(H5Aread(attr.get(), mem.get(), &p), file, where + ": cannot read attribute '" + name + "'");
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  const size_t size = H5Tget_size(type.get());
  if (size == 0 || size > kMaxString)
    fail("{}: {}: attribute '{}' is a string of {} bytes; expected at most {}", file, where, name, size, kMaxString);
  std::string s(size, '\0');
  Id mem(H5Tcopy(H5T_C_S1));
  H5Tset_size(mem.get(), size);
  check(H5Aread(attr.get(), mem.get(), s.data()), file, where + ": cannot read attribute '" + name + "'");
  return s.substr(0, s.find('\0'));
}

int64_t read_int_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where) {
  std::vector<int64_t> v = read_ints_attr(obj, name, file, where);
  if (v.size() != 1) fail("{}: {}: attribute '{}' holds {} values, expected one integer", file, where, name, v.size());
  return v[0];
}

std::vector<int64_t> read_ints_attr(hid_t obj, const std::string& name, const std::string& file,
                                    const std::string& where) {
  Id attr = open_attr(obj, name, file, where, "integers");
  Id type(H5Aget_type(attr.get()));
  Id space(H5Aget_space(attr.get()));
  if (H5Tget_class(type.get()) != H5T_INTEGER) fail("{}: {}: attribute '{}' is not an integer", file, where, name);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  constexpr hssize_t kMaxInts = 64;  // a shape (at most 32 dims) or one number
  if (n > kMaxInts)
    fail("{}: {}: attribute '{}' holds {} integers; expected at most {}", file, where, name, n, kMaxInts);
  std::vector<int64_t> v(size_t(n > 0 ? n : 0));
  if (!v.empty())
    check(H5Aread(attr.get(), H5T_NATIVE_INT64, v.data()), file, where + ": cannot read attribute '" + name + "'");
  return v;
}

namespace {
herr_t collect_attr_name(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> attr_names(hid_t obj, const std::string& file) {
  std::vector<std::string> names;
  hsize_t idx = 0;
  check(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr_name, &names), file,
        "cannot list the attributes");
  return names;
}

namespace {

// The identity of an object in its file: its file number and the address (HDF5 1.10) or token (1.12+) of its header.
template <class Info, class Where>
std::string key_of(const Info& info, const Where& where) {
  std::string key(sizeof info.fileno + sizeof where, '\0');
  std::memcpy(key.data(), &info.fileno, sizeof info.fileno);
  std::memcpy(key.data() + sizeof info.fileno, &where, sizeof where);
  return key;
}

std::string object_key(hid_t obj, const std::string& file, const std::string& path) {
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info;
  check(H5Oget_info3(obj, &info, H5O_INFO_BASIC), file, "cannot read the object header of " + path);
  return key_of(info, info.token);
#else
  H5O_info_t info;
  check(H5Oget_info2(obj, &info, H5O_INFO_BASIC), file, "cannot read the object header of " + path);
  return key_of(info, info.addr);
#endif
}

struct Walk {
  const std::string& file;
  const std::function<void(const std::string&, hid_t)>& on_dataset;
  std::map<std::string, std::string> seen;  // object key -> the path it was first reached by

  void group(hid_t g, const std::string& prefix, int depth) {
    const std::string shown = prefix.empty() ? "/" : prefix;
    if (depth > kMaxDepth) fail("{}: {}: groups nest more than {} deep; a tap dump nests at most 7", file, shown, kMaxDepth);
    H5G_info_t info;
    check(H5Gget_info(g, &info), file, "cannot read group " + shown);
    for (hsize_t i = 0; i < info.nlinks; ++i) {
      const ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
      check(herr_t(len < 0 ? -1 : 0), file, "cannot list group " + shown);
      std::string name(size_t(len) + 1, '\0');
      check(herr_t(H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT) < 0
                       ? -1 : 0),
            file, "cannot list group " + shown);
      name.resize(size_t(len));
      const std::string path = prefix + "/" + name;
      H5L_info_t link;
      check(H5Lget_info_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, &link, H5P_DEFAULT), file,
            "cannot read link " + path);
      if (link.type != H5L_TYPE_HARD)
        fail("{}: {} is a {} link; a salasim dump holds only groups and datasets (hard links), and a link could lead "
             "out of the file",
             file, path, link.type == H5L_TYPE_SOFT ? "soft" : link.type == H5L_TYPE_EXTERNAL ? "external" : "user-defined");
      Id obj(check(H5Oopen(g, name.c_str(), H5P_DEFAULT), file, "cannot open " + path));
      visit(obj.get(), path, depth);
    }
  }

  void visit(hid_t obj, const std::string& path, int depth) {
    const std::string shown = path.empty() ? "/" : path;
    const auto [it, first] = seen.emplace(object_key(obj, file, shown), shown);
    if (!first)
      fail("{}: {} is a second link to {}: a salasim dump links each group and dataset once (a link back to a "
           "parent would make the walk endless)",
           file, shown, it->second);
    const H5I_type_t type = H5Iget_type(obj);
    if (type == H5I_GROUP || type == H5I_FILE)  // the walk starts at the file itself: its root group
      group(obj, path, depth + 1);
    else if (type == H5I_DATASET)
      on_dataset(path, obj);
    else
      fail("{}: {} is neither a group nor a dataset", file, shown);
  }
};

}  // namespace

void walk(hid_t group, const std::string& prefix, const std::string& file,
          const std::function<void(const std::string&, hid_t)>& on_dataset) {
  Walk w{file, on_dataset, {}};
  w.visit(group, prefix, 0);
}

void crash_guard(const std::string& path, const std::function<void()>& read) {
  constexpr int kRead = 0, kRefused = 86;  // the child's two clean endings; anything else is a crash
  std::fflush(nullptr);  // nothing buffered is written twice (the child leaves with _exit, which flushes nothing)
  const pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    // The child's only report is how it ends: its stderr goes nowhere, and under AddressSanitizer (the fuzz build)
    // a crash must not run the fuzzer's handler, which would record the input as the parent's crash.
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);
    prctl(PR_SET_DUMPABLE, 0);  // and no core dump: it would copy the whole (possibly many-GB) process to disk
#ifdef SALASIM_ASAN
    __sanitizer_set_death_callback(nullptr);
#endif
    int code = kRead;
    try {
      read();
    } catch (...) {
      code = kRefused;  // an error the parent's own read will report, with its message
    }
    _exit(code);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    fail("{}: the HDF5 library crashed reading this file (signal {}, {}): it is damaged, or not the file it claims "
         "to be",
         path, WTERMSIG(status), strsignal(WTERMSIG(status)));
  // A sanitizer or fuzzer in the child ends a crash with an exit code of its own instead of the signal.
  if (WIFEXITED(status) && WEXITSTATUS(status) != kRead && WEXITSTATUS(status) != kRefused)
    fail("{}: reading this file crashed (exit status {} in the reading process): it is damaged, or not the file it "
         "claims to be",
         path, WEXITSTATUS(status));
}

DatasetExtent dataset_extent(hid_t ds, const std::string& file, const std::string& where) {
  Id space(check(H5Dget_space(ds), file, where + ": cannot read its dataspace"));
  const H5S_class_t cls = H5Sget_simple_extent_type(space.get());
  if (cls != H5S_SCALAR && cls != H5S_SIMPLE) fail("{}: {}: has no data (a null dataspace)", file, where);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 32) fail("{}: {}: cannot read its rank", file, where);
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) check(herr_t(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0 ? -1 : 0), file,
                      where + ": cannot read its dims");
  DatasetExtent e;
  for (hsize_t d : dims) {
    if (d > hsize_t(INT64_MAX)) fail("{}: {}: dimension {} does not fit in 64 bits", file, where, d);
    e.shape.push_back(int64_t(d));
  }
  e.numel = checked_numel(e.shape, file + ": " + where);
  checked_mul(e.numel, 8, file + ": " + where + ": float64 bytes");

  // Where the data lives, and how much of it the file really holds.
  Id dcpl(check(H5Dget_create_plist(ds), file, where + ": cannot read its creation properties"));
  if (H5Pget_external_count(dcpl.get()) > 0)
    fail("{}: {}: its data lives in external files; a salasim dump keeps every dataset inside the file", file, where);
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (layout != H5D_CONTIGUOUS && layout != H5D_CHUNKED && layout != H5D_COMPACT)
    fail("{}: {}: storage layout {} (virtual or unknown); expected contiguous, chunked or compact", file, where,
         int(layout));
  bool deflated = false;
  const int nfilters = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < nfilters; ++i) {
    unsigned flags = 0;
    size_t nelmts = 0;
    char name[64] = {};
    const H5Z_filter_t f = H5Pget_filter2(dcpl.get(), unsigned(i), &flags, &nelmts, nullptr, sizeof name, name, nullptr);
    if (f == H5Z_FILTER_DEFLATE) deflated = true;
    else if (f != H5Z_FILTER_SHUFFLE && f != H5Z_FILTER_FLETCHER32)
      fail("{}: {}: filter {} ('{}'); a salasim dump uses only shuffle, deflate and fletcher32", file, where, int(f), name);
  }
  if (e.numel == 0) return e;
  Id type(check(H5Dget_type(ds), file, where + ": cannot read its type"));
  const int64_t elem = int64_t(H5Tget_size(type.get()));
  const int64_t needed = checked_mul(e.numel, elem, file + ": " + where + ": bytes");
  hsize_t file_size = 0;
  Id f(check(H5Iget_file_id(ds), file, "cannot find the file of " + where));
  check(H5Fget_filesize(f.get(), &file_size), file, "cannot read the file size");
  const int64_t stored = int64_t(std::min<hsize_t>(H5Dget_storage_size(ds), file_size));
  constexpr int64_t kDeflateRatio = 1032;  // deflate's largest compression ratio: 258 bytes from 2 bits
  if ((deflated && needed / kDeflateRatio > stored) || (!deflated && needed > stored))
    fail("{}: {}: shape {} needs {} bytes of data, but the file stores {} bytes for it{}", file, where,
         fmt::format("[{}]", fmt::join(e.shape, ", ")), needed, stored, deflated ? " (deflated at most 1032:1)" : "");
  return e;
}

}  // namespace salasim::h5
