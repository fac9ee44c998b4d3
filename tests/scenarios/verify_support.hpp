// Shared by the verify, golden and spot-check tests: the short scenario (every kernel at its real shapes, the
// sparse path with real block choices, in about a second a run) and a process-wide truth run of it, so the
// SECTIONs of one test case pay for the float64 reference and the peer once.
#pragma once
#include <memory>
#include <string>

#include "scenarios/scenario.hpp"
#include "scenarios/verify.hpp"
#include "tests/support/paths.hpp"

namespace salasim::test {

inline std::string short_scenario_path() { return source_path("scenarios/tiny-short.json"); }

struct ShortRun {
  Scenario s;
  std::shared_ptr<const ref::RefWeights> w;
  Truth truth;
};

inline const ShortRun& short_run() {
  static const ShortRun r = [] {
    ShortRun x;
    x.s = load_scenario(short_scenario_path());
    x.w = ref::load_ref_weights(x.s.cfg, x.s.weights);
    x.truth = run_truth(x.s, TapFilter::all(), x.w);
    return x;
  }();
  return r;
}

}  // namespace salasim::test
