// Tensor metrics: exact values on small tensors, non-finite bookkeeping, zero conventions, shape errors.
#include <cmath>
#include <limits>

#include "compare/metrics.hpp"
#include "model/error.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

namespace {
Tap tap(std::vector<int64_t> shape, std::vector<double> data) { return Tap{std::move(shape), std::move(data), false, 0}; }
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("metrics: values on a small tensor", "[metrics]") {
  const Tap r = tap({2, 2}, {1, 2, 3, 4});
  const Tap x = tap({2, 2}, {1, 2, 3, 5});
  const TensorMetrics m = tensor_metrics("/prefill/layer_00/mlp/out", r, x);
  CHECK(m.numel == 4);
  CHECK(m.compared == 4);
  CHECK(m.max_abs == 1.0);
  CHECK(m.worst == 3);
  CHECK(m.worst_at == std::vector<int64_t>{1, 1});
  CHECK(m.ref_at == 4.0);
  CHECK(m.other_at == 5.0);
  CHECK(m.nmse == 1.0 / 30.0);
  CHECK(m.rel_rms == std::sqrt(1.0 / 30.0));
  CHECK(m.cosine == 34.0 / (std::sqrt(30.0) * std::sqrt(39.0)));
  CHECK(m.ref_rms == std::sqrt(30.0 / 4.0));
  CHECK(m.max_err == 1.0 / 4.0);  // the error against the element's own size, which exceeds the RMS
  CHECK(m.worst_err == 3);
  CHECK(m.ref_nonfinite == 0);
  CHECK(m.other_nonfinite == 0);
  CHECK_FALSE(m.ref_all_zero);
  CHECK_FALSE(m.other_all_zero);
}

TEST_CASE("metrics: max-err scales each error by max(|reference|, RMS)", "[metrics]") {
  const Tap r = tap({4}, {10, 1, 1, 1});
  const Tap x = tap({4}, {10.3, 1.25, 1, 1});
  const TensorMetrics m = tensor_metrics("/prefill/layer_00/sparse/select/scores", r, x);
  const double rms = std::sqrt(103.0 / 4);
  CHECK(m.ref_rms == rms);
  CHECK(m.worst == 0);      // the largest absolute error sits on the large element...
  CHECK(m.worst_err == 1);  // ...but the small element is the more wrong one for its size
  CHECK(m.max_err == std::fabs(1.25 - 1.0) / rms);
  CHECK(m.worst_err_at == std::vector<int64_t>{1});
  CHECK(m.ref_at_err == 1.0);
  CHECK(m.other_at_err == 1.25);
}

TEST_CASE("metrics: identical tensors have no error", "[metrics]") {
  const Tap r = tap({3}, {-1.5, 0.25, 7});
  const TensorMetrics m = tensor_metrics("/prefill/embed/out", r, r);
  CHECK(m.max_abs == 0.0);
  CHECK(m.rel_rms == 0.0);
  CHECK(m.nmse == 0.0);
  CHECK(m.worst == 0);  // the first element when all are equal
}

TEST_CASE("metrics: non-finite values are counted apart, matching infinities noted", "[metrics]") {
  const Tap r = tap({4}, {1, kInf, -kInf, 2});
  const Tap x = tap({4}, {kNaN, kInf, 3, 2.5});
  const TensorMetrics m = tensor_metrics("/prefill/layer_00/sparse/select/scores", r, x);
  CHECK(m.ref_nonfinite == 2);
  CHECK(m.other_nonfinite == 2);
  CHECK(m.matched_inf == 1);
  CHECK(m.unmatched_nonfinite == 2);  // the NaN at 0 and the -inf replaced by 3 at 2
  CHECK(m.first_unmatched == 0);
  CHECK(m.compared == 1);
  CHECK(m.max_abs == 0.5);
  CHECK(m.worst == 3);
  CHECK(m.ref_rms == std::sqrt((1.0 + 4.0) / 2.0));  // over the finite reference values
}

TEST_CASE("metrics: all-zero flags and the zero-reference conventions", "[metrics]") {
  const Tap z = tap({2}, {0, 0});
  const Tap a = tap({2}, {0, 1});
  TensorMetrics m = tensor_metrics("/prefill/final/norm", a, z);
  CHECK(m.other_all_zero);
  CHECK_FALSE(m.ref_all_zero);
  CHECK(m.cosine == 0.0);
  CHECK(m.rel_rms == 1.0);
  m = tensor_metrics("/prefill/final/norm", z, a);
  CHECK(m.ref_all_zero);
  CHECK(std::isinf(m.rel_rms));
  m = tensor_metrics("/prefill/final/norm", z, z);
  CHECK(m.rel_rms == 0.0);
  CHECK(m.cosine == 1.0);
}

TEST_CASE("metrics: a shape mismatch is an error naming the tap", "[metrics]") {
  const std::string name = "/prefill/layer_03/lightning/gla/out";
  CHECK_THROWS_AS(tensor_metrics(name, tap({2, 3}, std::vector<double>(6, 1)), tap({3, 2}, std::vector<double>(6, 1))),
                  Error);
  try {
    tensor_metrics(name, tap({2, 3}, std::vector<double>(6, 1)), tap({6}, std::vector<double>(6, 1)));
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find(name) != std::string::npos);
    CHECK(msg.find("[6]") != std::string::npos);
    CHECK(msg.find("[2, 3]") != std::string::npos);
  }
  CHECK_THROWS_AS(tensor_metrics(name, tap({2, 3}, std::vector<double>(5, 1)), tap({2, 3}, std::vector<double>(6, 1))),
                  Error);
}

TEST_CASE("metrics: flat index to per-dimension index", "[metrics]") {
  CHECK(unflatten({2, 3, 4}, 0) == std::vector<int64_t>{0, 0, 0});
  CHECK(unflatten({2, 3, 4}, 23) == std::vector<int64_t>{1, 2, 3});
  CHECK(unflatten({2, 3, 4}, 13) == std::vector<int64_t>{1, 0, 1});
  CHECK(format_shape({67, 2, 96}) == "[67, 2, 96]");
}
