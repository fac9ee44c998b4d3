// The prefill workspace tables. Edit a row here and every report, test and `salasim model memory` follows.
#include "reports/workspace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "model/memory.hpp"
#include "model/runner_plan.hpp"

namespace salasim::reports {

namespace {

constexpr int64_t kBf16 = 2, kF32 = 4, kI32 = 4;

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
  // cuBLAS's recommended workspace on Hopper is 32 MiB (cublasSetWorkspace documentation); a fixed term
  t.push_back({"cublas_workspace", "32 MiB", "all", int64_t(kCublasWorkspace), "cuBLAS GEMM workspace (fixed)"});
}

void add_mlp(std::vector<WorkspaceTerm>& t, int64_t C, int64_t I) {
  t.push_back({"mlp_gate_up", fmt::format("[C={}, 2I={}] bf16", C, 2 * I), "mlp", C * 2 * I * kBf16,
               "fused gate and up projections"});
  t.push_back({"mlp_act", fmt::format("[C={}, I={}] bf16", C, I), "mlp", C * I * kBf16,
               "silu(gate) * up, the down projection's input"});
}

}  // namespace

std::vector<WorkspaceTerm> sala_prefill_workspace(const ModelConfig& c, const WorkspaceParams& p, int64_t context) {
  // MiniCPM-SALA: exactly what the CUDA runner allocates (model/runner_plan.hpp), all of it up front, so every row
  // is live at the peak ("all"). The planner of gpu/ sums the same rows.
  std::vector<WorkspaceTerm> t;
  for (const RunnerBuffer& b : runner_workspace(c, p.chunk, context, false).rows())
    if (b.bytes > 0) t.push_back({b.name, b.shape, "all", int64_t(b.bytes), b.why});
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
