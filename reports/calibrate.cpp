// Least-squares fit of efficiency factors from measured runs.
#include "reports/calibrate.hpp"

#include <fmt/format.h>

#include "model/error.hpp"
#include "reports/model_spec.hpp"

namespace salasim::reports {

namespace {

// Minimises sum((floor_i * x - measured_i)^2), x = 1 / efficiency: x = sum(floor * measured) / sum(floor^2).
// Absolute, not relative, error: the runs span 64K to 2048K (0.1 s to 60 s of one op class), and a short run's fixed
// costs (launches, per-chunk passes that do not grow with the context) would otherwise weigh as much as a long run's
// whole time. Fitted this way each run counts by its duration, so the factor is set by the long runs the model
// extrapolates from. (The held-out prediction of each fit: docs/decisions.md, "The latency model".)
struct DurationFit {
  double sfm = 0, sff = 0;
  int n = 0;
  void add(double floor, double measured) {
    if (floor <= 0 || measured <= 0) return;
    sfm += floor * measured;
    sff += floor * floor;
    ++n;
  }
  double efficiency() const { return sff / sfm; }  // 1 / x
};

}  // namespace

FitResult fit_efficiency(const std::vector<FitPoint>& points, const Efficiency& defaults) {
  FitResult r;
  r.eff = defaults;
  r.points = int(points.size());
  if (points.empty()) return r;

  std::array<DurationFit, kOpClasses> per_class{}, decode_class{};
  DurationFit common, decode;
  bool any_phases = false;
  for (const FitPoint& p : points) {
    if (p.phases) {
      any_phases = true;
      for (int c = 0; c < kOpClasses; ++c) per_class[c].add(p.floor_s[c], (*p.phases)[c]);
    } else {
      double floor = 0;
      for (double f : p.floor_s) floor += f;
      common.add(floor, p.ttft_s);
    }
    if (p.decode_ms) decode.add(p.decode_floor_ms, *p.decode_ms);
    if (p.decode_class_ms)
      for (int c = 0; c < kOpClasses; ++c) decode_class[c].add(p.decode_floor_class_ms[c], (*p.decode_class_ms)[c]);
  }
  if (any_phases) {
    r.prefill_mode = "per-class from phases";
    for (int c = 0; c < kOpClasses; ++c) {
      r.class_rows[c] = per_class[c].n;
      if (per_class[c].n > 0) r.eff.prefill[c] = per_class[c].efficiency();
    }
  } else if (common.n > 0) {
    r.prefill_mode = "common from TTFT totals";
    r.ttft_rows = common.n;
    for (double& e : r.eff.prefill) e = common.efficiency();
  }
  r.decode_rows = decode.n;
  if (decode.n > 0) r.eff.decode = decode.efficiency();
  for (int c = 0; c < kOpClasses; ++c) {
    r.decode_class_rows[c] = decode_class[c].n;
    if (decode_class[c].n > 0) r.eff.decode_class[c] = decode_class[c].efficiency();
  }
  return r;
}

std::string FitResult::summary(const Efficiency& defaults) const {
  if (!calibrated()) {
    bool ones = defaults.decode == 1;
    for (double e : defaults.prefill) ones = ones && e == 1;
    return ones ? "uncalibrated: efficiency factors 1.0 (the floor); no measured runs yet"
                : "uncalibrated: efficiency factors from the hardware profile; no measured runs yet";
  }
  std::string s =
      fmt::format("calibrated from {} measured run{}: prefill {}", points, points == 1 ? "" : "s", prefill_mode);
  if (prefill_mode == "per-class from phases") {
    for (int c = 0; c < kOpClasses; ++c)
      if (class_rows[c] > 0)
        s += fmt::format(", {} {:.3f} ({} runs)", op_class_name(op_class(c)), eff.prefill[c], class_rows[c]);
  } else if (prefill_mode == "common from TTFT totals") {
    s += fmt::format(" = {:.3f} ({} runs)", eff.prefill[0], ttft_rows);
  }
  s += decode_rows > 0 ? fmt::format("; decode {:.3f} ({} runs)", eff.decode, decode_rows)
                       : "; decode not measured (factor from the hardware profile)";
  bool by_class = false;
  for (int c = 0; c < kOpClasses; ++c)
    if (decode_class_rows[c] > 0) {
      s += fmt::format("{} {} {:.3f} ({} runs)",
                       by_class ? "," : ", per class from the profiled steps:", op_class_name(op_class(c)),
                       eff.decode_class[c], decode_class_rows[c]);
      by_class = true;
    }
  return s;
}

FitPoint fit_point(const MeasuredRun& run, const HwProfile& hw) {
  const Model m = load_model(run.config);
  const WeightFormat f = parse_weight_format(run.weights, fmt::format("measured run '{}': weights", run.command));
  const LatencyPrediction p = predict_latency(m, f, hw, Efficiency{}, run.context, run.decode_tokens, run.chunk);
  FitPoint pt;
  pt.floor_s = p.prefill_floor_s;
  pt.ttft_s = run.ttft_s;
  pt.phases = run.phases;
  pt.decode_floor_ms = p.decode_floor_ms;
  pt.decode_ms = run.decode_ms_per_token;
  pt.decode_floor_class_ms = p.decode_floor_class_ms;
  // The profiled steps' per-op events cost time of their own, so their sum is not the unprofiled ms/token the model
  // predicts: each class gets its share of the measured ms/token.
  if (run.decode_phases_ms && run.decode_ms_per_token) {
    ClassSeconds share{};
    for (int c = 0; c < kOpClasses; ++c)
      share[c] = *run.decode_ms_per_token * (*run.decode_phases_ms)[c] / run.decode_profiled_total_ms;
    pt.decode_class_ms = share;
  }
  return pt;
}

FitResult fit_runs(const std::vector<MeasuredRun>& runs, const HwProfile& hw) {
  std::vector<FitPoint> pts;
  for (const MeasuredRun& r : runs) pts.push_back(fit_point(r, hw));
  return fit_efficiency(pts, hw.efficiency);
}

}  // namespace salasim::reports
