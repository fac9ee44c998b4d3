// FLOP, byte and exponential counts per op and forward call, for MiniCPM-SALA and the dense comparator: each op's
// cost formula (ops/cost.hpp, beside its definition in ops/<name>.cpp) times the layers it runs in. Conventions
// (ops/cost.hpp): a multiply-add is 2 FLOP; causal attention counts only unmasked scores; bytes are the floor traffic
// of a straightforward kernel (each operand read once per reuse tile, outputs written once).
#include "reports/op_costs.hpp"

#include <algorithm>

#include "model/memory.hpp"

namespace salasim::reports {

namespace {

namespace cost = op::cost;

OpCost entry(const char* name, OpClass cls, TermScope scope, const op::Work& w) {
  return {name, cls, scope, w.flops, w.bytes, w.exps};
}

TermScope scope_of(Component c) {
  switch (c) {
    case Component::LightningMixer: return TermScope::Lightning;
    case Component::SparseMixer: return TermScope::Sparse;
    case Component::LmHead: return TermScope::NonLayer;
    default: return TermScope::EveryLayer;
  }
}

// Every projection of a part of the model is linear; the lm_head is logits, for the last position only. W4A16
// dequantises to bf16 in the GEMM's main loop: the same FLOPs, fewer weight bytes.
void add_gemms(std::vector<OpCost>& ops, const Model& m, WeightFormat f, int64_t T, bool logits, ModelKind kind) {
  for (const GemmGroup& g : m.gemms) {
    if (g.lm_head && !logits) continue;
    const double tokens = g.lm_head ? 1 : double(T);
    const double weights = f == WeightFormat::Bf16 ? g.bytes_bf16 : g.bytes_w4a16;
    const TermScope scope = kind == ModelKind::Sala ? scope_of(g.component) : TermScope::EveryLayer;
    ops.push_back(entry(g.op, OpClass::Gemm, scope, cost::linear(tokens, g.params, g.io_elems, weights)));
  }
}

std::vector<OpCost> sala_costs(const Model& m, WeightFormat f, int64_t start, int64_t end, bool logits) {
  const ModelConfig& c = m.sala;
  const SparseConfig& sp = c.sparse;
  const int64_t T = end - start;
  const double ns = c.n_layers(Mixer::Sparse), nl = c.n_layers(Mixer::Lightning);
  const int64_t H = c.num_attention_heads, G = c.num_key_value_heads, d = c.head_dim;
  std::vector<OpCost> ops;
  add_gemms(ops, m, f, T, logits, ModelKind::Sala);
  // Sparse layers: the whole call is sparse once the keys reach dense_len (HF's per-call rule, docs/spec.md §4.1).
  if (end >= sp.dense_len) {
    ops.push_back(
        entry("select_blocks", OpClass::Select, TermScope::Sparse,
              ns * cost::select_blocks(start, end, H, G, d, sp.kernel_size, sp.kernel_stride, sp.block_size)));
    ops.push_back(entry("sparse_attn", OpClass::SparseAttn, TermScope::Sparse,
                        ns * cost::sparse_attn(start, end, H, G, d, sp.block_size, sp.k_sel())));
  } else {
    ops.push_back(
        entry("dense_attn", OpClass::DenseAttn, TermScope::Sparse, ns * cost::dense_attn(start, end, H, G, d)));
  }
  ops.push_back(
      entry("gla", OpClass::Gla, TermScope::Lightning, nl * cost::gla(T, c.lightning_nh, c.lightning_head_dim)));
  // Elementwise ops as separate memory-bound kernels (sala_elementwise_terms; fusing them into GEMM epilogues
  // removes most of this traffic).
  double per_token = 0, exps = 0, per_call = 0;
  for (const ElementwiseTerm& e : sala_elementwise_terms(c)) {
    const double n = term_layers(c, e.scope);
    (e.per_call ? per_call : per_token) += n * e.bytes;
    exps += n * e.exps;
  }
  ops.push_back({"other.elementwise", OpClass::Other, TermScope::EveryLayer, 0,
                 double(T) * per_token + (logits ? per_call : 0), double(T) * exps});
  return ops;
}

std::vector<OpCost> dense_costs(const Model& m, WeightFormat f, int64_t start, int64_t end, bool logits) {
  const DenseConfig& c = m.dense;
  const int64_t T = end - start;
  const double L = c.num_hidden_layers, D = c.hidden_size, I = c.intermediate_size;
  const double Q = c.q_dim(), KV = c.kv_dim();
  std::vector<OpCost> ops;
  add_gemms(ops, m, f, T, logits, ModelKind::Dense);
  ops.push_back(entry("dense_attn", OpClass::DenseAttn, TermScope::EveryLayer,
                      L * cost::dense_attn(start, end, c.num_attention_heads, c.num_key_value_heads, c.head_dim)));
  // As for SALA, plus q/k norm and RoPE (read + write q and k) in every layer.
  const double per_token = 4 * D + L * (8 * D + 12 * D + 6 * I + 4 * (Q + KV));
  ops.push_back({"other.elementwise", OpClass::Other, TermScope::EveryLayer, 0,
                 double(T) * per_token + (logits ? 4 * D : 0), double(T) * L * I});
  return ops;
}

ElementwiseTerm term(const char* op, const char* what, TermScope scope, const op::Work& w, bool per_call = false) {
  return {op, what, scope, w.bytes, w.exps, per_call};
}

}  // namespace

// Per token, each op's cost formula for one row: the embedding gather; per layer two RMSNorms, two residual adds and
// the MLP's silu(gate) * up; Lightning q/k norm + RoPE (q and k), o_norm and the z gate; the sparse o_gate and the
// K1/K2 pooling; the final norm once, for the position that gets logits.
std::vector<ElementwiseTerm> sala_elementwise_terms(const ModelConfig& c) {
  const double D = c.hidden_size, I = c.intermediate_size, Ld = c.lightning_dim(), Q = c.q_dim(), KV = c.kv_dim();
  std::vector<ElementwiseTerm> t = {
      term("embed", "embedding gather", TermScope::NonLayer, cost::embed(1, D)),
      term("rmsnorm", "input and post-attention norms", TermScope::EveryLayer, 2 * cost::rmsnorm(1, D)),
      term("residual", "two scaled residual adds", TermScope::EveryLayer, 2 * cost::residual(1, D)),
      term("mlp", "silu(gate) * up", TermScope::EveryLayer, cost::mlp(1, I)),
      term("rope", "q/k per-head norm and RoPE", TermScope::Lightning, 2 * cost::rope(1, Ld)),
  };
  if (c.use_output_norm) t.push_back(term("rmsnorm", "o_norm", TermScope::Lightning, cost::rmsnorm(1, Ld)));
  if (c.use_output_gate) t.push_back(term("gate", "z gate", TermScope::Lightning, cost::gate(1, Ld)));
  if (c.attn_use_output_gate) t.push_back(term("gate", "o_gate", TermScope::Sparse, cost::gate(1, Q)));
  t.push_back(term("compress_k", "K1/K2 mean pooling", TermScope::Sparse, cost::compress_k(1, KV)));
  t.push_back(term("rmsnorm", "final norm (last position)", TermScope::NonLayer, cost::rmsnorm(1, D), true));
  return t;
}

double term_layers(const ModelConfig& c, TermScope s) {
  switch (s) {
    case TermScope::NonLayer: return 1;
    case TermScope::EveryLayer: return c.num_hidden_layers;
    case TermScope::Lightning: return c.n_layers(Mixer::Lightning);
    case TermScope::Sparse: return c.n_layers(Mixer::Sparse);
  }
  return 0;
}

std::vector<OpCost> call_costs(const Model& m, WeightFormat f, int64_t start, int64_t end, bool logits) {
  return m.kind == ModelKind::Sala ? sala_costs(m, f, start, end, logits) : dense_costs(m, f, start, end, logits);
}

}  // namespace salasim::reports
