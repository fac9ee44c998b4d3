// The head shapes and the selection rules of a sparse layer (docs/spec.md §4.2-4.5), in the one form the reference
// (ref::select_blocks, as ref::SelectParams) and the GPU path's argument builders (gpu/sparse_args.hpp) both take:
// the config's (sparse_rules), or the attributes of an op's input file (ops/select_blocks.cpp).
#pragma once
#include "model/config.hpp"

namespace salasim {

struct SparseRules {
  int heads = 32, groups = 2, hd = 128;
  double tau = 0;
  int kernel = 32, stride = 16;  // K1; K2 is 4x both
  int block = 64;
  int init_blocks = 1, local_blocks = 32, k_sel = 96;
};

inline SparseRules sparse_rules(const ModelConfig& c) {
  SparseRules r;
  r.heads = c.num_attention_heads, r.groups = c.num_key_value_heads, r.hd = c.head_dim, r.tau = c.attn_scale();
  r.kernel = c.sparse.kernel_size, r.stride = c.sparse.kernel_stride, r.block = c.sparse.block_size;
  r.init_blocks = c.sparse.init_blocks, r.local_blocks = c.sparse.local_blocks(), r.k_sel = c.sparse.k_sel();
  return r;
}

}  // namespace salasim
