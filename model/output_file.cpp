// The output policy: atomic, checked, never over what exists (see output_file.hpp).
#include "model/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "model/error.hpp"

namespace fs = std::filesystem;

namespace salasim {

namespace {

// ---- temporaries to remove on a signal: a fixed table the handler can walk without allocating ----
constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;
struct Slot {
  char path[kPathMax];
  volatile sig_atomic_t folder;
  volatile sig_atomic_t used;
};
Slot g_slots[kSlots];

int register_temp(const std::string& p, bool folder) {
  if (p.size() + 1 > kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i)
    if (!g_slots[i].used) {
      std::memcpy(g_slots[i].path, p.c_str(), p.size() + 1);
      g_slots[i].folder = folder ? 1 : 0;
      g_slots[i].used = 1;
      return i;
    }
  return -1;  // more than 64 outputs open at once: the destructor still removes it
}
void unregister_temp(int slot) {
  if (slot >= 0) g_slots[slot].used = 0;
}

// Only async-signal-safe calls: unlink for a file; for a folder, rm -rf in a child (fork, execve and waitpid are
// safe where a recursive walk with opendir is not).
extern "C" void remove_temps_and_reraise(int sig) {
  for (Slot& s : g_slots) {
    if (!s.used) continue;
    if (!s.folder) {
      ::unlink(s.path);
      continue;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      char rm[] = "rm", rf[] = "-rf", dashes[] = "--";
      char* argv[] = {rm, rf, dashes, s.path, nullptr};
      char* envp[] = {nullptr};
      ::execve("/bin/rm", argv, envp);
      ::_exit(127);
    }
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

std::string label(const std::string& option, const std::string& path) {
  return option.empty() ? path : option + " " + path;
}

bool exists_nofollow(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

// Removes temporaries of `path` left by processes that are gone (a SIGKILL, a power cut).
void remove_stale_temps(const fs::path& target) {
  std::error_code ec;
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string prefix = fmt::format(".{}.tmp-", target.filename().string());
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.find_first_not_of("0123456789") != std::string::npos || pid_text.size() > 9)
      continue;
    const pid_t pid = pid_t(std::stol(pid_text));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code rm;
    fs::remove_all(it->path(), rm);
  }
}

void make_parent(const fs::path& p, const std::string& what) {
  const fs::path parent = p.parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) fail("{}: cannot create its folder {}: {}", what, parent.string(), ec.message());
  if (!fs::is_directory(parent, ec)) fail("{}: {} is not a folder", what, parent.string());
}

// A probe file in the target's folder: does the folder take new files at all (permissions, a read-only mount)?
void probe_folder(const fs::path& p, const std::string& what) {
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  const std::string probe = (dir / fmt::format(".salasim-probe-{}", ::getpid())).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("{}: cannot create files in {}: {}", what, dir.string(), std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

bool write_all(int fd, const char* bytes, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd, bytes + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    done += size_t(w);
  }
  return true;
}

std::string temporary_name(const std::string& path) {
  const fs::path p(path);
  return (p.parent_path() / fmt::format(".{}.tmp-{}", p.filename().string(), ::getpid())).string();
}

void check_output_file(const std::string& path, bool force, const std::string& option) {
  const std::string what = label(option, path);
  if (path.empty()) fail("{}: an empty path", option.empty() ? "output" : option);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      fail("{}: exists and is not a regular file (a folder, a device, a FIFO or a link); nothing was written", what);
    if (!force) fail("{}: exists already; it is kept (pass --force to replace it)", what);
  }
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec)) fail("{}: its folder {} does not exist", what, parent.string());
  probe_folder(fs::path(path), what);
}

void check_output_folder(const std::string& path, bool force, const std::string& option) {
  const std::string what = label(option, path);
  if (path.empty()) fail("{}: an empty path", option.empty() ? "output" : option);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) fail("{}: exists and is not a folder; nothing was written", what);
    if (!force) fail("{}: exists already; it is kept (pass --force to replace it)", what);
  }
  const fs::path p = fs::path(path).lexically_normal();
  make_parent(p.filename().empty() ? p.parent_path() : p, what);
  probe_folder(p.filename().empty() ? p.parent_path() : p, what);
}

