// Paths the tests use: the source tree's data files and a scratch folder.
#pragma once
#include <filesystem>
#include <string>

namespace salasim::test {

inline std::string source_path(const std::string& rel) { return std::string(SALASIM_SOURCE_DIR) + "/" + rel; }
inline std::string real_config() { return source_path("scenarios/models/minicpm-sala-9b.json"); }
inline std::string tiny_config() { return source_path("scenarios/models/tiny.json"); }

// A fresh empty folder under the build tree, named after the test.
inline std::string scratch_dir(const std::string& name) {
  std::filesystem::path p = std::filesystem::path(SALASIM_TEST_TMP) / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace salasim::test
