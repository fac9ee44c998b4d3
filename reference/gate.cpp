// gate: x * sigmoid(z), the Lightning z gate (after o_norm) and the sparse o_gate (docs/spec.md §3 step 8, §4 step 3).
#include <cmath>

#include "reference/ops.hpp"

namespace salasim::ref {

Mat gate(const Mat& x, const Mat& z, const Num& num) {
  Mat y = x.array() * (1.0 / (1.0 + (-z.array()).exp()));
  num.bf(y);
  return y;
}

}  // namespace salasim::ref
