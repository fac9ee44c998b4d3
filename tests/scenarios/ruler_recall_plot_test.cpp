// recall.svg of `salasim ruler report`: a panel per sparse layer (none hides under another) and the lengths where a
// layer ran dense marked, not dropped; rendered by gnuplot as the report renders it.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/plots.hpp"
#include "scenarios/ruler/recall_plot.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::ruler;

namespace {

using test::read_file;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The released model's 8 sparse layers at 6 lengths, the first two dense, every layer with the same recall (the
// case one-line-per-layer drew as a single line).
RecallGrid grid() {
  RecallGrid g;
  g.layers = {0, 9, 16, 17, 22, 29, 30, 31};
  g.length_labels = {"4K", "8K", "16K", "64K", "256K", "1024K"};
  for (int l : g.layers)
    for (size_t i = 0; i < g.length_labels.size(); ++i)
      g.cells[{l, i}] = i < 2 ? RecallCell{NAN, NAN, true} : RecallCell{0.75, 0.5, false};
  return g;
}

}  // namespace

TEST_CASE("ruler recall plot: one panel per layer, dense lengths marked, every point in the data", "[ruler]") {
  const RecallGrid g = grid();
  const std::string data = recall_plot_data(g), cmd = recall_plot_commands(g);
  // A block per layer, a row per length; dense rows carry the flag instead of being left out.
  CHECK(count(data, "# layer ") == g.layers.size());
  CHECK(count(data, " NaN NaN 1\n") == 2 * g.layers.size());
  CHECK(count(data, " 0.7500 0.5000 0\n") == 4 * g.layers.size());
  CHECK(cmd.find("set multiplot layout 2,4") != std::string::npos);
  for (size_t i = 0; i < g.layers.size(); ++i) {
    CHECK(cmd.find(fmt::format("set title 'layer {}'", g.layers[i])) != std::string::npos);
    CHECK(cmd.find(fmt::format("plot 'recall.dat' index {} ", i)) != std::string::npos);
  }
  CHECK(cmd.find("ran dense") != std::string::npos);  // the key names the dense mark
  CHECK(cmd.find("'1024K' 5") != std::string::npos);  // every length on the axis

  // gnuplot draws it (SVG, and PNG where it has a PNG terminal: the commands again, as `replot` would repeat only
  // the last panel of a multiplot).
  const std::string dir = test::scratch_dir("ruler_recall_plot");
  const reports::PlotOutcome r = reports::render_script(dir, "recall", data, cmd);
  REQUIRE(r.rendered);
  const std::string svg = read_file(std::filesystem::path(dir) / "recall.svg");
  for (int l : g.layers) CHECK(svg.find(fmt::format(">layer {}<", l)) != std::string::npos);
  CHECK(count(read_file(std::filesystem::path(dir) / "recall.gp"), "set multiplot layout 2,4") ==
        (std::filesystem::exists(std::filesystem::path(dir) / "recall.png") ? 2u : 1u));
}
