// The prefill workspace tables. Edit a row here and every report, test and `salasim model memory` follows.
#include "reports/workspace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "model/memory.hpp"

namespace salasim::reports {

namespace {

constexpr int64_t kBf16 = 2, kF32 = 4, kI32 = 4;
// cuBLAS's recommended workspace on Hopper is 32 MiB (cublasSetWorkspace documentation); a fixed term.
constexpr int64_t kCublasWorkspace = int64_t(32) << 20;

// Rows shared by both model kinds: the residual stream, the normed input, the branch output and the logits.
void add_common(std::vector<WorkspaceTerm>& t, int64_t C, int64_t D, int64_t V) {
  t.push_back({"residual", fmt::format("[C={}, D={}] bf16", C, D), "all", C * D * kBf16,
               "residual stream h of the chunk, carried through every layer"});
  t.push_back({"normed_input", fmt::format("[C={}, D={}] bf16", C, D), "all", C * D * kBf16,
               "RMSNorm output a, the input of the mixer or MLP projections"});
  t.push_back({"branch_out", fmt::format("[C={}, D={}] bf16", C, D), "all", C * D * kBf16,
               "o_proj / down_proj result before the scaled residual add"});
  t.push_back({"logits", fmt::format("[1, V={}] fp32", V), "all", V * kF32,
               "lm_head output of the last prompt token only"});
  t.push_back({"cublas_workspace", "32 MiB", "all", kCublasWorkspace, "cuBLAS GEMM workspace (fixed)"});
}

void add_mlp(std::vector<WorkspaceTerm>& t, int64_t C, int64_t I) {
  t.push_back({"mlp_gate_up", fmt::format("[C={}, 2I={}] bf16", C, 2 * I), "mlp", C * 2 * I * kBf16,
               "fused gate and up projections"});
  t.push_back({"mlp_act", fmt::format("[C={}, I={}] bf16", C, I), "mlp", C * I * kBf16,
               "silu(gate) * up, the down projection's input"});
}

}  // namespace

std::vector<WorkspaceTerm> sala_prefill_workspace(const ModelConfig& c, const WorkspaceParams& p, int64_t context) {
  const int64_t C = std::min(p.chunk, context);
  const int64_t D = c.hidden_size, I = c.intermediate_size, V = c.vocab_size;
  const int64_t Ld = c.lightning_dim(), H = c.lightning_nh, d = c.lightning_head_dim;
  const int64_t Q = c.q_dim(), KV = c.kv_dim(), Hs = c.num_attention_heads, G = c.num_key_value_heads;
  const int64_t gla_chunk = 64;  // fla's chunk_simple_gla chunk (sala-spec §3.1)
  std::vector<WorkspaceTerm> t;
  add_common(t, C, D, V);

  // Lightning layers.
  t.push_back({"lightning_qkvz", fmt::format("[C={}, 4x{}] bf16", C, Ld), "lightning", C * 4 * Ld * kBf16,
               "fused q, k, v, z projections; q/k norm and RoPE run in place"});
  t.push_back({"lightning_out", fmt::format("[C={}, {}] bf16", C, Ld), "lightning", C * Ld * kBf16,
               "GLA output, then o_norm and the z gate in place"});
  const int64_t n_chunks = (C + gla_chunk - 1) / gla_chunk;
  t.push_back({"gla_chunk_states", fmt::format("[C/64={}, H={}, {}, {}] fp32", n_chunks, H, d, d), "lightning",
               n_chunks * H * d * d * kF32, "state entering every 64-token chunk (chunked GLA form, fp32)"});

  // Sparse layers.
  t.push_back({"sparse_qkv_gate", fmt::format("[C={}, {}+2x{}+{}] bf16", C, Q, KV, Q), "sparse",
               C * (2 * Q + 2 * KV) * kBf16, "fused q, k, v and o_gate projections"});
  t.push_back({"sparse_out", fmt::format("[C={}, {}] bf16", C, Q), "sparse", C * Q * kBf16,
               "attention output, gated in place"});
  t.push_back({"attn_lse", fmt::format("[C={}, H={}] fp32", C, Hs), "sparse", C * Hs * kF32,
               "softmax log-sum-exp per query and head"});
  if (context >= c.sparse.dense_len) {
    // Selection scratch grows with the keys seen, so it is sized for the last chunk; it is processed in query
    // sub-chunks so that it stays a few hundred MiB at 2048K instead of C x n1 x 2 B (8 GiB).
    const int64_t Qs = std::min(p.select_subchunk, C);
    const int64_t n1 = k1_entries(c, context);
    const int64_t nblk = (context + c.sparse.block_size - 1) / c.sparse.block_size;
    t.push_back({"select_scores", fmt::format("[Qs={}, G={}, n1={}] bf16", Qs, G, n1), "sparse", Qs * G * n1 * kBf16,
                 "stage-1 scores s_g(p, c) of a query sub-chunk against every K1 entry"});
    t.push_back({"select_lse", fmt::format("[Qs={}, H={}] fp32", Qs, Hs), "sparse", Qs * Hs * kF32,
                 "K2 log-sum-exp per query and head (the scores' normaliser)"});
    t.push_back({"select_block_scores", fmt::format("[Qs={}, G={}, blocks={}] bf16", Qs, G, nblk), "sparse",
                 Qs * G * nblk * kBf16, "max-pooled 64-token block scores that top-k reads"});
    t.push_back({"selected_blocks", fmt::format("[C={}, G={}, K={}] int32", C, G, c.sparse.k_sel()), "sparse",
                 C * G * c.sparse.k_sel() * kI32, "top-96 block indices per query and kv group, for stage 2"});
  }
  add_mlp(t, C, I);
  return t;
}

std::vector<WorkspaceTerm> dense_prefill_workspace(const DenseConfig& c, const WorkspaceParams& p, int64_t context) {
  const int64_t C = std::min(p.chunk, context);
  const int64_t D = c.hidden_size, I = c.intermediate_size, V = c.vocab_size;
  const int64_t Q = c.q_dim(), KV = c.kv_dim(), H = c.num_attention_heads;
  std::vector<WorkspaceTerm> t;
  add_common(t, C, D, V);
  t.push_back({"attn_qkv", fmt::format("[C={}, {}+2x{}] bf16", C, Q, KV), "attn", C * (Q + 2 * KV) * kBf16,
               "fused q, k, v projections; q/k norm and RoPE in place, k and v then copied to the cache"});
  t.push_back({"attn_out", fmt::format("[C={}, {}] bf16", C, Q), "attn", C * Q * kBf16,
               "flash-attention output (no score matrix is materialised)"});
  t.push_back({"attn_lse", fmt::format("[C={}, H={}] fp32", C, H), "attn", C * H * kF32,
               "softmax log-sum-exp per query and head"});
  add_mlp(t, C, I);
  return t;
}

int64_t workspace_peak(const std::vector<WorkspaceTerm>& terms) {
  int64_t shared = 0, largest = 0;
  std::map<std::string, int64_t> per_phase;
  for (const WorkspaceTerm& w : terms) {
    if (w.phase == "all") shared += w.bytes;
    else per_phase[w.phase] += w.bytes;
  }
  for (const auto& [phase, bytes] : per_phase) largest = std::max(largest, bytes);
  return shared + largest;
}

}  // namespace salasim::reports
