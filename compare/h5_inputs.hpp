// Tensors a user wrote with h5py (or any HDF5 writer) for `salasim op` (docs/op.md): datasets at the root of the file,
// by name, and the root group's attributes, with no salasim attributes required. The checks of compare/h5_util.hpp
// apply (hard links only, dims backed by the file's storage, only salasim's filters, the child-process crash guard).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ops/inputs.hpp"

namespace salasim {

// Reads the root datasets `datasets` and root attributes `attrs` that exist in `path` (those missing are left out of
// the result; the caller says which it needs). `check_headers` sees shapes, types and attributes before any data is
// read, so a wrong shape is refused before it is allocated. An object of a listed name that is not a dataset, or is
// reached through a soft or external link, an attribute that is neither one number nor a string, a missing or
// unreadable file: a salasim::Error naming the file and the object.
InputFile read_input_file(const std::string& path, const std::vector<std::string>& datasets,
                          const std::vector<std::string>& attrs,
                          const std::function<void(const InputFile&)>& check_headers);
// The same read in this process only, without the child process that first reads a file libhdf5 might crash on:
// for files known to be well-formed HDF5 (the fuzz target's files built through the HDF5 API, fuzz/fuzz_op_inputs).
InputFile read_input_file_unguarded(const std::string& path, const std::vector<std::string>& datasets,
                                    const std::vector<std::string>& attrs,
                                    const std::function<void(const InputFile&)>& check_headers);

// Writes `f`'s datasets (float64, or int64 for integer ones) and attributes (numbers float64 or int64, strings UTF-8)
// at the root of `path`, the layout these readers take: what `salasim op --random --save-inputs` leaves for `--in`.
// Under the output policy (model/output_file.hpp): a temporary renamed onto `path`, an existing file refused
// naming `option` unless `force`, every write and the close checked.
void write_input_file(const std::string& path, const InputFile& f, bool force, const std::string& option);

}  // namespace salasim
