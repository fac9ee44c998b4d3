// Float64 tensors of the reference and the rounding policy that turns it into its bf16-emulating peer.
#pragma once
#include <Eigen/Dense>

#include <cstdint>
#include <vector>

#include "model/bf16.hpp"

namespace salasim::ref {

// Activations are [rows, features] row-major; weights are [out, in] row-major (y = x W^T).
using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::Matrix<double, Eigen::Dynamic, 1>;
using RowVec = Eigen::Matrix<double, 1, Eigen::Dynamic>;

// F64: pure float64, the truth. BF16: the peer of the tolerance policy. It runs the same code and rounds to
// bf16 wherever the GPU path stores a bf16 tensor (docs/spec.md §5) and to fp32 where the GPU keeps fp32 state.
enum class Precision { F64, BF16 };

struct Num {
  Precision p = Precision::F64;

  bool peer() const { return p == Precision::BF16; }
  double bf(double x) const { return peer() ? round_bf16(x) : x; }
  void bf(Mat& m) const {
    if (peer()) m = m.unaryExpr([](double x) { return round_bf16(x); });
  }
  void f32(Mat& m) const {
    if (peer()) m = m.unaryExpr([](double x) { return round_fp32(x); });
  }
};

inline Num f64() { return Num{Precision::F64}; }
inline Num peer() { return Num{Precision::BF16}; }

}  // namespace salasim::ref
