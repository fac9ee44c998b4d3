// The builders of gpu/sparse_args.hpp.
#include "gpu/sparse_args.hpp"

namespace salasim::gpu {

SelectArgs select_args(const SparseRules& r, const QueryRows& q, const SparseCache& c, int32_t* blocks, float* scores,
                       int64_t n_blocks, Scratch ws) {
  SelectArgs a;
  a.q = q.q, a.ldq = q.ldq, a.T = q.T, a.pos0 = q.pos0;
  a.k1 = c.K1, a.k1_cap = c.cap1, a.k2 = c.K2, a.k2_cap = c.cap2;
  a.H = r.heads, a.G = r.groups, a.hd = r.hd, a.tau = float(r.tau);
  a.kernel = r.kernel, a.stride = r.stride, a.block = r.block;
  a.init_blocks = r.init_blocks, a.local_blocks = r.local_blocks, a.k_sel = r.k_sel;
  a.blocks = blocks, a.scores = scores, a.n_blocks = n_blocks;
  a.workspace = ws.p, a.workspace_bytes = ws.bytes;
  return a;
}

AttnArgs attn_args(const SparseRules& r, const QueryRows& q, const SparseCache& c, const int32_t* blocks, bf16_t* out,
                   int64_t ldo, Scratch ws) {
  AttnArgs a;
  a.q = q.q, a.ldq = q.ldq, a.T = q.T, a.pos0 = q.pos0;
  a.K = c.K, a.V = c.V, a.cap = c.cap;
  a.H = r.heads, a.G = r.groups, a.hd = r.hd, a.tau = float(r.tau), a.block = r.block;
  a.blocks = blocks, a.k_sel = r.k_sel;
  a.out = out, a.ldo = ldo;
  a.workspace = ws.p, a.workspace_bytes = ws.bytes;
  return a;
}

}  // namespace salasim::gpu
