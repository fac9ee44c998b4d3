// `salasim op`'s reader of a user's input file (docs/op.md): the op's datasets and attributes (its definition in the
// registry, ops/op.hpp) read from HDF5 with the checks of every salasim HDF5 read, then checked as ops/io.hpp says.
#pragma once
#include <string>

#include "ops/op.hpp"

namespace salasim::op {

// Reads and checks `path` against `s`: missing datasets or attributes, wrong rank, shape or dtype, sizes that
// disagree between inputs, non-finite values, out-of-range attributes: an Error naming the file, the dataset or
// attribute, what was expected and what was found. Shapes are checked before any data is read.
// `guarded` = false reads in this process only (compare/h5_inputs.hpp read_input_file_unguarded; the fuzz target's
// built files).
OpInputs read_op_inputs(const OpSpec& s, const std::string& path, bool guarded = true);

}  // namespace salasim::op
