// Top-k block selection compared as sets per (query, kv group) (docs/spec.md §4.4): exact, except for swaps inside a
// declared tie band of the reference's scores around its boundary score.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "model/taps.hpp"

namespace salasim {

struct SelectionMismatch {
  int64_t query = 0;
  int64_t group = 0;
  int64_t block = 0;
  bool in_reference = false;  // true: the reference selected it and the backend did not
  double score = 0;           // the reference's score of the block (NaN when the block id is out of range)
  double boundary = 0;        // lowest reference score of a selected non-forced block in that row (NaN if none)
};

struct SelectionReport {
  double band = 0;
  bool have_scores = true;      // false: no reference scores, so every mismatch is out of band
  int64_t rows = 0;             // (query, group) rows compared
  int64_t rows_differing = 0;   // rows whose sets differ at all
  int64_t in_band = 0;          // mismatched blocks that are ties
  int64_t out_of_band = 0;      // mismatched blocks that are not
  std::optional<SelectionMismatch> first_out_of_band;
  bool pass() const { return out_of_band == 0; }
};

// ref_blocks, backend_blocks: [T, G, K] block ids (-1 = empty slot), compared as sets per (t, g).
// ref_scores: [T, G, NB] the reference's max-pooled scores (+inf forced, -inf future/invalid), or nullptr for an
// exact comparison. Shapes that do not fit together, or reference ids outside [0, NB), are a salasim::Error naming
// the tap; a backend id outside [0, NB) is a mismatch out of band.
SelectionReport compare_selection(const std::string& name, const Tap& ref_blocks, const Tap& backend_blocks,
                                  const Tap* ref_scores, double band);

// compare_selection over rows fed in order (any split): the same report as one call, for taps compared as two
// runs produce them. Rows are (query) rows of [rows, G, K] block ids and [rows, G, NB] reference scores.
class SelectionAccumulator {
 public:
  // with_scores false: no reference scores (every mismatch is out of band).
  SelectionAccumulator(std::string name, double band, bool with_scores);
  // ref_blocks, backend_blocks: [rows, G, K]; ref_scores: [rows, G, NB] (ignored without scores); the rows follow
  // those added before. An invalid reference id is a salasim::Error naming the tap and the query.
  void add(const double* ref_blocks, const double* backend_blocks, const double* ref_scores, int64_t rows, int64_t G,
           int64_t K, int64_t NB);
  const SelectionReport& report() const { return rep_; }

 private:
  std::string name_;
  SelectionReport rep_;
  int64_t row0_ = 0;
};

}  // namespace salasim
