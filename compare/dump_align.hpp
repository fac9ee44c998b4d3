// What `salasim diff` compares when a dump holds chosen taps or chosen rows (`salasim run --dump-taps FILE --taps
// PATTERN --rows LIST`) and the other holds every tap, all rows (`salasim ref --dump-taps`): the taps the chosen
// file holds, on the rows both files hold. Two whole dumps compare exactly as before (every tap, every row).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "compare/hdf5_io.hpp"

namespace salasim {

// File attributes of a dump of chosen taps: the patterns and the row list as given (`tap_selection` marks it).
inline constexpr const char* kTapSelectionAttr = "tap_selection";
inline constexpr const char* kRowSelectionAttr = "row_selection";

struct AlignedDumps {
  TapMap ref, backend;
  std::optional<TapMap> peer;
  int skipped = 0;                  // taps left out: a dump of chosen taps lacks them
  int cut = 0;                      // taps compared on a subset of their rows
  std::vector<std::string> notes;   // taps whose rows cannot be lined up (they stay uncut, so they fail on shape)
};

// ref, peer (or nullptr) and backend lined up: a tap that a dump of chosen taps lacks is left out of all three; a
// tap some dump holds on chosen rows is cut, in each, to the rows every dump holds (a whole tap holds rows
// 0 .. shape[0]-1). When a chosen row is missing from a whole tap, or the chosen rows of two dumps do not meet,
// the tap stays as it is (and fails on its shape) with a note saying which rows.
AlignedDumps align_dumps(const TapDump& ref, const TapDump* peer, const TapDump& backend);

}  // namespace salasim
