// The record of one measured run (`salasim run --json-out`; the format reports/measured.hpp reads back) and the
// decode statistics behind it, built from what the run measured. Pure arithmetic and JSON, so the schema and the
// statistics are tested on a CPU; `salasim run` fills them on a GPU.
#pragma once
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/hardware.hpp"

namespace salasim::reports {

// Seconds (prefill) or ms per token (decode) per op class, in kOpClasses order: gemm, select, sparse_attn,
// dense_attn, gla, other.
using ClassTimes = std::array<double, kOpClasses>;
inline double class_total(const ClassTimes& t) {
  double s = 0;
  for (double x : t) s += x;
  return s;
}

// The decode steps a run times. The last quarter of them (at most 8) run with per-op CUDA events for the split by
// op class; the rest are timed without. token_s[i] is the host time between tokens i - 1 and i (token 0: from the
// prefill); token 0 and, with steps enqueued ahead, the token awaited across the first profiled step's enqueue
// (which waits for the events) are left out, so the median is of steps i = 1 .. decode - profiled - 1.
struct DecodeStats {
  int profiled = 0;             // steps with per-op events
  std::vector<double> step_ms;  // the unprofiled steps' times, ascending
  double median_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> enqueue_ms;  // host time to enqueue each of the same steps, ascending
  double enqueue_median_ms = 0;
};
int profiled_steps(int decode);  // min(8, decode / 4)
DecodeStats decode_stats(const std::vector<double>& token_s, const std::vector<double>& enqueue_s, int decode);

struct RunRecord {
  std::string date, gpu, driver, revision, command, config;
  int64_t context = 0, decode_tokens = 0, chunk = 0;
  double ttft_s = 0;
  DecodeStats decode;
  std::string gemv, pdl, fusion, ahead;  // the variants the run took (salasim run --gemv, --pdl, --fuse, --ahead)
  std::string attn_engine;               // ... and --attn-engine
  std::string graph;                     // ... and --graph
  // decode steps run as CUDA graphs (gpu::DecodeGraphStats): executables updated with a step's arguments, and built
  int64_t graph_updated = 0, graph_instantiated = 0;
  // The sparse prefill's query tiles (gpu::AttnTileStats): blocks loaded (each tile's union), blocks attended (per
  // query), tiles, queries; all 0 when no prefill call was sparse.
  int64_t tile_loaded = 0, tile_attended = 0, tiles = 0, tile_queries = 0;
  int64_t peak_vram_bytes = 0, planner_peak_bytes = 0;
  double weights_load_s = 0;
  bool logits_finite = true;
  ClassTimes prefill_s{};                   // prefill seconds per op class
  std::optional<ClassTimes> decode_gpu_ms;  // the profiled steps' GPU ms per token per op class
  nlohmann::json dump_taps;                 // what --dump-taps wrote (null: no dump)
};
// "sparse_attn_tiles" of the record, or null without sparse prefill calls: queries a tile, distinct blocks a tile
// loaded, blocks a query attended to, queries each loaded block served.
nlohmann::json tile_stats_json(const RunRecord& r);
// The JSON object reports/measured.hpp reads (its fields documented there).
nlohmann::json run_record_json(const RunRecord& r);

}  // namespace salasim::reports
