// recall.svg as small multiples: a panel per layer on a shared length axis and recall scale.
#include "scenarios/ruler/recall_plot.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace salasim::ruler {

namespace {

std::string num(double v) { return std::isfinite(v) ? fmt::format("{:.4f}", v) : "NaN"; }

// A gnuplot string literal in single quotes (a quote is doubled).
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

}  // namespace

std::string recall_plot_data(const RecallGrid& g) {
  std::string d;
  for (int l : g.layers) {
    d += fmt::format("# layer {}: x prompt decode dense\n", l);
    for (size_t i = 0; i < g.length_labels.size(); ++i) {
      const auto it = g.cells.find({l, i});
      const RecallCell c = it == g.cells.end() ? RecallCell{NAN, NAN, false} : it->second;
      d += fmt::format("{} {} {} {}\n", i, num(c.prompt), num(c.decode), c.dense ? 1 : 0);
    }
    d += "\n\n";
  }
  return d;
}

std::string recall_plot_commands(const RecallGrid& g) {
  const size_t n = g.layers.size(), cols = std::min<size_t>(4, std::max<size_t>(1, n)), rows = (n + cols - 1) / cols;
  std::string tics;
  for (size_t i = 0; i < g.length_labels.size(); ++i)
    tics += fmt::format("{}{} {}", i ? ", " : "", quoted(g.length_labels[i]), i);
  std::string s = fmt::format(
      "set encoding utf8\nset datafile missing 'NaN'\n"
      "set multiplot layout {},{} rowsfirst title 'Needle-block selection recall, one panel per sparse layer' "
      "font ',13' margins 0.06,0.98,{:.3f},0.84 spacing 0.05,{:.3f}\n",
      rows, cols, rows > 1 ? 0.09 : 0.16, rows > 1 ? 0.16 : 0.1);
  s += fmt::format(
      "set xrange [-0.5:{}]\nset yrange [0:1.08]\nset ytics 0,0.25,1 font ',9'\nset grid ytics\n"
      "set xtics ({}) rotate by 45 right font ',9'\nset style fill solid 0.25 noborder\nunset key\n",
      double(g.length_labels.size()) - 0.5, tics);
  // The key, once, above the panels in the series' colours: a key inside each small panel would cover its points.
  s += "set label 101 '\u25cf last prompt token' at screen 0.06,0.9 tc rgb '#1f78b4' font ',11'\n"
       "set label 102 '\u25b3 decode mean (dashed)' at screen 0.28,0.9 tc rgb '#d95f02' font ',11'\n"
       "set label 103 '\u25c6 on grey: ran dense there (every block visible)' at screen 0.53,0.9 tc rgb '#555555' "
       "font ',11'\n";
  for (size_t i = 0; i < n; ++i) {
    s += fmt::format("set title 'layer {}' font ',11' offset 0,-0.8\n", g.layers[i]);
    s += fmt::format(
        "plot 'recall.dat' index {0} using 1:($4 > 0 ? 1.08 : NaN):(0.9) with boxes lc rgb '#bdbdbd', \\\n"
        "     'recall.dat' index {0} using 1:($4 > 0 ? 1 : NaN) with points pt 13 ps 1.4 lc rgb '#555555', \\\n"
        "     'recall.dat' index {0} using 1:3 with linespoints dt 2 lw 1.5 pt 8 ps 1.2 lc rgb '#d95f02', \\\n"
        "     'recall.dat' index {0} using 1:2 with linespoints lw 2 pt 7 ps 1.1 lc rgb '#1f78b4'\n",
        i);
    if (i == 0) s += "unset label 101\nunset label 102\nunset label 103\n";
  }
  return s + "unset multiplot\n";
}

}  // namespace salasim::ruler
