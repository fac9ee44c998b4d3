// Goldens: the GPU path's taps of a small scenario, kept in the repository (tests/golden/<scenario>.h5), so that a
// CI without a GPU checks that (1) the reference still matches what the GPU computed, within verify's gates, and
// (2) the gpu/ sources are still the ones the golden was recorded from. A kernel change whose numerics were not
// re-verified on a GPU fails (2); a reference change that moves the numbers fails (1).
//
// What a golden keeps, to stay a few MB (a tiny scenario's taps are ~0.5-2.5 GB in float64):
// - the prefill's per-token taps at golden_rows() only: both ends of the prompt and of every piece, the first
//   query with real block choices, both sides of dense_len;
// - every per-token tap of every decode step;
// - the state taps (GLA state, compressed keys K1/K2) of the prefill and of the last decode step only (each decode
//   step's are the previous ones plus one token); the last-token logits of every phase;
// - float taps as float32 (every GPU tensor is bf16 or fp32, so this is lossless), block ids as int64.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compare/hdf5_io.hpp"
#include "compare/report.hpp"
#include "compare/source_hash.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/verify.hpp"

namespace salasim {

// Prefill rows (positions) a golden keeps for scenario `s`, ascending.
std::vector<int64_t> golden_rows(const Scenario& s);

// True for taps whose first dimension is not tokens: "lightning/gla/state", "sparse/compress_k/k1|k2",
// "final/logits" (the last token only).
bool whole_sequence_tap(const std::string& name);

// The golden subset of a full run's taps (rows of prefill per-token taps cut to `rows`, whole-sequence taps of
// the decode steps before the last dropped). `decode_steps`: the scenario's.
TapMap golden_subset(const TapMap& taps, const std::vector<int64_t>& rows, int decode_steps);
// The taps of `full` named in `names`, prefill per-token taps cut to `rows` (how a check matches a golden).
TapMap golden_cut(const TapMap& full, const TapMap& names, const std::vector<int64_t>& rows);

struct GoldenMeta {
  std::string scenario;       // the scenario's name
  std::string scenario_path;  // as given to `golden record`, relative to the source tree where it lies there
  std::string backend;        // the backend's name(), "gpu (NVIDIA H200 ...)"
  std::string device;         // the GPU's name
  std::string gpu_hash;       // SourceHash::hex of the gpu/ sources at recording
  std::vector<std::string> gpu_files;  // the files hashed
  std::vector<int64_t> rows;  // golden_rows() at recording
  std::string git_revision;
  std::string created;        // ISO 8601 UTC (filled in when written)
};

struct Golden {
  TapMap taps;
  GoldenMeta meta;
};

// A tap dump (README "HDF5 dumps") with file attributes golden_format, golden_device, golden_gpu_source_hash,
// golden_gpu_source_files, golden_scenario_path and golden_prefill_rows beside the usual ones.
void write_golden(const std::string& path, const Golden& g);
// Reads a golden; a tap dump without the golden attributes is a salasim::Error naming the file and attribute.
Golden read_golden(const std::string& path);

// The golden of a backend run: its taps cut by golden_subset, with the scenario, device and source hash.
Golden make_golden(const Scenario& s, const std::string& scenario_path, const BackendRun& run,
                   const std::string& backend_name, const SourceHash& gpu_hash, const std::string& git_revision);

struct GoldenCheck {
  CompareReport report;       // golden taps (the backend) against the cut reference and peer
  std::string recorded_hash;  // the golden's gpu/ hash
  std::string current_hash;   // the hash of the gpu/ sources now
  std::string rerecord;       // the command that re-records the golden on a GPU machine
  bool hash_ok() const { return recorded_hash == current_hash; }
  bool pass() const { return report.pass() && hash_ok(); }
};

// The taps a truth run must record to check `g` (its tap names; run_truth adds the selections).
TapFilter golden_filter(const Golden& g);
// Checks a golden against a truth run of its scenario (full-length taps; cut here) and the current gpu/ hash.
GoldenCheck check_golden(const Golden& g, const Truth& truth, const SourceHash& current, const std::string& golden_path);
// The same on taps already cut as golden_cut cuts them (a streaming truth run keeps only those: golden_keep).
GoldenCheck check_golden_cut(const Golden& g, const TapMap& ref_cut, const TapMap& peer_cut, const SourceHash& current,
                             const std::string& golden_path);
// What a streaming truth run (run_truth_streaming) keeps to check `g`: its taps, prefill rows cut to its rows.
KeepTaps golden_keep(const Golden& g);

// "golden FILE: recorded on DEVICE (...)", the hash lines, the report (failures only unless `all_rows`), the
// verdict and, on failure, the re-record command.
std::string format_golden_check(const GoldenCheck& c, const Golden& g, const std::string& golden_path,
                                bool all_rows = false);

// `build/salasim golden record --scenario SCENARIO --out GOLDEN`, run on a GPU machine.
std::string rerecord_command(const std::string& scenario_path, const std::string& golden_path);

}  // namespace salasim
