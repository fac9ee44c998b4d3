// sparse_attn: softmax attention of each query over the keys of its selected blocks, j <= p (docs/spec.md §4.5).
// Queries of one 64-token query block are processed together: for every key block any of them selected, one
// GEMM over the queries that selected it, with an online softmax per query row (exact in float64).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "reference/ops.hpp"

namespace salasim::ref {

Mat sparse_attn(const Mat& q, int64_t pos0, const std::vector<Mat>& K, const std::vector<Mat>& V, const Selection& sel,
                int block, double tau, const Num& num) {
  const int64_t T = q.rows(), G = sel.G, hd = K[0].cols(), hpg = q.cols() / hd / G;
  Mat out(T, q.cols());
  // tiles aligned to absolute query blocks, so the queries of a tile share their forced blocks
  std::vector<std::pair<int64_t, int64_t>> tiles;
  for (int64_t t0 = 0; t0 < T;) {
    const int64_t t1 = std::min(T, ((pos0 + t0) / block + 1) * block - pos0);
    tiles.emplace_back(t0, t1);
    t0 = t1;
  }
#pragma omp parallel for schedule(dynamic) collapse(2)
  for (size_t ti = 0; ti < tiles.size(); ++ti)
    for (int64_t g = 0; g < G; ++g) {
      const auto [t0, t1] = tiles[ti];
      const int64_t nt = t1 - t0, R = nt * hpg;
      std::map<int32_t, std::vector<int64_t>> users;  // key block -> tile-local queries that selected it
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t i = 0; i < sel.K; ++i)
          if (int32_t b = sel.row(t, g)[i]; b >= 0) users[b].push_back(t - t0);
      Eigen::VectorXd m = Eigen::VectorXd::Constant(R, -std::numeric_limits<double>::infinity());
      Eigen::VectorXd l = Eigen::VectorXd::Zero(R);
      Mat O = Mat::Zero(R, hd);
      // Consecutive key blocks chosen by the same queries (the local window, mostly) make one larger GEMM.
      for (auto it = users.begin(); it != users.end();) {
        auto end = std::next(it);
        while (end != users.end() && end->first == std::prev(end)->first + 1 && end->second == it->second) ++end;
        const std::vector<int64_t>& us = it->second;
        const int64_t k0 = int64_t(it->first) * block;
        const int64_t kn = std::min<int64_t>(int64_t(std::prev(end)->first + 1) * block, pos0 + T) - k0;
        it = end;
        const int64_t rb = int64_t(us.size()) * hpg;
        Mat Qb(rb, hd);
        for (size_t u = 0; u < us.size(); ++u)
          for (int64_t h = 0; h < hpg; ++h)
            Qb.row(int64_t(u) * hpg + h) = q.row(t0 + us[u]).segment((g * hpg + h) * hd, hd);
        Mat S = tau * (Qb * K[size_t(g)].middleRows(k0, kn).transpose());
        Eigen::VectorXd m_old(rb);
        for (size_t u = 0; u < us.size(); ++u) {
          const int64_t p = pos0 + t0 + us[u];
          for (int64_t h = 0; h < hpg; ++h) {
            const int64_t r = int64_t(u) * hpg + h;
            m_old(r) = m(us[u] * hpg + h);
            if (k0 + kn - 1 > p)  // only the query's own block reaches past it
              S.row(r).tail(k0 + kn - 1 - p).setConstant(-std::numeric_limits<double>::infinity());
          }
        }
        // online softmax over the run, all rows at once
        const Eigen::VectorXd m_new = m_old.cwiseMax(S.rowwise().maxCoeff());
        for (int64_t r = 0; r < rb; ++r)  // row by row: contiguous, so Eigen's vectorized exp applies
          S.row(r).array() = (S.row(r).array() - m_new(r)).exp();
        const Eigen::VectorXd scale = (m_old - m_new).array().exp();
        const Eigen::VectorXd rowsum = S.rowwise().sum();
        const Mat PV = S * V[size_t(g)].middleRows(k0, kn);
        for (size_t u = 0; u < us.size(); ++u)
          for (int64_t h = 0; h < hpg; ++h) {
            const int64_t r = int64_t(u) * hpg + h, R0 = us[u] * hpg + h;
            O.row(R0) = O.row(R0) * scale(r) + PV.row(r);
            l(R0) = l(R0) * scale(r) + rowsum(r);
            m(R0) = m_new(r);
          }
      }
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t h = 0; h < hpg; ++h) {
          const int64_t r = (t - t0) * hpg + h;
          out.row(t).segment((g * hpg + h) * hd, hd) = O.row(r) / l(r);
        }
    }
  num.bf(out);
  return out;
}

}  // namespace salasim::ref
