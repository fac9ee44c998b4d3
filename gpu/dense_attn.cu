// dense_attn: causal GQA attention over every cached key j <= p, the rule below dense_len (docs/spec.md §4.1). It is
// sparse_attn's kernel with no selection: a query's block list is then "every block up to its own", so the dense
// and sparse paths share one online softmax, one tiling and one rounding, and cannot drift apart.
#include "gpu/sparse_attn.hpp"

namespace salasim::gpu {

void dense_attn(AttnArgs a, Stream s) {
  a.blocks = nullptr;
  sparse_attn(a, s);
}

}  // namespace salasim::gpu
