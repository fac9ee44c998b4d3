// How the CUDA path cuts its work into launches: the GLA scan's segments and the one-pass chain's, the sparse decode's
// splits, the block selection's LSE partials, sub-chunks and split top-k, and the cuBLAS workspace. These choices set
// reduction orders, so they are part of the GPU path's numerics: they live in this one header, which the kernels
// include and the golden hash covers (gpu/golden_inputs.txt). The memory planner (model/runner_plan.hpp) and the memory
// model read the same functions to size the workspaces, so what is planned is what the kernels carve up. Plain C++, no
// CUDA: the one gpu/ header that code outside gpu/ includes (docs/design.md, "Layout").
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "model/windows.hpp"

namespace salasim {

// ---- GLA: a call of T tokens runs in segments of gla_segment_chunks(T) 64-token chunks, in parallel; the
// workspace holds one fp32 [hd, hd] state per (segment, head): first each segment's own decayed sum, then, after
// the scan over segments, the state entering it. Segments of 8 chunks (512 tokens) give a 16K-token prefill chunk
// 32 segments x 32 heads = 1024 CTAs; past 512 segments they grow instead, so one call over 1M tokens needs 512
// states per head (1 GiB), not 32 GiB.
inline int64_t gla_segment_chunks(int64_t T) {
  const int64_t chunks = (T + 63) / 64;
  return std::max<int64_t>(8, (chunks + 511) / 512);
}
inline int64_t gla_segments(int64_t T) {
  const int64_t per = gla_segment_chunks(T);
  return ((T + 63) / 64 + per - 1) / per;
}
inline size_t gla_segment_states_bytes(int64_t T, int H, int hd) {
  return size_t(gla_segments(T)) * size_t(H) * size_t(hd) * size_t(hd) * sizeof(float);
}

// ---- GLA, the one-pass engine on Hopper (gpu/gla_wgmma.cu): a CTA a segment of kGlaChainChunks chunks of one head;
// segment s waits for the state leaving segment s - 1 of its head, published through a flag and a ring of two fp32
// [hd, hd] states a head: [2][H] flags and a ticket counter (one 256-byte section), then the ring. The chain applies
// the scan's formula link by link, so the segment length also sets the chain's length (a 1M-token call: 2048 links).
constexpr int64_t kGlaChainChunks = 8;
inline int64_t gla_chain_segments(int64_t T) { return ((T + 63) / 64 + kGlaChainChunks - 1) / kGlaChainChunks; }
inline size_t gla_chain_bytes(int H) {
  const size_t sync = (size_t(2 * H + 1) * 4 + 255) / 256 * 256;
  return sync + size_t(2 * H) * 128 * 128 * sizeof(float);
}
// What gla_chunked's workspace must hold for T tokens: enough for either engine (the planner does not know which one
// the GPU it runs on takes).
inline size_t gla_workspace_size(int64_t T, int H, int hd) {
  return std::max(gla_segment_states_bytes(T, H, hd), gla_chain_bytes(H));
}

// ---- sparse_attn for calls of a few queries (decode): each query's block slots in splits of kAttnSplitSlots,
// each split's partial softmax [16 rows] x (max, sum) and [16 rows, 128] fp32 O, for T queries and G groups.
constexpr int kAttnSplitSlots = 2;
constexpr int64_t kAttnSplitMaxT = 4;  // calls of at most this many queries take the split path
inline size_t attn_split_workspace_bytes(int64_t T, int G, int64_t slots) {
  const int64_t nsplit = (slots + kAttnSplitSlots - 1) / kAttnSplitSlots;
  return size_t(T * G * nsplit) * 16 * (8 + 128 * 4);  // per row: float2 (max, sum) + 128 fp32 of O
}

// Counters a sparse prefill adds to (AttnArgs::tile_stats): blocks loaded per query tile, blocks attended, tiles,
// queries; what `salasim run` reports of how much neighbouring queries' selections overlap.
constexpr int kAttnTileStats = 4;
constexpr size_t kAttnTileStatsBytes = kAttnTileStats * 8;

// ---- Block selection workspace for a sub-chunk of `rows` queries against n2 K2 windows and nb blocks:
// [rows, H, nsplit] float2 LSE partials | [rows, H] float LSE2 | [rows, G, nbs] 16-bit pooled block scores |
// [min(rows, 4), G, nseg, 128] int32 candidate ids | the same 16-bit candidate keys, each section 256-byte aligned
// (nsplit = ceil(n2 / select_split_windows(rows)), nseg = ceil(nb / 1024)). The K1 window scores stay in shared
// memory. The candidates are the split top-k's (gpu/select_blocks.cu): sub-chunks of <= 4 queries (decode) past
// 20480 blocks choose per segment of 1024 blocks first, then among the segments' choices.
constexpr int kSelectSplit = 512;      // K2 windows per LSE partial
constexpr int kSelectSplitFine = 128;  // ... in sub-chunks of <= kSelectFineRows queries (decode)
constexpr int64_t kSelectFineRows = 2;
inline int select_split_windows(int64_t rows) { return rows <= kSelectFineRows ? kSelectSplitFine : kSelectSplit; }
constexpr size_t kSelectBudget = size_t(256) << 20;  // what select_workspace_bytes aims at for long sequences
constexpr int64_t kTopkSplitRows = 4;                // sub-chunks of at most this many queries may split top-k
constexpr int64_t kTopkSegment = 1024;               // blocks per segment of the split top-k
constexpr int kTopkCandMax = 128;                    // candidate slots per segment (k_sel <= this to split)

struct SelectLayout {
  int64_t nsplit = 0, nbs = 0, nseg = 0;
  size_t part = 0, lse = 0, pooled = 0, cand_ids = 0, cand_keys = 0, total = 0;  // byte offsets and total
};
inline size_t align256(size_t x) { return (x + 255) / 256 * 256; }
inline SelectLayout select_layout(int64_t rows, int64_t n2, int64_t nb, int H, int G) {
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
inline size_t select_per_query_bytes(int64_t n2, int64_t nb, int H, int G) {
  const SelectLayout many = select_layout(kSelectFineRows + 1, n2, nb, H, G);
  return size_t(H * many.nsplit) * 8 + size_t(H) * 4 + size_t(G * many.nbs) * 2;
}
// min(T_max, budget / per-query) queries (at least one) for sequences of up to len_max keys, and room for a call of
// <= 2 queries, whose finer partials may need more than 3 rows' coarse ones. The kernel takes as many queries a
// sub-chunk as the workspace holds, so this size sets the sub-chunks.
inline size_t select_workspace_bytes(int64_t T_max, int64_t len_max, int H, int G, int kernel, int stride) {
  const int64_t n2 = n_windows(len_max, 4 * kernel, 4 * stride);
  const int64_t nb = (len_max + 4 * stride - 1) / (4 * stride);  // the model's block is 4 strides (64 = 4 x 16)
  const size_t pq = select_per_query_bytes(n2, nb, H, G);
  const SelectLayout one = select_layout(1, n2, nb, H, G);
  const size_t cand = one.total - one.cand_ids;  // <= 4 rows' worth
  const size_t budget = kSelectBudget - std::min(kSelectBudget / 2, kTopkSplitRows * cand);
  const int64_t rows = std::min<int64_t>(T_max, std::max<int64_t>(1, int64_t(budget / pq)));
  return std::max(select_layout(rows, n2, nb, H, G).total,
                  select_layout(std::min(rows, kSelectFineRows), n2, nb, H, G).total);
}

// ---- cuBLAS: the workspace its GEMMs may use (its size can steer cuBLAS's choice of algorithm).
constexpr size_t kCublasWorkspace = size_t(32) << 20;

}  // namespace salasim
