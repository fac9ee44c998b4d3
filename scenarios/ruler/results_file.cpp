// The results file's rules: never an input, only results in it, a lock, checked appends (results_file.hpp).
#include "scenarios/ruler/results_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/output_file.hpp"
#include "scenarios/ruler/lines.hpp"
#include "scenarios/ruler/sample_io.hpp"

namespace salasim::ruler {

namespace fs = std::filesystem;

namespace {

const char* const kBusy =
    " (another `salasim ruler run` is writing it): wait for that run to end, or choose another --out (nothing was "
    "changed)";

bool integer_in(const nlohmann::json& v, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) return false;
  const int64_t x = v.get<int64_t>();
  return x >= lo && x <= hi;
}

// An unterminated line is the start of a results line cut short when it opens a JSON object that does not parse.
bool opens_json_object(const std::string& s) {
  const size_t i = s.find_first_not_of(" \t");
  return i != std::string::npos && s[i] == '{';
}

LockedFile open_results(const std::string& path, const ResultsOptions& o, const std::string& what, bool* created) {
  if (o.resume && o.force)
    fail("{}: --resume and --force together: --resume continues these results, --force replaces them; choose one",
         what);
  if (path.empty()) fail("{}: an empty path", o.option);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) fail("{}: is a symbolic link; give the results file itself (nothing was changed)", what);
    if (!S_ISREG(st.st_mode))
      fail("{}: exists and is not a regular file (a folder, a device, a FIFO or a socket); nothing was changed", what);
    if (!o.resume && !o.force)
      fail(
          "{}: results exist; pass --resume to continue that run, --force to replace them, or choose another --out "
          "(nothing was changed)",
          what);
    *created = false;
    return LockedFile(path, O_RDWR | O_APPEND | O_NOFOLLOW, 0, what, kBusy);
  }
  if (errno != ENOENT) fail("{}: cannot inspect it: {}", what, std::strerror(errno));
  check_output_file(path, false, o.option);  // the output policy's checks: its folder exists and takes a new file
  *created = true;
  return LockedFile(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW, 0644, what, kBusy);
}

}  // namespace

std::string results_line_problem(const nlohmann::json& j) {
  if (!j.is_object()) return fmt::format("a JSON {}, not an object", json_type_name(j));
  for (const char* k : {"id", "task", "prediction"})
    if (!j.contains(k) || !j.at(k).is_string()) return fmt::format("no string field '{}'", k);
  if (!j.contains("length") || !integer_in(j.at("length"), 1, kMaxSampleLength))
    return fmt::format("field 'length' is not an integer in [1, {}]", kMaxSampleLength);
  if (!j.contains("index") || !integer_in(j.at("index"), 0, kMaxSampleIndex))
    return fmt::format("field 'index' is not an integer in [0, {}]", kMaxSampleIndex);
  if (!j.contains("score") || !j.at("score").is_number() || !(j.at("score").get<double>() >= 0) ||
      j.at("score").get<double>() > 1)
    return "field 'score' is not a number in [0, 1]";
  if (!j.contains("outputs") || !j.at("outputs").is_array()) return "no array field 'outputs'";
  const std::string id = fmt::format("{}/{}/{}", j.at("task").get<std::string>(), j.at("length").get<int64_t>(),
                                     j.at("index").get<int64_t>());
  // "task/length/index", or with ".k" (k >= 2) for a repeated index (run.hpp sample_ids)
  const std::string got = j.at("id").get<std::string>();
  const bool repeat = got.size() > id.size() + 1 && got.compare(0, id.size(), id) == 0 && got[id.size()] == '.' &&
                      got.find_first_not_of("0123456789", id.size() + 1) == std::string::npos &&
                      got[id.size() + 1] != '0' && got != id + ".1";
  if (got != id && !repeat)
    return fmt::format("field 'id' is '{}', not '{}' (task/length/index, or with .k for a repeated index)",
                       excerpt(got), excerpt(id));
  return "";
}

void refuse_same_file(const std::string& out, const std::string& out_what, const std::string& input,
                      const std::string& input_what) {
  refuse_output_over_inputs(out, out_what, {{input, input_what}});  // model/output_file.hpp: one rule for every output
}

