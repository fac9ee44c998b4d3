// Shared by the fuzz targets that build HDF5 files through the library's API (fuzz_taps, fuzz_op_inputs): the kinds
// of attribute salasim's readers meet, written the way h5py and salasim's own writer write them. Each call ignores
// the library's refusals (a name already taken): the builders try many operations and keep what succeeds.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace salasim::fuzz {

// A variable-length UTF-8 string, as salasim and h5py write str attributes.
void string_attr(hid_t obj, const char* name, const std::string& v);
// A 1-D int64 attribute of v.size() values (an empty one has a null dataspace).
void ints_attr(hid_t obj, const char* name, const std::vector<int64_t>& v);
// A scalar attribute: float64, or int64 when `integer`.
void number_attr(hid_t obj, const char* name, double v, bool integer);

}  // namespace salasim::fuzz
