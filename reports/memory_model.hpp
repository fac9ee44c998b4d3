// Peak device memory of a prefill + decode run: weights, caches sized for the full context, and the prefill
// workspace of the last (largest) chunk, for MiniCPM-SALA or the dense comparator.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/model_spec.hpp"
#include "reports/workspace.hpp"

namespace salasim::reports {

struct MemoryBreakdown {
  int64_t context = 0;
  int64_t chunk = 0;            // effective chunk: min(C, context)
  WeightFormat weights = WeightFormat::Bf16;
  int64_t weight_bytes = 0;
  int64_t kv_bytes = 0;         // SALA: the 8 sparse layers; dense: every layer
  int64_t compressed_key_bytes = 0;  // K1 + K2 (SALA only)
  int64_t gla_state_bytes = 0;       // SALA only, independent of context
  int64_t workspace_bytes = 0;
  std::vector<WorkspaceTerm> workspace_terms;

  int64_t peak() const {
    return weight_bytes + kv_bytes + compressed_key_bytes + gla_state_bytes + workspace_bytes;
  }
};

MemoryBreakdown memory_breakdown(const Model& m, WeightFormat f, int64_t context, const WorkspaceParams& p);

}  // namespace salasim::reports
