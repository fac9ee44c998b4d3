// Calibration: efficiency factors fitted by least squares from measured runs. Each factor scales a roofline
// floor, so measured = floor / efficiency, i.e. linear in x = 1 / efficiency; residuals are absolute, so each run
// weighs by its duration (calibrate.cpp says why): x = sum(f t) / sum(f^2).
//  - Phase times, when a run has them, fit each op class on its own.
//  - Totals alone cannot tell the classes apart (GEMM, GLA and elementwise times all grow linearly with the
//    context), so runs without phases fit one common prefill factor from TTFT.
//  - Decode has its own factor, from decode ms/token; and, when runs profiled their decode steps by class
//    ("decode_gpu_ms_per_token"), one per class, fitted to each class's share of the measured ms/token.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "reports/latency.hpp"
#include "reports/measured.hpp"

namespace salasim::reports {

// One measured run reduced to what the fit needs: the model's floors for it (efficiency 1) and the measurements.
struct FitPoint {
  ClassSeconds floor_s{};               // prefill floor per class
  double ttft_s = 0;                    // measured
  std::optional<ClassSeconds> phases;   // measured, per class
  double decode_floor_ms = 0;           // mean floor per decode step over the run's generated tokens
  std::optional<double> decode_ms;      // measured
  ClassSeconds decode_floor_class_ms{};       // the decode floor per class
  std::optional<ClassSeconds> decode_class_ms;  // measured ms/token split by the profiled steps' class shares
};

struct FitResult {
  Efficiency eff;                      // fitted where observed, the defaults elsewhere
  int points = 0;
  std::string prefill_mode = "none";   // "none", "per-class from phases", "common from TTFT totals"
  std::array<int, kOpClasses> class_rows{};
  int ttft_rows = 0, decode_rows = 0;
  std::array<int, kOpClasses> decode_class_rows{};  // runs that fitted each class's decode factor
  bool calibrated() const { return points > 0; }
  std::string summary(const Efficiency& defaults) const;  // one line for reports and the CLI
};

FitResult fit_efficiency(const std::vector<FitPoint>& points, const Efficiency& defaults);

// A measured run's fit point on `hw`: loads the run's config and evaluates the floors.
FitPoint fit_point(const MeasuredRun& run, const HwProfile& hw);

// Fit from every run in `runs` (possibly none) for `hw`.
FitResult fit_runs(const std::vector<MeasuredRun>& runs, const HwProfile& hw);

}  // namespace salasim::reports
