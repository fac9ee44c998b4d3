// Memory breakdown of a run: model/memory.hpp's facts plus the workspace table.
#include "reports/memory_model.hpp"

#include <algorithm>

#include "model/checked.hpp"
#include "model/memory.hpp"

namespace salasim::reports {

MemoryBreakdown memory_breakdown(const Model& m, WeightFormat f, int64_t context, const WorkspaceParams& p) {
  MemoryBreakdown b;
  b.context = context;
  b.chunk = std::min(p.chunk, context);
  b.weights = f;
  b.weight_bytes = model_weight_bytes(m, f);
  b.kv_bytes = checked_mul(model_kv_bytes_per_token(m), context, fmt::format("KV cache bytes of {} tokens", context));
  if (m.kind == ModelKind::Sala) {
    b.compressed_key_bytes = salasim::compressed_key_bytes(m.sala, context);
    b.gla_state_bytes = salasim::gla_state_bytes(m.sala);
    b.workspace_terms = sala_prefill_workspace(m.sala, p, context);
  } else {
    b.workspace_terms = dense_prefill_workspace(m.dense, p, context);
  }
  b.workspace_bytes = workspace_peak(b.workspace_terms);
  // peak() adds these terms: a context whose sum leaves 64 bits is refused here, naming it.
  int64_t sum = 0;
  for (int64_t x : {b.weight_bytes, b.kv_bytes, b.compressed_key_bytes, b.gla_state_bytes, b.workspace_bytes})
    sum = checked_add(sum, x, fmt::format("peak memory at {} tokens", context));
  return b;
}

}  // namespace salasim::reports
