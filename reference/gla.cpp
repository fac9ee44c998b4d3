// gla: the Lightning recurrence S_t = lambda S_{t-1} + k_t^T v_t, o_t = tau q_t S_t (docs/spec.md §3 step 6),
// in three forms that must agree: recurrent (decode), chunked (prefill, §3.1) and closed form (spot checks).
// The GPU keeps the state in fp32, per step (recurrent) or per chunk boundary (chunked); the peer rounds there.
#include <cmath>

#include "reference/ops.hpp"

namespace salasim::ref {

Mat gla_recurrent(const Mat& q, const Mat& k, const Mat& v, const std::vector<double>& gamma, double tau,
                  std::vector<Mat>& S, const Num& num) {
  const Eigen::Index T = q.rows(), H = Eigen::Index(gamma.size()), hd = q.cols() / H;
  Mat o(T, q.cols());
  for (Eigen::Index h = 0; h < H; ++h) {
    const double lambda = std::exp(gamma[size_t(h)]);
    Mat& s = S[size_t(h)];
    for (Eigen::Index t = 0; t < T; ++t) {
      s = lambda * s + k.row(t).segment(h * hd, hd).transpose() * v.row(t).segment(h * hd, hd);
      num.f32(s);
      o.row(t).segment(h * hd, hd) = tau * q.row(t).segment(h * hd, hd) * s;
    }
  }
  num.bf(o);
  return o;
}

Mat gla_chunked(const Mat& q, const Mat& k, const Mat& v, const std::vector<double>& gamma, double tau,
                std::vector<Mat>& S, const Num& num, int chunk) {
  const Eigen::Index T = q.rows(), H = Eigen::Index(gamma.size()), hd = q.cols() / H;
  Mat o(T, q.cols());
#pragma omp parallel for schedule(static)
  for (Eigen::Index h = 0; h < H; ++h) {
    const double g = gamma[size_t(h)];
    Mat& s = S[size_t(h)];
    for (Eigen::Index c0 = 0; c0 < T; c0 += chunk) {
      const Eigen::Index L = std::min<Eigen::Index>(chunk, T - c0);
      const Mat Q = q.block(c0, h * hd, L, hd), K = k.block(c0, h * hd, L, hd), V = v.block(c0, h * hd, L, hd);
      // decay[j, i] = exp(g (j - i)) for i <= j: the intra-chunk causal mask with decay, diagonal included
      Mat A = Q * K.transpose();
      for (Eigen::Index j = 0; j < L; ++j)
        for (Eigen::Index i = 0; i < L; ++i) A(j, i) = i <= j ? A(j, i) * std::exp(g * double(j - i)) : 0.0;
      Vec in_decay(L), out_decay(L);  // exp(g (j+1)) applied to the entering state; exp(g (L-1-i)) to new keys
      for (Eigen::Index j = 0; j < L; ++j) {
        in_decay(j) = std::exp(g * double(j + 1));
        out_decay(j) = std::exp(g * double(L - 1 - j));
      }
      o.block(c0, h * hd, L, hd) = tau * (in_decay.asDiagonal() * (Q * s) + A * V);
      s = std::exp(g * double(L)) * s + (out_decay.asDiagonal() * K).transpose() * V;
      num.f32(s);
    }
  }
  num.bf(o);
  return o;
}

RowVec gla_closed_form(const RowVec& q_t, const Mat& k, const Mat& v, const std::vector<double>& gamma, double tau,
                       const std::vector<Mat>& S0, int64_t t) {
  const Eigen::Index H = Eigen::Index(gamma.size()), hd = q_t.cols() / H;
  RowVec o = RowVec::Zero(q_t.cols());
  for (Eigen::Index h = 0; h < H; ++h) {
    const double g = gamma[size_t(h)];
    const RowVec qt = q_t.segment(h * hd, hd);
    // weights w_s = lambda^(t-s) (q_t . k_s); summed from the most recent key backwards
    const Vec dots = k.block(0, h * hd, t + 1, hd) * qt.transpose();
    Vec w(t + 1);
    for (int64_t s = 0; s <= t; ++s) w(Eigen::Index(s)) = std::exp(g * double(t - s)) * dots(Eigen::Index(s));
    RowVec acc = w.transpose() * v.block(0, h * hd, t + 1, hd);
    acc += std::exp(g * double(t + 1)) * (qt * S0[size_t(h)]);
    o.segment(h * hd, hd) = tau * acc;
  }
  return o;
}

RowVec gla_closed_form(const Mat& q, const Mat& k, const Mat& v, const std::vector<double>& gamma, double tau,
                       const std::vector<Mat>& S0, int64_t t) {
  return gla_closed_form(RowVec(q.row(Eigen::Index(t))), k, v, gamma, tau, S0, t);
}

}  // namespace salasim::ref
