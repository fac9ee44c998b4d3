// Runs measured by this project on a GPU: the record `salasim run --json-out FILE` writes, one file per run, kept as
// written in reports/measured/<hw>/ (docs/performance.md). The format, its parser, and nothing else. A missing
// folder or file, or an empty one, means "no measured runs yet".
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/hardware.hpp"

namespace salasim::reports {

// One run, a JSON object:
// {"date", "gpu", "command", "config", "context", "decode_tokens", "ttft_s", "decode_ms_per_token",
//  "peak_vram_bytes", "planner_peak_bytes", "phases": {"gemm_s", "select_s", "sparse_attn_s", "dense_attn_s",
//  "gla_s", "other_s"}, "decode_gpu_ms_per_token": {"gemm_ms", ..., "other_ms", "total_ms"}}; "phases" is optional, and
//  so are "weights" ("bf16"), "chunk" (16384), "driver" and
// "revision" (what `salasim run` writes since they were added), and "source" (a note on where the record came from).
struct MeasuredRun {
  std::string date, gpu, command, config;
  std::string driver, revision, source;  // empty when the record predates them / has none
  std::string file;                      // the file it was read from
  int64_t context = 0;
  int64_t decode_tokens = 0;
  double ttft_s = 0;
  std::optional<double> decode_ms_per_token;  // required when decode_tokens > 0
  int64_t peak_vram_bytes = 0;
  int64_t planner_peak_bytes = 0;
  std::optional<std::array<double, kOpClasses>> phases;  // seconds per op class of the prefill
  // "decode_gpu_ms_per_token": {"gemm_ms", ..., "other_ms", "total_ms", "profiled_steps"}, optional: the decode steps
  // `salasim run` profiled with per-op events, ms per token per op class, and their sum.
  std::optional<std::array<double, kOpClasses>> decode_phases_ms;
  double decode_profiled_total_ms = 0;
  std::string weights = "bf16";
  int64_t chunk = 16384;
};

// `path`: a folder (every *.json in it, ordered by config and context), or one file holding a run object or an
// array of them. [] when the path does not exist. A bad record is a salasim::Error naming the file, the run and the
// field.
std::vector<MeasuredRun> load_measured(const std::string& path);
std::string measured_path(const std::string& hw_name);  // reports/measured/<hw> (a folder)
// <root>/<hw>: `root` laid out as reports/measured/ (the report's --measured); "" for reports/measured itself.
std::string measured_path(const std::string& hw_name, const std::string& root);

}  // namespace salasim::reports
