// Plots through gnuplot (Debian's gnuplot-nox): each plot is written as a data file and a script in the
// bundle, then rendered to SVG (and PNG when gnuplot has a PNG terminal). Without gnuplot the scripts are
// still written and the caller says the plots were skipped.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace salasim::reports {

struct PlotSeries {
  std::string title;
  std::vector<std::pair<double, double>> points;  // (x, y); y NaN leaves a gap
  bool line = true;                               // false: markers only (measured or published points)
  std::string color;                              // "#rrggbb"; empty: gnuplot's cycle
  int point_type = 7;                             // gnuplot pt: 7 filled circle, 6 open circle, 8 triangle, 13 diamond
  // A measurement: drawn after every other series (and the hline) as large filled squares ringed in black, so a
  // measured point stays visible where it sits on a prediction of the same colour.
  bool measured = false;
};

struct Plot {
  std::string stem;  // file name without extension: "vram_h200"
  std::string title, xlabel, ylabel;
  std::vector<PlotSeries> series;
  std::vector<std::pair<double, std::string>> xtics;  // log-axis tick labels ("64K")
  bool log_y = true;                                  // false: linear y axis (fractions, scores)
  std::optional<std::pair<double, double>> xrange;    // fixed x range (else gnuplot's autoscale over the data)
  std::optional<std::pair<double, double>> yrange;    // fixed y range
  std::optional<double> hline;                        // e.g. the card's memory
  std::string hline_title;
  std::string hline_color = "red";  // red: a limit (a card's memory); grey: a reference level
};

struct PlotOutcome {
  bool rendered = false;           // gnuplot ran for every plot
  std::vector<std::string> files;  // written: data, scripts and images (relative to the bundle)
  std::string note;                // what happened, for the report
};

bool gnuplot_available();
// Writes <dir>/<stem>.dat and <dir>/<stem>.gp for each plot and runs gnuplot there.
PlotOutcome render_plots(const std::string& dir, const std::vector<Plot>& plots);
// A plot whose gnuplot commands the caller writes (a heatmap, say): <dir>/<stem>.dat holds `data`; `commands`
// (everything but the terminal and output, ending with the plot command) go to <dir>/<stem>.gp, rendered as the
// others (SVG, and PNG where gnuplot has it).
PlotOutcome render_script(const std::string& dir, const std::string& stem, const std::string& data,
                          const std::string& commands);

}  // namespace salasim::reports
