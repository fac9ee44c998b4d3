// Calibration: efficiency factors fitted from synthetic measured runs generated with known factors are
// recovered; without runs the report says it is uncalibrated and keeps the floor.
#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "reports/calibrate.hpp"
#include "reports/sweep.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::reports;

namespace {

// The synthetic data are exact, so the fit's only error is floating-point rounding.
constexpr double kRoundoff = 1e-12;

bool close(double a, double b) { return std::fabs(a - b) <= kRoundoff * std::fabs(b); }

const Efficiency& truth() {
  static const Efficiency e = [] {
    Efficiency t;
    t.prefill = {0.82, 0.41, 0.63, 0.74, 0.33, 0.55};  // gemm, select, sparse_attn, dense_attn, gla, other
    t.decode = 0.71;
    return t;
  }();
  return e;
}

// A run "measured" on a GPU whose efficiencies are exactly truth(): every phase is floor / efficiency.
std::string synthetic_run(const std::string& config, int64_t context, bool phases, const HwProfile& hw) {
  const Model m = load_model(config);
  const LatencyPrediction p = predict_latency(m, WeightFormat::Bf16, hw, truth(), context, 32, 16384);
  std::string ph;
  if (phases) {
    ph = ", \"phases\": {";
    for (int c = 0; c < kOpClasses; ++c)
      ph += fmt::format("{}\"{}_s\": {:.17g}", c ? ", " : "", op_class_name(op_class(c)), p.prefill_s[c]);
    ph += "}";
  }
  return fmt::format(R"({{"date": "synthetic", "gpu": "test", "command": "synthetic {} {}", "config": "{}",
    "context": {}, "decode_tokens": 32, "ttft_s": {:.17g}, "decode_ms_per_token": {:.17g},
    "peak_vram_bytes": 0, "planner_peak_bytes": 0{}}})",
                     config, context, test::source_path(config), context, p.ttft_s, p.decode_ms, ph);
}

std::vector<MeasuredRun> synthetic_runs(bool phases, const HwProfile& hw) {
  // Both models, contexts on both sides of dense_len, so every op class is exercised.
  std::string text = "[";
  const char* sep = "";
  for (const char* cfg : {"scenarios/models/minicpm-sala-9b.json", "scenarios/models/qwen3-8b.json"})
    for (int64_t ctx : {int64_t(4096), int64_t(8191), int64_t(20000), int64_t(65536), int64_t(262144)}) {
      text += sep + synthetic_run(cfg, ctx, phases, hw);
      sep = ",\n";
    }
  text += "]";
  const std::string path = test::scratch_dir(phases ? "fit_phases" : "fit_totals") + "/h200.json";
  std::ofstream(path) << text;
  return load_measured(path);
}

}  // namespace

TEST_CASE("calibrate: per-class factors are recovered from synthetic phase times", "[calibrate]") {
  const HwProfile hw = load_hw("h200");
  const FitResult fit = fit_runs(synthetic_runs(true, hw), hw);
  CHECK(fit.prefill_mode == "per-class from phases");
  CHECK(fit.points == 10);
  for (int c = 0; c < kOpClasses; ++c) {
    INFO(op_class_name(op_class(c)) << ": fitted " << fit.eff.prefill[c] << ", true " << truth().prefill[c]);
    CHECK(fit.class_rows[c] > 0);
    CHECK(close(fit.eff.prefill[c], truth().prefill[c]));
  }
  CHECK(close(fit.eff.decode, truth().decode));
  CHECK(fit.summary(hw.efficiency).find("calibrated from 10 measured runs") == 0);
}

TEST_CASE("calibrate: with totals only, one common factor is fitted and reproduces equal factors", "[calibrate]") {
  std::vector<FitPoint> pts;
  const Model s = load_model("scenarios/models/minicpm-sala-9b.json");
  const HwProfile hw = load_hw("h200");
  for (int64_t ctx : {int64_t(8192), int64_t(65536), int64_t(1) << 20}) {
    const LatencyPrediction p = predict_latency(s, WeightFormat::Bf16, hw, Efficiency{}, ctx, 8, 16384);
    FitPoint pt;
    pt.floor_s = p.prefill_floor_s;
    pt.ttft_s = p.ttft_s / 0.6;  // a GPU at 60% of every ceiling
    pt.decode_floor_ms = p.decode_floor_ms;
    pt.decode_ms = p.decode_floor_ms / 0.8;
    pts.push_back(pt);
  }
  const FitResult fit = fit_efficiency(pts, hw.efficiency);
  CHECK(fit.prefill_mode == "common from TTFT totals");
  for (double e : fit.eff.prefill) CHECK(close(e, 0.6));
  CHECK(close(fit.eff.decode, 0.8));
  // Totals from unequal factors are fitted by one factor with residuals; the file path does the same.
  const FitResult f2 = fit_runs(synthetic_runs(false, hw), hw);
  CHECK(f2.prefill_mode == "common from TTFT totals");
  CHECK(f2.ttft_rows == 10);
  CHECK(f2.eff.prefill[0] > 0.33);
  CHECK(f2.eff.prefill[0] < 0.82);
}

