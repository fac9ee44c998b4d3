// Reading HDF5 files that may be damaged or hostile: the walk that visits each object once and follows only hard
// links, the dims check against overflow and real storage, and the child-process guard against crashes inside the
// HDF5 library itself (compare/h5_util.hpp; docs/input-limits.md).
#include <fcntl.h>
#include <fmt/ranges.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "compare/h5_util.hpp"
#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/common_interface_defs.h>
#define SALASIM_ASAN 1
#endif
#endif

namespace salasim::h5 {

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
    if (depth > kMaxDepth)
      fail("{}: {}: groups nest more than {} deep; a tap dump nests at most 7", file, excerpt(shown), kMaxDepth);
    H5G_info_t info;
    check(H5Gget_info(g, &info), file, "cannot read group " + shown);
    for (hsize_t i = 0; i < info.nlinks; ++i) {
      const ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
      check(herr_t(len < 0 ? -1 : 0), file, "cannot list group " + shown);
      std::string name(size_t(len) + 1, '\0');
      check(herr_t(H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT) < 0
                       ? -1
                       : 0),
            file, "cannot list group " + shown);
      name.resize(size_t(len));
      const std::string path = prefix + "/" + name;
      H5L_info_t link;
      check(H5Lget_info_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, &link, H5P_DEFAULT), file,
            "cannot read link " + path);
      if (link.type != H5L_TYPE_HARD)
        fail(
            "{}: {} is a {} link; a salasim dump holds only groups and datasets (hard links), and a link could lead "
            "out of the file",
            file, excerpt(path),
            link.type == H5L_TYPE_SOFT       ? "soft"
            : link.type == H5L_TYPE_EXTERNAL ? "external"
                                             : "user-defined");
      Id obj(check(H5Oopen(g, name.c_str(), H5P_DEFAULT), file, "cannot open " + path));
      visit(obj.get(), path, depth);
    }
  }

  void visit(hid_t obj, const std::string& path, int depth) {
    const std::string shown = path.empty() ? "/" : path;
    const auto [it, first] = seen.emplace(object_key(obj, file, shown), shown);
    if (!first)
      fail(
          "{}: {} is a second link to {}: a salasim dump links each group and dataset once (a link back to a "
          "parent would make the walk endless)",
          file, excerpt(shown), excerpt(it->second));
    const H5I_type_t type = H5Iget_type(obj);
    if (type == H5I_GROUP || type == H5I_FILE)  // the walk starts at the file itself: its root group
      group(obj, path, depth + 1);
    else if (type == H5I_DATASET) on_dataset(path, obj);
    else fail("{}: {} is neither a group nor a dataset", file, excerpt(shown));
  }
};

}  // namespace

void walk(hid_t group, const std::string& prefix, const std::string& file,
          const std::function<void(const std::string&, hid_t)>& on_dataset) {
  Walk w{file, on_dataset, {}};
  w.visit(group, prefix, 0);
}

void crash_guard(const std::string& path, const std::function<void()>& read, double timeout_s) {
  // A FIFO blocks H5Fopen until a writer comes (in the child until the deadline, then in this process for good),
  // and a device can do anything when opened: only a regular file is an HDF5 input.
  require_regular_file(path, "an HDF5 file");
  constexpr int kRead = 0, kRefused = 86;  // the child's two clean endings; anything else is a crash
  if (timeout_s <= 0) {  // a legitimate read goes at tens of MB/s even when deflated: 30 s + 1 s per 10 MB
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    timeout_s = 30 + (ec ? 0.0 : double(size) / 10e6);
  }
  std::fflush(nullptr);  // nothing buffered is written twice (the child leaves with _exit, which flushes nothing)
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a child stuck in the library must not outlive salasim
    if (getppid() != parent) _exit(kRefused);
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
  // Wait for the child, polling so that a read that never ends (libhdf5 1.10.8 loops forever on some damaged global
  // heaps) is stopped at the deadline.
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (auto pause = std::chrono::microseconds(200);; pause = std::min(pause * 2, std::chrono::microseconds(50000))) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
      fail(
          "{}: reading this file did not finish in {:.0f} s (the HDF5 library loops on it): it is damaged, or not "
          "the file it claims to be",
          path, timeout_s);
    }
    std::this_thread::sleep_for(pause);
  }
  if (WIFSIGNALED(status))
    fail(
        "{}: the HDF5 library crashed reading this file (signal {}, {}): it is damaged, or not the file it claims "
        "to be",
        path, WTERMSIG(status), strsignal(WTERMSIG(status)));
  // A sanitizer or fuzzer in the child ends a crash with an exit code of its own instead of the signal.
  if (WIFEXITED(status) && WEXITSTATUS(status) != kRead && WEXITSTATUS(status) != kRefused)
    fail(
        "{}: reading this file crashed (exit status {} in the reading process): it is damaged, or not the file it "
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
  if (rank > 0)
    check(herr_t(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0 ? -1 : 0), file,
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
    const H5Z_filter_t f =
        H5Pget_filter2(dcpl.get(), unsigned(i), &flags, &nelmts, nullptr, sizeof name, name, nullptr);
    if (f == H5Z_FILTER_DEFLATE) deflated = true;
    else if (f != H5Z_FILTER_SHUFFLE && f != H5Z_FILTER_FLETCHER32)
      fail("{}: {}: filter {} ('{}'); a salasim dump uses only shuffle, deflate and fletcher32", file, where, int(f),
           name);
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
