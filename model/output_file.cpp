// The output policy: atomic, checked, never over what exists (see output_file.hpp).
#include "model/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

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

// ---- the inputs this process has read (note_input), so that no output replaces one ----
struct Input {
  std::string path;   // as given, for messages
  fs::path absolute;  // weakly canonical
  dev_t dev;
  ino_t ino;
};
std::mutex g_inputs_mutex;
std::vector<Input> g_inputs;
bool g_guard_inputs = false;  // guard_inputs()

// Refuses replacing `target` (an existing file or folder) when it is an input or, a folder, holds one.
void refuse_replacing_inputs(const std::string& target, bool folder, const std::string& what) {
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) return;  // nothing there: nothing to lose
  std::error_code ec;
  const fs::path t = fs::weakly_canonical(fs::absolute(target, ec), ec);
  const std::lock_guard<std::mutex> lock(g_inputs_mutex);
  for (const Input& in : g_inputs) {  // empty unless guard_inputs(true)
    if (!folder && in.dev == st.st_dev && in.ino == st.st_ino)
      fail(
          "{}: is {}, an input of this command; salasim never writes over its inputs, even with --force: choose "
          "another output (nothing was changed)",
          what, in.path);
    if (folder && !ec) {
      const auto ends = std::mismatch(t.begin(), t.end(), in.absolute.begin(), in.absolute.end());
      if (ends.first == t.end())
        fail(
            "{}: holds {}, an input of this command; --force replaces the folder whole, so the input would go "
            "with it: choose another output (nothing was changed)",
            what, in.path);
    }
  }
}

// ".<name>.tmp-" for a temporary of <name>. A file name may be 255 bytes, and ".<name>.work.tmp-<pid>" adds up to 21:
// a long name is cut to 200 bytes and told apart by a hash of the whole (a 250-byte --dump-taps name was refused
// with ENAMETOOLONG though the name itself is valid).
std::string temp_prefix(const std::string& name) {
  if (name.size() <= 200) return fmt::format(".{}.tmp-", name);
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (const unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return fmt::format(".{}~{:016x}.tmp-", name.substr(0, 200), h);
}

// rename() that never replaces: renameat2(RENAME_NOREPLACE) makes "refused when it appeared meanwhile" atomic
// (two writers of one target: the second fails with EEXIST); a file system without it falls back to a check first.
int rename_noreplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (exists_nofollow(to)) {
    errno = EEXIST;
    return -1;
  }
  return ::rename(from.c_str(), to.c_str());
}

// Removes temporaries of `path` left by processes that are gone (a SIGKILL, a power cut).
void remove_stale_temps(const fs::path& target) {
  std::error_code ec;
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string prefix = temp_prefix(target.filename().string());
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
  return (p.parent_path() / fmt::format("{}{}", temp_prefix(p.filename().string()), ::getpid())).string();
}

void check_output_file(const std::string& path, bool force, const std::string& option) {
  const std::string what = label(option, path);
  if (path.empty()) fail("{}: an empty path", option.empty() ? "output" : option);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      fail("{}: exists and is not a regular file (a folder, a device, a FIFO or a link); nothing was written", what);
    if (!force) fail("{}: exists already; it is kept (pass --force to replace it)", what);
    refuse_replacing_inputs(path, false, what);
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
    refuse_replacing_inputs(path, true, what);
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
  if (force_) refuse_replacing_inputs(path_, false, what);  // inputs read since the output was checked
  if ((force_ ? ::rename(temp_.c_str(), path_.c_str()) : rename_noreplace(temp_, path_)) != 0) {
    if (errno == EEXIST)  // appeared while this one was written: another writer's, kept
      fail("{}: appeared while this output was written; it is kept (pass --force to replace it)", what);
    fail("{}: cannot rename {} onto it: {}", what, temp_, std::strerror(errno));
  }
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
  // registered before it exists: a signal between the two would otherwise leave an empty folder behind (the
  // output ctest's signal sent as soon as the folder appears found that window)
  slot_ = register_temp(temp_, true);
  if (!fs::create_directory(temp_, ec) || ec) {
    unregister_temp(slot_);  // a constructor that throws runs no destructor
    fail("{}: cannot create the folder {}: {}", label(option_, path_), temp_, ec ? ec.message() : "it exists");
  }
}

OutputFolder::~OutputFolder() {
  if (!done_) {
    std::error_code ec;
    fs::remove_all(temp_, ec);
  }
  unregister_temp(slot_);  // after the removal, so that a signal meanwhile still removes the rest
}