TEST_CASE("calibrate: per-class decode factors are recovered from the profiled split, whatever the events cost",
          "[calibrate]") {
  const HwProfile hw = load_hw("h200");
  Efficiency truth_d = truth();
  truth_d.decode_class = {0.88, 0.07, 0.02, 0.3, 0.18, 0.004};  // gemm .. other, as a launch-bound decode might be
  // Runs whose profiled steps cost 9% more than the unprofiled ms/token (the events' own time): only the shares of
  // the split carry information, so the fit must not see the 9%.
  std::string text = "[";
  const char* sep = "";
  for (const char* cfg : {"scenarios/models/minicpm-sala-9b.json", "scenarios/models/qwen3-8b.json"})
    for (int64_t ctx : {int64_t(4096), int64_t(65536), int64_t(1 << 20)}) {
      const LatencyPrediction p = predict_latency(load_model(cfg), WeightFormat::Bf16, hw, truth_d, ctx, 32, 16384);
      std::string split;
      double total = 0;
      for (int c = 0; c < kOpClasses; ++c) {
        const double ms = 1.09 * p.decode_floor_class_ms[c] / truth_d.decode_of(c);
        split += fmt::format("\"{}_ms\": {:.17g}, ", op_class_name(op_class(c)), ms);
        total += ms;
      }
      text += sep + fmt::format(R"({{"date": "synthetic", "gpu": "test", "command": "synthetic {} {}", "config": "{}",
        "context": {}, "decode_tokens": 32, "ttft_s": {:.17g}, "decode_ms_per_token": {:.17g}, "peak_vram_bytes": 0,
        "planner_peak_bytes": 0, "decode_gpu_ms_per_token": {{{}"total_ms": {:.17g}, "profiled_steps": 8}}}})",
                                cfg, ctx, test::source_path(cfg), ctx, p.ttft_s, p.decode_ms, split, total);
      sep = ",\n";
    }
  text += "]";
  const std::string path = test::scratch_dir("fit_decode_split") + "/h200.json";
  std::ofstream(path) << text;
  const std::vector<MeasuredRun> runs = load_measured(path);
  const FitResult fit = fit_runs(runs, hw);
  for (int c = 0; c < kOpClasses; ++c) {
    INFO(op_class_name(op_class(c)));
    REQUIRE(fit.decode_class_rows[c] > 0);  // each class has a decode floor in some run (dense_attn: Qwen3)
    CHECK(std::fabs(fit.eff.decode_class[c] - truth_d.decode_class[c]) <= 1e-9 * truth_d.decode_class[c]);
  }
  CHECK(fit.summary(hw.efficiency).find("per class from the profiled steps: gemm 0.880") != std::string::npos);
  const Table t = measured_table(runs, hw, fit.eff);
  for (const auto& r : t.rows) CHECK(r[8] == "1.00");  // decode predicted / measured
}

TEST_CASE("calibrate: no measured runs leaves the floor and says so", "[calibrate]") {
  const HwProfile hw = load_hw("h200");
  const FitResult fit = fit_runs({}, hw);
  CHECK_FALSE(fit.calibrated());
  for (double e : fit.eff.prefill) CHECK(e == 1.0);
  CHECK(fit.summary(hw.efficiency) == "uncalibrated: efficiency factors 1.0 (the floor); no measured runs yet");
}

TEST_CASE("calibrate: after the fit, predictions match synthetic measurements (ratio 1.00)", "[calibrate]") {
  const HwProfile hw = load_hw("h200");
  const std::vector<MeasuredRun> runs = synthetic_runs(true, hw);
  const Table t = measured_table(runs, hw, fit_runs(runs, hw).eff);
  REQUIRE(t.rows.size() == runs.size());
  for (const auto& r : t.rows) {
    CHECK(r[5] == "1.00");  // TTFT predicted / measured
    CHECK(r[8] == "1.00");  // decode predicted / measured
  }
}
