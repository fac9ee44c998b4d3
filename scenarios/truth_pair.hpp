// The float64 reference and its bf16 peer side by side: each on its own thread with half of the OpenMP threads
// (one core each on a 2-core machine), the peer teacher-forced with the reference's selections as the reference
// records them. Their taps go to two sinks: two TapMaps (run_truth), or the two sides of a StreamCompare (verify's
// peer mode, which keeps almost nothing).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "model/tap_recorder.hpp"
#include "scenarios/run_reference.hpp"

namespace salasim {

struct PairOptions {
  // Each run's layer-done hook (ref::RefOptions::on_layer), with which run it is: progress lines.
  std::function<void(bool peer, const ref::RefModel& m, int layer, int64_t rows)> on_layer = nullptr;
  // Called when a run fails, before the other is waited for: unblock what it may be waiting on (StreamCompare::abort).
  std::function<void()> on_failure = nullptr;
  // When set, each run's taps also go here as they are recorded, before its sink (verify --dump-taps: a TapFileSink).
  TapSink* ref_copy = nullptr;
  TapSink* peer_copy = nullptr;
};

struct PairTimes {
  std::vector<PhaseTime> ref, peer;
  double ref_cpu_s = 0, peer_cpu_s = 0;  // CPU time of each run's thread (its OpenMP helpers not counted)
  double peer_wait_s = 0;                // time the peer waited for the reference's selections
};

// OpenMP threads each run gets: half of what this process may use, at least one.
int threads_per_run();

// Runs both on `s`, recording `filter` (the caller adds the selection taps the peer is forced with) into ref_sink and
// peer_sink, each from its run's thread. Rethrows the error of the run that failed first.
PairTimes run_ref_and_peer(const Scenario& s, const TapFilter& filter, std::shared_ptr<const ref::RefWeights> w,
                           TapSink& ref_sink, TapSink& peer_sink, const PairOptions& opt = {});

}  // namespace salasim
