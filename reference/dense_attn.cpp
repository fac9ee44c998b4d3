// dense_attn: causal GQA softmax attention over every cached key j <= p (docs/spec.md §4.1, below dense_len).
// Written independently of sparse_attn (plain two-pass softmax) so the two can check each other.
#include <algorithm>
#include <cmath>

#include "reference/ops.hpp"

namespace salasim::ref {

Mat dense_attn(const Mat& q, int64_t pos0, const std::vector<Mat>& K, const std::vector<Mat>& V, int hd, double tau,
               const Num& num) {
  const int64_t T = q.rows(), G = int64_t(K.size()), hpg = q.cols() / hd / G, tile = 64;
  const int64_t n_tiles = (T + tile - 1) / tile;
  Mat out(T, q.cols());
#pragma omp parallel for schedule(dynamic) collapse(2)
  for (int64_t ti = 0; ti < n_tiles; ++ti)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t t0 = ti * tile, t1 = std::min(T, t0 + tile), nk = pos0 + t1;
      Mat Q((t1 - t0) * hpg, hd);
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t h = 0; h < hpg; ++h) Q.row((t - t0) * hpg + h) = q.row(t).segment((g * hpg + h) * hd, hd);
      Mat S = tau * (Q * K[size_t(g)].topRows(nk).transpose());
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t h = 0; h < hpg; ++h) {
          auto row = S.row((t - t0) * hpg + h);
          const int64_t n = pos0 + t + 1;  // keys 0..p
          row.tail(nk - n).setZero();
          const double mx = row.head(n).maxCoeff();
          row.head(n) = (row.head(n).array() - mx).exp();
          row.head(n) /= row.head(n).sum();
        }
      const Mat O = S * V[size_t(g)].topRows(nk);
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t h = 0; h < hpg; ++h) out.row(t).segment((g * hpg + h) * hd, hd) = O.row((t - t0) * hpg + h);
    }
  num.bf(out);
  return out;
}

}  // namespace salasim::ref
