// The main job's library side (`salasim verify`): the float64 reference and its bf16 peer on a scenario (the
// "truth"), a backend run teacher-forced with the reference's selections, every tap compared, failing taps dumped
// with their op's inputs. The CLI (cli/cmd_verify.cpp) only parses, calls these and prints.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "compare/hdf5_io.hpp"
#include "compare/report.hpp"
#include "scenarios/backend.hpp"

namespace salasim {

struct Truth {
  TapMap ref;   // float64, its own selections, block scores recorded (the tie band needs them)
  TapMap peer;  // bf16-emulating, teacher-forced with ref's selections: the allowance of every tap
  std::vector<PhaseTime> ref_times, peer_times;
};

// The selection taps of every sparse layer, "layer_NN/sparse/select/" (blocks and scores): teacher forcing hands
// the blocks to a backend, the tie band needs the scores. Every run of verify records them whatever its filter.
TapFilter selection_filter(const ModelConfig& c);

// Runs the reference and the peer on `s` with one copy of the weights (nullptr: loaded here), recording `filter`
// (the selections are always recorded: the peer is forced with them).
Truth run_truth(const Scenario& s, const TapFilter& filter, std::shared_ptr<const ref::RefWeights> weights = nullptr);

struct VerifyResult {
  CompareReport report;
  BackendRun run;  // the backend's taps, timings and device
};

// Runs `backend` on `s`, teacher-forced with truth.ref's selections, recording `filter` (+ the selections), and compares its taps
// with compare_taps(truth.ref, &truth.peer, backend).
VerifyResult verify_backend(const Scenario& s, const Truth& truth, Backend& backend,
                            const TapFilter& filter = TapFilter::all());

// Writes the failing taps of `report` to `path` (compare/hdf5_io.hpp's failure layout) with their op's inputs
// from both sides (compare/failure_inputs.hpp). Returns the number of taps written.
int dump_failures(const std::string& path, const CompareReport& report, const TapMap& ref, const TapMap& backend,
                  const DumpInfo& info);

// Bytes one run's taps take when every tap is recorded (float64): per prompt token, each layer's per-token taps
// (sparse layers' block scores grow with the prompt: [T, G, T/64]), plus the decode steps. verify keeps two runs
// (three with a separate backend), so it refuses scenarios whose taps cannot fit, before running anything.
double run_tap_bytes(const Scenario& s);

// The phase times as one line: "prefill 1500 tokens 0.91 s, decode 4 tokens 0.03 s".
std::string format_times(const std::vector<PhaseTime>& times);

}  // namespace salasim
