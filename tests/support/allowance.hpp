// What the tolerance table allows a backend on one tap, from the float64 reference's and the peer's taps: the
// tests that plant a fault "N times the allowance" size it with these, so the faults follow the gates exactly
// (compare/report.cpp applies the same arithmetic).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include "compare/metrics.hpp"
#include "compare/tolerance.hpp"
#include "model/taps.hpp"

namespace salasim::test {

// The absolute error the max-err gate allows on element i of tap `name`: (max_mult x the peer's max-err +
// max_floor) x max(|r_i|, RMS(r)).
inline double allowed_at(const TapMap& ref, const TapMap& peer, const std::string& name, size_t i) {
  const ToleranceRow& tol = tolerance_row(tolerance_table(), tap_kind(name));
  const TensorMetrics pm = tensor_metrics(name, ref.at(name), peer.at(name));
  return (tol.max_mult * pm.max_err + tol.max_floor) * std::max(std::fabs(ref.at(name).data[i]), pm.ref_rms);
}

// The relative RMS error the rel-RMS gate allows on tap `name`: mult x the peer's rel-RMS + rms_floor.
inline double allowed_rel_rms(const TapMap& ref, const TapMap& peer, const std::string& name) {
  const ToleranceRow& tol = tolerance_row(tolerance_table(), tap_kind(name));
  return tol.mult * tensor_metrics(name, ref.at(name), peer.at(name)).rel_rms + tol.rms_floor;
}

}  // namespace salasim::test
