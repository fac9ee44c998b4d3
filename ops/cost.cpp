// The closed-form sums of ops/cost.hpp; each op's own formula is in its definition (ops/<name>.cpp).
#include "ops/cost.hpp"

#include <algorithm>

namespace salasim::op {

namespace {

double sum_floor_prefix(int64_t n, int64_t s) {  // sum of floor(x / s) for x in [0, n)
  if (n <= 0) return 0;
  const int64_t q = n / s, r = n % s;
  return double(s) * double(q) * double(q - 1) / 2 + double(q) * double(r);
}

double sum_mod_prefix(int64_t n, int64_t s) {  // sum of (x mod s) for x in [0, n)
  if (n <= 0) return 0;
  const int64_t q = n / s, r = n % s;
  return double(q) * double(s) * double(s - 1) / 2 + double(r) * double(r - 1) / 2;
}

}  // namespace

double sum_causal_keys(int64_t a, int64_t b) {
  if (b <= a) return 0;
  return (double(b) * double(b + 1) - double(a) * double(a + 1)) / 2;
}

double sum_visible_windows(int64_t a, int64_t b, int64_t kernel, int64_t stride) {
  // For p >= kernel - 1 the count is floor((p - kernel + 1) / stride) + 1 = floor((p + t) / stride).
  a = std::max(a, kernel - 1);
  if (b <= a) return 0;
  const int64_t t = stride - kernel + 1;
  return sum_floor_prefix(b + t, stride) - sum_floor_prefix(a + t, stride);
}

double sum_causal_blocks(int64_t a, int64_t b, int64_t block) {
  if (b <= a) return 0;
  return sum_floor_prefix(b, block) - sum_floor_prefix(a, block) + double(b - a);
}

double sum_selected_keys(int64_t a, int64_t b, int64_t block, int64_t k_sel) {
  if (b <= a) return 0;
  const int64_t all_causal_end = k_sel * block;  // below this every causal block is selected
  const double head = sum_causal_keys(a, std::min(b, all_causal_end));
  const int64_t a2 = std::max(a, all_causal_end);
  if (b <= a2) return head;
  const double n = double(b - a2);
  return head + n * double((k_sel - 1) * block + 1) + sum_mod_prefix(b, block) - sum_mod_prefix(a2, block);
}

}  // namespace salasim::op
