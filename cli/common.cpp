// Path resolution and formatting for the CLI.
#include "cli/common.hpp"

#include <filesystem>

namespace salasim::cli {

std::string resolve_data_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path)) return path;
  fs::path alt = fs::path(SALASIM_SOURCE_DIR) / path;
  return fs::exists(alt) ? alt.string() : path;
}

std::string default_config_path() { return resolve_data_path("scenarios/models/minicpm-sala-9b.json"); }

std::string with_commas(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(s[i]);
  }
  return v < 0 ? "-" + out : out;
}

}  // namespace salasim::cli
