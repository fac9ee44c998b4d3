// The VRAM / latency report bundle written by `salasim report`: README.md (tables and plots), CSV tables and
// gnuplot plots, for every hardware profile, MiniCPM-SALA beside the dense comparator.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/context.hpp"
#include "reports/workspace.hpp"

namespace salasim::reports {

struct ReportOptions {
  std::string out = "build/report";  // the bundle's name, as the pages cite it
  std::string dir;                   // where the files are written (an OutputFolder's temporary); empty: out
  std::vector<std::string> configs{"scenarios/models/minicpm-sala-9b.json", "scenarios/models/qwen3-8b.json"};
  std::vector<std::string> hw{"h200", "h100", "a6000d", "rtx5090"};
  std::vector<int64_t> contexts = default_contexts();
  WorkspaceParams ws;
  int64_t decode_tokens = 1024;  // the paper generates 1K tokens after the prompt
  std::string checkpoint;        // architecture page: check every count against this checkpoint's headers
  int64_t op_context = 65536;    // architecture page: VRAM by component and the per-op table at this context
  // Measured records: a folder laid out as reports/measured/ (<card>/run_*.json of `salasim run`, and
  // <card>/<comparator>/run_*.json of bench/qwen3_hf.py); "" for reports/measured itself.
  std::string measured;
};

struct ReportOutcome {
  std::vector<std::string> files;        // written, relative to the bundle folder
  std::string plots_note;                // rendered, or skipped and why
  std::vector<std::string> calibration;  // one line per hardware profile
  std::vector<std::string> comparison;   // per card with records: SALA vs the comparator, measured lengths
  std::string architecture_note;         // what the architecture page is and what its checkpoint check found
  std::vector<std::string> mismatches;   // the checkpoint disagrees with these counts (exit 1 when any)
};

ReportOutcome write_report(const ReportOptions& o);

}  // namespace salasim::reports
