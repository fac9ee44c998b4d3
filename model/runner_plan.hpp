// What the CUDA runner allocates besides weights and caches, as plain arithmetic: the activations of one prefill
// chunk, the GLA segment states, the block-selection workspace and the cuBLAS workspace, sized by the launch
// geometry of gpu/launch_geometry.hpp. gpu/ allocates exactly these and reports/ models memory with them, so the
// planner and the analytic report cannot disagree.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/launch_geometry.hpp"  // the launch geometry whose workspaces this sizes
#include "model/config.hpp"

namespace salasim {

// ---- The runner's transient buffers for chunk C = min(chunk, max_context).
struct RunnerBuffer {
  std::string name;   // "fused projection"
  std::string shape;  // "[16384, 16384] bf16"
  size_t bytes = 0;
  std::string why;
};
struct RunnerWorkspace {
  int64_t chunk = 0;
  size_t h = 0, a = 0, y = 0, proj = 0, attn = 0, gu = 0, act = 0, tokens = 0, logits = 0;  // activations
  size_t gla_ws = 0, blocks = 0, sel_ws = 0, scores = 0, attn_ws = 0, attn_stats = 0, cublas = 0;
  std::vector<RunnerBuffer> rows() const;  // every buffer, named, with its shape and reason
  size_t activations() const { return h + a + y + proj + attn + gu + act + tokens + logits; }
  size_t total() const { return activations() + gla_ws + blocks + sel_ws + scores + attn_ws + attn_stats + cublas; }
};
RunnerWorkspace runner_workspace(const ModelConfig& c, int64_t chunk, int64_t max_context, bool taps);

}  // namespace salasim
