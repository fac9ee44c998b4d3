// `salasim ruler report`: results files (shards merge by concatenation) -> a table per task x length (score, n,
// nulls), the NIAH average, the needle-block selection recall per sparse layer, length and depth, a depth x length
// heatmap and a recall-vs-length plot (gnuplot), and the paper's RULER numbers beside ours with their caveat.
#pragma once
#include <string>
#include <vector>

namespace salasim::ruler {

struct ReportOptions {
  std::vector<std::string> results;
  std::string out_dir;   // where report.md and the plots go ("" = print only): built in a temporary folder and
                         // renamed into place whole (model/output_file.hpp's OutputFolder)
  bool force = false;    // replace an existing out_dir (never one that holds an input)
  std::string paper;     // reports/paper/minicpm-sala-ruler.json
  std::string revision;  // the report's own binary, for summary.json
};
// The report as markdown text (also written to out_dir/report.md with the plots). Throws naming file, line and
// field for a bad results line, and both places for a sample id that appears twice.
std::string ruler_report(const ReportOptions& o);

}  // namespace salasim::ruler
