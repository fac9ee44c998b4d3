// Fresh random test inputs (never all-zero), reproducible from a seed printed with each case.
#pragma once
#include <random>

#include "reference/tensor.hpp"

namespace salasim::test {

inline ref::Mat randn(int64_t rows, int64_t cols, uint64_t seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, scale);
  ref::Mat m(rows, cols);
  for (int64_t i = 0; i < m.size(); ++i) m.data()[i] = nd(rng);
  return m;
}

inline double rel_err(const ref::Mat& a, const ref::Mat& b) { return (a - b).norm() / b.norm(); }

}  // namespace salasim::test