void write_file_atomic(const std::string& path, const std::string& bytes, bool force, const std::string& option) {
  OutputFile out(path, force, option);
  const int fd = ::open(out.temp().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("{}: cannot create {}: {}", label(option, path), out.temp(), std::strerror(errno));
  if (!write_all(fd, bytes.data(), bytes.size())) {
    const int e = errno;
    ::close(fd);
    fail("{}: write failed: {}; nothing was written under its name", label(option, path), std::strerror(e));
  }
  if (::close(fd) != 0)
    fail("{}: close failed: {}; nothing was written under its name", label(option, path), std::strerror(errno));
  out.commit();
}

OutputFile::OutputFile(std::string path, bool force, std::string option)
    : path_(std::move(path)), option_(std::move(option)), force_(force) {
  check_output_file(path_, force_, option_);
  remove_stale_temps(fs::path(path_));
  temp_ = temporary_name(path_);
  ::unlink(temp_.c_str());  // ours from an earlier output of this process to the same name
  slot_ = register_temp(temp_, false);
}

OutputFile::~OutputFile() {
  if (!done_) ::unlink(temp_.c_str());
  unregister_temp(slot_);
}

void OutputFile::commit() {
  const std::string what = label(option_, path_);
  const int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: the finished file {} is gone: {}", what, temp_, std::strerror(errno));
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL || errno == EROFS;  // EINVAL: no fsync there (/dev/shm)
  const int e = errno;
  ::close(fd);
  if (!synced) fail("{}: sync failed: {}; nothing was written under its name", what, std::strerror(e));
  if (!force_ && exists_nofollow(path_))  // appeared while this one was written: another writer's, kept
    fail("{}: appeared while this output was written; it is kept (pass --force to replace it)", what);
  if (::rename(temp_.c_str(), path_.c_str()) != 0)
    fail("{}: cannot rename {} onto it: {}", what, temp_, std::strerror(errno));
  done_ = true;
  unregister_temp(slot_);
  slot_ = -1;
}

OutputFolder::OutputFolder(std::string path, bool force, std::string option)
    : path_(fs::path(std::move(path)).lexically_normal().string()), option_(std::move(option)), force_(force) {
  while (path_.size() > 1 && path_.back() == '/') path_.pop_back();
  check_output_folder(path_, force_, option_);
  remove_stale_temps(fs::path(path_));
  temp_ = temporary_name(path_);
  std::error_code ec;
  fs::remove_all(temp_, ec);
  if (!fs::create_directory(temp_, ec) || ec)
    fail("{}: cannot create the folder {}: {}", label(option_, path_), temp_, ec ? ec.message() : "it exists");
  slot_ = register_temp(temp_, true);
}

OutputFolder::~OutputFolder() {
  unregister_temp(slot_);
  if (done_) return;
  std::error_code ec;
  fs::remove_all(temp_, ec);
}

void OutputFolder::commit() {
  const std::string what = label(option_, path_);
  std::error_code ec;
  std::string old;
  if (exists_nofollow(path_)) {
    if (!force_) fail("{}: appeared while this output was written; it is kept (pass --force to replace it)", what);
    old = fmt::format("{}.old-{}", temp_, ::getpid());
    if (::rename(path_.c_str(), old.c_str()) != 0)
      fail("{}: cannot move the old folder aside: {}", what, std::strerror(errno));
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    if (!old.empty()) ::rename(old.c_str(), path_.c_str());  // put the old one back
    fail("{}: cannot rename {} onto it: {}", what, temp_, std::strerror(e));
  }
  done_ = true;
  unregister_temp(slot_);
  slot_ = -1;
  if (!old.empty()) fs::remove_all(old, ec);
}

void install_output_cleanup() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  struct sigaction sa = {};
  sa.sa_handler = remove_temps_and_reraise;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace salasim
