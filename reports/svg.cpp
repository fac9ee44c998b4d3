// SVG helpers.
#include "reports/svg.hpp"

#include <fmt/format.h>

#include <cmath>

namespace salasim::reports {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string svg_open(double width, double height, const std::string& title) {
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {0:g} {1:g}\" width=\"{0:g}\" "
                     "height=\"{1:g}\" role=\"img\" aria-label=\"{2}\"><title>{2}</title>\n",
                     width, height, xml_escape(title));
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> out;
  for (double p = std::pow(10.0, std::floor(std::log10(lo))); p <= hi; p *= 10)
    for (double m : {1.0, 2.0, 5.0})
      if (m * p >= lo * (1 - 1e-9) && m * p <= hi * (1 + 1e-9)) out.push_back(m * p);
  return out;
}

std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string cur;
  size_t i = 0;
  while (i < text.size()) {
    // The next word, with the space or ", " that follows it.
    size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    if (j < text.size()) ++j;
    const std::string word = text.substr(i, j - i);
    if (!cur.empty() && cur.size() + word.size() > width + 1) {
      while (!cur.empty() && cur.back() == ' ') cur.pop_back();
      lines.push_back(cur);
      cur.clear();
    }
    cur += word;
    i = j;
  }
  while (!cur.empty() && cur.back() == ' ') cur.pop_back();
  if (!cur.empty() || lines.empty()) lines.push_back(cur);
  return lines;
}

}  // namespace salasim::reports
