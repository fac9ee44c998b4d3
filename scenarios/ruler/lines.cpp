// Bounded JSONL line reading (lines.hpp).
#include "scenarios/ruler/lines.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "model/error.hpp"

namespace salasim::ruler {

LineReader::LineReader(int fd, std::string path, int64_t max_line)
    : fd_(fd), path_(std::move(path)), max_line_(max_line) {}

bool LineReader::fill() {
  if (eof_) return false;
  if (pos_ > 0) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  char chunk[1 << 16];
  ssize_t n = 0;
  do n = ::read(fd_, chunk, sizeof chunk);
  while (n < 0 && errno == EINTR);
  if (n < 0) fail("{}: read failed: {}", path_, std::strerror(errno));
  if (n == 0) {
    eof_ = true;
    return false;
  }
  buf_.append(chunk, size_t(n));
  return true;
}

bool LineReader::next(std::string* line, bool* terminated) {
  size_t scanned = pos_;
  for (;;) {
    const size_t nl = buf_.find('\n', scanned);
    if (nl != std::string::npos) {
      if (int64_t(nl - pos_) > max_line_) break;
      line->assign(buf_, pos_, nl - pos_);
      *terminated = true;
      ++line_no_;
      line_begin_ = consumed_;
      consumed_ += int64_t(nl - pos_) + 1;
      pos_ = nl + 1;
      return true;
    }
    if (int64_t(buf_.size() - pos_) > max_line_) break;
    scanned = buf_.size();
    const size_t before = pos_;
    if (!fill()) {
      if (buf_.size() == pos_) return false;
      line->assign(buf_, pos_, std::string::npos);
      *terminated = false;
      ++line_no_;
      line_begin_ = consumed_;
      consumed_ += int64_t(buf_.size() - pos_);
      pos_ = buf_.size();
      return true;
    }
    scanned -= before - pos_;  // fill() moved the unread bytes to the front
  }
  fail("{} line {}: longer than {} bytes, the limit for one line of this file (is it the right file?)", path_,
       line_no_ + 1, max_line_);
}

int open_regular_file(const std::string& path, const std::string& what, int64_t* size) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused
  int fd = -1;
  do fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) fail("{}: cannot open: {}", what, std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: is not a regular file (a folder, a FIFO, a device or a socket); expected a JSONL file", what);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  *size = int64_t(st.st_size);
  return fd;
}

}  // namespace salasim::ruler
