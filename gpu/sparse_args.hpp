// The one way SelectArgs and AttnArgs are filled, for every caller: `salasim op --backend gpu`
// (scenarios/op_gpu.cpp), the op cases of the benchmarks and GPU tests (bench/op_cases.cpp) and the kernels' own
// tests. Each starts from a sparse layer's rules (model/sparse_rules.hpp, the struct the reference takes) and its
// tensors on the device; the builders set the structs' fields from them, so no caller writes a field list of its own.
// The runner (gpu/runner.cpp) still fills its own: moving it onto these builders changes what the GPU path compiles,
// so it lands with the goldens re-recorded on a GPU (the branch `integ` has it; issue 34). Header-only so that until
// then no GPU translation unit includes it and the golden hash is the goldens'.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gpu/select_blocks.hpp"
#include "gpu/sparse_attn.hpp"
#include "model/sparse_rules.hpp"

namespace salasim::gpu {

// Queries [T, H*hd] (row stride ldq) at positions pos0 .. pos0 + T - 1.
struct QueryRows {
  const bf16_t* q = nullptr;
  int64_t ldq = 0, T = 0, pos0 = 0;
};

// A sparse layer's caches on the device: keys and values [G, cap, hd], compressed keys [G, cap1, hd] (K1) and
// [G, cap2, hd] (K2). A caller that runs only one of the two ops leaves the other's tensors null.
struct SparseCache {
  const bf16_t* K = nullptr;
  const bf16_t* V = nullptr;
  int64_t cap = 0;
  const bf16_t* K1 = nullptr;
  int64_t cap1 = 0;
  const bf16_t* K2 = nullptr;
  int64_t cap2 = 0;
};

// Device scratch memory: select_blocks_workspace or sparse_attn_workspace_bytes bytes.
struct Scratch {
  void* p = nullptr;
  size_t bytes = 0;
};

// blocks: out [T, G, k_sel]; scores: out [T, G, n_blocks], or nullptr when not asked for. Engine and geometry stay
// automatic (a caller comparing them sets them after).
inline SelectArgs select_args(const SparseRules& r, const QueryRows& q, const SparseCache& c, int32_t* blocks,
                              float* scores, int64_t n_blocks, Scratch ws) {
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

// blocks: [T, G, r.k_sel] selected blocks, or nullptr for dense attention over every causal block; out: [T, H*hd],
// row stride ldo.
inline AttnArgs attn_args(const SparseRules& r, const QueryRows& q, const SparseCache& c, const int32_t* blocks,
                          bf16_t* out, int64_t ldo, Scratch ws) {
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
