// The main job's library side (`salasim verify`): the float64 reference and its bf16 peer on a scenario (the
// "truth"), a backend run teacher-forced with the reference's selections, every tap compared, failing taps dumped
// with their op's inputs. The CLI (cli/cmd_verify.cpp) only parses, calls these and prints.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compare/hdf5_io.hpp"
#include "compare/report.hpp"
#include "compare/stream_compare.hpp"
#include "scenarios/backend.hpp"
#include "scenarios/truth_pair.hpp"

namespace salasim {

struct Truth {
  TapMap ref;   // float64, its own selections, block scores recorded (the tie band needs them)
  TapMap peer;  // bf16-emulating, teacher-forced with ref's selections: the allowance of every tap
  std::vector<PhaseTime> ref_times, peer_times;
};

// The selection taps of every sparse layer, "layer_NN/sparse/select/" (blocks and scores): teacher forcing hands
// the blocks to a backend, the tie band needs the scores. Every run of verify records them whatever its filter.
TapFilter selection_filter(const ModelConfig& c);
// `f` plus the selection taps (unchanged when it records everything).
TapFilter with_selections(const ModelConfig& c, TapFilter f);

// Runs the reference and the peer on `s` side by side (scenarios/truth_pair.hpp) with one copy of the weights
// (nullptr: loaded here), recording `filter` (the selections are always recorded: the peer is forced with them) and
// keeping every recorded tap of both.
// `opt`: the runs' hooks (progress lines).
Truth run_truth(const Scenario& s, const TapFilter& filter, std::shared_ptr<const ref::RefWeights> weights = nullptr,
                const PairOptions& opt = {});

// Verify's peer mode, where the backend is the peer: the reference and the peer side by side with every tap
// compared as both produce it (compare/stream_compare.hpp), so memory holds a few layers' taps instead of both runs'.
// The report equals compare_taps(ref, &peer, peer) over full runs; `keep` names the taps kept for later checks (a
// golden's, cut to its rows; a failure dump's).
struct StreamedTruth {
  StreamResult result;
  PairTimes times;
};
StreamedTruth run_truth_streaming(const Scenario& s, std::shared_ptr<const ref::RefWeights> weights, KeepTaps keep = {},
                                  const PairOptions& opt = {});

struct VerifyResult {
  CompareReport report;
  BackendRun run;  // the backend's taps, timings and device
};

// Runs `backend` on `s`, teacher-forced with truth.ref's selections, recording `filter` (+ the selections), and
// compares its taps with compare_taps(truth.ref, &truth.peer, backend).
VerifyResult verify_backend(const Scenario& s, const Truth& truth, Backend& backend,
                            const TapFilter& filter = TapFilter::all());

// Writes the failing taps of `report` to `path` (compare/hdf5_io.hpp's failure layout) with their op's inputs
// from both sides (compare/failure_inputs.hpp). Returns the number of taps written. replace: as write_failures's
// (false refuses an existing `path`).
int dump_failures(const std::string& path, const CompareReport& report, const TapMap& ref, const TapMap& backend,
                  const DumpInfo& info, bool replace = true);

// Bytes one run's taps take when every tap is recorded (float64): per prompt token, each layer's per-token taps
// (sparse layers' block scores grow with the prompt: [T, G, T/64]), plus the decode steps. verify with a separate
// backend keeps three runs' (peer mode compares them as they come: streamed_tap_bytes), so it refuses scenarios
// whose taps cannot fit, before running anything.
double run_tap_bytes(const Scenario& s);

// Bytes of taps a streaming truth run (run_truth_streaming) may hold: each run's taps of one prefill piece, plus
// what waits for the slower run. An upper bound: a layer's taps leave as soon as both runs recorded them.
double streamed_tap_bytes(const Scenario& s);

// The phase times as one line: "prefill 1500 tokens 0.91 s, decode 4 tokens 0.03 s".
std::string format_times(const std::vector<PhaseTime>& times);

}  // namespace salasim
