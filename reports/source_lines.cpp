// Reading the source tree for locations: plain line scans, no parser; each rule is narrow enough that a test
// can check every location resolves (tests/reports/explain_test.cpp), and each starts from a name, never from a
// statement's text.
#include "reports/source_lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "model/data_path.hpp"

namespace salasim::reports {

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

bool ends_statement(const std::string& line) {
  const size_t comment = line.find("//");  // a trailing comment is not part of the statement
  const std::string t = trim(comment == std::string::npos ? line : line.substr(0, comment));
  return t.empty() || t.back() == ';' || t.back() == '{' || t.back() == '}';
}

// The line and up to three continuation lines until the statement ends.
std::string statement_at(const std::vector<std::string>& lines, size_t i) {
  std::string text = trim(lines[i]);
  for (size_t j = i; !ends_statement(lines[j]) && j + 1 < lines.size() && j < i + 3; ++j) {
    text.push_back('\n');  // (not "\n" + trim(...): GCC 12 warns falsely on operator+(const char*, string&&))
    text += trim(lines[j + 1]);
  }
  return text;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `name(` as a whole word (not `check_name(`, not `name_x(`).
bool calls(const std::string& line, const std::string& name) {
  for (size_t at = line.find(name + "("); at != std::string::npos; at = line.find(name + "(", at + 1))
    if (at == 0 || !word_char(line[at - 1])) return true;
  return false;
}

// A statement that is not a declaration: control flow, a return, a throw.
bool starts_statement(const std::string& t) {
  for (const char* k : {"return", "if", "else", "for", "while", "switch", "case", "do", "throw", "delete", "new",
                        "using", "namespace", "template", "co_return", "goto"}) {
    const size_t n = std::char_traits<char>::length(k);
    if (t.compare(0, n, k) == 0 && (t.size() == n || !word_char(t[n]))) return true;
  }
  return false;
}

// The line holds tap kind `kind` as a string literal: the whole kind ("final/norm") or the tail after one or more of
// its first parts, as a mixer records its taps under its prefix ("proj/q" of "lightning/proj/q"), never a last part
// alone ("out").
bool records(const std::string& line, const std::string& kind) {
  for (size_t at = 0; at != std::string::npos; at = kind.find('/', at + 1)) {
    const std::string tail = at == 0 ? kind : kind.substr(at + 1);
    if (tail.find('/') == std::string::npos) break;
    if (line.find('"' + tail + '"') != std::string::npos) return true;
  }
  return false;
}

// The line without string literals and // comments, for brace counting.
std::string code_only(const std::string& line) {
  std::string out;
  bool in_str = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_str) {
      if (c == '\\') ++i;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') break;
    else if (c == '\'' && i + 2 < line.size()) i += line[i + 1] == '\\' ? 3 : 2;  // '{' or '\n'
    else out.push_back(c);
  }
  return out;
}

// The string literals of a TEST_CASE line: its name and its tags.
std::vector<std::string> literals(const std::string& line) {
  std::vector<std::string> out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '"') continue;
    std::string s;
    for (++i; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      s.push_back(line[i]);
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::string SourceLine::where() const { return found() ? fmt::format("{}:{}", file, line) : file + ":?"; }

const std::vector<std::string>& source_file(const std::string& rel) {
  static std::map<std::string, std::vector<std::string>> cache;
  auto it = cache.find(rel);
  if (it != cache.end()) return it->second;
  std::vector<std::string> lines;
  std::ifstream in(data_path(rel));
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return cache.emplace(rel, std::move(lines)).first->second;
}

std::string source_purpose(const std::string& rel) {
  std::string out;
  for (const std::string& l : source_file(rel)) {
    const std::string t = trim(l);
    if (t.rfind("//", 0) != 0) break;
    if (!out.empty()) out.push_back(' ');
    out += trim(t.substr(2));
  }
  return out;
}

std::vector<SourceLine> find_definitions(const std::string& rel, const std::string& name) {
  std::vector<SourceLine> out;
  const auto& lines = source_file(rel);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string t = trim(lines[i]);
    if (t.empty() || !(std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_') || starts_statement(t)) continue;
    const size_t at = t.find(name + "(");
    if (at == std::string::npos || !calls(t, name)) continue;
    // a type or qualifier before the name (not a call `name(...)`, `x.name(`, `p->name(`); no '=' before it
    if (at == 0 || t.find('=') < at || !(t[at - 1] == ' ' || t[at - 1] == '*' || t[at - 1] == '&' || t[at - 1] == ':'))
      continue;
    // A declaration ends its statement with ';' before any '{'.
    const std::string stmt = statement_at(lines, i);
    const size_t brace = stmt.find('{'), semi = stmt.find(';');
    if (brace == std::string::npos || (semi != std::string::npos && semi < brace)) continue;
    out.push_back(SourceLine{rel, int(i + 1), name, t, ""});
  }
  return out;
}

SourceLine find_declaration(const std::string& rel, const std::string& name) {
  SourceLine s{rel, 0, name, "", ""};
  const auto& lines = source_file(rel);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.empty() || !(std::isalpha(static_cast<unsigned char>(l[0])) || l[0] == '_') || !calls(l, name)) continue;
    const std::string stmt = statement_at(lines, i);
    const size_t brace = stmt.find('{'), semi = stmt.find(';');
    if (semi == std::string::npos || (brace != std::string::npos && brace < semi)) continue;
    s.line = int(i + 1);
    s.text = trim(l);
    return s;
  }
  s.error = lines.empty() ? fmt::format("{}: no such file in the source tree", rel)
                          : fmt::format("{}: no declaration of {}() at column 0", rel, name);
  return s;
}

SourceLine find_step(const std::string& rel, const std::vector<std::string>& taps,
                     const std::vector<std::string>& functions) {
  const auto& lines = source_file(rel);
  SourceLine s{rel, 0, "", "", ""};
  if (lines.empty()) {
    s.error = fmt::format("{}: no such file in the source tree", rel);
    return s;
  }
  for (const std::string& kind : taps)
    for (size_t i = 0; i < lines.size(); ++i) {
      if (!records(lines[i], kind)) continue;
      // upwards to the start of the function: a line at column 0 (its signature, or the brace that ended the last)
      for (size_t j = i + 1; j-- > 0;) {
        const std::string code = code_only(lines[j]);
        for (const std::string& f : functions)
          if (calls(code, f)) {
            size_t first = j;  // the call may sit on a continuation line: the statement starts above
            while (first > 0 && !ends_statement(lines[first - 1]) &&
                   std::isspace(static_cast<unsigned char>(lines[first - 1][0])))
              --first;
            s.line = int(first + 1);
            s.name = f;
            s.text = statement_at(lines, first);
            return s;
          }
        if (j < i && !lines[j].empty() && !std::isspace(static_cast<unsigned char>(lines[j][0]))) break;
      }
    }
  std::string names;
  for (const std::string& f : functions) names += (names.empty() ? "" : ", ") + f + "()";
  std::string kinds;
  for (const std::string& k : taps) kinds += (kinds.empty() ? "" : ", ") + k;
  s.error = fmt::format("{}: no line records {} after a call of {} in the same function", rel,
                        kinds.empty() ? "a tap" : kinds, names.empty() ? "a function" : names);
  return s;
}

std::vector<SourceLine> find_kernels(const std::string& rel) {
  static const std::regex call(R"(([A-Za-z_]\w*)\s*\()");
  std::vector<SourceLine> out;
  const auto& lines = source_file(rel);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("__global__", 0) != 0) continue;
    // the kernel's name: the first call-like identifier on the __global__ line or, where clang-format broke the
    // declaration after __launch_bounds__(...), on the line after it
    bool found = false;
    for (size_t k = i; k < std::min(lines.size(), i + 2) && !found; ++k)
      for (std::sregex_iterator m(lines[k].begin(), lines[k].end(), call), end; m != end; ++m) {
        const std::string id = (*m)[1];
        if (id == "__launch_bounds__") continue;
        out.push_back(SourceLine{rel, int(k + 1), id, trim(lines[k]), ""});
        found = true;
        break;
      }
  }
  return out;
}

