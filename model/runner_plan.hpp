// What the CUDA runner allocates besides weights and caches, as plain arithmetic: the activations of one prefill
// chunk, the GLA segment states, the block-selection workspace (its sub-chunk layout too, which the kernel carves
// up) and the cuBLAS workspace. gpu/ allocates exactly these and reports/ models memory with them, so the planner
// and the analytic report cannot disagree.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace salasim {

// ---- GLA: a call of T tokens runs in segments of gla_segment_chunks(T) 64-token chunks, in parallel; the
// workspace holds one fp32 [hd, hd] state per (segment, head): first each segment's own decayed sum, then, after
// the scan over segments, the state entering it.
int64_t gla_segment_chunks(int64_t T);
int64_t gla_segments(int64_t T);
size_t gla_segment_states_bytes(int64_t T, int H, int hd);

// ---- sparse_attn for calls of a few queries (decode): each query's block slots in splits of kAttnSplitSlots,
// each split's partial softmax [16 rows] x (max, sum) and [16 rows, 128] fp32 O, for T queries and G groups.
constexpr int kAttnSplitSlots = 2;
constexpr int64_t kAttnSplitMaxT = 4;  // calls of at most this many queries take the split path
size_t attn_split_workspace_bytes(int64_t T, int G, int64_t slots);

// ---- Block selection workspace for a sub-chunk of `rows` queries against n2 K2 windows and nb blocks:
// [rows, H, nsplit] float2 LSE partials | [rows, H] float LSE2 | [rows, G, nbs] 16-bit pooled block scores |
// [min(rows, 4), G, nseg, 128] int32 candidate ids | the same 16-bit candidate keys, each section 256-byte aligned
// (nsplit = ceil(n2 / select_split_windows(rows)), nseg = ceil(nb / 1024)). The K1 window scores stay in shared
// memory. The candidates are the split top-k's (gpu/select_blocks.cu): sub-chunks of <= 4 queries (decode) past
// 20480 blocks choose per segment of 1024 blocks first, then among the segments' choices.
constexpr int kSelectSplit = 512;                          // K2 windows per LSE partial
constexpr int kSelectSplitFine = 128;                      // ... in sub-chunks of <= kSelectFineRows queries (decode)
constexpr int64_t kSelectFineRows = 2;
inline int select_split_windows(int64_t rows) { return rows <= kSelectFineRows ? kSelectSplitFine : kSelectSplit; }
constexpr size_t kSelectBudget = size_t(256) << 20;        // what select_workspace_bytes aims at for long sequences
constexpr int64_t kTopkSplitRows = 4;                      // sub-chunks of at most this many queries may split top-k
constexpr int64_t kTopkSegment = 1024;                     // blocks per segment of the split top-k
constexpr int kTopkCandMax = 128;                          // candidate slots per segment (k_sel <= this to split)
struct SelectLayout {
  int64_t nsplit = 0, nbs = 0, nseg = 0;
  size_t part = 0, lse = 0, pooled = 0, cand_ids = 0, cand_keys = 0, total = 0;  // byte offsets and total
};
SelectLayout select_layout(int64_t rows, int64_t n2, int64_t nb, int H, int G);
size_t select_per_query_bytes(int64_t n2, int64_t nb, int H, int G);
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
  size_t gla_ws = 0, blocks = 0, sel_ws = 0, scores = 0, attn_ws = 0, cublas = 0;
  std::vector<RunnerBuffer> rows() const;  // every buffer, named, with its shape and reason
  size_t activations() const { return h + a + y + proj + attn + gu + act + tokens + logits; }
  size_t total() const { return activations() + gla_ws + blocks + sel_ws + scores + attn_ws + cublas; }
};
constexpr size_t kCublasWorkspace = size_t(32) << 20;
RunnerWorkspace runner_workspace(const ModelConfig& c, int64_t chunk, int64_t max_context, bool taps);

}  // namespace salasim
