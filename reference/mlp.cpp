// mlp: the SwiGLU activation silu(gate) * up (docs/spec.md §2.1); gate/up/down projections are linear().
#include "reference/ops.hpp"

namespace salasim::ref {

Mat mlp_act(const Mat& g, const Mat& u, const Num& num) {
  Mat y = g.array() / (1.0 + (-g.array()).exp()) * u.array();
  num.bf(y);
  return y;
}

}  // namespace salasim::ref
