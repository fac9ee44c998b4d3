// Typed JSON field access with file/field/expectation errors.
#include "model/json_field.hpp"

#include <fstream>
#include <sstream>

#include "model/error.hpp"

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
  std::string shown = v.dump();
  if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
  fail("{}: field '{}{}' is {} {}; expected {}", file, prefix, key, json_type_name(v), shown, expected);
}

int64_t JsonDoc::integer(const char* key, int64_t min_value) const {
  std::string expected = min_value == INT64_MIN ? "an integer" : fmt::format("an integer >= {}", min_value);
  if (!j.contains(key)) bad(key, expected);
  const json& v = j.at(key);
  if (!v.is_number_integer()) bad(key, expected);
  int64_t x = v.get<int64_t>();
  if (x < min_value) bad(key, expected);
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
  if (v.is_number_integer()) return {v.get<int64_t>()};
  if (!v.is_array()) bad(key, "an integer or an array of integers");
  std::vector<int64_t> out;
  for (const json& e : v) {
    if (!e.is_number_integer()) bad(key, "an integer or an array of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

JsonDoc JsonDoc::object(const char* key) const {
  if (!j.contains(key) || !j.at(key).is_object()) bad(key, "an object");
  return JsonDoc{j.at(key), file, prefix + key + "."};
}

json parse_json_text(const std::string& text, const std::string& source) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    fail("{}: not well-formed JSON ({})", source, e.what());
  }
}

json parse_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open file (does it exist and is it readable?)", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_json_text(ss.str(), path);
}

}  // namespace salasim
