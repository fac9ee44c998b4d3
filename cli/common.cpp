// Path resolution and formatting for the CLI.
#include "cli/common.hpp"

#include <cstdio>
#include <filesystem>

namespace salasim::cli {

std::string resolve_data_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute() || fs::exists(path)) return path;
  fs::path alt = fs::path(SALASIM_SOURCE_DIR) / path;
  return fs::exists(alt) ? alt.string() : path;
}

std::string default_config_path() { return resolve_data_path("scenarios/models/minicpm-sala-9b.json"); }

std::string default_scenario_path() { return resolve_data_path("scenarios/tiny-sparse.json"); }

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

std::string git_revision() {
  const std::string cmd = std::string("git -C '") + SALASIM_SOURCE_DIR + "' describe --always --dirty 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  char buf[256];
  std::string out;
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string with_commas(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(s[i]);
  }
  return v < 0 ? "-" + out : out;
}

}  // namespace salasim::cli
