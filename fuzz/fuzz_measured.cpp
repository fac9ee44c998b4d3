// Fuzz target: measured-run records (reports/measured.hpp load_measured: one run object or an array of them, as
// `salasim run --json-out` writes). Records that load, when short enough to evaluate quickly (context <= 1M,
// decode <= 1024 tokens), are fitted against the H200 profile as `salasim model latency` does: every fitted
// efficiency factor must be finite and positive (the time ranges are what keeps the fit's sums away from 0 and inf).
#include <cmath>
#include <cstdlib>
#include <string>

#include "fuzz/support.hpp"
#include "reports/calibrate.hpp"
#include "reports/hardware.hpp"
#include "reports/measured.hpp"

using namespace salasim;
using namespace salasim::reports;

namespace {

void check_factor(double f, const char* what) {
  if (!(std::isfinite(f) && f > 0)) {
    std::fprintf(stderr, "fuzz: measured runs load, but the fit gives %s factor %g\n", what, f);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const HwProfile h200 = load_hw("h200");
  const std::string path = fuzz::write_scratch("measured.json", data, size);
  fuzz::expect_clean([&] {
    const std::vector<MeasuredRun> runs = load_measured(path);
    if (runs.empty() || runs.size() > 8) return;
    for (const MeasuredRun& r : runs)
      if (r.context > (int64_t(1) << 20) || r.decode_tokens > 1024 || r.chunk < 1024) return;
    const FitResult fit = fit_runs(runs, h200);
    for (double f : fit.eff.prefill) check_factor(f, "a prefill");
    check_factor(fit.eff.decode, "the decode");
    for (double f : fit.eff.decode_class)
      if (f != 0) check_factor(f, "a decode class");
  });
  return 0;
}
