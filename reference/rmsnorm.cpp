// rmsnorm: x / sqrt(mean(x^2) + eps) * w (docs/spec.md §2.1), over a whole row or per head.
// The GPU applies the weight in fp32 and rounds once (SGLang's fused kernel); the peer rounds there too.
#include <cmath>

#include "reference/ops.hpp"

namespace salasim::ref {

Mat rmsnorm(const Mat& x, const Vec& w, double eps, const Num& num) {
  Mat y(x.rows(), x.cols());
  const RowVec wr = w.transpose();
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const double inv = 1.0 / std::sqrt(x.row(r).squaredNorm() / double(x.cols()) + eps);
    y.row(r) = (x.row(r) * inv).cwiseProduct(wr);
  }
  num.bf(y);
  return y;
}

Mat rmsnorm_heads(const Mat& x, const Vec& w, int hd, double eps, const Num& num) {
  Mat y(x.rows(), x.cols());
  const RowVec wr = w.transpose();
  const Eigen::Index heads = x.cols() / hd;
  for (Eigen::Index r = 0; r < x.rows(); ++r)
    for (Eigen::Index h = 0; h < heads; ++h) {
      auto xs = x.row(r).segment(h * hd, hd);
      const double inv = 1.0 / std::sqrt(xs.squaredNorm() / double(hd) + eps);
      y.row(r).segment(h * hd, hd) = (xs * inv).cwiseProduct(wr);
    }
  num.bf(y);
  return y;
}

}  // namespace salasim::ref
