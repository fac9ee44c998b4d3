// Memory breakdown of a run: model/memory.hpp's facts plus the workspace table.
#include "reports/memory_model.hpp"

#include <algorithm>

#include "model/memory.hpp"

namespace salasim::reports {

MemoryBreakdown memory_breakdown(const Model& m, WeightFormat f, int64_t context, const WorkspaceParams& p) {
  MemoryBreakdown b;
  b.context = context;
  b.chunk = std::min(p.chunk, context);
  b.weights = f;
  b.weight_bytes = model_weight_bytes(m, f);
  b.kv_bytes = model_kv_bytes_per_token(m) * context;
  if (m.kind == ModelKind::Sala) {
    b.compressed_key_bytes = salasim::compressed_key_bytes(m.sala, context);
    b.gla_state_bytes = salasim::gla_state_bytes(m.sala);
    b.workspace_terms = sala_prefill_workspace(m.sala, p, context);
  } else {
    b.workspace_terms = dense_prefill_workspace(m.dense, p, context);
  }
  b.workspace_bytes = workspace_peak(b.workspace_terms);
  return b;
}

}  // namespace salasim::reports