ResultsScan scan_results(int fd, const std::string& path, std::vector<std::string>* lines) {
  ResultsScan s;
  if (::lseek(fd, 0, SEEK_SET) != 0) fail("{}: cannot seek: {}", path, std::strerror(errno));
  LineReader r(fd, path, kMaxResultsLineBytes);
  std::set<std::string> seen;
  std::string line;
  bool terminated = false;
  while (r.next(&line, &terminated)) {
    const std::string where = fmt::format("{} line {}", path, r.line_number());
    std::optional<nlohmann::json> j;
    try {
      j = parse_json_text(line, where);
    } catch (const Error&) {
      if (terminated || !opens_json_object(line))
        fail(
            "{}: not a results line (not JSON); results files hold only `salasim ruler run`'s lines, so this file "
            "is not one: nothing was changed",
            where);
    }
    std::string problem = j ? results_line_problem(*j) : "";
    if (!terminated) {  // the last line, without its '\n'
      if (j && !problem.empty())
        fail(
            "{}: an unterminated line that is not a results line ({}); this file is not a results file: nothing "
            "was changed",
            where, problem);
      s.torn_tail = true;  // cut short while being written (or complete but for its '\n'): redone
      break;
    }
    if (!problem.empty())
      fail(
          "{}: not a results line ({}); results files hold only `salasim ruler run`'s lines, so this file is not "
          "one: nothing was changed",
          where, problem);
    const std::string id = j->at("id").get<std::string>();
    if (!seen.insert(id).second)
      fail(
          "{}: sample {} appears a second time; a results file holds each sample once (two runs wrote it?): "
          "nothing was changed",
          where, excerpt(id));
    s.ids.push_back(id);
    if (lines) lines->push_back(line);
    s.complete_end = r.offset();
  }
  return s;
}

ResultsFile::ResultsFile(const std::string& path, const ResultsOptions& o)
    : file_(open_results(path, o, fmt::format("{} {}", o.option, path), &created_)),
      what_(fmt::format("{} {}", o.option, path)) {
  struct stat st;
  if (::fstat(file_.fd(), &st) != 0 || !S_ISREG(st.st_mode))
    fail("{}: is not a regular file; nothing was changed", what_);
  if (!created_) {
    const ResultsScan s = scan_results(file_.fd(), path);
    if (o.force) {
      if (::ftruncate(file_.fd(), 0) != 0) fail("{}: cannot empty it for --force: {}", what_, std::strerror(errno));
    } else {
      done_ = s.ids;
      if (s.torn_tail) {
        if (::ftruncate(file_.fd(), s.complete_end) != 0)
          fail("{}: cannot cut off its unterminated last line: {}", what_, std::strerror(errno));
        cut_torn_ = true;
      }
    }
  }
  if (::fstat(file_.fd(), &st) != 0) fail("{}: cannot stat: {}", what_, std::strerror(errno));
  size_ = int64_t(st.st_size);
}

ResultsFile::~ResultsFile() {
  // Created here and nothing written: the run stopped before its first sample (bad input, a memory plan refused),
  // so no empty file is left to make the next run ask for --resume.
  if (created_ && appended_ == 0 && size_ == 0 && file_.path_is_ours()) ::unlink(file_.path().c_str());
}

void ResultsFile::append(const std::string& line) {
  if (line.find('\n') != std::string::npos) internal_fail("{}: a results line with a newline in it", what_);
  const std::string s = line + "\n";
  if (!write_all(file_.fd(), s.data(), s.size())) {
    const int e = errno;
    const bool cut = ::ftruncate(file_.fd(), size_) == 0;  // no torn line left behind
    fail("{}: writing a results line failed: {}; {} (the {} lines before it are kept: make room, then --resume)", what_,
         std::strerror(e), cut ? "it was cut off again" : "it could not be cut off (--resume will)",
         done_.size() + size_t(appended_));
  }
  if (::fsync(file_.fd()) != 0 && errno != EINVAL) {
    const int e = errno;
    const bool cut = ::ftruncate(file_.fd(), size_) == 0;
    fail("{}: fsync of a results line failed: {}; {} (the lines before it are kept: --resume continues)", what_,
         std::strerror(e), cut ? "it was cut off again" : "it could not be cut off (--resume will)");
  }
  size_ += int64_t(s.size());
  ++appended_;
}

std::vector<std::string> results_ids(const std::string& path) {
  int64_t size = 0;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return {};
  const int fd = open_regular_file(path, path, &size);
  try {
    const ResultsScan s = scan_results(fd, path);
    ::close(fd);
    return s.ids;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace salasim::ruler
