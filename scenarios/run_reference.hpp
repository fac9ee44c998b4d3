// Runs a scenario on the float64 reference (or its bf16 peer): prefill (in pieces when the scenario says so),
// then the decode steps, recording taps and timing each phase.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/tap_recorder.hpp"
#include "model/taps.hpp"
#include "reference/model.hpp"
#include "scenarios/scenario.hpp"

namespace salasim {

struct PhaseTime {
  std::string phase;  // "prefill", "decode"
  int64_t tokens = 0;
  double seconds = 0;
};

struct RefRun {
  TapMap taps;
  std::vector<PhaseTime> times;
  std::vector<ref::Mat> logits;  // last-token logits after the prefill, then after each decode step: [1, V]
};

RefRun run_reference(const Scenario& s, const ref::RefOptions& opt, const TapFilter& filter,
                     std::shared_ptr<const ref::RefWeights> weights = nullptr);
// The same with the taps going to `sink` as they are recorded (run.taps stays empty).
RefRun run_reference_to(const Scenario& s, const ref::RefOptions& opt, const TapFilter& filter, TapSink& sink,
                        std::shared_ptr<const ref::RefWeights> weights = nullptr);

}  // namespace salasim
