// The CUDA runner's workspace arithmetic (see runner_plan.hpp).
#include "model/runner_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace salasim {

RunnerWorkspace runner_workspace(const ModelConfig& c, int64_t chunk, int64_t max_context, bool taps) {
  const int64_t C = std::min(chunk, max_context), D = c.hidden_size;
  const int64_t proj_w = std::max<int64_t>(4 * c.lightning_dim(), 2 * c.q_dim() + 2 * c.kv_dim());
  RunnerWorkspace w;
  w.chunk = C;
  w.h = w.a = w.y = size_t(C * D) * 2;
  w.proj = size_t(C * proj_w) * 2;
  w.attn = size_t(C * std::max(c.q_dim(), c.lightning_dim())) * 2;
  w.gu = size_t(C * 2 * c.intermediate_size) * 2;
  w.act = size_t(C * c.intermediate_size) * 2;
  w.tokens = size_t(C) * 4;
  w.logits = size_t(c.vocab_size) * (2 + 4);
  w.gla_ws = c.n_layers(Mixer::Lightning) ? gla_workspace_size(C, c.lightning_nh, c.lightning_head_dim) : 0;
  const bool sparse = c.n_layers(Mixer::Sparse) > 0;
  w.blocks = sparse ? 2 * size_t(C * c.num_key_value_heads * c.sparse.k_sel()) * 4 : 0;  // computed + forced
  w.sel_ws = sparse ? select_workspace_bytes(C, max_context, c.num_attention_heads, c.num_key_value_heads,
                                             c.sparse.kernel_size, c.sparse.kernel_stride)
                    : 0;
  w.scores =
      sparse && taps
          ? size_t(C * c.num_key_value_heads * ((max_context + c.sparse.block_size - 1) / c.sparse.block_size)) * 4
          : 0;
  // decode (and prefill pieces of <= 4 tokens): k_sel slots when sparse, every block below dense_len when dense
  w.attn_ws = sparse ? attn_split_workspace_bytes(kAttnSplitMaxT, c.num_key_value_heads,
                                                  std::max<int64_t>(c.sparse.k_sel(),
                                                                    (c.sparse.dense_len + c.sparse.block_size - 1) /
                                                                        c.sparse.block_size))
                     : 0;
  w.attn_stats = sparse ? kAttnTileStatsBytes : 0;
  w.cublas = kCublasWorkspace;
  return w;
}

std::vector<RunnerBuffer> RunnerWorkspace::rows() const {
  auto mib = [](size_t b) { return fmt::format("{:.1f} MiB", double(b) / double(1 << 20)); };
  std::vector<RunnerBuffer> r = {
      {"residual stream h", fmt::format("[C={}, D] bf16", chunk), h, "the chunk's hidden states through every layer"},
      {"normed input a", fmt::format("[C={}, D] bf16", chunk), a, "RMSNorm output, input of the projections"},
      {"branch output y", fmt::format("[C={}, D] bf16", chunk), y, "o_proj / down_proj output before the residual"},
      {"fused projection", fmt::format("[C={}, max(4 Ld, 2Q + 2KV)] bf16", chunk), proj,
       "q|k|v|z (Lightning) or q|k|v|o_gate (sparse) of one GEMM"},
      {"mixer output", fmt::format("[C={}, max(Q, Ld)] bf16", chunk), attn, "attention / GLA output, gated in place"},
      {"mlp gate|up", fmt::format("[C={}, 2I] bf16", chunk), gu, "the fused gate and up projections"},
      {"mlp activation", fmt::format("[C={}, I] bf16", chunk), act, "silu(gate) * up"},
      {"tokens + logits", "[C] int32 + [V] bf16 + [V] fp32", tokens + logits, "inputs and the last token's logits"},
      {"GLA segment states", fmt::format("[C/512, H, hd, hd] fp32"), gla_ws, "state entering every 512-token segment"},
      {"selected blocks", "2 x [C, G, 96] int32", blocks, "computed and teacher-forced block ids"},
      {"selection workspace", mib(sel_ws), sel_ws, "score sub-chunks of <= 256 MiB (model/runner_plan.cpp)"},
      {"block score taps", "[C, G, n_blocks] fp32", scores, "only when taps are recorded (verify)"},
      {"attention split partials", mib(attn_ws), attn_ws, "decode: per split of 2 blocks, 16 rows of (max, sum, O)"},
      {"sparse_attn tile counters", "[4] u64", attn_stats, "what run reports of the prefill's query tiles"},
      {"cuBLAS workspace", "32 MiB", cublas, "cublasSetWorkspace"},
  };
  return r;
}

}  // namespace salasim
