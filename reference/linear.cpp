// linear: y = x W^T with W stored [out, in] as in the checkpoint; the GPU accumulates in fp32 and stores bf16.
#include "reference/ops.hpp"

namespace salasim::ref {

Mat linear(const Mat& x, const Mat& W, const Num& num) {
  Mat y(x.rows(), W.rows());
  y.noalias() = x * W.transpose();
  num.bf(y);
  return y;
}

}  // namespace salasim::ref
