// A strict well-formedness check for the HTML and SVG salasim writes: every element closed explicitly and in order
// (no reliance on HTML's implied end tags), void elements only as void elements, quoted attribute values, entities
// spelled out, raw <style>/<script> text closed. Returns "" when the text passes, else the first problem and its line.
#pragma once
#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace salasim::test {

inline std::string html_problems(const std::string& s, bool xml = false) {
  static const std::set<std::string> kVoid{"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                                           "source", "track", "wbr"};
  std::vector<std::string> open;
  int svg_depth = 0;  // inside <svg>, elements may close themselves with "/>"
  size_t i = 0;
  auto line = [&](size_t at) {
    int n = 1;
    for (size_t k = 0; k < at && k < s.size(); ++k) n += s[k] == '\n';
    return n;
  };
  auto problem = [&](size_t at, const std::string& what) { return "line " + std::to_string(line(at)) + ": " + what; };
  auto name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == '_'; };
  while (i < s.size()) {
    if (s[i] == '&') {
      size_t e = i + 1;
      if (e < s.size() && s[e] == '#') {
        ++e;
        const bool hex = e < s.size() && (s[e] == 'x' || s[e] == 'X');
        if (hex) ++e;
        const size_t d0 = e;
        while (e < s.size() && (hex ? std::isxdigit(static_cast<unsigned char>(s[e])) : std::isdigit(static_cast<unsigned char>(s[e])))) ++e;
        if (e == d0) return problem(i, "'&#' without digits");
      } else {
        const size_t n0 = e;
        while (e < s.size() && std::isalnum(static_cast<unsigned char>(s[e]))) ++e;
        if (e == n0) return problem(i, "a bare '&' (write &amp;)");
      }
      if (e >= s.size() || s[e] != ';') return problem(i, "an entity without its ';'");
      i = e + 1;
      continue;
    }
    if (s[i] != '<') {
      ++i;
      continue;
    }
    if (s.compare(i, 4, "<!--") == 0) {
      const size_t e = s.find("-->", i + 4);
      if (e == std::string::npos) return problem(i, "an unclosed comment");
      i = e + 3;
      continue;
    }
    if (s.compare(i, 2, "<!") == 0 || s.compare(i, 2, "<?") == 0) {  // doctype, xml declaration
      const size_t e = s.find('>', i);
      if (e == std::string::npos) return problem(i, "an unclosed declaration");
      i = e + 1;
      continue;
    }
    const bool closing = i + 1 < s.size() && s[i + 1] == '/';
    size_t k = i + (closing ? 2 : 1);
    const size_t n0 = k;
    while (k < s.size() && name_char(s[k])) ++k;
    std::string name = s.substr(n0, k - n0);
    if (name.empty()) return problem(i, "a '<' that starts no tag (write &lt;)");
    if (!xml)
      for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (closing) {
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      if (k >= s.size() || s[k] != '>') return problem(i, "a malformed end tag </" + name);
      if (open.empty()) return problem(i, "</" + name + "> closes nothing");
      if (open.back() != name) return problem(i, "</" + name + "> while <" + open.back() + "> is open");
      open.pop_back();
      if (name == "svg") --svg_depth;
      i = k + 1;
      continue;
    }
    // Attributes: name="value", name='value', or (HTML only) a bare name.
    bool self_close = false;
    while (true) {
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      if (k >= s.size()) return problem(i, "an unclosed tag <" + name);
      if (s[k] == '>') break;
      if (s[k] == '/' && k + 1 < s.size() && s[k + 1] == '>') {
        self_close = true;
        ++k;
        break;
      }
      const size_t a0 = k;
      while (k < s.size() && name_char(s[k])) ++k;
      if (k == a0) return problem(k, "a stray character '" + std::string(1, s[k]) + "' in <" + name + ">");
      const std::string attr = s.substr(a0, k - a0);
      if (k < s.size() && s[k] == '=') {
        ++k;
        if (k >= s.size() || (s[k] != '"' && s[k] != '\'')) return problem(k, "an unquoted value of " + attr);
        const char q = s[k];
        const size_t e = s.find(q, k + 1);
        if (e == std::string::npos) return problem(k, "an unclosed value of " + attr);
        if (s.find('<', k + 1) < e) return problem(k, "a '<' inside the value of " + attr);
        k = e + 1;
      } else if (xml) {
        return problem(k, "attribute " + attr + " without a value");
      }
    }
    const bool is_void = !xml && svg_depth == 0 && kVoid.count(name);
    if (self_close && !xml && svg_depth == 0 && name != "svg" && !is_void)
      return problem(i, "<" + name + "/> is not a void element (HTML ignores the '/'; it stays open)");
    i = k + 1;
    if (self_close || is_void) continue;
    open.push_back(name);
    if (name == "svg") ++svg_depth;
    if (!xml && (name == "style" || name == "script")) {  // raw text up to the end tag
      const size_t e = s.find("</" + name, i);
      if (e == std::string::npos) return problem(i, "an unclosed <" + name + ">");
      i = e;
    }
  }
  if (!open.empty()) return "end of text: <" + open.back() + "> is still open (" + std::to_string(open.size()) + " open)";
  return "";
}

}  // namespace salasim::test
