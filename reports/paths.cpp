// Data-file lookup in the current directory, then the source tree.
#include "reports/paths.hpp"

#include <filesystem>

namespace salasim::reports {

std::string data_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path)) return path;
  fs::path alt = fs::path(SALASIM_SOURCE_DIR) / path;
  return fs::exists(alt) ? alt.string() : path;
}

std::string source_relative(const std::string& path) {
  const std::string root = std::string(SALASIM_SOURCE_DIR) + "/";
  return path.rfind(root, 0) == 0 ? path.substr(root.size()) : path;
}

}  // namespace salasim::reports
