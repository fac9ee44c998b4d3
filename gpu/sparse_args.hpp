// The one way SelectArgs and AttnArgs are filled, for every caller: the runner, `salasim op --backend gpu`
// (scenarios/op_gpu.cpp), the op cases of the benchmarks and GPU tests (bench/op_cases.cpp) and the kernels' own
// tests. Each starts from a sparse layer's rules (model/sparse_rules.hpp, the struct the reference takes) and its
// tensors on the device; the builders set the structs' fields from them, so no caller writes a field list of its own.
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
SelectArgs select_args(const SparseRules& r, const QueryRows& q, const SparseCache& c, int32_t* blocks, float* scores,
                       int64_t n_blocks, Scratch ws);
// blocks: [T, G, r.k_sel] selected blocks, or nullptr for dense attention over every causal block; out: [T, H*hd],
// row stride ldo.
AttnArgs attn_args(const SparseRules& r, const QueryRows& q, const SparseCache& c, const int32_t* blocks, bf16_t* out,
                   int64_t ldo, Scratch ws);

}  // namespace salasim::gpu
