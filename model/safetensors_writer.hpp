// Writing safetensors files tensor by tensor: the header from the tensors' names, dtypes and shapes alone, then
// each tensor's bytes produced in pieces of rows by a callback, so a checkpoint of any size is written with a few
// tens of MB of memory (`salasim synth-checkpoint` of the 9.48B config: 17.7 GiB of weights). Every write is checked
// (model/output_file.hpp write_all): a full disk is a salasim::Error naming the file.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/dtype.hpp"

namespace salasim {

struct StPlanned {
  std::string name;
  DType dtype = DType::BF16;
  std::vector<int64_t> shape;  // rows are shape[0] (1 for a scalar)
};

// fill(i, row0, nrows, dst): rows [row0, row0 + nrows) of tensor i, row-major, little-endian, into dst.
using StFill = std::function<void(size_t i, int64_t row0, int64_t nrows, uint8_t* dst)>;

// Writes the file at `path` (created or truncated; the caller names a temporary, model/output_file.hpp). Returns
// the data bytes written. `piece_bytes`: the most bytes asked of fill at once (at least one row).
uint64_t write_safetensors_streamed(const std::string& path, const std::vector<StPlanned>& tensors, const StFill& fill,
                                    size_t piece_bytes = size_t(64) << 20);

}  // namespace salasim
