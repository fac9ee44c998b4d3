// Between an op's checked inputs (ops/io.hpp) and the reference's matrices (reference/tensor.hpp), for the reference
// calls of the op definitions (ops/<name>.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "model/taps.hpp"
#include "ops/inputs.hpp"
#include "reference/tensor.hpp"

namespace salasim::op {

// [rows, cols] row-major (rank 1: one row).
inline ref::Mat mat(const InputDataset& d) {
  const int64_t rows = d.shape.size() == 1 ? 1 : d.shape[0], cols = d.shape.back();
  return Eigen::Map<const ref::Mat>(d.data.data(), rows, cols);
}
// [G, L, hd] as G matrices [L, hd].
inline std::vector<ref::Mat> heads(const InputDataset& d) {
  std::vector<ref::Mat> m;
  const int64_t per = d.shape[1] * d.shape[2];
  for (int64_t g = 0; g < d.shape[0]; ++g)
    m.push_back(Eigen::Map<const ref::Mat>(d.data.data() + g * per, d.shape[1], d.shape[2]));
  return m;
}
inline Tap tap(const ref::Mat& m, std::vector<int64_t> shape) {
  return Tap{std::move(shape), {m.data(), m.data() + m.size()}};
}
// G matrices stacked: [G, rows, cols].
inline Tap stacked(const std::vector<ref::Mat>& ms, std::vector<int64_t> shape) {
  Tap t{std::move(shape), {}};
  for (const ref::Mat& m : ms) t.data.insert(t.data.end(), m.data(), m.data() + m.size());
  return t;
}

}  // namespace salasim::op
