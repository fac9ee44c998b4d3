// Tensor metrics: one pass over both tensors, sums in double.
#include "compare/metrics.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/error.hpp"

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

  TensorMetrics m;
  m.numel = ref.numel();
  // The RMS first: max-err scales each error by max(|r|, RMS).
  double ref2_all = 0;
  int64_t ref_finite = 0;
  for (double r : ref.data) {
    if (!std::isfinite(r)) continue;
    ref2_all += r * r;
    ++ref_finite;
  }
  m.ref_rms = ref_finite ? std::sqrt(ref2_all / double(ref_finite)) : 0.0;
  const double inf = std::numeric_limits<double>::infinity();

  double diff2 = 0, ref2 = 0, other2 = 0, dot = 0;
  bool ref_zero = true, other_zero = true;
  for (int64_t i = 0; i < m.numel; ++i) {
    const double r = ref.data[size_t(i)], x = other.data[size_t(i)];
    const bool rf = std::isfinite(r), xf = std::isfinite(x);
    ref_zero = ref_zero && r == 0.0;
    other_zero = other_zero && x == 0.0;
    m.ref_nonfinite += !rf;
    m.other_nonfinite += !xf;
    if (!rf || !xf) {
      if (std::isinf(r) && r == x) {
        ++m.matched_inf;
      } else {
        if (m.first_unmatched < 0) m.first_unmatched = i;
        ++m.unmatched_nonfinite;
      }
      continue;
    }
    const double d = x - r, ad = std::fabs(d), scale = std::max(std::fabs(r), m.ref_rms);
    const double e = scale > 0 ? ad / scale : (ad == 0 ? 0.0 : inf);
    if (m.worst < 0 || ad > m.max_abs) {
      m.max_abs = ad;
      m.worst = i;
    }
    if (m.worst_err < 0 || e > m.max_err) {
      m.max_err = e;
      m.worst_err = i;
    }
    diff2 += d * d;
    ref2 += r * r;
    other2 += x * x;
    dot += x * r;
    ++m.compared;
  }
  m.ref_all_zero = ref_zero;
  m.other_all_zero = other_zero;
  m.nmse = ref2 > 0 ? diff2 / ref2 : (diff2 > 0 ? inf : 0.0);
  m.rel_rms = std::sqrt(m.nmse);
  if (ref2 > 0 && other2 > 0)
    m.cosine = dot / (std::sqrt(ref2) * std::sqrt(other2));
  else
    m.cosine = (ref2 == 0 && other2 == 0) ? 1.0 : 0.0;
  if (m.worst >= 0) {
    m.worst_at = unflatten(ref.shape, m.worst);
    m.ref_at = ref.data[size_t(m.worst)];
    m.other_at = other.data[size_t(m.worst)];
    m.worst_err_at = unflatten(ref.shape, m.worst_err);
    m.ref_at_err = ref.data[size_t(m.worst_err)];
    m.other_at_err = other.data[size_t(m.worst_err)];
  }
  return m;
}

}  // namespace salasim
