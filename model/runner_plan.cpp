// The CUDA runner's workspace arithmetic (see runner_plan.hpp).
#include "model/runner_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "model/windows.hpp"

namespace salasim {

namespace {
size_t align256(size_t x) { return (x + 255) / 256 * 256; }
}  // namespace

// Segments of 8 chunks (512 tokens) give a 16K-token prefill chunk 32 segments x 32 heads = 1024 CTAs; past 512
// segments they grow instead, so one call over 1M tokens needs 512 states per head (1 GiB), not 32 GiB.
int64_t gla_segment_chunks(int64_t T) {
  const int64_t chunks = (T + 63) / 64;
  return std::max<int64_t>(8, (chunks + 511) / 512);
}
int64_t gla_segments(int64_t T) {
  const int64_t per = gla_segment_chunks(T);
  return ((T + 63) / 64 + per - 1) / per;
}
size_t gla_segment_states_bytes(int64_t T, int H, int hd) {
  return size_t(gla_segments(T)) * size_t(H) * size_t(hd) * size_t(hd) * sizeof(float);
}

size_t attn_split_workspace_bytes(int64_t T, int G, int64_t slots) {
  const int64_t nsplit = (slots + kAttnSplitSlots - 1) / kAttnSplitSlots;
  return size_t(T * G * nsplit) * 16 * (8 + 128 * 4);  // per row: float2 (max, sum) + 128 fp32 of O
}

SelectLayout select_layout(int64_t rows, int64_t n2, int64_t nb, int H, int G) {
  SelectLayout L;
  const int split_w = select_split_windows(rows);
  L.nsplit = std::max<int64_t>(1, (n2 + split_w - 1) / split_w);
  L.nbs = (std::max<int64_t>(nb, 1) + 7) / 8 * 8;
  size_t off = 0;
  L.part = off;
  off += align256(size_t(rows * H * L.nsplit) * 8);  // float2 (max, sum) partials
  L.lse = off;
  off += align256(size_t(rows * H) * 4);
  L.pooled = off;
  off += align256(size_t(rows * G * L.nbs) * 2);
  L.nseg = (std::max<int64_t>(nb, 1) + kTopkSegment - 1) / kTopkSegment;
  const size_t n_cand = size_t(std::min(rows, kTopkSplitRows) * G * L.nseg) * kTopkCandMax;
  L.cand_ids = off;
  off += align256(n_cand * 4);
  L.cand_keys = off;
  off += align256(n_cand * 2);
  L.total = off;
  return L;
}

// A query's share of a sub-chunk of many (512-window partials; the few of decode fit with room to spare).
size_t select_per_query_bytes(int64_t n2, int64_t nb, int H, int G) {
  const SelectLayout many = select_layout(kSelectFineRows + 1, n2, nb, H, G);
  return size_t(H * many.nsplit) * 8 + size_t(H) * 4 + size_t(G * many.nbs) * 2;
}

size_t select_workspace_bytes(int64_t T_max, int64_t len_max, int H, int G, int kernel, int stride) {
  const int64_t n2 = n_windows(len_max, 4 * kernel, 4 * stride);
  const int64_t nb = (len_max + 4 * stride - 1) / (4 * stride);  // the model's block is 4 strides (64 = 4 x 16)
  const size_t pq = select_per_query_bytes(n2, nb, H, G);
  const SelectLayout one = select_layout(1, n2, nb, H, G);
  const size_t cand = one.total - one.cand_ids;  // <= 4 rows' worth
  const size_t budget = kSelectBudget - std::min(kSelectBudget / 2, kTopkSplitRows * cand);
  const int64_t rows = std::min<int64_t>(T_max, std::max<int64_t>(1, int64_t(budget / pq)));
  // and room for a call of <= 2 queries, whose finer partials may need more than 3 rows' coarse ones
  return std::max(select_layout(rows, n2, nb, H, G).total,
                  select_layout(std::min(rows, kSelectFineRows), n2, nb, H, G).total);
}

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
  w.gla_ws = c.n_layers(Mixer::Lightning) ? gla_segment_states_bytes(C, c.lightning_nh, c.lightning_head_dim) : 0;
  const bool sparse = c.n_layers(Mixer::Sparse) > 0;
  w.blocks = sparse ? 2 * size_t(C * c.num_key_value_heads * c.sparse.k_sel()) * 4 : 0;  // computed + forced
  w.sel_ws = sparse ? select_workspace_bytes(C, max_context, c.num_attention_heads, c.num_key_value_heads,
                                             c.sparse.kernel_size, c.sparse.kernel_stride)
                    : 0;
  w.scores = sparse && taps
                 ? size_t(C * c.num_key_value_heads * ((max_context + c.sparse.block_size - 1) / c.sparse.block_size)) * 4
                 : 0;
  // decode (and prefill pieces of <= 4 tokens): k_sel slots when sparse, every block below dense_len when dense
  w.attn_ws = sparse ? attn_split_workspace_bytes(kAttnSplitMaxT, c.num_key_value_heads,
                                                  std::max<int64_t>(c.sparse.k_sel(), (c.sparse.dense_len + c.sparse.block_size - 1) /
                                                                                           c.sparse.block_size))
                     : 0;
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
      {"attention split partials", mib(attn_ws), attn_ws, "decode: per split of 8 blocks, 16 rows of (max, sum, O)"},
      {"cuBLAS workspace", "32 MiB", cublas, "cublasSetWorkspace"},
  };
  return r;
}

}  // namespace salasim
