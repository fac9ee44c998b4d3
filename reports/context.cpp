// Parsing and printing of context lengths.
#include "reports/context.hpp"

#include <cctype>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"

namespace salasim::reports {

int64_t parse_context(const std::string& entry, const std::string& what) {
  const std::string expected =
      fmt::format("a positive token count such as 4096, 64K (x1024) or 1M (x1048576), at most {}M", kMaxContext >> 20);
  auto bad = [&] { fail("{}: '{}' is not a context length; expected {}", what, excerpt(entry), expected); };
  // Spaces around an entry are allowed ("64K, 1M"); inside one, a sign, a fraction, an exponent or any other
  // character is not: only decimal digits and one K or M at the end.
  const size_t b = entry.find_first_not_of(" \t");
  if (b == std::string::npos) fail("{}: empty entry; expected {}", what, expected);
  std::string s = entry.substr(b, entry.find_last_not_of(" \t") - b + 1);
  int64_t mult = 1;
  const char last = char(std::toupper(static_cast<unsigned char>(s.back())));
  if (last == 'K' || last == 'M') {
    mult = last == 'K' ? 1024 : 1048576;
    s.pop_back();
  }
  if (s.empty() || s.size() > 12) bad();  // 12 digits: past kMaxContext already, and no overflow below
  int64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') bad();
    v = v * 10 + (ch - '0');
  }
  if (v <= 0 || v > kMaxContext / mult) bad();
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
