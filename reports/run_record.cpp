// The measured run's record and its decode statistics (see run_record.hpp).
#include "reports/run_record.hpp"

#include <algorithm>

namespace salasim::reports {

namespace {
double median_of(const std::vector<double>& sorted) { return sorted.empty() ? 0 : sorted[sorted.size() / 2]; }
}  // namespace

int profiled_steps(int decode) { return std::min(8, decode / 4); }

DecodeStats decode_stats(const std::vector<double>& token_s, const std::vector<double>& enqueue_s, int decode) {
  DecodeStats d;
  d.profiled = profiled_steps(decode);
  for (int i = 1; i < decode - d.profiled && i < int(token_s.size()); ++i)
    d.step_ms.push_back(token_s[size_t(i)] * 1e3);
  std::sort(d.step_ms.begin(), d.step_ms.end());
  d.median_ms = median_of(d.step_ms);
  if (!d.step_ms.empty()) d.min_ms = d.step_ms.front(), d.max_ms = d.step_ms.back();
  // host time to enqueue a step, over the unprofiled steps: well below the step's wall time, the GPU is what a step
  // waits on and launch overhead shows only as gaps between kernels
  for (int i = 0; i < decode - d.profiled && i < int(enqueue_s.size()); ++i)
    d.enqueue_ms.push_back(enqueue_s[size_t(i)] * 1e3);
  std::sort(d.enqueue_ms.begin(), d.enqueue_ms.end());
  d.enqueue_median_ms = median_of(d.enqueue_ms);
  return d;
}

nlohmann::json tile_stats_json(const RunRecord& r) {
  if (r.tiles <= 0 || r.tile_queries <= 0 || r.tile_loaded <= 0) return nullptr;
  return {{"tiles", r.tiles},
          {"queries_per_tile", double(r.tile_queries) / double(r.tiles)},
          {"blocks_loaded_per_tile", double(r.tile_loaded) / double(r.tiles)},
          {"blocks_per_query", double(r.tile_attended) / double(r.tile_queries)},
          {"queries_per_loaded_block", double(r.tile_attended) / double(r.tile_loaded)}};
}

nlohmann::json run_record_json(const RunRecord& r) {
  const ClassTimes& p = r.prefill_s;
  nlohmann::json j = {{"date", r.date},
                      {"gpu", r.gpu},
                      {"driver", r.driver},
                      {"revision", r.revision},
                      {"command", r.command},
                      {"config", r.config},
                      {"context", r.context},
                      {"decode_tokens", r.decode_tokens},
                      {"chunk", r.chunk},
                      {"ttft_s", r.ttft_s},
                      {"decode_ms_per_token", r.decode.median_ms},
                      {"decode_host_enqueue_ms", r.decode.enqueue_median_ms},
                      {"decode_gemv", r.gemv},
                      {"pdl", r.pdl},
                      {"decode_fusion", r.fusion},
                      {"decode_ahead", r.ahead},
                      {"decode_graph", r.graph},
                      {"decode_graphs_updated", r.graph_updated},
                      {"decode_graphs_instantiated", r.graph_instantiated},
                      {"attn_engine", r.attn_engine},
                      {"sparse_attn_tiles", tile_stats_json(r)},
                      {"peak_vram_bytes", r.peak_vram_bytes},
                      {"planner_peak_bytes", r.planner_peak_bytes},
                      {"weights_load_s", r.weights_load_s},
                      {"logits_finite", r.logits_finite},
                      {"phases",
                       {{"gemm_s", p[0]},
                        {"select_s", p[1]},
                        {"sparse_attn_s", p[2]},
                        {"dense_attn_s", p[3]},
                        {"gla_s", p[4]},
                        {"other_s", p[5]}}}};
  if (!r.dump_taps.is_null()) j["dump_taps"] = r.dump_taps;
  if (r.decode_gpu_ms) {  // fewer than 4 decode steps profile none: then there is no split to record
    const ClassTimes& d = *r.decode_gpu_ms;
    j["decode_gpu_ms_per_token"] =
        {{"gemm_ms", d[0]}, {"select_ms", d[1]}, {"sparse_attn_ms", d[2]},     {"dense_attn_ms", d[3]},
         {"gla_ms", d[4]},  {"other_ms", d[5]},  {"total_ms", class_total(d)}, {"profiled_steps", r.decode.profiled}};
  }
  return j;
}

}  // namespace salasim::reports
