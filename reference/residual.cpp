// residual: h + (scale_depth / sqrt(L)) * branch, the scale on the branch, not the residual (docs/spec.md §2).
// The residual stream is bf16 on the GPU (as in HF); the peer rounds the sum once.
#include "reference/ops.hpp"

namespace salasim::ref {

void residual(Mat& h, const Mat& branch, double scale, const Num& num) {
  h += scale * branch;
  num.bf(h);
}

}  // namespace salasim::ref
