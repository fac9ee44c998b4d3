// The work of every op in one forward call over token positions [start, end) (a prefill chunk, or a decode
// step when end = start + 1): FLOPs, bytes moved to or from device memory, and exponentials, each op's from its
// cost formula (ops/cost.hpp, the one the GPU benchmarks count with) times the layers it runs in. These counts are
// the latency model's input; turning them into seconds is latency.hpp's job.
#pragma once
#include <cstdint>
#include <vector>

#include "ops/cost.hpp"
#include "reports/hardware.hpp"
#include "reports/model_spec.hpp"

namespace salasim::reports {

// The layers an entry's count repeats over: none (once per call), every layer, or those of one mixer.
enum class TermScope { NonLayer, EveryLayer, Lightning, Sparse };

// One latency-model entry, named after the registry's op (ops/op.hpp) it counts, NAME or NAME.site:
// "linear.lightning_mixer", "linear.sparse_mixer", "linear.mlp" (every projection of that part), "logits",
// "select_blocks", "sparse_attn", "dense_attn", "gla"; and "other.elementwise", the memory-bound kernels together
// (sala_elementwise_terms).
struct OpCost {
  const char* op = "";
  OpClass cls = OpClass::Other;
  TermScope scope = TermScope::EveryLayer;
  double flops = 0;
  double bytes = 0;
  double exps = 0;
};

// `logits`: the call ends the prompt (or is a decode step), so the lm_head runs for its last position.
// SALA's "other.elementwise" entry is the sum of sala_elementwise_terms below.
std::vector<OpCost> call_costs(const Model& m, WeightFormat f, int64_t start, int64_t end, bool logits);

// The memory-bound kernels of MiniCPM-SALA one by one, as an unfused runner launches them: bytes read and written
// and exponentials per token of one layer of `scope` (or once, for the non-layer terms). The latency model's
// "other.elementwise" is their sum; `salasim explain` shows each beside the op it belongs to.
struct ElementwiseTerm {
  const char* op;    // the reference op (reference/ops.hpp): "embed", "rmsnorm", "residual", "mlp", "rope", ...
  const char* what;  // which instances: "input and post-attention norms"
  TermScope scope = TermScope::EveryLayer;
  double bytes = 0;  // per token, per layer of the scope (per call when per_call)
  double exps = 0;
  bool per_call = false;  // once per call that produces logits (the final norm of the last position)
};
std::vector<ElementwiseTerm> sala_elementwise_terms(const ModelConfig& c);
double term_layers(const ModelConfig& c, TermScope s);  // layers a term repeats over (1 for NonLayer)

// The closed-form sums of ops/cost.hpp (sum_causal_keys, sum_visible_windows, ...), used here and by the tests.
using op::sum_causal_blocks;
using op::sum_causal_keys;
using op::sum_selected_keys;
using op::sum_visible_windows;

}  // namespace salasim::reports
