// Typed access to JSON fields with errors that name the file, the field and what was expected.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace salasim {

using json = nlohmann::json;

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
  bool boolean(const char* key) const;
  std::string string(const char* key) const;
  std::vector<std::string> strings(const char* key) const;
  std::vector<int64_t> integers(const char* key) const;
  JsonDoc object(const char* key) const;
};

// Whole JSON documents. A file is read only up to kJsonMaxBytes (model/limits.hpp): past that, or a folder, or
// malformed JSON (numbers out of range, nesting deeper than kJsonMaxDepth), a salasim::Error naming the file.
json parse_json_file(const std::string& path);
json parse_json_text(const std::string& text, const std::string& source);
std::string json_type_name(const json& v);

}  // namespace salasim
