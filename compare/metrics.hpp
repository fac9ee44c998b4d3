// Error metrics of one tensor against the float64 reference: max-abs with where it happens, the scaled max-err,
// relative RMS, NMSE, cosine, non-finite counts, all-zero flags. The gate (tolerance.hpp) and the reports are built
// on these numbers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/taps.hpp"

namespace salasim {

struct TensorMetrics {
  int64_t numel = 0;
  int64_t compared = 0;  // elements in the sums below: both values finite

  // Over the compared elements only; non-finite values are counted apart (a NaN must not hide in a max).
  double max_abs = 0;             // max |x - r|
  int64_t worst = -1;             // flat index of max_abs, -1 when nothing was compared
  std::vector<int64_t> worst_at;  // the same index per dimension
  double ref_at = 0;              // r[worst]
  double other_at = 0;            // x[worst]
  double rel_rms = 0;             // ||x - r|| / ||r||  (0 when both are zero, +inf when only r is)
  double nmse = 0;                // ||x - r||^2 / ||r||^2 = rel_rms^2
  double cosine = 1;              // <x, r> / (||x|| ||r||); 1 when both are zero, 0 when exactly one is
  double ref_rms = 0;             // sqrt(mean r^2) over the finite reference values

  // max-err: the largest |x - r| / max(|r|, ref_rms): each element's error against its own size, or against the
  // RMS for elements smaller than that. The max-abs gate uses it: one wrong element still shows, and a heavy-tailed
  // tensor (block scores) does not hang on the rounding luck of its one largest element.
  double max_err = 0;
  int64_t worst_err = -1;             // flat index of max_err
  std::vector<int64_t> worst_err_at;  // the same index per dimension
  double ref_at_err = 0;              // r[worst_err]
  double other_at_err = 0;            // x[worst_err]

  int64_t ref_nonfinite = 0;    // NaN or +-inf in the reference
  int64_t other_nonfinite = 0;  // NaN or +-inf in the other tensor
  int64_t matched_inf = 0;      // elements where both hold the same infinity (allowed for block scores)
  int64_t unmatched_nonfinite = 0;    // elements non-finite on either side and not a matched infinity
  int64_t first_unmatched = -1;       // flat index of the first of those
  std::vector<int64_t> first_unmatched_at;  // the same index per dimension
  double ref_at_unmatched = 0;        // r[first_unmatched]
  double other_at_unmatched = 0;      // x[first_unmatched]
  bool ref_all_zero = false;
  bool other_all_zero = false;
};

// ref, other: same shape (row-major). A shape mismatch, or data that does not fill the shape, is a
// salasim::Error naming the tap.
TensorMetrics tensor_metrics(const std::string& name, const Tap& ref, const Tap& other);

// tensor_metrics over a tensor fed in pieces (rows as two runs produce them, in order; any split), so a tap can be
// compared without keeping it: the same numbers as one call over the whole tensors, bit for bit (the sums run in
// the same order; max-err, which needs RMS(ref) of the whole tensor, keeps the few elements that can still be the
// worst whatever that RMS turns out to be, see metrics.cpp).
class MetricsAccumulator {
 public:
  // n elements of the reference and of the other tensor, following those added before.
  void add(const double* ref, const double* other, int64_t n);
  int64_t size() const { return n_; }
  // The metrics of everything added; shape: the whole tensor's (its element count must be size()).
  TensorMetrics finish(const std::vector<int64_t>& shape) const;

 private:
  struct Candidate {
    int64_t index;
    double r, x;
  };
  struct Step {
    double ad, q;  // |x - r| and |x - r| / |r| of a candidate no other one dominates
  };
  void offer(int64_t i, double r, double x, double ad);

  int64_t n_ = 0, compared_ = 0, ref_finite_ = 0;
  double ref2_all_ = 0, diff2_ = 0, ref2_ = 0, other2_ = 0, dot_ = 0;
  bool ref_zero_ = true, other_zero_ = true;
  int64_t ref_nonfinite_ = 0, other_nonfinite_ = 0, matched_inf_ = 0, unmatched_ = 0;
  Candidate first_unmatched_{-1, 0, 0}, worst_{-1, 0, 0};
  double max_abs_ = 0;
  std::vector<Candidate> candidates_;  // max-err candidates, by index
  std::vector<Step> stairs_;           // the undominated ones: ad ascending, q strictly descending
  Step pivot_{-1, -1};                 // a step of the front that rejects most elements cheaply
};

// Flat row-major index -> one index per dimension, and its printed form "[3, 0, 17]".
std::vector<int64_t> unflatten(const std::vector<int64_t>& shape, int64_t flat);
std::string format_shape(const std::vector<int64_t>& dims);

}  // namespace salasim
