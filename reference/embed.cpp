// embed: the token embedding times scale_emb (docs/spec.md §2 step 1).
#include "model/error.hpp"
#include "reference/ops.hpp"

namespace salasim::ref {

Mat embed(const Mat& E, const std::vector<int32_t>& tokens, double scale, const Num& num) {
  Mat h(Eigen::Index(tokens.size()), E.cols());
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] < 0 || tokens[t] >= E.rows())
      fail("token {} at index {} is outside the vocabulary [0, {})", tokens[t], t, E.rows());
    h.row(Eigen::Index(t)) = E.row(tokens[t]) * scale;
  }
  num.bf(h);
  return h;
}

}  // namespace salasim::ref
