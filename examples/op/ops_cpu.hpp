// gla and select_blocks on the CPU in plain C++, from docs/spec.md (section 3 step 6; sections 4.3-4.4): the math of
// the example program (op_program.cpp) and the example library (op_lib.cpp) of docs/check-your-implementation.md.
// Each takes a `bug` flag that makes it wrong the way real kernels were: gla's carried state decayed by e^(gamma j)
// instead of e^(gamma (j+1)); select_blocks' forced local window one block short.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace example {

// q, k, v: [T, H*hd] row-major; gamma: [H]; state: [H, hd, hd] (key dim x value dim), the entering state, updated to
// the state after the last row; out: [T, H*hd]. The chunked form (64 rows): o_j = tau [e^(gamma (j+1)) q_j S_c +
// sum_(i <= j) e^(gamma (j - i)) (q_j . k_i) v_i].
inline void gla(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v,
                const std::vector<double>& gamma, double tau, int64_t T, int64_t H, int64_t hd,
                std::vector<double>& state, std::vector<double>& out, bool bug) {
  constexpr int64_t kChunk = 64;
  const int64_t ld = H * hd, first = bug ? 0 : 1;
  out.assign(size_t(T * ld), 0.0);
  for (int64_t h = 0; h < H; ++h) {
    double* S = state.data() + h * hd * hd;
    const double g = gamma[size_t(h)];
    auto at = [&](const std::vector<double>& a, int64_t t, int64_t d) { return a[size_t(t * ld + h * hd + d)]; };
    for (int64_t c0 = 0; c0 < T; c0 += kChunk) {
      const int64_t n = std::min(kChunk, T - c0);
      for (int64_t j = 0; j < n; ++j) {
        double* o = out.data() + (c0 + j) * ld + h * hd;
        const double carried = std::exp(g * double(j + first));
        for (int64_t a = 0; a < hd; ++a)
          for (int64_t b = 0; b < hd; ++b) o[b] += carried * at(q, c0 + j, a) * S[a * hd + b];
        for (int64_t i = 0; i <= j; ++i) {
          double dot = 0;
          for (int64_t a = 0; a < hd; ++a) dot += at(q, c0 + j, a) * at(k, c0 + i, a);
          const double w = std::exp(g * double(j - i)) * dot;
          for (int64_t b = 0; b < hd; ++b) o[b] += w * at(v, c0 + i, b);
        }
        for (int64_t b = 0; b < hd; ++b) o[b] *= tau;
      }
      // S <- e^(gamma n) S + sum_i e^(gamma (n-1-i)) k_i^T v_i
      const double keep = std::exp(g * double(n));
      for (int64_t e = 0; e < hd * hd; ++e) S[e] *= keep;
      for (int64_t i = 0; i < n; ++i) {
        const double w = std::exp(g * double(n - 1 - i));
        for (int64_t a = 0; a < hd; ++a)
          for (int64_t b = 0; b < hd; ++b) S[a * hd + b] += w * at(k, c0 + i, a) * at(v, c0 + i, b);
      }
    }
  }
}

inline int64_t windows(int64_t length, int64_t kernel, int64_t stride) {
  return length < kernel ? 0 : (length - kernel) / stride + 1;
}

struct SelectRules {
  int64_t pos0, kernel, stride, block, init_blocks, local_blocks, k_sel, n_blocks;
  double tau;
};

// q: [T, H*hd]; k1: [G, N1, hd]; k2: [G, N2, hd]; blocks: [T, G, k_sel] ids ascending, -1 in empty slots; scores:
// [T, G, NB] pooled (+inf forced, -inf past the query's block).
inline void select_blocks(const std::vector<double>& q, const std::vector<double>& k1, const std::vector<double>& k2,
                          int64_t T, int64_t H, int64_t G, int64_t hd, int64_t N1, int64_t N2, const SelectRules& r,
                          std::vector<int64_t>& blocks, std::vector<double>& scores, bool bug) {
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t NB = r.n_blocks ? r.n_blocks : (r.pos0 + T + r.block - 1) / r.block, per_group = H / G;
  const int64_t local = bug ? r.local_blocks - 1 : r.local_blocks;
  blocks.assign(size_t(T * G * r.k_sel), -1);
  scores.assign(size_t(T * G * NB), -inf);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t p = r.pos0 + t, qb = p / r.block;
    const int64_t n1 = std::min(N1, windows(p + 1, r.kernel, r.stride));
    const int64_t n2 = std::min(N2, windows(p + 1, 4 * r.kernel, 4 * r.stride));
    for (int64_t g = 0; g < G; ++g) {
      std::vector<double> s(size_t(n1), n2 ? 0.0 : inf);  // no K2 window yet: +inf (every block is forced then)
      for (int64_t h = g * per_group; h < (g + 1) * per_group && n2; ++h) {
        auto dot = [&](const std::vector<double>& kk, int64_t n, int64_t c) {
          double d = 0;
          for (int64_t a = 0; a < hd; ++a) d += q[size_t(t * H * hd + h * hd + a)] * kk[size_t((g * n + c) * hd + a)];
          return r.tau * d;
        };
        double mx = -inf, sum = 0;
        for (int64_t e = 0; e < n2; ++e) mx = std::max(mx, dot(k2, N2, e));
        for (int64_t e = 0; e < n2; ++e) sum += std::exp(dot(k2, N2, e) - mx);
        const double lse = mx + std::log(sum);
        for (int64_t c = 0; c < n1; ++c) s[size_t(c)] += std::exp(dot(k1, N1, c) - lse);
      }
      double* row = scores.data() + (t * G + g) * NB;
      std::vector<int64_t> chosen;
      std::vector<std::pair<double, int64_t>> candidates;
      for (int64_t b = 0; b <= qb; ++b) {
        if (b < r.init_blocks || (b >= qb - local && b <= qb)) {
          row[b] = inf;
          chosen.push_back(b);
          continue;
        }
        const int64_t lo =
            std::max<int64_t>(0, (r.block * b - r.kernel) >= 0 ? (r.block * b - r.kernel) / r.stride + 1 : 0);
        const int64_t hi = std::min(n1 - 1, (r.block * b + r.block - 1) / r.stride);
        double best = 0;
        for (int64_t c = lo; c <= hi; ++c) best = std::max(best, s[size_t(c)]);
        row[b] = best;
        candidates.emplace_back(best, b);
      }
      const size_t room = size_t(std::max<int64_t>(0, r.k_sel - int64_t(chosen.size())));
      std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : a.second < b.second;
      });
      for (size_t i = 0; i < room && i < candidates.size(); ++i) chosen.push_back(candidates[i].second);
      std::sort(chosen.begin(), chosen.end());
      for (size_t i = 0; i < chosen.size() && int64_t(i) < r.k_sel; ++i)
        blocks[size_t((t * G + g) * r.k_sel) + i] = chosen[i];
    }
  }
}

}  // namespace example
