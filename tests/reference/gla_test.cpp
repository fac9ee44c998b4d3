// gla: the three forms of the Lightning recurrence agree.
#include <cmath>

#include "model/config.hpp"
#include "reference/ops.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/random.hpp"
#include "tests/support/tolerances.hpp"

using namespace salasim;
using namespace salasim::ref;
using test::kFloat64Identity;

namespace {
std::vector<Mat> random_state(int H, int hd, uint64_t seed) {
  std::vector<Mat> S;
  for (int h = 0; h < H; ++h) S.push_back(test::randn(hd, hd, seed + uint64_t(h)));
  return S;
}
double state_err(const std::vector<Mat>& a, const std::vector<Mat>& b) {
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) e = std::max(e, test::rel_err(a[i], b[i]));
  return e;
}
}  // namespace

TEST_CASE("gla: recurrent, chunked and closed form agree over decays and odd lengths", "[gla][reference]") {
  const int hd = 128;
  // decays: the real model's fastest and slowest heads, and the tiny config's four
  std::vector<double> gamma = {-std::pow(2.0, -0.25), -std::pow(2.0, -8.0)};
  for (double g : load_config(std::string(SALASIM_SOURCE_DIR) + "/scenarios/models/tiny.json").lightning_decay())
    gamma.push_back(g);
  const int H = int(gamma.size());
  const double tau = 1.0 / std::sqrt(double(hd));
  for (int T : {1, 2, 63, 64, 65, 127, 200, 257}) {
    const uint64_t seed = 1000 + uint64_t(T);
    INFO("T = " << T << ", seed " << seed);
    Mat q = test::randn(T, H * hd, seed), k = test::randn(T, H * hd, seed + 1), v = test::randn(T, H * hd, seed + 2);
    std::vector<Mat> S0 = random_state(H, hd, seed + 3);
    std::vector<Mat> Sr = S0, Sc = S0, Sc7 = S0;
    Mat o_rec = gla_recurrent(q, k, v, gamma, tau, Sr, f64());
    Mat o_chk = gla_chunked(q, k, v, gamma, tau, Sc, f64());
    Mat o_chk7 = gla_chunked(q, k, v, gamma, tau, Sc7, f64(), 7);  // another chunk size, same function
    CHECK(test::rel_err(o_chk, o_rec) <= kFloat64Identity.value);
    CHECK(test::rel_err(o_chk7, o_rec) <= kFloat64Identity.value);
    CHECK(state_err(Sc, Sr) <= kFloat64Identity.value);
    CHECK(state_err(Sc7, Sr) <= kFloat64Identity.value);
    for (int64_t t : {int64_t(0), int64_t(T / 2), int64_t(T - 1)}) {
      RowVec oc = gla_closed_form(q, k, v, gamma, tau, S0, t);
      CHECK((oc - o_rec.row(t)).norm() / o_rec.row(t).norm() <= kFloat64Identity.value);
    }
  }
}

TEST_CASE("gla: the state carries across calls (decode after prefill equals one call)", "[gla][reference]") {
  const int hd = 128, H = 2, T = 150;
  std::vector<double> gamma = {-0.3, -0.01};
  const double tau = 1.0 / std::sqrt(double(hd));
  Mat q = test::randn(T, H * hd, 5), k = test::randn(T, H * hd, 6), v = test::randn(T, H * hd, 7);
  std::vector<Mat> S_one(H, Mat::Zero(hd, hd)), S_split(H, Mat::Zero(hd, hd));
  Mat o_one = gla_chunked(q, k, v, gamma, tau, S_one, f64());
  Mat a = gla_chunked(q.topRows(100), k.topRows(100), v.topRows(100), gamma, tau, S_split, f64());
  Mat b = gla_recurrent(q.bottomRows(50), k.bottomRows(50), v.bottomRows(50), gamma, tau, S_split, f64());
  CHECK(test::rel_err(a, o_one.topRows(100)) <= kFloat64Identity.value);
  CHECK(test::rel_err(b, o_one.bottomRows(50)) <= kFloat64Identity.value);
  CHECK(state_err(S_split, S_one) <= kFloat64Identity.value);
}

TEST_CASE("gla: output is inclusive of the current token and decays the entering state once", "[gla][reference]") {
  // One head, hd = 2, by hand: S1 = lambda S0 + k^T v, o = tau q S1.
  const double g = -0.5, lambda = std::exp(g), tau = 0.25;
  Mat q(1, 2), k(1, 2), v(1, 2);
  q << 1, 2;
  k << 3, -1;
  v << 0.5, 4;
  std::vector<Mat> S{Mat(2, 2)};
  S[0] << 1, 0, 0, 1;
  Mat o = gla_recurrent(q, k, v, {g}, tau, S, f64());
  // S1 = lambda I + [[1.5, 12], [-0.5, -4]]; q S1 = [lambda + 1.5 - 1, 2 lambda + 12 - 8]
  CHECK(std::abs(o(0, 0) - tau * (lambda + 0.5)) <= kFloat64Identity.value);
  CHECK(std::abs(o(0, 1) - tau * (2 * lambda + 4)) <= kFloat64Identity.value);
}
