// The work of every op in one forward call over token positions [start, end) (a prefill chunk, or a decode
// step when end = start + 1): FLOPs, bytes moved to or from device memory, and exponentials. These counts are
// the latency model's input; turning them into seconds is latency.hpp's job.
#pragma once
#include <cstdint>
#include <vector>

#include "reports/hardware.hpp"
#include "reports/model_spec.hpp"

namespace salasim::reports {

struct OpCost {
  const char* op = "";  // "gemm.mlp", "select", "sparse_attn", "dense_attn", "gla", "other.elementwise", ...
  OpClass cls = OpClass::Other;
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
enum class TermScope { NonLayer, EveryLayer, Lightning, Sparse };
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

// Exact closed-form sums over query positions p in [a, b) that the formulas use (exposed for tests).
double sum_causal_keys(int64_t a, int64_t b);  // sum of (p + 1): keys visible to a causal query at p
// sum of the complete pooling windows (length `kernel`, step `stride`) lying in [0, p]: visible K1 / K2 entries
double sum_visible_windows(int64_t a, int64_t b, int64_t kernel, int64_t stride);
double sum_causal_blocks(int64_t a, int64_t b, int64_t block);  // sum of (p / block + 1)
// sum of the keys a sparse query attends to: all p + 1 while p / block < k_sel, else (k_sel - 1) full blocks
// plus its own partial block (docs/spec.md §4.5; at most k_sel x block = 6144)
double sum_selected_keys(int64_t a, int64_t b, int64_t block, int64_t k_sel);

}  // namespace salasim::reports
