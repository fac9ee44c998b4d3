// FLOP, byte and exponential counts per op and forward call, for MiniCPM-SALA and the dense comparator.
// Conventions: a multiply-add is 2 FLOP; causal attention counts only unmasked scores; bytes are the floor
// traffic of a straightforward kernel (each operand read once per reuse tile, outputs written once).
#include "reports/op_costs.hpp"

#include <algorithm>

#include "model/memory.hpp"

namespace salasim::reports {

namespace {

constexpr double kBf16 = 2, kF32 = 4;
// Queries of one tile share their K/V loads: flash attention tiles 128 queries; a sparse query tile is one
// 64-token selection block, whose queries share the local window and most chosen blocks (an assumption; the
// fitted efficiency absorbs what is not shared).
constexpr int64_t kDenseQueryTile = 128;
constexpr int64_t kGlaChunk = 64;  // fla chunk_simple_gla

double sum_floor_prefix(int64_t n, int64_t s) {  // sum of floor(x / s) for x in [0, n)
  if (n <= 0) return 0;
  const int64_t q = n / s, r = n % s;
  return double(s) * double(q) * double(q - 1) / 2 + double(q) * double(r);
}

double sum_mod_prefix(int64_t n, int64_t s) {  // sum of (x mod s) for x in [0, n)
  if (n <= 0) return 0;
  const int64_t q = n / s, r = n % s;
  return double(q) * double(s) * double(s - 1) / 2 + double(r) * double(r - 1) / 2;
}

void add_gemms(std::vector<OpCost>& ops, const Model& m, WeightFormat f, int64_t T, bool logits) {
  for (const GemmGroup& g : m.gemms) {
    if (g.lm_head && !logits) continue;
    const double tokens = g.lm_head ? 1 : double(T);
    const double weights = f == WeightFormat::Bf16 ? g.bytes_bf16 : g.bytes_w4a16;
    // W4A16 dequantises to bf16 in the GEMM's main loop: same FLOPs, fewer weight bytes.
    ops.push_back({g.op, OpClass::Gemm, 2 * tokens * g.params, weights + tokens * g.io_elems * kBf16, 0});
  }
}

// Causal dense attention over the whole cache (flash-attention style), for `layers` layers.
OpCost dense_attention(double layers, int64_t H, int64_t G, int64_t d, int64_t start, int64_t end) {
  const int64_t T = end - start;
  const double keys = sum_causal_keys(start, end);
  const double kv_bytes = double(G) * 2 * d * kBf16 * keys / double(std::min(kDenseQueryTile, T));
  return {"dense_attn", OpClass::DenseAttn, layers * double(H) * 4 * d * keys,
          layers * (kv_bytes + double(T) * H * d * kBf16 * 2), layers * double(H) * keys};
}

std::vector<OpCost> sala_costs(const Model& m, WeightFormat f, int64_t start, int64_t end, bool logits) {
  const ModelConfig& c = m.sala;
  const SparseConfig& sp = c.sparse;
  const int64_t T = end - start;
  const double ns = c.n_layers(Mixer::Sparse), nl = c.n_layers(Mixer::Lightning);
  const int64_t H = c.num_attention_heads, G = c.num_key_value_heads, d = c.head_dim, Q = c.q_dim();
  const int64_t Hl = c.lightning_nh, dl = c.lightning_head_dim, Ld = c.lightning_dim();
  std::vector<OpCost> ops;
  add_gemms(ops, m, f, T, logits);

  // Sparse layers: the whole call is sparse once the keys reach dense_len (HF's per-call rule, docs/spec.md §4.1).
  if (end >= sp.dense_len) {
    const double s1 = sum_visible_windows(start, end, sp.kernel_size, sp.kernel_stride);
    const double s2 = sum_visible_windows(start, end, sp.k2_kernel(), sp.k2_stride());
    const double blocks = sum_causal_blocks(start, end, sp.block_size);
    const double tiles = double((T + sp.block_size - 1) / sp.block_size);
    const double entries = double(k1_entries(c, end) + k2_entries(c, end));
    // Stage 1: every head scores every visible K1 entry and every K2 entry (for the LSE): 2d FLOP and one
    // exponential each. Bytes: scores written and read back by the max-pool (bf16, per kv group), pooled block
    // scores written and read by top-k, compressed keys read once per query tile, q read.
    const double sel_bytes = double(G) * s1 * kBf16 * 2 + double(G) * blocks * kBf16 * 2 +
                             tiles * entries * double(G) * d * kBf16 + double(T) * Q * kBf16;
    ops.push_back({"select", OpClass::Select, ns * H * 2 * d * (s1 + s2), ns * sel_bytes, ns * H * (s1 + s2)});
    // Stage 2: QK and PV over the selected keys (<= 6144), one exponential per score.
    const double keys = sum_selected_keys(start, end, sp.block_size, sp.k_sel());
    const double kv_bytes = double(G) * 2 * d * kBf16 * keys / double(std::min<int64_t>(sp.block_size, T));
    ops.push_back({"sparse_attn", OpClass::SparseAttn, ns * H * 4 * d * keys,
                   ns * (kv_bytes + double(T) * Q * kBf16 * 2), ns * H * keys});
  } else {
    ops.push_back(dense_attention(ns, H, G, d, start, end));
  }

  // Lightning layers: chunked GLA (intra-chunk scores and values 4*64*d, q.S and k^T v 4*d^2 per token and head)
  // or, below 64 tokens, the recurrence (4*d^2). Bytes: q, k, v read and o written in bf16 (32 KiB/token/layer,
  // docs/performance.md's floor) plus the fp32 state in and out; fla's per-chunk states are left to the efficiency.
  const double per_token_head = T >= kGlaChunk ? 4.0 * kGlaChunk * dl + 4.0 * dl * dl : 4.0 * dl * dl;
  ops.push_back({"gla", OpClass::Gla, nl * double(T) * Hl * per_token_head,
                 nl * (double(T) * 4 * Ld * kBf16 + double(Hl) * dl * dl * kF32 * 2), nl * double(T) * Hl});

  // Elementwise ops as separate memory-bound kernels (sala_elementwise_terms; fusing them into GEMM epilogues
  // removes most of this traffic).
  double per_token = 0, exps = 0, per_call = 0;
  for (const ElementwiseTerm& e : sala_elementwise_terms(c)) {
    const double n = term_layers(c, e.scope);
    (e.per_call ? per_call : per_token) += n * e.bytes;
    exps += n * e.exps;
  }
  ops.push_back({"other.elementwise", OpClass::Other, 0, double(T) * per_token + (logits ? per_call : 0),
                 double(T) * exps});
  return ops;
}

std::vector<OpCost> dense_costs(const Model& m, WeightFormat f, int64_t start, int64_t end, bool logits) {
  const DenseConfig& c = m.dense;
  const int64_t T = end - start;
  const double L = c.num_hidden_layers, D = c.hidden_size, I = c.intermediate_size;
  const double Q = c.q_dim(), KV = c.kv_dim();
  std::vector<OpCost> ops;
  add_gemms(ops, m, f, T, logits);
  ops.push_back(dense_attention(L, c.num_attention_heads, c.num_key_value_heads, c.head_dim, start, end));
  // As for SALA, plus q/k norm and RoPE (read + write q and k) in every layer.
  const double per_token = 4 * D + L * (8 * D + 12 * D + 6 * I + 4 * (Q + KV));
  ops.push_back({"other.elementwise", OpClass::Other, 0, double(T) * per_token + (logits ? 4 * D : 0),
                 double(T) * L * I});
  return ops;
}

}  // namespace

// Bytes read and written in bf16 (2 B each) and exponentials, per token: the embedding gather (write D; the row
// read is D); per layer two RMSNorms (read + write D each), two residual adds (read 2D, write D each),
// silu(gate) * up (read 2I, write I; one sigmoid per element); Lightning q/k norm + RoPE (read + write q and k),
// o_norm (read + write Ld), z gate (read 2 Ld, write Ld; one sigmoid each); sparse o_gate (read 2Q, write Q) and
// the K1/K2 pooling (reads k twice); the final norm once, for the position that gets logits.
std::vector<ElementwiseTerm> sala_elementwise_terms(const ModelConfig& c) {
  const double D = c.hidden_size, I = c.intermediate_size, Ld = c.lightning_dim(), Q = c.q_dim(), KV = c.kv_dim();
  const bool gate_l = c.use_output_gate, gate_s = c.attn_use_output_gate;
  std::vector<ElementwiseTerm> t = {
      {"embed", "embedding gather", TermScope::NonLayer, 4 * D, 0, false},
      {"rmsnorm", "input and post-attention norms", TermScope::EveryLayer, 8 * D, 0, false},
      {"residual", "two scaled residual adds", TermScope::EveryLayer, 12 * D, 0, false},
      {"mlp", "silu(gate) * up", TermScope::EveryLayer, 6 * I, I, false},
      {"rope", "q/k per-head norm and RoPE", TermScope::Lightning, 8 * Ld, 0, false},
  };
  if (c.use_output_norm) t.push_back({"rmsnorm", "o_norm", TermScope::Lightning, 4 * Ld, 0, false});
  if (gate_l) t.push_back({"gate", "z gate", TermScope::Lightning, 6 * Ld, Ld, false});
  if (gate_s) t.push_back({"gate", "o_gate", TermScope::Sparse, 6 * Q, Q, false});
  t.push_back({"compress_k", "K1/K2 mean pooling", TermScope::Sparse, 4 * KV, 0, false});
  t.push_back({"rmsnorm", "final norm (last position)", TermScope::NonLayer, 4 * D, 0, true});
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

double sum_causal_keys(int64_t a, int64_t b) {
  if (b <= a) return 0;
  return (double(b) * double(b + 1) - double(a) * double(a + 1)) / 2;
}

double sum_visible_windows(int64_t a, int64_t b, int64_t kernel, int64_t stride) {
  // For p >= kernel - 1 the count is floor((p - kernel + 1) / stride) + 1 = floor((p + t) / stride).
  a = std::max(a, kernel - 1);
  if (b <= a) return 0;
  const int64_t t = stride - kernel + 1;
  return sum_floor_prefix(b + t, stride) - sum_floor_prefix(a + t, stride);
}

double sum_causal_blocks(int64_t a, int64_t b, int64_t block) {
  if (b <= a) return 0;
  return sum_floor_prefix(b, block) - sum_floor_prefix(a, block) + double(b - a);
}

double sum_selected_keys(int64_t a, int64_t b, int64_t block, int64_t k_sel) {
  if (b <= a) return 0;
  const int64_t all_causal_end = k_sel * block;  // below this every causal block is selected
  const double head = sum_causal_keys(a, std::min(b, all_causal_end));
  const int64_t a2 = std::max(a, all_causal_end);
  if (b <= a2) return head;
  const double n = double(b - a2);
  return head + n * double((k_sel - 1) * block + 1) + sum_mod_prefix(b, block) - sum_mod_prefix(a2, block);
}

std::vector<OpCost> call_costs(const Model& m, WeightFormat f, int64_t start, int64_t end, bool logits) {
  return m.kind == ModelKind::Sala ? sala_costs(m, f, start, end, logits) : dense_costs(m, f, start, end, logits);
}

}  // namespace salasim::reports
