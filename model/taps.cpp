// Tap names: parsing of phase, layer and kind.
#include "model/taps.hpp"

#include <fmt/format.h>

namespace salasim {

namespace {
// Splits "/a/b/c" into {"a", "b", "c"}.
std::vector<std::string> parts(const std::string& name) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < name.size()) {
    if (name[i] == '/') {
      ++i;
      continue;
    }
    size_t j = name.find('/', i);
    if (j == std::string::npos) j = name.size();
    out.push_back(name.substr(i, j - i));
    i = j;
  }
  return out;
}
}  // namespace

bool TapFilter::match(const std::string& name) const {
  std::vector<std::string> p = parts(name);
  std::string after_phase;
  for (size_t i = 1; i < p.size(); ++i) after_phase += (i > 1 ? "/" : "") + p[i];
  for (const std::string& pat : patterns) {
    if (pat == "*" || pat == name) return true;
    if (after_phase.rfind(pat, 0) == 0) return true;
  }
  return false;
}

std::string tap_kind(const std::string& name) {
  std::vector<std::string> p = parts(name);
  size_t first = 1;
  if (p.size() > 1 && p[1].rfind("layer_", 0) == 0) first = 2;
  std::string out;
  for (size_t i = first; i < p.size(); ++i) out += (i > first ? "/" : "") + p[i];
  return out;
}

int tap_layer(const std::string& name) {
  std::vector<std::string> p = parts(name);
  if (p.size() > 1 && p[1].rfind("layer_", 0) == 0) return std::stoi(p[1].substr(6));
  return -1;
}

std::string tap_phase(const std::string& name) {
  std::vector<std::string> p = parts(name);
  return p.empty() ? "" : p[0];
}

std::string layer_dir(int layer) { return fmt::format("layer_{:02d}", layer); }
std::string decode_phase(int step) { return fmt::format("decode_{:04d}", step); }

}  // namespace salasim
