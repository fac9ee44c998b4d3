// Data-file lookup in the current directory, then the source tree.
#include "model/data_path.hpp"

#include <filesystem>

namespace salasim {

std::string data_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path)) return path;
  fs::path alt = fs::path(SALASIM_SOURCE_DIR) / path;
  return fs::exists(alt) ? alt.string() : path;
}

std::string source_relative(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(fs::absolute(path), ec);
  const fs::path root = fs::weakly_canonical(fs::path(SALASIM_SOURCE_DIR), ec);
  if (ec) return path;
  const fs::path rel = abs.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") return path;
  return rel.string();
}

}  // namespace salasim
