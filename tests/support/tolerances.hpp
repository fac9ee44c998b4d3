// Tolerances of the reference's self-consistency tests, one row each with its reason. (Backend-vs-reference
// gates live in compare/'s tolerance table.)
#pragma once

namespace salasim::test {

struct Tol {
  double value;
  const char* reason;
};

// Two float64 evaluations of one formula in different orders (recurrence vs chunks vs closed form, pieces vs one
// call, sparse vs dense): each op rounds at ~1.1e-16 relative; 1e-12 leaves room for ~1e4 accumulated roundings
// and still fails any real difference.
constexpr Tol kFloat64Identity{1e-12, "float64 reassociation: ~1e-16 per op, 1e4 ops of headroom"};

// The bf16-emulating peer against float64, per tap: one bf16 rounding is at most 2^-9 = 2e-3 relative (RMS
// ~1.1e-3); a tap sees a few roundings upstream, so its relative RMS error lies well above 1e-4 (the peer does
// round) and below 5e-2 (the peer computes the same function).
constexpr Tol kPeerLow{1e-4, "at least a fraction of one bf16 rounding (2^-9 relative) must show"};
constexpr Tol kPeerHigh{5e-2, "a few bf16 roundings, not a different function"};

}  // namespace salasim::test
