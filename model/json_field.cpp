// Typed JSON field access with file/field/expectation errors.
#include "model/json_field.hpp"

#include <filesystem>
#include <fstream>

#include "model/error.hpp"
#include "model/limits.hpp"

namespace salasim {

std::string json_type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    case json::value_t::string: return "string";
    case json::value_t::array: return "array";
    case json::value_t::object: return "object";
    default: return "value";
  }
}

void JsonDoc::bad(const char* key, const std::string& expected) const {
  if (!j.contains(key)) fail("{}: field '{}{}' is missing; expected {}", file, prefix, key, expected);
  const json& v = j.at(key);
  // Arrays and objects are described, not printed: a hostile file can make them megabytes long.
  std::string shown = v.is_structured() ? fmt::format("of {} entries", v.size()) : v.dump();
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  fail("{}: field '{}{}' is {} {}; expected {}", file, prefix, key, json_type_name(v), shown, expected);
}

int64_t JsonDoc::integer(const char* key, int64_t min_value, int64_t max_value) const {
  std::string expected = "an integer";
  if (min_value != INT64_MIN && max_value != INT64_MAX) expected = fmt::format("an integer in [{}, {}]", min_value, max_value);
  else if (min_value != INT64_MIN) expected = fmt::format("an integer >= {}", min_value);
  else if (max_value != INT64_MAX) expected = fmt::format("an integer <= {}", max_value);
  if (!j.contains(key)) bad(key, expected);
  const json& v = j.at(key);
  if (!v.is_number_integer()) bad(key, expected);
  // The parser keeps integers past INT64_MAX as unsigned: get<int64_t>() would wrap them to negative values.
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) bad(key, expected);
  int64_t x = v.get<int64_t>();
  if (x < min_value || x > max_value) bad(key, expected);
  return x;
}

double JsonDoc::number(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_number()) bad(key, "a number");
  return j.at(key).get<double>();
}

bool JsonDoc::boolean(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_boolean()) bad(key, "true or false");
  return j.at(key).get<bool>();
}

std::string JsonDoc::string(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_string()) bad(key, "a string");
  return j.at(key).get<std::string>();
}

std::vector<std::string> JsonDoc::strings(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_array()) bad(key, "an array of strings");
  std::vector<std::string> out;
  for (const json& v : j.at(key)) {
    if (!v.is_string()) bad(key, "an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<int64_t> JsonDoc::integers(const char* key) const {
  if (!j.contains(key)) bad(key, "an integer or an array of integers");
  const json& v = j.at(key);
  if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)))
    return {v.get<int64_t>()};
  if (!v.is_array()) bad(key, "an integer or an array of integers");
  std::vector<int64_t> out;
  for (const json& e : v) {
    if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<uint64_t>() > uint64_t(INT64_MAX)))
      bad(key, "an integer or an array of integers (each within 64 bits)");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

JsonDoc JsonDoc::object(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_object()) bad(key, "an object");
  return JsonDoc{j.at(key), file, prefix + key + "."};
}

json parse_json_text(const std::string& text, const std::string& source) {
  if (int64_t(text.size()) > kJsonMaxBytes)
    fail("{}: {} bytes of JSON, more than the {} MiB this program reads", source, text.size(), kJsonMaxBytes >> 20);
  bool too_deep = false;
  const json::parser_callback_t depth_cap = [&](int depth, json::parse_event_t, json&) {
    if (depth > kJsonMaxDepth) too_deep = true;
    return !too_deep;  // once too deep, keep nothing more: the result is discarded below
  };
  json j;
  try {
    j = json::parse(text, depth_cap);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e999
    fail("{}: not well-formed JSON ({})", source, e.what());
  }
  if (too_deep) fail("{}: arrays and objects nest more than {} deep; expected a flat configuration", source, kJsonMaxDepth);
  return j;
}

json parse_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("{}: is a folder; expected a JSON file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open file (does it exist and is it readable?)", path);
  // Read at most one byte past the cap, so /dev/zero or a huge file is refused without being read whole.
  std::string text;
  char buf[1 << 16];
  while (in && int64_t(text.size()) <= kJsonMaxBytes) {
    in.read(buf, sizeof buf);
    text.append(buf, size_t(in.gcount()));
  }
  if (int64_t(text.size()) > kJsonMaxBytes)
    fail("{}: larger than {} MiB, the limit for JSON input (is it the right file?)", path, kJsonMaxBytes >> 20);
  return parse_json_text(text, path);
}

}  // namespace salasim
