// What the CUDA runner allocates besides weights and caches, as plain arithmetic: the activations of one prefill
// chunk, the GLA chunk states, the block-selection workspace (its sub-chunk layout too, which the kernel carves
// up) and the cuBLAS workspace. gpu/ allocates exactly these and reports/ models memory with them, so the planner
// and the analytic report cannot disagree.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace salasim {

// ---- GLA: one fp32 [hd, hd] state per (64-token chunk, head) of a call of T tokens.
size_t gla_chunk_states_bytes(int64_t T, int H, int hd);

// ---- Block selection workspace for a sub-chunk of `rows` queries against n1 K1 windows, n2 K2 windows and nb
// blocks: [rows, H, nsplit] float2 LSE partials | [rows, H] float LSE2 | [rows, G, n1s] bf16 scores |
// [rows, G, nbs] bf16 pooled scores, each section 256-byte aligned (nsplit = ceil(n2 / 512)).
constexpr int kSelectSplit = 512;                          // K2 windows per LSE partial
constexpr size_t kSelectBudget = size_t(256) << 20;        // what select_workspace_bytes aims at for long sequences
struct SelectLayout {
  int64_t nsplit = 0, n1s = 0, nbs = 0;
  size_t part = 0, lse = 0, scores = 0, pooled = 0, total = 0;  // byte offsets and total
};
SelectLayout select_layout(int64_t rows, int64_t n1, int64_t n2, int64_t nb, int H, int G);
size_t select_per_query_bytes(int64_t n1, int64_t n2, int64_t nb, int H, int G);
// min(T_max, budget / per-query) queries (at least one) for sequences of up to len_max keys.
size_t select_workspace_bytes(int64_t T_max, int64_t len_max, int H, int G, int kernel, int stride);

// ---- The runner's transient buffers for chunk C = min(chunk, max_context).
struct RunnerBuffer {
  std::string name;   // "fused projection"
  std::string shape;  // "[16384, 16384] bf16"
  size_t bytes = 0;
  std::string why;
};
struct RunnerWorkspace {
  int64_t chunk = 0;
  size_t h = 0, a = 0, y = 0, proj = 0, attn = 0, gu = 0, act = 0, tokens = 0, logits = 0;  // activations
  size_t gla_ws = 0, blocks = 0, sel_ws = 0, scores = 0, cublas = 0;
  std::vector<RunnerBuffer> rows() const;  // every buffer, named, with its shape and reason
  size_t activations() const { return h + a + y + proj + attn + gu + act + tokens + logits; }
  size_t total() const { return activations() + gla_ws + blocks + sel_ws + scores + cublas; }
};
constexpr size_t kCublasWorkspace = size_t(32) << 20;
RunnerWorkspace runner_workspace(const ModelConfig& c, int64_t chunk, int64_t max_context, bool taps);

}  // namespace salasim
