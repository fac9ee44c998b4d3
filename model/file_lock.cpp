// flock-held files (file_lock.hpp).
#include "model/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "model/error.hpp"

namespace salasim {

LockedFile::LockedFile(const std::string& path, int flags, mode_t mode, const std::string& what,
                       const std::string& busy)
    : path_(path) {
  do fd_ = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) fail("{}: cannot open: {}", what, std::strerror(errno));
  int rc = 0;
  do rc = ::flock(fd_, LOCK_EX | LOCK_NB);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e == EWOULDBLOCK) fail("{}: another process holds its lock{}", what, busy);
    fail("{}: cannot lock: {}", what, std::strerror(e));
  }
}

LockedFile::~LockedFile() {
  if (fd_ >= 0) ::close(fd_);
}

LockedFile::LockedFile(LockedFile&& o) noexcept : fd_(std::exchange(o.fd_, -1)), path_(std::move(o.path_)) {}

LockedFile& LockedFile::operator=(LockedFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    path_ = std::move(o.path_);
  }
  return *this;
}

bool LockedFile::path_is_ours() const {
  struct stat a, b;
  return fd_ >= 0 && ::fstat(fd_, &a) == 0 && ::lstat(path_.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

}  // namespace salasim
