// select_blocks and the attentions: selection invariants, sparse = dense before 6144, planted blocks found.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "model/config.hpp"
#include "reference/model.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/random.hpp"
#include "tests/support/tolerances.hpp"

using namespace salasim;
using namespace salasim::ref;
using test::kFloat64Identity;

namespace {

struct Keys {
  std::vector<Mat> K, V, K1, K2;
};

Keys make_keys(int64_t L, int G, int hd, uint64_t seed, double scale = 1.0) {
  Keys k;
  for (int g = 0; g < G; ++g) {
    k.K.push_back(test::randn(L, hd, seed + 10 * uint64_t(g), scale));
    k.V.push_back(test::randn(L, hd, seed + 10 * uint64_t(g) + 1));
  }
  return k;
}

void compress(Keys& k, int64_t L, const SelectParams& sp) {
  k.K1.clear();
  k.K2.clear();
  for (const Mat& K : k.K) {
    k.K1.push_back(compress_k(K, L, sp.kernel, sp.stride, f64()));
    k.K2.push_back(compress_k(K, L, 4 * sp.kernel, 4 * sp.stride, f64()));
  }
}

SelectParams real_params() { return sparse_rules(load_config(test::real_config())); }

}  // namespace

TEST_CASE("select_blocks: holds block 0 and the 33 local blocks, no future block, min(96, causal) entries",
          "[select_blocks][reference]") {
  const SelectParams sp = real_params();
  const int64_t L = 9000;
  Keys k = make_keys(L, sp.groups, sp.hd, 77, 2.0);
  compress(k, L, sp);
  // queries spread over the sequence, including block edges
  std::vector<int64_t> positions = {0, 1, 31, 63, 64, 127, 128, 2111, 2112, 6143, 6144, 6200, 8191, 8192, 8999};
  Mat q(int64_t(positions.size()), sp.heads * sp.hd);
  Mat qall = test::randn(L, sp.heads * sp.hd, 78, 2.0);
  for (size_t i = 0; i < positions.size(); ++i) q.row(int64_t(i)) = qall.row(positions[i]);
  for (size_t i = 0; i < positions.size(); ++i) {
    const int64_t p = positions[i], qb = p / sp.block;
    Selection sel = select_blocks(q.row(int64_t(i)), p, k.K1, k.K2, sp, (L + 63) / 64, true, f64());
    for (int g = 0; g < sp.groups; ++g) {
      INFO("p = " << p << ", group " << g);
      std::vector<int32_t> b;
      for (int64_t s = 0; s < sel.K; ++s)
        if (sel.row(0, g)[s] >= 0) b.push_back(sel.row(0, g)[s]);
      CHECK(int64_t(b.size()) == std::min<int64_t>(sp.k_sel, qb + 1));
      CHECK(std::is_sorted(b.begin(), b.end()));
      CHECK(std::set<int32_t>(b.begin(), b.end()).size() == b.size());
      std::set<int32_t> bs(b.begin(), b.end());
      CHECK(bs.count(0));
      for (int64_t j = std::max<int64_t>(0, qb - 32); j <= qb; ++j) CHECK(bs.count(int32_t(j)));
      CHECK(*std::max_element(b.begin(), b.end()) <= qb);
      // every unselected causal block scores no higher than every selected unforced one
      const double* S = sel.scores.data() + g * sel.NB;
      double lowest_selected = INFINITY, highest_rejected = -INFINITY;
      for (int64_t j = 0; j <= qb; ++j) {
        if (std::isinf(S[j])) continue;
        if (bs.count(int32_t(j))) lowest_selected = std::min(lowest_selected, S[j]);
        else highest_rejected = std::max(highest_rejected, S[j]);
      }
      CHECK(highest_rejected <= lowest_selected);
      for (int64_t j = qb + 1; j < sel.NB; ++j) CHECK(S[j] == -INFINITY);
    }
  }
}

