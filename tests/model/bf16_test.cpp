// bf16 rounding: the host double rounding agrees with the float path (which matches CUDA's __float2bfloat16_rn)
// wherever a float holds the input exactly, rounds to nearest with ties to even, and does not round twice.
#include <algorithm>
#include <cmath>
#include <random>

#include "model/bf16.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

TEST_CASE("bf16: round_bf16 equals the float path on float inputs", "[bf16]") {
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> bits(0, 0xffffffffu);
  int checked = 0, wrong = 0;
  float first_wrong = 0;
  for (int i = 0; i < 200000; ++i) {
    const float f = bits_float(bits(rng));
    if (!std::isfinite(f)) continue;
    if (round_bf16(double(f)) != double(float_from_bf16(bf16_from_float(f))) && wrong++ == 0) first_wrong = f;
    ++checked;
  }
  INFO("first mismatch at " << first_wrong);
  CHECK(wrong == 0);
  CHECK(checked > 190000);
}

TEST_CASE("bf16: round_bf16 rounds to nearest, ties to even, once", "[bf16]") {
  CHECK(round_bf16(1.0 + 0x1p-10) == 1.0);                     // below half an ulp (2^-7 at 1.0)
  CHECK(round_bf16(1.0 + 0x1p-8) == 1.0);                      // a tie, to the even neighbour 1.0
  CHECK(round_bf16(1.0 + 3 * 0x1p-8) == 1.0 + 0x1p-6);         // a tie, to the even neighbour 1 + 2^-6
  CHECK(round_bf16(1.0 + 0x1p-8 + 0x1p-40) == 1.0 + 0x1p-7);   // just above the tie (a float step would lose it)
  CHECK(round_bf16(-(1.0 + 0x1p-10)) == -1.0);
  CHECK(round_bf16(3.14159) == 3.140625);
  CHECK(round_bf16(0x1.ffp127 * 0.999) == 0x1.fep127);
  CHECK(std::isinf(round_bf16(0x1.ffp127)));
  // One rounding errs by at most half an ulp: 2^-8 relative.
  std::mt19937_64 rng(9);
  std::normal_distribution<double> nd;
  double worst = 0;
  for (int i = 0; i < 100000; ++i) {
    const double x = nd(rng);
    worst = std::max(worst, std::fabs(round_bf16(x) - x) / std::fabs(x));
  }
  CHECK(worst <= 0x1p-8);
}
