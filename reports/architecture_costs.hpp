// The architecture page's cost sections at a chosen context: VRAM by component (the memory model's terms, as
// stacked bars over the report's contexts and as a table) and one row per op of reference/ops.hpp with its FLOPs,
// bytes, arithmetic intensity, bound and time at the roofline floor, for the whole prefill and one decode token.
// The counts are `salasim explain`'s op cards (explain.hpp); the seconds and the bound are the latency model's
// roofline (latency.hpp) on a hardware profile. Nothing is recomputed here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "reports/explain.hpp"
#include "reports/hardware.hpp"
#include "reports/memory_model.hpp"
#include "reports/model_spec.hpp"
#include "reports/plots.hpp"

namespace salasim::reports {

// One op at `context`: explain's per-token prefill costs times the context (the whole prefill), its decode costs
// (one token at position `context`), each with its roofline time and bound on `hw`.
struct OpFloor {
  std::string op, title;
  Cost prefill, decode;
  double prefill_s = 0, decode_s = 0;       // roofline_seconds of the totals
  std::string prefill_bound, decode_bound;  // roofline_bound; "" where the op does not run
};

// Every op of reference/ops.hpp in its order, then "total" (explain's model card; its times are the ops' sum).
std::vector<OpFloor> op_floors(const Model& m, int64_t context, int64_t chunk, const HwProfile& hw);

// HTML: the per-op table (with the card it is timed on), and VRAM by component.
std::string op_floor_table_html(const std::vector<OpFloor>& rows, int64_t context, int64_t chunk, const HwProfile& hw);
// Stacked bars of the memory model's components at each of `contexts` (and `at`, marked), with the cards' memory
// from `vram` (the bundle's VRAM plots: their hline) where it is on the scale; then the table at `at`.
std::string vram_components_html(const Model& m, const std::vector<int64_t>& contexts, int64_t at,
                                 const WorkspaceParams& ws, const std::vector<Plot>& vram);

}  // namespace salasim::reports
