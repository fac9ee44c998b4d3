// HDF5 dumps of tap maps (one dataset per tap at its path) and of failing taps (reference, backend, difference and
// the op's inputs), readable by h5py. The layout is described in docs/formats.md ("HDF5 dumps").
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compare/report.hpp"
#include "model/taps.hpp"

namespace salasim {

// File attributes of a dump.
struct DumpInfo {
  std::string scenario;
  std::string git_revision;
  std::string backend;                       // "reference", "peer", "cuda:H200", ...
  std::string created;                       // ISO 8601 UTC; write_* fills in the current time when empty
  std::map<std::string, std::string> extra;  // free-form key/values, one string attribute each
};

enum class FloatStorage { Float64, Float32 };  // how float taps are stored; integer taps are always int64

// Writes `path`: dataset /prefill/layer_03/lightning/gla/out etc., groups created along the path.
// `compress`: shuffle + deflate each dataset (h5py and read_taps read it as any other; goldens use it). Written as
// every output is (model/output_file.hpp): to a temporary beside `path`, renamed onto it once closed without error;
// replace = false refuses an existing `path` (the CLI's policy without --force), true replaces it.
void write_taps(const std::string& path, const TapMap& taps, const DumpInfo& info,
                FloatStorage storage = FloatStorage::Float64, bool compress = false, bool replace = true);

struct TapDump {
  TapMap taps;
  DumpInfo info;
  // Taps that keep chosen rows only (`salasim run --dump-taps --rows`): the absolute rows (prompt positions) of their
  // shape[0] rows, from the dataset attribute `rows`; a tap not listed holds all its rows.
  std::map<std::string, std::vector<int64_t>> rows;
};
// Reads a file written by write_taps. Missing file, not HDF5, not a tap dump or a dataset without the expected
// attributes: a salasim::Error naming the file, the object and what was expected. Untrusted files are read in a
// child process first (h5::crash_guard: the HDF5 library crashes on some damaged files); the _unguarded forms
// skip that (the fuzz target's files built through the HDF5 API, where a crash must surface).
TapDump read_taps(const std::string& path);
TapDump read_taps_unguarded(const std::string& path);

// One failing tap: group <name>/ with datasets reference, backend, difference (backend - reference, when both are
// there with one shape) and group inputs/ holding named input tensors of the op.
struct FailureEntry {
  std::string name;
  std::optional<Tap> reference;
  std::optional<Tap> backend;
  std::map<std::string, Tap> inputs;  // "q", "k", "v", ...: names without '/'
};

// Written as write_taps is (a temporary renamed onto `path`; replace as there).
void write_failures(const std::string& path, const std::vector<FailureEntry>& entries, const DumpInfo& info,
                    bool replace = true);

struct FailureDump {
  std::vector<FailureEntry> entries;  // by name
  DumpInfo info;
};
FailureDump read_failures(const std::string& path);
FailureDump read_failures_unguarded(const std::string& path);

// An entry (without inputs: the driver adds those it has) for each failing row of a report.
std::vector<FailureEntry> failure_entries(const CompareReport& report, const TapMap& ref, const TapMap& backend);

}  // namespace salasim
