// The last step of select_blocks (gpu/select_blocks.cu's topk kernel) on given pooled keys, for tests: the top-k
// rule alone at sizes (40K blocks, exact ties, odd strides, unaligned rows) the full op reaches only through
// millions of keys.
#pragma once
#include <cstdint>

#include "gpu/common.hpp"

namespace salasim::gpu::detail {

struct TopkArgs {
  // [T, G, nbs] 16-bit keys (bf16 bits of the pooled scores): query t, at position pos0 + t, reads blocks
  // 0 .. (pos0 + t) / block of its row. Any 2-byte alignment and any nbs >= those blocks.
  const uint16_t* keys = nullptr;
  int64_t nbs = 0;
  int64_t T = 0, pos0 = 0;
  int G = 2, block = 64, init_blocks = 1, local_blocks = 32, k_sel = 96;
  int32_t* blocks = nullptr;  // out [T, G, k_sel]: forced + the top of the others, ascending, -1 padding
  float* scores = nullptr;    // optional out [T, G, n_blocks]: the keys as floats, +inf forced, -inf past the query
  int64_t n_blocks = 0;
  // The split top-k (per 1024-block segment, then among the segments' choices): where select_blocks takes it (auto:
  // <= 4 queries, > 20480 blocks, no scores, k_sel <= 128), never, or always (<= 4 queries, no scores, k_sel <= 128).
  enum class Split { automatic, never, always };
  Split split = Split::automatic;
};

// Launches the topk kernel exactly as select_blocks does for a sub-chunk of T queries.
void topk_for_test(const TopkArgs& a, Stream s);

}  // namespace salasim::gpu::detail
