// Prefill workspace: the transient buffers of one chunked-prefill step, one visible row each (printed by
// `salasim model memory --json`). MiniCPM-SALA's rows are the CUDA runner's own allocations (model/runner_plan.hpp,
// the same arithmetic gpu/'s memory planner uses); the dense comparator's are modelled here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "reports/dense_config.hpp"

namespace salasim::reports {

struct WorkspaceParams {
  int64_t chunk = 16384;  // prefill chunk C in tokens (the GPU runner's default)
};

// One buffer. Buffers of different phases are never live together: the peak is the sum of the "all" rows plus
// the largest of the other phases ("lightning", "sparse", "attn", "mlp").
struct WorkspaceTerm {
  std::string name;   // "mlp_gate_up"
  std::string shape;  // "[C, 2I] bf16" with the numbers filled in
  std::string phase;  // "all", "lightning", "sparse", "attn" (dense model), "mlp"
  int64_t bytes = 0;
  std::string why;    // what it holds and why it is that size
};

// `context` is the prompt length: the last chunk sees the most keys, so it sets the selection scratch.
std::vector<WorkspaceTerm> sala_prefill_workspace(const ModelConfig& c, const WorkspaceParams& p, int64_t context);
std::vector<WorkspaceTerm> dense_prefill_workspace(const DenseConfig& c, const WorkspaceParams& p, int64_t context);

int64_t workspace_peak(const std::vector<WorkspaceTerm>& terms);

}  // namespace salasim::reports
