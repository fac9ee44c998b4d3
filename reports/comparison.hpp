// MiniCPM-SALA beside the dense comparator (Qwen3-8B), as measured on one card: TTFT and peak memory from
// `salasim run` records (reports/measured/<hw>/run_*.json) and from the comparator's records, kept in a folder of
// their own named after the model (reports/measured/<hw>/<model>/run_*.json, written by bench/qwen3_hf.py in the
// same schema, measured.hpp), with the paper's figures of its card beside them. A length without a record is
// "not measured": nothing is predicted or filled in here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/measured.hpp"
#include "reports/model_spec.hpp"
#include "reports/paper.hpp"
#include "reports/plots.hpp"
#include "reports/table.hpp"

namespace salasim::reports {

std::vector<int64_t> comparison_contexts();  // 16K, 64K, 128K, 256K: the paper's lengths for the comparison

// One context length: the newest bf16 record of each model there (none when not measured), and the paper's points.
struct ComparisonRow {
  int64_t context = 0;
  std::optional<MeasuredRun> sala, other;
  std::optional<PaperPoint> paper_sala, paper_other;
};

struct Comparison {
  std::string hw, paper_gpu;                // "h200"; the paper's card ("a6000d")
  Model sala, other;                        // MiniCPM-SALA and the comparator
  std::string sala_dir, other_dir;          // where the records were looked for
  int sala_records = 0, other_records = 0;  // records read there, at any length
  std::vector<ComparisonRow> rows;
  int measured_pairs() const;  // lengths where both models have a record
};

// `root`: the folder laid out as reports/measured/ ("" for reports/measured itself).
struct ComparisonInput {
  std::string root, hw = "h200", paper_gpu = "a6000d";
  std::string sala_config = "scenarios/models/minicpm-sala-9b.json", other_config = "scenarios/models/qwen3-8b.json";
  std::vector<int64_t> contexts = comparison_contexts();
};
Comparison load_comparison(const ComparisonInput& in, const PaperData& paper);

// The ratio table: per length each model's TTFT and peak memory, the comparator / SALA ratios, the paper's TTFTs
// and their ratio; "not measured" where a record is missing; the record files and the command of each row.
Table comparison_table(const Comparison& c);
nlohmann::json comparison_json(const Comparison& c);
std::string comparison_command(const Comparison& c, int64_t context);  // salasim model compare ... for one row
// compare_<hw>: comparator / SALA against context, the measured TTFT and peak ratios over the paper's TTFT ratio;
// a series without a point is left out, and the caller skips a plot without series.
Plot comparison_plot(const Comparison& c);

}  // namespace salasim::reports
