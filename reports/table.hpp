// A plain table of strings and its three renderings: aligned text (terminal), Markdown and CSV; plus the
// number formats every report uses, so the CLI and the bundle print the same digits.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace salasim::reports {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

std::string to_text(const Table& t);
std::string to_markdown(const Table& t);
std::string to_csv(const Table& t);  // RFC 4180 quoting

std::string gib(int64_t bytes);      // "17.65" (GiB = 2^30 B)
std::string seconds(double s);       // 3 significant digits below 10 s, then 1 decimal
std::string millis(double ms);       // "4.31"
std::string ratio(double r);         // "0.57"
std::string code(const std::string& s);  // `s` for Markdown cells
std::string commas(int64_t v);           // 9,477,203,968
std::string indent(const std::string& text, const std::string& prefix);  // prefix on every non-empty line

}  // namespace salasim::reports
