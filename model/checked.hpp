// Size arithmetic on values that come from input files: a product or sum that would leave int64 is an error naming
// what was being computed ("cfg.json: vocab_size x hidden_size"), never a silent wrap.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/error.hpp"

namespace salasim {

inline int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) fail("{}: {} x {} does not fit in 64 bits", what, a, b);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) fail("{}: {} + {} does not fit in 64 bits", what, a, b);
  return r;
}

// Element count of a shape of non-negative dims; throws naming `what` when a dim is negative or the product
// overflows. (Taps and tensors built by salasim itself use their own unchecked numel(); this is for shapes read
// from files.)
inline int64_t checked_numel(const std::vector<int64_t>& shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) fail("{}: dimension {} is negative", what, d);
    n = checked_mul(n, d, what + ": element count");
  }
  return n;
}

}  // namespace salasim
