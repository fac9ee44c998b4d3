// gnuplot scripts and data files for the report's log-log plots.
#include "reports/plots.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "model/error.hpp"
#include "model/output_file.hpp"

namespace salasim::reports {

namespace {

std::string run_capture(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  *status = pclose(p);
  return out;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

std::string gp_string(const std::string& s) {  // a gnuplot double-quoted string
  std::string q = "\"";
  for (char ch : s) q += (ch == '"' || ch == '\\') ? std::string("\\") + ch : std::string(1, ch);
  return q + "\"";
}

// The PNG terminal this gnuplot has: pngcairo (anti-aliased) or png (libgd), or none.
std::string png_terminal() {
  int status = 0;
  const std::string terms = run_capture("gnuplot -e 'set terminal' 2>&1", &status);
  if (terms.find(" pngcairo ") != std::string::npos) return "pngcairo";
  if (terms.find(" png ") != std::string::npos) return "png";
  return "";
}

void write_file(const std::filesystem::path& p, const std::string& text) { write_file_atomic(p.string(), text, true); }

// gnuplot reports a failed write of its output on stderr and may still exit 0: every file it should have written
// must be there and not empty.
void check_rendered(const std::string& dir, const std::string& file, const std::string& log) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::path(dir) / file;
  if (!std::filesystem::is_regular_file(p, ec) || std::filesystem::file_size(p, ec) == 0 || ec)
    fail("{}: gnuplot did not write it (a full disk?){}{}", p.string(), log.empty() ? "" : ": ", log.substr(0, 400));
}

std::string script(const Plot& p, const std::string& png) {
  std::string s =
      fmt::format("# {}: rendered by `salasim report`; rerun with `gnuplot {}.gp` in this folder.\n", p.title, p.stem);
  s += fmt::format(
      "set datafile missing 'NaN'\nset logscale {}\nset grid xtics ytics mytics\nset key bottom right box opaque\n",
      p.log_y ? "xy" : "x");
  if (p.xrange) s += fmt::format("set xrange [{}:{}]\n", p.xrange->first, p.xrange->second);
  if (p.yrange) s += fmt::format("set yrange [{}:{}]\n", p.yrange->first, p.yrange->second);
  s += fmt::format("set title {}\nset xlabel {}\nset ylabel {}\n", gp_string(p.title), gp_string(p.xlabel),
                   gp_string(p.ylabel));
  if (!p.xtics.empty()) {
    s += "set xtics (";
    for (size_t i = 0; i < p.xtics.size(); ++i)
      s += fmt::format("{}{} {}", i ? ", " : "", gp_string(p.xtics[i].second), p.xtics[i].first);
    s += ")\n";
  }
  std::string plot = "plot ";
  const char* sep = "";
  for (size_t i = 0; i < p.series.size(); ++i) {  // predictions and published points first
    const PlotSeries& ser = p.series[i];
    if (ser.measured) continue;
    const std::string color = ser.color.empty() ? "" : fmt::format(" lc rgb '{}'", ser.color);
    plot += fmt::format("{}'{}.dat' index {} using 1:2 with {} lw 2{} pt {} ps {} title {}", sep, p.stem, i,
                        ser.line ? "linespoints" : "points", color, ser.point_type, ser.line ? "0.7" : "1.6",
                        gp_string(ser.title));
    sep = ", \\\n     ";
  }
  if (p.hline)
    plot += fmt::format("{}{} with lines dt 2 lw 2 lc rgb '{}' title {}", sep, *p.hline, p.hline_color,
                        gp_string(p.hline_title));
  if (p.hline) sep = ", \\\n     ";
  for (size_t i = 0; i < p.series.size(); ++i) {  // then the measurements on top: a black ring under the colour
    const PlotSeries& ser = p.series[i];
    if (!ser.measured) continue;
    const std::string color = ser.color.empty() ? "'black'" : fmt::format("'{}'", ser.color);
    plot += fmt::format(
        "{}'{}.dat' index {} using 1:2 with points pt 5 ps 2.5 lc rgb 'black' notitle, \\\n     "
        "'{}.dat' index {} using 1:2 with points pt 5 ps 1.8 lc rgb {} title {}",
        sep, p.stem, i, p.stem, i, color, gp_string(ser.title));
    sep = ", \\\n     ";
  }
  plot += "\n";
  s += fmt::format(
      "set terminal svg size 900,560 dynamic font 'Helvetica,13' background rgb 'white'\n"
      "set output '{}.svg'\n{}",
      p.stem, plot);
  if (!png.empty()) s += fmt::format("set terminal {} size 1000,620\nset output '{}.png'\nreplot\n", png, p.stem);
  return s;
}

std::string data(const Plot& p) {
  std::string d;
  for (const PlotSeries& ser : p.series) {
    d += fmt::format("# {}\n", ser.title);
    bool any = false;
    for (const auto& [x, y] : ser.points) {
      d += std::isfinite(y) ? fmt::format("{} {}\n", x, y) : fmt::format("{} NaN\n", x);
      any = any || std::isfinite(y);
    }
    if (!any) d += "NaN NaN\n";  // gnuplot needs a row in every index block
    d += "\n\n";
  }
  return d;
}

}  // namespace

bool gnuplot_available() {
  int status = 0;
  run_capture("gnuplot --version 2>&1", &status);
  return status == 0;
}

PlotOutcome render_plots(const std::string& dir, const std::vector<Plot>& plots) {
  PlotOutcome out;
  const bool have = gnuplot_available();
  const std::string png = have ? png_terminal() : "";
  for (const Plot& p : plots) {
    write_file(std::filesystem::path(dir) / (p.stem + ".dat"), data(p));
    write_file(std::filesystem::path(dir) / (p.stem + ".gp"), script(p, png));
    out.files.push_back(p.stem + ".dat");
    out.files.push_back(p.stem + ".gp");
  }
  if (!have) {
    out.note =
        "plots skipped: gnuplot is not installed (apt-get install gnuplot-nox); the .gp scripts and .dat "
        "files are in the bundle";
    return out;
  }
  out.rendered = true;
  for (const Plot& p : plots) {
    int status = 0;
    const std::string log =
        run_capture(fmt::format("cd {} && gnuplot {}.gp 2>&1", shell_quote(dir), shell_quote(p.stem)), &status);
    if (status != 0) fail("gnuplot failed on {}/{}.gp: {}", dir, p.stem, log.substr(0, 400));
    out.files.push_back(p.stem + ".svg");
    check_rendered(dir, p.stem + ".svg", log);
    if (!png.empty()) out.files.push_back(p.stem + ".png"), check_rendered(dir, p.stem + ".png", log);
  }
  out.note = png.empty() ? "plots rendered as SVG (this gnuplot has no PNG terminal)"
                         : fmt::format("plots rendered as SVG and PNG (gnuplot terminal {})", png);
  return out;
}

PlotOutcome render_script(const std::string& dir, const std::string& stem, const std::string& data,
                          const std::string& commands) {
  PlotOutcome out;
  const bool have = gnuplot_available();
  const std::string png = have ? png_terminal() : "";
  std::string s = fmt::format(
      "# rendered by salasim; rerun with `gnuplot {}.gp` in this folder.\n"
      "set terminal svg size 900,560 dynamic font 'Helvetica,13' background rgb 'white'\n"
      "set output '{}.svg'\n{}",
      stem, stem, commands);
  // The commands again rather than `replot`, which repeats only the last plot of a multiplot.
  if (!png.empty()) s += fmt::format("set terminal {} size 1000,620\nset output '{}.png'\n{}", png, stem, commands);
  write_file(std::filesystem::path(dir) / (stem + ".dat"), data);
  write_file(std::filesystem::path(dir) / (stem + ".gp"), s);
  out.files = {stem + ".dat", stem + ".gp"};
  if (!have) {
    out.note = "plots skipped: gnuplot is not installed (apt-get install gnuplot-nox)";
    return out;
  }
  int status = 0;
  const std::string log =
      run_capture(fmt::format("cd {} && gnuplot {}.gp 2>&1", shell_quote(dir), shell_quote(stem)), &status);
  if (status != 0) fail("gnuplot failed on {}/{}.gp: {}", dir, stem, log.substr(0, 400));
  out.rendered = true;
  out.files.push_back(stem + ".svg");
  check_rendered(dir, stem + ".svg", log);
  if (!png.empty()) out.files.push_back(stem + ".png"), check_rendered(dir, stem + ".png", log);
  return out;
}

}  // namespace salasim::reports
