// Data-file lookup in the current directory, then the source tree.
#include "model/data_path.hpp"

#include <filesystem>

namespace salasim {

std::string data_path(const std::string& path) {
  namespace fs = std::filesystem;
  // error_code forms: a name the file system refuses (too long, a bad byte) is "not here", and the reader that
  // opens it then names the file; it must not escape as a filesystem_error from a lookup.
  std::error_code ec;
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path, ec)) return path;
  fs::path alt = fs::path(SALASIM_SOURCE_DIR) / path;
  return fs::exists(alt, ec) ? alt.string() : path;
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
