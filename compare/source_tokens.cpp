// The token sequence of a C++ / CUDA source (see source_tokens.hpp).
#include "compare/source_tokens.hpp"

#include <array>
#include <string_view>

namespace salasim {

namespace {

bool is_word(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// Encoding prefixes of string and character literals; an R at the end makes a raw string.
bool literal_prefix(std::string_view id) {
  return id == "u8" || id == "u" || id == "U" || id == "L" || id == "R" || id == "u8R" || id == "uR" || id == "UR" ||
         id == "LR";
}

constexpr std::array<std::string_view, 5> kPunct3 = {"<=>", "<<=", ">>=", "->*", "..."};
constexpr std::array<std::string_view, 22> kPunct2 = {"::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
                                                      "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*"};

// Phase 2: a backslash at the end of a line joins it to the next.
std::string splice_lines(const std::string& in) {
  std::string s;
  s.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '\\') {
      if (i + 1 < in.size() && in[i + 1] == '\n') {
        ++i;
        continue;
      }
      if (i + 2 < in.size() && in[i + 1] == '\r' && in[i + 2] == '\n') {
        i += 2;
        continue;
      }
    }
    s += in[i];
  }
  return s;
}

// The end of the literal whose opening quote is at q (exclusive), its suffix (a user-defined literal) included.
size_t literal_end(const std::string& s, size_t q, bool raw) {
  const size_t n = s.size();
  size_t k;
  if (raw) {  // R"delim( ... )delim"
    const size_t open = s.find('(', q + 1);
    if (open == std::string::npos) return n;
    std::string close(1, ')');
    close.append(s, q + 1, open - q - 1);
    close += '"';
    const size_t e = s.find(close, open + 1);
    k = e == std::string::npos ? n : e + close.size();
  } else {
    const char quote = s[q];
    k = q + 1;
    while (k < n && s[k] != quote && s[k] != '\n') k += s[k] == '\\' ? 2 : 1;
    k = std::min(n, k + (k < n && s[k] == quote ? 1 : 0));
  }
  while (k < n && is_word(s[k])) ++k;
  return k;
}

}  // namespace

std::string source_tokens(const std::string& text) {
  const std::string s = splice_lines(text);
  const size_t n = s.size();
  std::string out;
  out.reserve(n);
  bool line_start = true;    // nothing but whitespace and comments since the last newline
  bool in_directive = false;
  auto emit = [&](size_t from, size_t to) {
    if (!out.empty() && out.back() != '\n') out += ' ';
    out.append(s, from, to - from);
  };
  size_t i = 0;
  while (i < n) {
    const char c = s[i];
    if (c == '\n') {
      if (in_directive) out += '\n';
      in_directive = false;
      line_start = true;
      ++i;
      continue;
    }
    if (is_space(c)) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {  // a comment is one space, so a directive goes on after it
      const size_t e = s.find("*/", i + 2);
      i = e == std::string::npos ? n : e + 2;
      continue;
    }
    if (c == '#' && line_start) {
      if (!out.empty() && out.back() != '\n') out += '\n';
      out += '#';
      in_directive = true;
      line_start = false;
      ++i;
      continue;
    }
    line_start = false;
    size_t j = i + 1;
    if (is_word(c) && !is_digit(c)) {  // an identifier, or the prefix of a literal
      while (j < n && is_word(s[j])) ++j;
      const std::string_view id(s.data() + i, j - i);
      if (j < n && (s[j] == '"' || s[j] == '\'') && literal_prefix(id))
        j = literal_end(s, j, s[j] == '"' && id.back() == 'R');
    } else if (is_digit(c) || (c == '.' && i + 1 < n && is_digit(s[i + 1]))) {  // a pp-number
      while (j < n) {
        const char d = s[j];
        if ((d == 'e' || d == 'E' || d == 'p' || d == 'P') && j + 1 < n && (s[j + 1] == '+' || s[j + 1] == '-')) j += 2;
        else if (is_word(d) || d == '.') ++j;
        else if (d == '\'' && j + 1 < n && is_word(s[j + 1])) j += 2;  // a digit separator
        else break;
      }
    } else if (c == '"' || c == '\'') {
      j = literal_end(s, i, false);
    } else {
      const std::string_view rest(s.data() + i, n - i);
      for (std::string_view p : kPunct3)
        if (rest.substr(0, 3) == p) j = i + 3;
      if (j == i + 1)
        for (std::string_view p : kPunct2)
          if (rest.substr(0, 2) == p) j = i + 2;
    }
    emit(i, j);
    i = j;
  }
  if (in_directive) out += '\n';
  return out;
}

}  // namespace salasim