void OutputFolder::commit() {
  const std::string what = label(option_, path_);
  if (rename_noreplace(temp_, path_) == 0) {
    done_ = true;
    unregister_temp(slot_);
    slot_ = -1;
    return;
  }
  if (errno != EEXIST) fail("{}: cannot rename {} onto it: {}", what, temp_, std::strerror(errno));
  if (!force_) fail("{}: appeared while this output was written; it is kept (pass --force to replace it)", what);
  refuse_replacing_inputs(path_, true, what);  // inputs read since the output was checked
  // Swapped in one step where the file system can (renameat2 RENAME_EXCHANGE): the final name never goes missing,
  // and the old folder, now at the temporary's name, is removed as the temporary would be (by a signal too).
  if (::renameat2(AT_FDCWD, temp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
    done_ = true;
    std::error_code ec;
    fs::remove_all(temp_, ec);
    unregister_temp(slot_);
    slot_ = -1;
    return;
  }
  replace_by_two_renames(what);
}

void OutputFolder::replace_by_two_renames(const std::string& what) {
  std::error_code ec;
  const std::string old = fmt::format("{}.old-{}", temp_, ::getpid());
  if (::rename(path_.c_str(), old.c_str()) != 0)
    fail("{}: cannot move the old folder aside: {}", what, std::strerror(errno));
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    ::rename(old.c_str(), path_.c_str());  // put the old one back
    fail("{}: cannot rename {} onto it: {}", what, temp_, std::strerror(e));
  }
  done_ = true;
  unregister_temp(slot_);
  slot_ = -1;
  fs::remove_all(old, ec);
}

namespace {

// The same file: the same device and inode (a symlink, a hard link), or the same path once normalized.
bool same_file(const std::string& a, const std::string& b) {
  struct stat x, y;
  if (::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino)
    return true;
  std::error_code e1, e2;
  const fs::path p = fs::weakly_canonical(fs::absolute(a, e1), e1), q = fs::weakly_canonical(fs::absolute(b, e2), e2);
  return !e1 && !e2 && p == q;
}

}  // namespace

void refuse_output_over_inputs(const std::string& out, const std::string& option, const NamedInputs& inputs) {
  for (const auto& [input, what] : inputs)
    if (!input.empty() && !out.empty() && same_file(out, input))
      fail(
          "{} {}: is the same file as {} {}; salasim never writes over its inputs: choose another {} (nothing was "
          "changed)",
          option, out, what, input, option);
}

void guard_inputs(bool on) {
  const std::lock_guard<std::mutex> lock(g_inputs_mutex);
  g_guard_inputs = on;
  if (!on) g_inputs.clear();
}

void note_input(const std::string& path) {
  {
    const std::lock_guard<std::mutex> lock(g_inputs_mutex);
    if (!g_guard_inputs) return;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return;
  std::error_code ec;
  fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) abs.clear();
  const std::lock_guard<std::mutex> lock(g_inputs_mutex);
  for (const Input& in : g_inputs)
    if (in.dev == st.st_dev && in.ino == st.st_ino) return;
  g_inputs.push_back({path, abs, st.st_dev, st.st_ino});
}

ScratchFolder::ScratchFolder(const std::string& for_path) {
  const std::string work = for_path + ".work";
  remove_stale_temps(fs::path(work));
  path_ = temporary_name(work);
  std::error_code ec;
  fs::remove_all(path_, ec);
  slot_ = register_temp(path_, true);  // before it exists, as OutputFolder's
  if (!fs::create_directory(path_, ec) || ec) {
    unregister_temp(slot_);
    fail("{}: cannot create the scratch folder {}: {}", for_path, path_, ec ? ec.message() : "it exists");
  }
}

ScratchFolder::~ScratchFolder() {
  std::error_code ec;
  fs::remove_all(path_, ec);
  unregister_temp(slot_);
}

void install_output_cleanup() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  struct sigaction sa = {};
  sa.sa_handler = remove_temps_and_reraise;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM, SIGPROF}) {
    struct sigaction was = {};
    if (::sigaction(sig, nullptr, &was) == 0 && was.sa_handler == SIG_IGN) continue;  // the caller's choice: kept
    ::sigaction(sig, &sa, nullptr);
  }
  ::signal(SIGXFSZ, SIG_IGN);  // a write past `ulimit -f` fails with EFBIG and is reported, its temporary removed
}

}  // namespace salasim