std::vector<TestRef> find_tests(const std::string& tag, const std::vector<std::string>& functions) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  const fs::path root = fs::path(data_path("tests"));
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".cpp")
      files.push_back("tests/" + it->path().lexically_relative(root).generic_string());
  std::sort(files.begin(), files.end());
  std::vector<TestRef> out;
  for (const std::string& rel : files) {
    const auto& lines = source_file(rel);
    TestRef cur;
    bool in_test = false, matched = false;
    int depth = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      if (l.rfind("TEST_CASE(", 0) == 0) {
        const std::vector<std::string> lit = literals(l);
        cur = TestRef{rel, int(i + 1), lit.empty() ? "" : lit[0], false};
        cur.tagged = lit.size() > 1 && lit[1].find("[" + tag + "]") != std::string::npos;
        in_test = true;
        matched = cur.tagged;
        depth = 0;
      }
      if (!in_test) continue;
      const std::string code = code_only(l);
      if (!matched)
        for (const std::string& f : functions) matched = matched || calls(code, f);
      for (char c : code) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
      if (depth <= 0 && code.find('}') != std::string::npos) {  // the body closed
        if (matched) out.push_back(cur);
        in_test = false;
      }
    }
  }
  return out;
}

std::vector<OpsSection> reference_ops_sections() {
  static const std::regex header(R"(^// ---- (\w+)\.cpp: (.*) ----$)");
  static const std::regex decl(R"(^[A-Za-z_][\w:<>,\s&\*]*?\b([a-z_]\w*)\()");
  std::vector<OpsSection> out;
  const auto& lines = source_file("reference/ops.hpp");
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_match(lines[i], m, header)) {
      out.push_back(OpsSection{m[1], m[2], int(i + 1), {}});
    } else if (!out.empty() && std::regex_search(lines[i], m, decl)) {
      const std::string f = m[1];
      auto& fs = out.back().functions;
      if (std::find(fs.begin(), fs.end(), f) == fs.end()) fs.push_back(f);
    }
  }
  return out;
}

}  // namespace salasim::reports
