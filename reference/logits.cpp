// logits: W_lm (h / (hidden / dim_model_base)) after the final norm (docs/spec.md §2 step 4); bf16 on the GPU.
#include "reference/ops.hpp"

namespace salasim::ref {

Mat logits(const Mat& h, const Mat& W, double divisor, const Num& num) {
  Mat x = h / divisor;
  num.bf(x);  // exact for a power-of-two divisor, as in the released config (16)
  Mat y(h.rows(), W.rows());
  y.noalias() = x * W.transpose();
  num.bf(y);
  return y;
}

}  // namespace salasim::ref
