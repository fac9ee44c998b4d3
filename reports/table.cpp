// Table renderings and number formats.
#include "reports/table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace salasim::reports {

std::string to_text(const Table& t) {
  std::vector<size_t> w(t.header.size(), 0);
  for (size_t i = 0; i < t.header.size(); ++i) w[i] = t.header[i].size();
  for (const auto& r : t.rows)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) {
      // Text columns (the first and the command) left-aligned, numbers right-aligned.
      const bool left = i == 0 || i + 1 == cells.size();
      s += left ? fmt::format("{:<{}}", cells[i], w[i]) : fmt::format("{:>{}}", cells[i], w[i]);
      if (i + 1 < cells.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  std::string out = line(t.header);
  for (const auto& r : t.rows) out += line(r);
  return out;
}

std::string to_markdown(const Table& t) {
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const std::string& c : cells) s += " " + c + " |";
    return s + "\n";
  };
  std::string out = line(t.header) + "|";
  for (size_t i = 0; i < t.header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : t.rows) out += line(r);
  return out;
}

std::string to_csv(const Table& t) {
  auto cell = [](std::string s) {
    // Markdown code spans are for the Markdown rendering only.
    if (s.size() >= 2 && s.front() == '`' && s.back() == '`') s = s.substr(1, s.size() - 2);
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) {
      if (ch == '"') q += '"';  // doubled quote
      q += ch;
    }
    q += '"';
    return q;
  };
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i) s += ',';
      s += cell(cells[i]);
    }
    s += '\n';
    return s;
  };
  std::string out = line(t.header);
  for (const auto& r : t.rows) out += line(r);
  return out;
}

std::string gib(int64_t bytes) { return fmt::format("{:.2f}", double(bytes) / double(int64_t(1) << 30)); }

std::string seconds(double s) {
  if (s >= 10) return fmt::format("{:.1f}", s);
  if (s >= 1) return fmt::format("{:.2f}", s);
  return fmt::format("{:.3g}", s);
}

std::string millis(double ms) { return fmt::format("{:.2f}", ms); }
std::string ratio(double r) { return std::isfinite(r) ? fmt::format("{:.2f}", r) : "-"; }
std::string code(const std::string& s) { return "`" + s + "`"; }

std::string commas(int64_t v) {
  const std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return v < 0 ? "-" + out : out;
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    out += (line.empty() ? "" : prefix) + line + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace salasim::reports
