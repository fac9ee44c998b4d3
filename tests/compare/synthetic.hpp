// Synthetic tap sets for the harness tests: every tap kind of the tiny config's layer map with realistic shapes,
// a fresh random float64 reference, a peer rounded like the bf16-emulating reference, and a backend carrying an
// independent perturbation of the same size (what a correct GPU path looks like to the harness).
#pragma once
#include <cstdint>
#include <string>

#include "model/taps.hpp"

namespace salasim::test {

struct Synthetic {
  TapMap ref;
  TapMap peer;
  TapMap backend;
  int64_t first_pos = 0;  // absolute position of query row 0 of the selection taps
};

// T tokens of one prefill chunk that starts past dense_len, so the sparse path selects (T odd on purpose).
Synthetic make_synthetic(uint64_t seed, int tokens = 67);

// Top-k of docs/spec.md §4.4 on one [NB] score row: the k highest (ties to the lower id), ascending, ids > qb -> -1.
// scores: [NB]; out: [k].
void select_top_k(const double* scores, int64_t nb, int64_t qb, int64_t k, double* out);

}  // namespace salasim::test
