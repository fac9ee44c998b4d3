// The MiniCPM-SALA paper's published TTFT / E2E numbers (reports/paper/minicpm-sala-latency.json): data to
// compare predictions against, never a target the model is tuned to.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/model_spec.hpp"

namespace salasim::reports {

struct PaperPoint {
  std::string gpu;    // hardware profile name: "a6000d", "rtx5090"
  std::string model;  // config stem: "minicpm-sala-9b", "qwen3-8b"
  WeightFormat weights = WeightFormat::Bf16;
  int64_t context = 0;
  bool oom = false;  // the paper reports out of memory (no times)
  double ttft_s = 0, e2e_s = 0;
};

struct PaperData {
  std::string file, source, setup;
  int64_t decode_tokens = 0;
  std::vector<PaperPoint> points;
};

std::string paper_file();  // reports/paper/minicpm-sala-latency.json
PaperData load_paper(const std::string& path);
const PaperPoint* find_paper(const PaperData& d, const std::string& gpu, const std::string& model, WeightFormat w,
                             int64_t context);

}  // namespace salasim::reports
