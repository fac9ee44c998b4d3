// Parsing and printing of context lengths.
#include "reports/context.hpp"

#include <cctype>

#include "model/error.hpp"
#include "model/limits.hpp"

namespace salasim::reports {

int64_t parse_context(const std::string& entry, const std::string& what) {
  const std::string expected = fmt::format(
      "a positive token count such as 4096, 64K (x1024) or 1M (x1048576), at most {}M", kMaxContext >> 20);
  std::string s;
  for (char ch : entry)
    if (!std::isspace(static_cast<unsigned char>(ch))) s.push_back(ch);
  if (s.empty()) fail("{}: empty entry; expected {}", what, expected);
  int64_t mult = 1;
  char last = char(std::toupper(static_cast<unsigned char>(s.back())));
  if (last == 'K' || last == 'M') {
    mult = last == 'K' ? 1024 : 1048576;
    s.pop_back();
  }
  if (s.empty() || s.size() > 12) fail("{}: '{}' is not a context length; expected {}", what, entry, expected);
  int64_t v = 0;
  for (char ch : s) {
    if (!std::isdigit(static_cast<unsigned char>(ch)))
      fail("{}: '{}' is not a context length; expected {}", what, entry, expected);
    v = v * 10 + (ch - '0');
  }
  if (v <= 0 || v > kMaxContext / mult) fail("{}: '{}' is not a context length; expected {}", what, entry, expected);
  return v * mult;
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::vector<int64_t> parse_contexts(const std::string& list, const std::string& what) {
  std::vector<int64_t> out;
  for (const std::string& entry : split_list(list)) out.push_back(parse_context(entry, what));
  return out;
}

std::string context_label(int64_t tokens) {
  if (tokens >= 1024 && tokens % 1024 == 0) return std::to_string(tokens / 1024) + "K";
  return std::to_string(tokens);
}

std::vector<int64_t> default_contexts() {
  std::vector<int64_t> v;
  for (int64_t t = 4096; t <= 2097152; t *= 2) v.push_back(t);
  return v;
}

}  // namespace salasim::reports
