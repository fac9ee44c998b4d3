// The selection-recall plot of `salasim ruler report` (recall.svg): one small panel per sparse layer, so no layer
// hides under another, with the last prompt token's recall, the decode mean, and the lengths where the layer ran
// dense (every block visible) marked rather than dropped. This file writes the gnuplot data and commands only;
// the report renders them as it renders its other plots.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace salasim::ruler {

struct RecallCell {
  double prompt = 0, decode = 0;  // means over samples; NaN where none was recorded
  bool dense = false;             // every sample at this length ran the layer dense
};

struct RecallGrid {
  std::vector<int> layers;                             // the panels, in order
  std::vector<std::string> length_labels;              // the x axis, one entry per length ("64K")
  std::map<std::pair<int, size_t>, RecallCell> cells;  // (layer, length index)
};

// recall.dat: one block per layer, a row per length: "x prompt decode dense" (NaN for a missing mean).
std::string recall_plot_data(const RecallGrid& g);
// The gnuplot commands (without terminal and output) that draw the panels from recall.dat.
std::string recall_plot_commands(const RecallGrid& g);

}  // namespace salasim::ruler
