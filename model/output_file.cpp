// Atomic, checked output files (see output_file.hpp).
#include "model/output_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "model/error.hpp"

namespace fs = std::filesystem;

namespace salasim {

std::string temporary_name(const std::string& path) {
  const fs::path p(path);
  return (p.parent_path() / fmt::format(".{}.tmp-{}", p.filename().string(), ::getpid())).string();
}

void write_file_atomic(const std::string& path, const std::string& bytes, bool replace) {
  std::error_code ec;
  if (!replace && fs::exists(fs::symlink_status(path, ec)))
    fail("{}: exists already; it is kept (pass --force to replace it)", path);
  const std::string tmp = temporary_name(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("{}: cannot create {} beside it: {}", path, tmp, std::strerror(errno));
  auto give_up = [&](const char* what) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    fail("{}: {} failed: {}; nothing was written under its name", path, what, std::strerror(e));
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) give_up("write");
    done += size_t(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL) give_up("sync");  // EINVAL: a file system without fsync (/dev/shm)
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    fail("{}: close failed: {}; nothing was written under its name", path, std::strerror(e));
  }
  if (!replace && fs::exists(fs::symlink_status(path, ec))) {  // appeared meanwhile: another writer's, kept
    ::unlink(tmp.c_str());
    fail("{}: exists already; it is kept (pass --force to replace it)", path);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    fail("{}: cannot rename {} onto it: {}", path, tmp, std::strerror(e));
  }
}

}  // namespace salasim
