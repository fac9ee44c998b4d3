// Tap names: parsing of phase, layer and kind.
#include "model/taps.hpp"

#include <charconv>

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

bool glob_prefix_match(const std::string& pattern, const std::string& text) {
  // ok[i][j]: pattern[i..] matches a prefix of text[j..]. Filled backwards, O(|pattern| |text|) (no backtracking
  // blow-up on patterns with many stars).
  const size_t P = pattern.size(), N = text.size();
  std::vector<std::vector<char>> ok(P + 1, std::vector<char>(N + 1, 0));
  for (size_t j = 0; j <= N; ++j) ok[P][j] = 1;
  for (size_t i = P; i-- > 0;) {
    for (size_t j = N + 1; j-- > 0;) {
      const char c = pattern[i];
      if (c == '*') ok[i][j] = ok[i + 1][j] || (j < N && text[j] != '/' && ok[i][j + 1]);
      else if (j < N && (c == '?' ? text[j] != '/' : c == text[j])) ok[i][j] = ok[i + 1][j + 1];
    }
  }
  return ok[0][0] != 0;
}

bool TapFilter::match(const std::string& name) const {
  std::vector<std::string> p = parts(name);
  std::string after_phase;
  for (size_t i = 1; i < p.size(); ++i) after_phase += (i > 1 ? "/" : "") + p[i];
  for (const std::string& pat : patterns) {
    if (pat == "*" || pat == name) return true;
    if (glob_prefix_match(pat, pat.rfind('/', 0) == 0 ? name : after_phase)) return true;
  }
  return false;
}

bool whole_sequence_tap(const std::string& name) {
  const std::string k = tap_kind(name);
  return k == "lightning/gla/state" || k == "sparse/compress_k/k1" || k == "sparse/compress_k/k2" ||
         k == "final/logits";
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
  // Names may come from a file (a tap dump): "layer_" with anything but a whole number that fits is no layer, not
  // a std::stoi exception escaping as an internal error.
  if (p.size() > 1 && p[1].rfind("layer_", 0) == 0) {
    int layer = -1;
    const char* b = p[1].data() + 6;
    const char* e = p[1].data() + p[1].size();
    const auto [end, ec] = std::from_chars(b, e, layer);
    return ec == std::errc() && end == e && b != e && layer >= 0 ? layer : -1;
  }
  return -1;
}

std::string tap_phase(const std::string& name) {
  std::vector<std::string> p = parts(name);
  return p.empty() ? "" : p[0];
}

std::string layer_dir(int layer) { return fmt::format("layer_{:02d}", layer); }
std::string decode_phase(int step) { return fmt::format("decode_{:04d}", step); }

}  // namespace salasim
