// The outputs of a user's implementation of an op (docs/check-your-implementation.md): an HDF5 file holding each
// output it produces as a dataset at the output's tap path ("/op/lightning/gla/out"), as `salasim op --out` writes
// them, float or integer of any width, no attributes required.
#pragma once
#include <string>
#include <vector>

#include "model/taps.hpp"
#include "ops/op.hpp"

namespace salasim {

struct OpOutputs {
  TapMap taps;                      // the outputs present, float64 (integer outputs as whole numbers, Tap::integer)
  std::vector<std::string> absent;  // the op's outputs the file does not hold (their tap paths)
};

// Reads `path` for op `s` with the checks of every salasim HDF5 read (hard links only, dims backed by the file's
// storage, the child-process guard against crashes inside libhdf5). A dataset that is not one of the op's outputs, a
// float where the output holds block ids and a value is not a whole number, an unreadable or missing file: a
// salasim::Error naming the file, the dataset and what was expected (the caller reports it as the implementation's
// failure). Shapes are not checked here: the comparison reports a wrong shape as a failing output.
OpOutputs read_op_outputs(const op::OpSpec& s, const std::string& path);

}  // namespace salasim
