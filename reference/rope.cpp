// rope: rotate-half RoPE over all head dims (docs/spec.md §2.1). Dim i pairs with dim i + hd/2:
// out_i = x_i cos - x_{i+hd/2} sin, out_{i+hd/2} = x_{i+hd/2} cos + x_i sin, angle = p * inv_freq[i].
#include <cmath>

#include "reference/ops.hpp"

namespace salasim::ref {

RopeTable rope_table(int hd, double theta, RopeAngles mode) {
  RopeTable t;
  t.hd = hd;
  t.mode = mode;
  for (int i = 0; i < hd / 2; ++i) {
    t.inv_freq.push_back(1.0 / std::pow(theta, 2.0 * i / hd));
    // As torch builds it: exponent arange(0, hd, 2).float() / hd in fp32, theta ** exponent in fp32
    // (correctly rounded here), then the fp32 reciprocal.
    const float e = float(2 * i) / float(hd);
    const float p = float(std::pow(double(float(theta)), double(e)));
    t.inv_freq32.push_back(1.0f / p);
  }
  return t;
}

double RopeTable::angle(int64_t pos, int i) const {
  if (mode == RopeAngles::Exact) return double(pos) * inv_freq[size_t(i)];
  return double(float(pos) * inv_freq32[size_t(i)]);  // one fp32 product, as the fp32 table holds it
}

void rope(Mat& x, int64_t pos0, const RopeTable& t, const Num& num) {
  const int half = t.hd / 2;
  const Eigen::Index heads = x.cols() / t.hd;
  std::vector<double> c(static_cast<size_t>(half)), s(static_cast<size_t>(half));
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    for (int i = 0; i < half; ++i) {
      const double a = t.angle(pos0 + r, i);
      c[size_t(i)] = std::cos(a);
      s[size_t(i)] = std::sin(a);
    }
    for (Eigen::Index h = 0; h < heads; ++h) {
      double* v = x.row(r).data() + h * t.hd;
      for (int i = 0; i < half; ++i) {
        const double a = v[i], b = v[i + half];
        v[i] = a * c[size_t(i)] - b * s[size_t(i)];
        v[i + half] = b * c[size_t(i)] + a * s[size_t(i)];
      }
    }
  }
  num.bf(x);
}

}  // namespace salasim::ref
