// Internal to compare/: the pieces of the tap-dump layout (docs/formats.md, "Tap dump") that write_taps uses, shared
// with the streaming writer (compare/tap_file_sink.hpp), so both write one layout with one set of checks.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compare/h5_util.hpp"
#include "compare/hdf5_io.hpp"

namespace salasim::dump_layout {

// A tap name is an absolute HDF5 path: "/a/b/c", no empty, "." or ".." parts; else an Error naming `file`.
void check_name(const std::string& name, const std::string& file);
// Creates (truncates) `path` with the file attributes of `layout` ("taps", "failures") and `info`. large_attrs: the
// HDF5 1.8 file format at least, whose dense attribute storage holds attributes past 64 KiB (a `rows` list).
// Creates the HDF5 file at `at` (an OutputFile's temporary, model/output_file.hpp), messages naming `path`.
h5::Id create_file(const std::string& path, const std::string& at, const char* layout, const DumpInfo& info,
                   bool large_attrs = false);
// Closes a file written through `f`, checked: HDF5 writes what it buffered at close, so a full disk shows here.
void close_file(h5::Id& f, const std::string& path);
// Dataset `rel` (a path below `loc`, groups created along it) holding tap `t`, with its attributes.
void write_dataset(hid_t loc, const std::string& rel, const Tap& t, FloatStorage storage, const std::string& file,
                   bool compress = false);
// A dataset's attributes: shape, dtype ("float64", "float32", "int64"), integer (0/1), order.
void write_attrs(hid_t ds, const std::vector<int64_t>& shape, const char* dtype, bool integer, int64_t order,
                 const std::string& file);
// A link creation property list that creates the groups along a path.
h5::Id intermediate_groups();
// An integer tap's values (held as doubles) as int64, or an Error naming `where` when one is not a whole number.
std::vector<int64_t> whole_numbers(const double* v, size_t n, const std::string& file, const std::string& where);

}  // namespace salasim::dump_layout
