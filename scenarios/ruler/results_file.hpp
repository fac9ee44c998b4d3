// The results file of `salasim ruler run` (and each shard of one): the rules that keep it from losing or doubling
// anything (docs/ruler-runs.md, "The results file"):
//   - it is never an input: the data file (the same path, or the same file through a symlink or a hard link) is
//     refused as --out, and so is any shard path that would be the data file;
//   - an existing file is refused unless --resume (continue it) or --force (replace it), and it must be a results
//     file: every complete line a results line (results_line_problem), each id once; anything else is refused
//     naming the file and the line, even with --force, and left as it is;
//   - --resume removes only an unterminated last line (no '\n' after it: a write cut short by a kill or a full
//     disk), and only when it is the start of a JSON object that is not complete;
//   - an exclusive lock (flock) is held on it from the checks to the end of the run, so a second writer of the
//     same file is refused at once;
//   - each results line is appended with one checked write and made durable (fsync) before the next sample; a
//     failed write (a full disk, a file-size limit) is cut back off and is an Error naming the file.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/file_lock.hpp"

namespace salasim::ruler {

// The largest results line read back (a line holds one sample's selections: a few kB to a few hundred kB).
constexpr int64_t kMaxResultsLineBytes = int64_t(64) << 20;

// "" when `j` is a results line of `salasim ruler run`: an object with "id" (string, equal to
// "<task>/<length>/<index>"), "task" (string), "length" and "index" (integers in range), "score" (a number in
// [0, 1]), "prediction" (string) and "outputs" (array). Otherwise what is wrong, for a message.
std::string results_line_problem(const nlohmann::json& j);

// Refuses (an Error: exit 2) `out` when it is the same file as `input` (same path once normalized, or the same
// device and inode: a symlink or a hard link to it). `out_what` and `input_what` name the options ("--out",
// "--data").
void refuse_same_file(const std::string& out, const std::string& out_what, const std::string& input,
                      const std::string& input_what);

// What a results file holds, read through `fd` from offset 0.
struct ResultsScan {
  std::vector<std::string> ids;  // of the complete lines, in file order
  int64_t complete_end = 0;      // bytes up to and including the last complete line's '\n'
  bool torn_tail = false;        // an unterminated last line that is a cut-short results line
};
// Every complete line must be a results line with an id not seen before, else an Error naming `path` and the
// line. An unterminated last line: a complete results line without its '\n', or the start of a JSON object that
// does not parse, is torn_tail (a write cut short); anything else (plain text, another kind of JSON) is an Error.
// `lines`, when given, receives the complete lines' text.
ResultsScan scan_results(int fd, const std::string& path, std::vector<std::string>* lines = nullptr);

struct ResultsOptions {
  bool resume = false;  // continue an existing file (done() lists what is in it)
  bool force = false;   // replace an existing results file (truncated once locked)
  std::string option = "--out";
};

// A results file open for appending, locked, checked under the rules above.
class ResultsFile {
 public:
  ResultsFile(const std::string& path, const ResultsOptions& o);
  ~ResultsFile();  // a file this object created and never wrote is removed (the run ended before its first sample)
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  const std::string& path() const { return file_.path(); }
  const std::vector<std::string>& done() const { return done_; }  // ids already in the file (--resume)
  bool cut_torn() const { return cut_torn_; }                     // an unterminated last line was removed
  // Appends `line` (one JSON text without '\n') and a '\n' in one checked write, then fsync.
  void append(const std::string& line);
  int64_t appended() const { return appended_; }

 private:
  bool created_ = false;  // before file_: set while file_ is opened, and not reset after
  LockedFile file_;
  std::string what_;
  std::vector<std::string> done_;
  bool cut_torn_ = false;
  int64_t size_ = 0, appended_ = 0;
};

// The ids of a results file read, not written (the merged file a resumed `--gpus` run's workers skip): checked as
// scan_results does; a torn tail is not counted. A missing file has none.
std::vector<std::string> results_ids(const std::string& path);

}  // namespace salasim::ruler
