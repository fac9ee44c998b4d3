// Goldens: the GPU path's taps of a small scenario, kept in the repository (tests/golden/<scenario>.h5, listed in
// tests/golden/LIST), so that a CI without a GPU checks that (1) the reference still matches what the GPU computed,
// within verify's gates, (2) the golden still holds every tap the model records on its scenario, no more and no
// fewer, and (3) the gpu/ sources are still the ones the golden was recorded from. A kernel change whose numerics
// were not re-verified on a GPU fails (3); a reference change that moves the numbers fails (1); a golden thinned,
// padded, or made on another scenario fails (2). docs/goldens.md describes the file.
//
// What a golden keeps, to stay a few MB (a tiny scenario's taps are ~0.5-2.5 GB in float64):
// - the prefill's per-token taps at golden_rows() only: both ends of the prompt and of every piece, the first
//   query with real block choices, both sides of dense_len;
// - every per-token tap of every decode step;
// - the state taps (GLA state, compressed keys K1/K2) of the prefill and of the last decode step only (each decode
//   step's are the previous ones plus one token); the last-token logits of every phase;
// - float taps as float32 (every GPU tensor is bf16 or fp32, so this is lossless), block ids as int64;
// - its tap manifest: the name and shape of every tap it was made with (file attribute golden_taps).
#pragma once
#include <cstdint>
#include <map>
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

// whole_sequence_tap (model/taps.hpp): the taps whose first dimension is not tokens, kept whole.

// The golden subset of a full run's taps (rows of prefill per-token taps cut to `rows`, whole-sequence taps of
// the decode steps before the last dropped). `decode_steps`: the scenario's. A golden holds exactly the subset of
// the GPU run; its check compares it with the same subset of the reference's full run.
TapMap golden_subset(const TapMap& taps, const std::vector<int64_t>& rows, int decode_steps);

// A tap set: every tap's name and shape.
using TapShapes = std::map<std::string, std::vector<int64_t>>;
TapShapes tap_shapes(const TapMap& taps);

// How tap set `have` differs from `want`: names missing from `have`, names only in `have`, and names in both whose
// shapes differ ("NAME: [2,3], expected [4,3]").
struct TapSetDiff {
  std::vector<std::string> missing, extra, reshaped;
  bool ok() const { return missing.empty() && extra.empty() && reshaped.empty(); }
};
TapSetDiff diff_tap_sets(const TapShapes& want, const TapShapes& have);

struct GoldenMeta {
  std::string scenario;       // the scenario's name
  std::string scenario_path;  // as given to `golden record`, relative to the source tree where it lies there
  std::string backend;        // the backend's name(), "gpu (NVIDIA H200 ...)"
  std::string device;         // the GPU's name
  std::string gpu_hash;       // SourceHash::hex of the GPU path's inputs at recording (compare/source_hash.hpp)
  std::vector<std::string> gpu_files;  // SourceHash::files: each input with its own digest
  std::vector<int64_t> rows;           // golden_rows() at recording
  std::string git_revision;
  std::string created;          // ISO 8601 UTC (filled in when written)
  TapShapes manifest;           // the tap set the golden was made with (file attribute golden_taps)
  std::string manifest_source;  // how the manifest came to be: recorded with the taps, or a migration's note
};

struct Golden {
  TapMap taps;
  GoldenMeta meta;
};

// The golden format this build writes and reads (file attribute golden_format). 2 added the tap manifest.
inline constexpr const char* kGoldenFormat = "2";

// A tap dump (docs/formats.md) with file attributes golden_format, golden_device, golden_gpu_source_hash,
// golden_gpu_source_files, golden_scenario_path, golden_prefill_rows, golden_taps (the manifest as JSON,
// {"<tap name>": [shape], ...}) and golden_manifest_source beside the usual ones. The manifest written is
// g.meta.manifest as it stands (make_golden fills it from the taps).
// Written as every output is (model/output_file.hpp); replace = false refuses an existing `path`.
void write_golden(const std::string& path, const Golden& g, bool replace = true);
// Reads a golden; a tap dump without the golden attributes, of another golden_format, or with a manifest that is
// not {"name": [int, ...]} is a salasim::Error naming the file and attribute.
Golden read_golden(const std::string& path);

