// Lines of a JSONL file read with a bound on each line, so that a file of one endless line (/dev/zero through a
// symlink, a 10 GB line) is refused when it passes the bound, not read whole into memory first.
#pragma once
#include <cstdint>
#include <string>

namespace salasim::ruler {

class LineReader {
 public:
  // Reads from `fd` (not owned) from its current offset; `path` names it in messages; lines longer than
  // `max_line` bytes are an Error naming the path, the line number and the bound.
  LineReader(int fd, std::string path, int64_t max_line);
  // The next line, without its '\n', into *line; false at the end of the file. *terminated is false for a last
  // line with no '\n' after it (what a write cut short leaves).
  bool next(std::string* line, bool* terminated);
  int64_t line_number() const { return line_no_; }     // of the line last returned, 1-based
  int64_t line_offset() const { return line_begin_; }  // its first byte's offset from where reading started
  int64_t offset() const { return consumed_; }         // bytes consumed so far (past the last '\n' returned)

 private:
  bool fill();
  int fd_;
  std::string path_;
  int64_t max_line_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
  int64_t line_no_ = 0, line_begin_ = 0, consumed_ = 0;
};

// Opens `path` for reading (a regular file only: a folder, a FIFO, a device or a socket is an Error naming
// `what`, e.g. "--data data.jsonl"); returns the descriptor (close it) and the file's size.
int open_regular_file(const std::string& path, const std::string& what, int64_t* size);

}  // namespace salasim::ruler
