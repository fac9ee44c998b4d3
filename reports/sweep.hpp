// Sweeps of the memory and latency models over models x weight formats x context lengths on one card, as
// tables (every row ends with the command that reproduces it) and as JSON; shared by `salasim model` and the
// report bundle.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "reports/calibrate.hpp"
#include "reports/hardware.hpp"
#include "reports/memory_model.hpp"
#include "reports/model_spec.hpp"
#include "reports/paper.hpp"
#include "reports/table.hpp"

namespace salasim::reports {

struct Sweep {
  std::vector<Model> models;  // in --config order
  std::vector<WeightFormat> formats{WeightFormat::Bf16};
  HwProfile hw;
  std::vector<int64_t> contexts;
  WorkspaceParams ws;
  int64_t decode_tokens = 1024;
  bool floor = false;  // latency: the profile's efficiency factors, measured runs ignored (--floor)
};

// The salasim command lines that reproduce one context of a sweep.
std::string memory_command(const Sweep& s, int64_t context);
std::string latency_command(const Sweep& s, int64_t context);

Table memory_table(const Sweep& s);
nlohmann::json memory_json(const Sweep& s);

// `paper` may be null or hold no point for this card: then the paper columns are left out.
Table latency_table(const Sweep& s, const Efficiency& eff, const PaperData* paper);
nlohmann::json latency_json(const Sweep& s, const Efficiency& eff, const PaperData* paper);

// Measured runs beside the predictions for exactly their settings, with ratios predicted / measured.
Table measured_table(const std::vector<MeasuredRun>& runs, const HwProfile& hw, const Efficiency& eff);

bool fits(const MemoryBreakdown& b, const HwProfile& hw);

}  // namespace salasim::reports
