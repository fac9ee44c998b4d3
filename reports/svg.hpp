// Small helpers for the hand-written SVG of the architecture page: escaping, the root element, log-axis ticks.
#pragma once
#include <string>
#include <vector>

namespace salasim::reports {

std::string xml_escape(const std::string& s);  // & < > " '
// <svg> with a viewBox of width x height, a <title> and role="img"; the caller closes it with "</svg>".
std::string svg_open(double width, double height, const std::string& title);
// 1, 2, 5 x 10^k inside [lo, hi] (both > 0).
std::vector<double> log_ticks(double lo, double hi);
// Text broken at spaces or after ", " into lines of at most `width` characters (a longer word stays whole).
std::vector<std::string> wrap(const std::string& text, size_t width);

}  // namespace salasim::reports
