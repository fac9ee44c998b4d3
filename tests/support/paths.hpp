// Paths the tests use: the source tree's data files and a scratch folder.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace salasim::test {

// A whole file as bytes; empty when it cannot be read (the assertions on its content then fail).
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline std::string source_path(const std::string& rel) { return std::string(SALASIM_SOURCE_DIR) + "/" + rel; }
inline std::string real_config() { return source_path("scenarios/models/minicpm-sala-9b.json"); }
inline std::string tiny_config() { return source_path("scenarios/models/tiny.json"); }

// Where the tests write: build/tests/tmp, or $SALASIM_TEST_TMP when set (the docs check runs a case into its own
// folder, so it never reads a folder a concurrent ctest case is rewriting).
inline std::string test_tmp() {
  const char* env = std::getenv("SALASIM_TEST_TMP");
  return env && *env ? env : SALASIM_TEST_TMP;
}

// A fresh empty folder under test_tmp(), named after the test.
inline std::string scratch_dir(const std::string& name) {
  std::filesystem::path p = std::filesystem::path(test_tmp()) / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace salasim::test