TEST_CASE("sparse_attn: equals dense attention for every query before position 6144",
          "[sparse_attn][dense_attn][reference]") {
  const SelectParams sp = real_params();
  const int64_t L = 6144 + 200;  // queries past 6144 too, to show the check has teeth there
  Keys k = make_keys(L, sp.groups, sp.hd, 5, 2.0);
  compress(k, L, sp);
  Mat q = test::randn(L, sp.heads * sp.hd, 6, 2.0);
  const int64_t pos0 = 5900;  // queries 5900..L-1 against the whole cache
  Mat qs = q.bottomRows(L - pos0);
  Selection sel = select_blocks(qs, pos0, k.K1, k.K2, sp, (L + 63) / 64, false, f64());
  Mat sparse = sparse_attn(qs, pos0, k.K, k.V, sel, sp.block, sp.tau, f64());
  Mat dense = dense_attn(qs, pos0, k.K, k.V, sp.hd, sp.tau, f64());
  const int64_t n_before = 6144 - pos0;
  CHECK(test::rel_err(sparse.topRows(n_before), dense.topRows(n_before)) <= kFloat64Identity.value);
  CHECK(test::rel_err(sparse.bottomRows(L - 6144), dense.bottomRows(L - 6144)) > 1e-6);
  // and sparse attention is a softmax over the selected keys: check one query by brute force
  const int64_t t = L - pos0 - 1, p = pos0 + t;
  for (int h : {0, 17}) {
    const int g = h / (sp.heads / sp.groups);
    std::vector<int64_t> keys;
    for (int64_t s = 0; s < sel.K; ++s)
      if (int32_t b = sel.row(t, g)[s]; b >= 0)
        for (int64_t j = b * 64; j < b * 64 + 64 && j <= p; ++j) keys.push_back(j);
    RowVec qh = qs.row(t).segment(h * sp.hd, sp.hd);
    std::vector<double> logit;
    for (int64_t j : keys) logit.push_back(sp.tau * qh.dot(k.K[size_t(g)].row(j)));
    const double mx = *std::max_element(logit.begin(), logit.end());
    RowVec o = RowVec::Zero(sp.hd);
    double z = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      const double e = std::exp(logit[i] - mx);
      z += e;
      o += e * k.V[size_t(g)].row(keys[i]);
    }
    o /= z;
    CHECK((sparse.row(t).segment(h * sp.hd, sp.hd) - o).norm() / o.norm() <= kFloat64Identity.value);
  }
}

TEST_CASE("select_blocks: planted key blocks are selected at 16K and 64K, unplanted ones are not",
          "[select_blocks][reference]") {
  const SelectParams sp = real_params();
  for (int64_t L : {int64_t(16384), int64_t(65536)}) {
    INFO("L = " << L);
    const int64_t p = L - 1, qb = p / sp.block;
    Keys k = make_keys(L, sp.groups, sp.hd, 100 + uint64_t(L));
    Mat q = test::randn(1, sp.heads * sp.hd, 200 + uint64_t(L));
    // plant as many blocks as the scores choose (96 - 34 forced = 62), outside the forced ones, in group 1:
    // their keys lean towards the group's mean query direction, so every head of the group scores them high
    const int g = 1, hpg = sp.heads / sp.groups;
    RowVec dir = RowVec::Zero(sp.hd);
    for (int h = 0; h < hpg; ++h) dir += q.row(0).segment((g * hpg + h) * sp.hd, sp.hd);
    dir /= dir.norm();
    std::mt19937_64 rng(static_cast<uint64_t>(L));
    std::set<int32_t> planted;
    while (planted.size() < 62) planted.insert(int32_t(1 + rng() % uint64_t(qb - 33 - 1)));
    for (int32_t b : planted)
      for (int64_t j = b * 64; j < b * 64 + 64; ++j) k.K[size_t(g)].row(j) += 3.0 * std::sqrt(double(sp.hd)) * dir;
    compress(k, L, sp);
    Selection sel = select_blocks(q, p, k.K1, k.K2, sp, (L + 63) / 64, false, f64());
    std::set<int32_t> chosen;
    for (int64_t s = 0; s < sel.K; ++s) chosen.insert(sel.row(0, g)[s]);
    for (int32_t b : planted) CHECK(chosen.count(b));
    int64_t unplanted_chosen = 0;
    for (int32_t b : chosen)
      if (!planted.count(b) && b != 0 && b < qb - 32) ++unplanted_chosen;
    CHECK(unplanted_chosen == 0);
    // the other group, unplanted, picks 62 blocks of its own, mostly not the planted ones
    std::set<int32_t> other;
    for (int64_t s = 0; s < sel.K; ++s) other.insert(sel.row(0, 0)[s]);
    int64_t overlap = 0;
    for (int32_t b : planted) overlap += other.count(b);
    CHECK(overlap < 31);
  }
}