// The golden of a backend run: its taps cut by golden_subset, with the scenario, device and source hash.
Golden make_golden(const Scenario& s, const std::string& scenario_path, const BackendRun& run,
                   const std::string& backend_name, const SourceHash& gpu_hash, const std::string& git_revision);

struct GoldenCheck {
  CompareReport report;       // golden taps (the backend) against the golden subset of the reference and peer
  std::string scenario;       // the scenario checked against (its name)
  bool scenario_ok = true;    // the golden was recorded on that scenario
  std::vector<int64_t> rows;  // golden_rows() of that scenario now
  bool rows_ok = true;        // the golden's recorded prefill rows are those
  int64_t expected_taps = 0;  // taps in the golden subset of the reference's run now
  TapSetDiff stored;          // the file's datasets against its own manifest (a golden thinned or padded after writing)
  TapSetDiff made;            // the golden's manifest against the reference's golden subset now (what it should hold)
  std::string recorded_hash;  // the golden's hash of the GPU path's inputs
  std::string current_hash;   // that hash now
  std::vector<std::string> changed_inputs;  // the inputs whose digest differs (names; empty for an old golden)
  std::string rerecord;                     // the command that re-records the golden on a GPU machine
  bool hash_ok() const { return recorded_hash == current_hash; }
  bool tap_set_ok() const { return scenario_ok && rows_ok && stored.ok() && made.ok(); }
  bool pass() const { return report.pass() && hash_ok() && tap_set_ok(); }
};

// What a golden's check needs of a truth run (the reference and the peer on the golden's scenario): the tap set of
// the golden subset of each run (names, shapes and order of every tap it makes: a golden that lacks or adds a tap
// must fail, so the set cannot come from the golden's own names), and the data of that subset, at least of the taps
// the golden holds.
struct GoldenTruth {
  TapHeaders ref_made, peer_made;
  TapMap ref, peer;
};
// From full runs that recorded every tap (TapFilter::all()): the golden subset of each, cut here.
GoldenTruth golden_truth(const Truth& truth, const Scenario& s);
// From a streaming run (run_truth_streaming) that kept golden_keep(g, s): the tap set from the headers of every tap
// it compared, the data of the golden's taps (already cut).
GoldenTruth golden_truth(const StreamResult& streamed, const Scenario& s);
// What a streaming truth run keeps to check `g` on `s`: the golden's taps (and the reference scores of its block
// selections: their tie band), prefill rows cut to golden_rows(s).
KeepTaps golden_keep(const Golden& g, const Scenario& s);

// The golden subset's tap set of a run known by its headers alone: the names and shapes golden_subset gives.
TapHeaders golden_subset_headers(const TapHeaders& run, const std::vector<int64_t>& rows, int decode_steps);

// Checks golden `g` against scenario `s` and what a truth run of it made, and against the current gpu/ hash.
GoldenCheck check_golden(const Golden& g, const Scenario& s, const GoldenTruth& truth, const SourceHash& current,
                         const std::string& golden_path);
// The same on full runs that recorded every tap (TapFilter::all()): check_golden(g, s, golden_truth(truth, s), ...).
GoldenCheck check_golden(const Golden& g, const Scenario& s, const Truth& truth, const SourceHash& current,
                         const std::string& golden_path);

// "golden FILE: recorded on DEVICE (...)", the tap-set and hash lines, the report (failures only unless
// `all_rows`), the verdict and, on failure, the re-record command.
std::string format_golden_check(const GoldenCheck& c, const Golden& g, const std::string& golden_path,
                                bool all_rows = false);

// `build/salasim golden record --scenario SCENARIO --out GOLDEN`, run on a GPU machine.
std::string rerecord_command(const std::string& scenario_path, const std::string& golden_path);

}  // namespace salasim
