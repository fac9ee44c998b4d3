// Typed access to JSON fields with errors that name the file, the field and what was expected.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace salasim {

using json = nlohmann::json;

struct FloatRange;  // model/limits.hpp

// A JSON object read from a file, remembering where it came from for error messages.
struct JsonDoc {
  const json& j;
  std::string file;
  std::string prefix;  // "sparse_config." for nested objects

  bool has(const char* key) const { return j.contains(key) && !j.at(key).is_null(); }
  [[noreturn]] void bad(const char* key, const std::string& expected) const;

  // An integer in [min_value, max_value], checked in 64 bits (a value past int64, a fraction or 1e999 is an error
  // naming the field): callers pass the range the field's meaning allows, so nothing is truncated afterwards.
  int64_t integer(const char* key, int64_t min_value = INT64_MIN, int64_t max_value = INT64_MAX) const;
  double number(const char* key) const;
  // A number inside `r` (model/limits.hpp: the range the field's meaning allows, with its reason), else an error
  // naming the field, the value and the range.
  double number(const char* key, const FloatRange& r) const;
  bool boolean(const char* key) const;
  std::string string(const char* key) const;
  std::vector<std::string> strings(const char* key) const;
  std::vector<int64_t> integers(const char* key) const;
  JsonDoc object(const char* key) const;
};

// Whole JSON documents, the one way every JSON input is read (docs/input-limits.md). A salasim::Error naming the
// file (`source`) for: anything but a regular file (a folder, a FIFO, a device: refused from stat() before it is
// opened, so a FIFO cannot block the read), more than kJsonMaxBytes (model/limits.hpp), malformed JSON (numbers
// out of range included), nesting deeper than kJsonMaxDepth, and a key that appears twice in one object at any
// depth (named with its path, "sparse_config.topk"): nlohmann would keep the last silently.
json parse_json_file(const std::string& path);
json parse_json_text(const std::string& text, const std::string& source);
std::string json_type_name(const json& v);

// Throws naming `path` unless it is a regular file (symlinks followed); `what` says what was expected ("a JSON
// file"). From stat(), before anything opens the path.
void require_regular_file(const std::string& path, const std::string& what);

// The whole of a text input (a JSON document, an essay haystack, a word list), read the one safe way: a regular file
// only (from stat() before it is opened, then fstat() on what was opened: a FIFO blocked forever, /dev/zero never
// ended), at most `max_bytes` (a larger file is refused by its size before it is read, one that grows while read
// stops one byte past the cap). A salasim::Error names the file and `what` was expected ("a JSON file"); a file too
// large names the limit as the one for `input_kind` ("JSON input").
std::string read_regular_file(const std::string& path, const std::string& what, int64_t max_bytes,
                              const std::string& input_kind);

// Input as an error message quotes it, at most kQuoteMaxChars (model/limits.hpp) bytes: a string from a file or the
// command line with control characters shown as \xNN, cut at a UTF-8 boundary with "... (N bytes)" after it; a JSON
// value serialized without recursion (a value nesting 200,000 arrays deep is safe) and cut the same way. Every
// message that shows a JSON value or a string of the input goes through these.
std::string excerpt(std::string_view text);
inline std::string excerpt(const std::string& text) { return excerpt(std::string_view(text)); }
inline std::string excerpt(const char* text) { return excerpt(std::string_view(text)); }
std::string excerpt(const json& value);

}  // namespace salasim
