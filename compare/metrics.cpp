// Tensor metrics: one pass over both tensors, sums in double.
#include "compare/metrics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/error.hpp"
#include "model/shape.hpp"

namespace salasim {

std::string format_shape(const std::vector<int64_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

std::vector<int64_t> unflatten(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> at(shape.size(), 0);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] <= 0) break;
    at[i] = flat % shape[i];
    flat /= shape[i];
  }
  return at;
}

namespace {
void check_filled(const std::string& name, const char* side, const Tap& t) {
  if (int64_t(t.data.size()) != t.numel())
    fail("tap {}: the {} holds {} values but its shape {} needs {}", name, side, t.data.size(), format_shape(t.shape),
         t.numel());
}
}  // namespace

TensorMetrics tensor_metrics(const std::string& name, const Tap& ref, const Tap& other) {
  if (ref.shape != other.shape)
    fail("tap {}: shape {} differs from the reference's {}", name, format_shape(other.shape), format_shape(ref.shape));
  check_filled(name, "reference", ref);
  check_filled(name, "other tensor", other);
  MetricsAccumulator acc;
  acc.add(ref.data.data(), other.data.data(), ref.numel());
  return acc.finish(ref.shape);
}

void MetricsAccumulator::add(const double* ref, const double* other, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = n_ + k;
    const double r = ref[k], x = other[k];
    const bool rf = std::isfinite(r), xf = std::isfinite(x);
    if (rf) {  // the RMS that max-err divides by: every finite reference value
      ref2_all_ += r * r;
      ++ref_finite_;
    }
    ref_zero_ = ref_zero_ && r == 0.0;
    other_zero_ = other_zero_ && x == 0.0;
    ref_nonfinite_ += !rf;
    other_nonfinite_ += !xf;
    if (!rf || !xf) {
      if (std::isinf(r) && r == x) {
        ++matched_inf_;
      } else {
        if (first_unmatched_.index < 0) first_unmatched_ = {i, r, x};
        ++unmatched_;
      }
      continue;
    }
    const double d = x - r, ad = std::fabs(d);
    if (worst_.index < 0 || ad > max_abs_) {
      max_abs_ = ad;
      worst_ = {i, r, x};
    }
    // Most elements fall under one step of the front (the pivot): tested here, without a division, with a margin
    // that covers the multiplications' rounding, so it never drops an element the exact test would keep.
    if (!(ad <= pivot_.ad && ad <= pivot_.q * std::fabs(r) * (1 - 0x1p-48))) offer(i, r, x, ad);
    diff2_ += d * d;
    ref2_ += r * r;
    other2_ += x * x;
    dot_ += x * r;
    ++compared_;
  }
  n_ += n;
}

// max-err is e_i(R) = |d_i| / max(|r_i|, R) with R = RMS(ref), known only once every element is in. An element that
// an earlier one dominates (|d_k| >= |d_i| and q_k >= q_i, q = |d| / |r|) can never be the worst: e_k(R) >= e_i(R)
// for every R (a division rounds monotonically in both operands), and a tie goes to the lower index, as in one pass.
// Every other element is kept: on real tensors a few dozen (the 2-D maxima of random points), at worst all of them
// (errors growing along the tensor at a constant ratio). `stairs_`, the Pareto front of the kept (ad, q), answers
// "is it dominated" with one binary search.
void MetricsAccumulator::offer(int64_t i, double r, double x, double ad) {
  const double q = ad == 0 ? 0.0 : ad / std::fabs(r);  // r = 0: +inf
  auto above = std::lower_bound(stairs_.begin(), stairs_.end(), ad, [](const Step& s, double v) { return s.ad < v; });
  if (above != stairs_.end() && above->q >= q) return;  // the largest q among the steps with ad >= this one's
  candidates_.push_back({i, r, x});
  // the steps it dominates (ad <= its ad, q <= its q) leave the front; it takes their place
  auto end = std::upper_bound(stairs_.begin(), stairs_.end(), ad, [](double v, const Step& s) { return v < s.ad; });
  auto first = std::partition_point(stairs_.begin(), end, [q](const Step& s) { return s.q > q; });
  first = stairs_.erase(first, end);
  stairs_.insert(first, Step{ad, q});
  // The pivot: the step that covers the most of [0, max ad] x [0, max q] (max q may be +inf: then the most ad).
  const double ad_top = stairs_.back().ad, q_top = stairs_.front().q;
  double best = -1;
  for (const Step& s : stairs_) {
    const double cover = std::isinf(q_top) ? (std::isinf(s.q) ? 0.0 : s.ad) : s.ad / ad_top * (s.q / q_top);
    if (cover > best) best = cover, pivot_ = s;
  }
}

TensorMetrics MetricsAccumulator::finish(const std::vector<int64_t>& shape) const {
  if (shape_numel(shape) != n_) fail("internal: metrics of {} elements finished as shape {}", n_, format_shape(shape));
  TensorMetrics m;
  m.numel = n_;
  m.compared = compared_;
  m.ref_rms = ref_finite_ ? std::sqrt(ref2_all_ / double(ref_finite_)) : 0.0;
  const double inf = std::numeric_limits<double>::infinity();
  for (const Candidate& c : candidates_) {
    const double ad = std::fabs(c.x - c.r), scale = std::max(std::fabs(c.r), m.ref_rms);
    const double e = scale > 0 ? ad / scale : (ad == 0 ? 0.0 : inf);
    if (m.worst_err < 0 || e > m.max_err) {
      m.max_err = e;
      m.worst_err = c.index;
      m.ref_at_err = c.r;
      m.other_at_err = c.x;
    }
  }
  m.max_abs = max_abs_;
  m.worst = worst_.index;
  m.ref_at = worst_.r;
  m.other_at = worst_.x;
  m.ref_nonfinite = ref_nonfinite_;
  m.other_nonfinite = other_nonfinite_;
  m.matched_inf = matched_inf_;
  m.unmatched_nonfinite = unmatched_;
  m.first_unmatched = first_unmatched_.index;
  m.ref_at_unmatched = first_unmatched_.r;
  m.other_at_unmatched = first_unmatched_.x;
  m.ref_all_zero = ref_zero_;
  m.other_all_zero = other_zero_;
  m.nmse = ref2_ > 0 ? diff2_ / ref2_ : (diff2_ > 0 ? inf : 0.0);
  m.rel_rms = std::sqrt(m.nmse);
  if (ref2_ > 0 && other2_ > 0)
    m.cosine = dot_ / (std::sqrt(ref2_) * std::sqrt(other2_));
  else
    m.cosine = (ref2_ == 0 && other2_ == 0) ? 1.0 : 0.0;
  if (m.worst >= 0) {
    m.worst_at = unflatten(shape, m.worst);
    m.worst_err_at = unflatten(shape, m.worst_err);
  }
  if (m.first_unmatched >= 0) m.first_unmatched_at = unflatten(shape, m.first_unmatched);
  return m;
}

}  // namespace salasim
