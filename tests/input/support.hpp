// Helpers of the hostile-input tests (issue 11): files written on the spot, and checks on what a call or the
// salasim command says.
#pragma once
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "tests/compare/run_cli.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

namespace salasim::test {

inline bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

inline std::string write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

inline std::string write_json(const std::string& path, const nlohmann::json& j) { return write_text(path, j.dump(2)); }

// The tiny config with `edit` applied, written to dir/name.
template <class F>
std::string tiny_config_with(const std::string& dir, const std::string& name, F edit) {
  nlohmann::json j = read_json(tiny_config());
  edit(j);
  return write_json(dir + "/" + name, j);
}

// A scenario in `dir` on config `model` (an absolute path) with a random prompt of `length` tokens.
inline nlohmann::json scenario_json(const std::string& model, int64_t length, int64_t decode_steps) {
  return {{"model", model}, {"weights", {{"synthetic_seed", 1}}}, {"prompt", {{"random_seed", 7}, {"length", length}}},
          {"decode_steps", decode_steps}};
}

inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace salasim::test
