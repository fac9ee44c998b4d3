// rmsnorm, rope, compress_k, gate, mlp, residual, logits: hand computations and invariants.
#include <cmath>

#include "reference/ops.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/random.hpp"
#include "tests/support/tolerances.hpp"

using namespace salasim;
using namespace salasim::ref;
using test::kFloat64Identity;

TEST_CASE("rmsnorm: matches a hand computation", "[rmsnorm][reference]") {
  Mat x(2, 4);
  x << 1, 2, 3, 4, -2, 0, 0, 2;
  Vec w(4);
  w << 1, 0.5, 2, 1;
  const double eps = 1e-6;
  Mat y = rmsnorm(x, w, eps, f64());
  // row 0: mean(x^2) = 30/4 = 7.5; row 1: mean = 8/4 = 2
  const double r0 = 1 / std::sqrt(7.5 + eps), r1 = 1 / std::sqrt(2.0 + eps);
  Mat want(2, 4);
  want << 1 * r0, 2 * r0 * 0.5, 3 * r0 * 2, 4 * r0, -2 * r1, 0, 0, 2 * r1;
  CHECK((y - want).cwiseAbs().maxCoeff() <= kFloat64Identity.value);
  // per head: two heads of width 2 over the same row
  Vec wh(2);
  wh << 1, 1;
  Mat yh = rmsnorm_heads(x.topRows(1), wh, 2, eps, f64());
  const double h0 = 1 / std::sqrt(2.5 + eps), h1 = 1 / std::sqrt(12.5 + eps);
  CHECK(std::abs(yh(0, 0) - h0) <= kFloat64Identity.value);
  CHECK(std::abs(yh(0, 3) - 4 * h1) <= kFloat64Identity.value);
}

TEST_CASE("rope: keeps norms and q.k depends only on the relative position", "[rope][reference]") {
  const int hd = 128, H = 3;
  for (RopeAngles mode : {RopeAngles::Exact, RopeAngles::Fp32}) {
    RopeTable t = rope_table(hd, 10000.0, mode);
    Mat x = test::randn(5, H * hd, 42), y = x;
    rope(y, 1234, t, f64());
    for (int r = 0; r < 5; ++r)
      for (int h = 0; h < H; ++h)
        CHECK(std::abs(y.row(r).segment(h * hd, hd).norm() / x.row(r).segment(h * hd, hd).norm() - 1) <=
              kFloat64Identity.value);
  }
  RopeTable t = rope_table(hd, 10000.0, RopeAngles::Exact);
  Mat q = test::randn(1, hd, 1), k = test::randn(1, hd, 2);
  auto dot_at = [&](int64_t pq, int64_t pk) {
    Mat a = q, b = k;
    rope(a, pq, t, f64());
    rope(b, pk, t, f64());
    return a.row(0).dot(b.row(0));
  };
  const double d = dot_at(17, 5);
  for (int64_t shift : {1, 100, 4095})
    CHECK(std::abs(dot_at(17 + shift, 5 + shift) - d) <= kFloat64Identity.value * q.norm() * k.norm());
  CHECK(std::abs(dot_at(30, 5) - d) > 1e-3);  // and it does depend on the distance
}

TEST_CASE("rope: the fp32 angle table is what fp32 code computes, and differs from float64 near 2M", "[rope][reference]") {
  RopeTable f = rope_table(128, 10000.0, RopeAngles::Fp32), e = rope_table(128, 10000.0, RopeAngles::Exact);
  const int64_t p = 2000003;
  CHECK(f.angle(p, 0) == double(float(p) * 1.0f));
  CHECK(f.angle(p, 5) == double(float(p) * f.inv_freq32[5]));
  double worst = 0;
  for (int i = 0; i < 64; ++i) worst = std::max(worst, std::abs(f.angle(p, i) - e.angle(p, i)));
  CHECK(worst > 1e-3);  // why the switch exists: fp32 angles at 2M are off by up to ~0.1 rad
  CHECK(std::abs(f.angle(7, 3) - e.angle(7, 3)) < 1e-5);  // and agree at small positions
}

TEST_CASE("compress_k: incremental equals batch", "[compress_k][reference]") {
  const int hd = 128;
  Mat k = test::randn(1000, hd, 9);
  for (auto [kernel, stride] : {std::pair{32, 16}, std::pair{128, 64}}) {
    Mat batch = compress_k(k, 1000, kernel, stride, f64());
    CHECK(batch.rows() == n_windows(1000, kernel, stride));
    Mat inc(0, hd);
    int64_t len = 0;
    for (int64_t piece : {1, 30, 1, 200, 13, 64, 500, 191}) {
      len += piece;
      compress_k_append(inc, k, len, kernel, stride, f64());
      CHECK(inc.rows() == n_windows(len, kernel, stride));
    }
    REQUIRE(len == 1000);
    CHECK((inc - batch).cwiseAbs().maxCoeff() == 0.0);
    // window c is the mean of keys [stride c, stride c + kernel)
    const int c = 5;
    CHECK((batch.row(c) - k.middleRows(c * stride, kernel).colwise().mean()).norm() <= kFloat64Identity.value);
  }
  CHECK(n_windows(31, 32, 16) == 0);
  CHECK(n_windows(32, 32, 16) == 1);
  CHECK(n_windows(47, 32, 16) == 1);
  CHECK(n_windows(48, 32, 16) == 2);
}

TEST_CASE("gate: x times sigmoid(z), mlp: silu(g) times u, residual: h + s branch", "[gate][mlp][residual][reference]") {
  Mat x(1, 3), z(1, 3);
  x << 2, -1, 0.5;
  z << 0, 3, -2;
  Mat y = gate(x, z, f64());
  CHECK(std::abs(y(0, 0) - 1.0) <= kFloat64Identity.value);
  CHECK(std::abs(y(0, 1) + 1 / (1 + std::exp(-3.0))) <= kFloat64Identity.value);
  Mat a = mlp_act(z, x, f64());  // silu(z) * x
  CHECK(std::abs(a(0, 1) - 3 / (1 + std::exp(-3.0)) * -1) <= kFloat64Identity.value);
  Mat h = x;
  residual(h, z, 0.25, f64());
  CHECK(std::abs(h(0, 2) - (0.5 - 0.5)) <= kFloat64Identity.value);
  Mat W(2, 3);
  W << 1, 0, 0, 0, 2, 16;
  Mat lg = logits(x, W, 16.0, f64());  // (x / 16) W^T
  CHECK(std::abs(lg(0, 0) - 2.0 / 16) <= kFloat64Identity.value);
  CHECK(std::abs(lg(0, 1) - (-2.0 + 8.0) / 16) <= kFloat64Identity.value);
}
