// An open file with an exclusive OS lock (flock LOCK_EX | LOCK_NB) held for as long as the object lives, so that
// two processes never write one file at once: the second is refused at once instead of interleaving its lines
// with the first's (two `salasim ruler run` on one --out used to both exit 0 with every sample twice). The lock is
// advisory: it binds salasim's writers, not an editor. It goes with the open file description, so it is released
// when the process ends however it ends (a SIGKILL included), and is not inherited across exec (O_CLOEXEC).
#pragma once
#include <sys/types.h>

#include <string>

namespace salasim {

class LockedFile {
 public:
  // Opens `path` with `flags` (O_CLOEXEC is added; O_CREAT uses `mode`) and takes the lock. A failure to open, or a
  // lock another process holds, is a salasim::Error: "<what>: <reason>" (what names the option and the path), the
  // lock's with `busy` appended (what the user can do).
  LockedFile(const std::string& path, int flags, mode_t mode, const std::string& what, const std::string& busy);
  ~LockedFile();
  LockedFile(LockedFile&& o) noexcept;
  LockedFile& operator=(LockedFile&& o) noexcept;
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // True while `path` still names the locked file (same device and inode): a file renamed or removed meanwhile
  // is not ours to touch by name.
  bool path_is_ours() const;

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace salasim
