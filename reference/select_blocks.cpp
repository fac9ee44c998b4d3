// select_blocks: InfLLM-v2 block selection (docs/spec.md §4.3–4.4).
//   s_g(p, c) = sum_{h in g} exp(tau q_h.K1_c - LSE2_h(p)),  LSE2 over the visible K2 windows (the "LSE approximation")
//   S_g(b)    = max of s over the K1 windows overlapping block b
//   forced    = block 0 (init_blocks) and the local blocks qb-32 .. qb; future blocks b > qb never compete
//   selection = forced + the best-scoring others, min(k_sel, qb+1) blocks, ascending.
// Ties (possible on bf16 scores) break towards the lower block index, on CPU and GPU alike.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/ops.hpp"

namespace salasim::ref {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// One query's pooled block scores and selection. s: [n1v] window scores; out_blocks: K slots.
void choose(int64_t p, const std::vector<double>& s, const SelectParams& sp, int64_t NB, int32_t* out_blocks,
            double* out_scores) {
  const int64_t qb = p / sp.block;
  auto forced = [&](int64_t b) { return b < sp.init_blocks || (b >= qb - sp.local_blocks && b <= qb); };
  std::vector<std::pair<double, int32_t>> cand;  // (score, block) of unforced causal blocks
  std::vector<int32_t> chosen;
  for (int64_t b = 0; b <= qb; ++b) {
    double score = kInf;
    if (!forced(b)) {
      // windows c with [stride c, stride c + kernel) overlapping [block b, block (b+1))
      const int64_t c_lo = std::max<int64_t>(0, floor_div(sp.block * b - sp.kernel, sp.stride) + 1);
      const int64_t c_hi = std::min<int64_t>(int64_t(s.size()) - 1, (sp.block * b + sp.block - 1) / sp.stride);
      score = 0;
      for (int64_t c = c_lo; c <= c_hi; ++c) score = std::max(score, s[size_t(c)]);
      cand.emplace_back(score, int32_t(b));
    } else {
      chosen.push_back(int32_t(b));
    }
    if (out_scores) out_scores[b] = score;
  }
  if (out_scores)
    for (int64_t b = qb + 1; b < NB; ++b) out_scores[b] = -kInf;
  const size_t room = size_t(std::max<int64_t>(0, sp.k_sel - int64_t(chosen.size())));
  const size_t take = std::min(room, cand.size());
  std::partial_sort(cand.begin(), cand.begin() + take, cand.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (size_t i = 0; i < take; ++i) chosen.push_back(cand[i].second);
  std::sort(chosen.begin(), chosen.end());
  for (size_t i = 0; i < chosen.size() && i < size_t(sp.k_sel); ++i) out_blocks[i] = chosen[i];
}

}  // namespace

Selection select_blocks(const Mat& q, int64_t pos0, const std::vector<Mat>& k1, const std::vector<Mat>& k2,
                        const SelectParams& sp, int64_t n_blocks, bool want_scores, const Num& num) {
  const int64_t T = q.rows(), G = sp.groups, hpg = sp.heads / sp.groups, hd = sp.hd;
  const int k2_kernel = 4 * sp.kernel, k2_stride = 4 * sp.stride;
  Selection sel;
  sel.T = T;
  sel.G = G;
  sel.K = sp.k_sel;
  sel.NB = n_blocks;
  sel.blocks.assign(size_t(T * G * sel.K), -1);
  if (want_scores) sel.scores.assign(size_t(T * G * n_blocks), -kInf);

  // Queries in tiles of block size; each tile shares one GEMM against the compressed keys.
  const int64_t tile = sp.block, n_tiles = (T + tile - 1) / tile;
#pragma omp parallel for schedule(dynamic) collapse(2)
  for (int64_t ti = 0; ti < n_tiles; ++ti)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t t0 = ti * tile, t1 = std::min(T, t0 + tile), nt = t1 - t0;
      Mat Q(nt * hpg, hd);
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t h = 0; h < hpg; ++h) Q.row((t - t0) * hpg + h) = q.row(t).segment((g * hpg + h) * hd, hd);
      const int64_t n1 = n_windows(pos0 + t1, sp.kernel, sp.stride), n2 = n_windows(pos0 + t1, k2_kernel, k2_stride);
      const Mat L1 = sp.tau * (Q * k1[size_t(g)].topRows(n1).transpose());
      const Mat L2 = sp.tau * (Q * k2[size_t(g)].topRows(n2).transpose());
      std::vector<double> s;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t p = pos0 + t;
        const int64_t n1v = n_windows(p + 1, sp.kernel, sp.stride), n2v = n_windows(p + 1, k2_kernel, k2_stride);
        s.assign(size_t(n1v), n2v == 0 ? kInf : 0.0);  // no K2 window yet: the kernel yields +inf (all forced anyway)
        for (int64_t h = 0; h < hpg && n2v > 0; ++h) {
          const int64_t r = (t - t0) * hpg + h;
          const auto l2 = L2.row(r).head(n2v).array();
          const double mx = l2.maxCoeff();
          const double lse = mx + std::log((l2 - mx).exp().sum());
          const Eigen::ArrayXd e = (L1.row(r).head(n1v).array() - lse).exp().transpose();
          for (int64_t c = 0; c < n1v; ++c) s[size_t(c)] += e(c);
        }
        if (num.peer())
          for (double& x : s) x = round_bf16(x);  // the kernel stores bf16 scores; pooling and top-k see those
        choose(p, s, sp, n_blocks, sel.blocks.data() + (t * G + g) * sel.K,
               want_scores ? sel.scores.data() + (t * G + g) * n_blocks : nullptr);
      }
    }
  return sel;
}

}  // namespace salasim::ref
