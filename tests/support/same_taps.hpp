// Two tap maps hold the same taps exactly: names, shapes, types, recording order and every value's bits (NaN equal to
// NaN). For dumps that must read back as what the run recorded.
#pragma once
#include <cmath>
#include <string>

#include "model/taps.hpp"
#include "tests/support/catch.hpp"

namespace salasim::test {

inline bool same_bits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

inline void check_same_taps(const TapMap& got, const TapMap& want) {
  CHECK(got.size() == want.size());
  for (const auto& [name, t] : want) {
    INFO(name);
    REQUIRE(got.count(name));
    const Tap& u = got.at(name);
    CHECK(u.shape == t.shape);
    CHECK(u.integer == t.integer);
    CHECK(u.order == t.order);
    REQUIRE(u.data.size() == t.data.size());
    size_t differ = 0;
    for (size_t i = 0; i < t.data.size(); ++i) differ += same_bits(u.data[i], t.data[i]) ? 0 : 1;
    CHECK(differ == 0);
  }
}

}  // namespace salasim::test
