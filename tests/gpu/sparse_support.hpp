// Helpers of the sparse-layer GPU tests (compress_k, select_blocks, sparse_attn): the model's sparse parameters,
// per-kv-head key matrices in the GPU's [G, cap, hd] cache layout with poisoned rows past the valid ones, and
// block-id / score taps for compare_selection.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpu/common.hpp"
#include "gpu/sparse_args.hpp"
#include "model/config.hpp"
#include "model/taps.hpp"
#include "reference/model.hpp"
#include "reference/ops.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/random.hpp"

namespace salasim::test {

constexpr gpu::bf16_t kBf16NaN = 0xffff;  // what test::poison leaves in a bf16 buffer

inline ref::SelectParams real_select_params() { return sparse_rules(load_config(real_config())); }

// G bf16-valued [rows, hd] matrices (one per kv head), fresh random.
inline std::vector<ref::Mat> rand_heads(int G, int64_t rows, int hd, uint64_t seed, double scale) {
  std::vector<ref::Mat> m;
  for (int g = 0; g < G; ++g) m.push_back(bf16_round(randn(rows, hd, seed + 7919 * uint64_t(g), scale)));
  return m;
}

// [G, cap, hd] bf16 device cache of the first `valid` rows of each head; rows valid .. cap-1 hold NaN, so a kernel
// that reads past what exists poisons its output.
inline gpu::Buffer<gpu::bf16_t> upload_heads(const std::vector<ref::Mat>& heads, int64_t valid, int64_t cap) {
  const int64_t G = int64_t(heads.size()), hd = heads[0].cols();
  std::vector<gpu::bf16_t> v(size_t(G * cap * hd), kBf16NaN);
  for (int64_t g = 0; g < G; ++g)
    for (int64_t r = 0; r < valid; ++r)
      for (int64_t d = 0; d < hd; ++d)
        v[size_t((g * cap + r) * hd + d)] = bf16_from_float(float(heads[size_t(g)](r, d)));
  return gpu::to_device(v, "test kv-head cache");
}

// Rows [0, n) of every head of a [G, cap, hd] bf16 device buffer, stacked into [G * n, hd].
inline ref::Mat download_heads(const gpu::Buffer<gpu::bf16_t>& b, int64_t G, int64_t cap, int64_t n, int64_t hd) {
  const std::vector<gpu::bf16_t> v = b.download();
  ref::Mat m(G * n, hd);
  for (int64_t g = 0; g < G; ++g)
    for (int64_t r = 0; r < n; ++r)
      for (int64_t d = 0; d < hd; ++d) m(g * n + r, d) = double(float_from_bf16(v[size_t((g * cap + r) * hd + d)]));
  return m;
}

// Stacks the heads' rows into one [G * rows, hd] matrix (the reference side of download_heads).
inline ref::Mat stack(const std::vector<ref::Mat>& heads) {
  int64_t rows = 0;
  for (const ref::Mat& h : heads) rows += h.rows();
  ref::Mat m(rows, heads[0].cols());
  int64_t r = 0;
  for (const ref::Mat& h : heads) {
    m.middleRows(r, h.rows()) = h;
    r += h.rows();
  }
  return m;
}

// Compressed keys of every head over `len` keys, bf16-valued (the peer rounds the means as the GPU stores them).
inline std::vector<ref::Mat> compress_heads(const std::vector<ref::Mat>& K, int64_t len, int kernel, int stride) {
  std::vector<ref::Mat> ck;
  for (const ref::Mat& k : K) ck.push_back(ref::compress_k(k, len, kernel, stride, ref::peer()));
  return ck;
}

inline Tap ids_tap(const std::vector<int32_t>& v, int64_t T, int64_t G, int64_t K) {
  return Tap{{T, G, K}, std::vector<double>(v.begin(), v.end()), true, 0};
}

inline Tap scores_tap(const std::vector<double>& v, int64_t T, int64_t G, int64_t NB) {
  return Tap{{T, G, NB}, v, false, 0};
}

// A [T, G, NB] score array as a [T * G, NB] matrix for check_gate.
inline ref::Mat scores_mat(const std::vector<double>& v, int64_t rows, int64_t NB) {
  ref::Mat m(rows, NB);
  for (int64_t i = 0; i < rows * NB; ++i) m.data()[i] = v[size_t(i)];
  return m;
}

}  // namespace salasim::test
