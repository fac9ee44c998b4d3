// The tables of the report bundle (reports/report.cpp), one function each; every row ends with the command
// that reproduces it, as a Markdown code span (to_csv drops the backticks).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/calibrate.hpp"
#include "reports/measured.hpp"
#include "reports/paper.hpp"
#include "reports/report.hpp"
#include "reports/sweep.hpp"

namespace salasim::reports {

// One hardware profile with its measured runs and the efficiency factors fitted from them.
struct Card {
  HwProfile hw;
  std::vector<MeasuredRun> runs;             // `salasim run` records: the calibration's input
  std::vector<MeasuredRun> comparator_runs;  // the dense comparators' records (<card>/<model>/), shown, never fitted
  FitResult fit;
};

std::string label(const Model& m, WeightFormat f);  // "minicpm-sala-9b bf16"

Table hardware_table(const std::vector<Card>& cards);
Table facts_table(const std::vector<Model>& models, const ReportOptions& o);
Table workspace_table(const Model& m, int64_t context, const ReportOptions& o);
Table vram_table(const Sweep& s);                                 // peak per model and format; OOM marked
Table latency_wide_table(const Sweep& s, const Efficiency& eff);  // SALA beside the comparator
Table paper_table(const Sweep& s, const Efficiency& eff, const PaperData& paper);
Table breakdown_table(const Sweep& s);  // floors per op class (efficiency 1)
Table efficiency_table(const std::vector<Card>& cards);

}  // namespace salasim::reports
