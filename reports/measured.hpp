// Runs measured by this project on a GPU (reports/measured/<hw>.json, written from `salasim run`): the format,
// its parser, and nothing else. A missing file or an empty array means "no measured runs yet".
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/hardware.hpp"

namespace salasim::reports {

// One element of the file's top-level array:
// {"date", "gpu", "command", "config", "context", "decode_tokens", "ttft_s", "decode_ms_per_token",
//  "peak_vram_bytes", "planner_peak_bytes", "phases": {"gemm_s", "select_s", "sparse_attn_s", "dense_attn_s",
//  "gla_s", "other_s"}}; "phases" is optional, and so are "weights" ("bf16") and "chunk" (16384).
struct MeasuredRun {
  std::string date, gpu, command, config;
  int64_t context = 0;
  int64_t decode_tokens = 0;
  double ttft_s = 0;
  std::optional<double> decode_ms_per_token;  // required when decode_tokens > 0
  int64_t peak_vram_bytes = 0;
  int64_t planner_peak_bytes = 0;
  std::optional<std::array<double, kOpClasses>> phases;  // seconds per op class of the prefill
  std::string weights = "bf16";
  int64_t chunk = 16384;
};

std::vector<MeasuredRun> load_measured(const std::string& path);  // [] when the file does not exist
std::string measured_file(const std::string& hw_name);            // reports/measured/<hw>.json

}  // namespace salasim::reports
