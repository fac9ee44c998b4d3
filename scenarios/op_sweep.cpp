// The generated-input runs of scenarios/op_sweep.hpp.
#include "scenarios/op_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "scenarios/op_backends.hpp"

namespace salasim {

namespace {

// Wall time of `f` in ms: the median of `rounds` calls after one untimed call (first-touch of the inputs, the GPU's
// lazy module load), or a single untimed call when `perf` is off.
template <class F>
double timed(bool perf, int rounds, F&& f) {
  if (!perf) {
    f();
    return 0;
  }
  f();
  std::vector<double> ms;
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::string fmt_ms(double ms) { return ms >= 100 ? fmt::format("{:.0f}", ms) : fmt::format("{:.3g}", ms); }

}  // namespace

ToleranceTable peer_sweep_table() {
  ToleranceTable t = tolerance_table();
  for (ToleranceRow& r : t) r.max_floor = std::numeric_limits<double>::infinity();
  return t;
}

OpBackend sweep_backend(const std::string& backend) {
  if (backend == "peer") return nullptr;  // the peer itself is what is gated
  if (backend == "gpu") return [](const op::OpInputs& x, std::string* device) { return run_op_gpu(x, device); };
  fail("--backend '{}': expected peer or gpu", backend);
}

OpCaseResult run_op_case(const op::OpSpec& s, const op::CaseSizes& c, const SweepOptions& o, const OpBackend& backend) {
  OpCaseResult r;
  r.op = s.name;
  r.sizes = op::format_case(s, c);
  r.seed = o.seed;
  r.backend = backend ? o.backend : "peer";
  const op::OpInputs x = op::random_inputs(s, c, o.seed);
  TapMap ref, peer, other;
  r.ref_ms = timed(o.perf, o.rounds, [&] { ref = run_op_reference(x, false); });
  r.peer_ms = timed(o.perf, o.rounds, [&] { peer = run_op_reference(x, true); });
  if (backend) {
    try {
      std::string device;
      r.backend_ms = timed(o.perf, o.rounds, [&] { other = backend(x, &device); });
      if (!device.empty()) r.backend = "cuda:" + device;
    } catch (const DeviceError&) {
      throw;
    } catch (const InternalError&) {
      throw;
    } catch (const Error& e) {
      r.verdict = CaseVerdict::Skip;
      r.why = e.what();
      return r;
    }
  }
  static const ToleranceTable peer_table = peer_sweep_table();
  r.report = backend ? compare_taps(ref, &peer, other) : compare_taps(ref, nullptr, peer, peer_table);
  for (const TapResult& t : r.report.rows) {
    if (t.gate == Gate::Float) r.worst_ratio = std::max({r.worst_ratio, t.rel_rms.ratio, t.max_err.ratio});
    if (!t.pass) r.why += fmt::format("{}{}: {}", r.why.empty() ? "" : "; ", t.name, t.why);
  }
  r.verdict = r.report.pass() ? CaseVerdict::Ok : CaseVerdict::Fail;
  return r;
}

std::vector<OpCaseResult> run_op_sweep(const SweepOptions& o, const std::function<void(const OpCaseResult&)>& each) {
  std::vector<const op::OpSpec*> ops;
  if (o.ops.empty())
    for (const op::OpSpec& s : op::registry()) ops.push_back(&s);
  else
    for (const std::string& n : o.ops) ops.push_back(&op::find_op(n));
  const OpBackend backend = sweep_backend(o.backend);
  std::vector<OpCaseResult> all;
  for (const op::OpSpec* s : ops)
    for (const op::CaseSizes& c : op::sweep_cases(*s)) {
      all.push_back(run_op_case(*s, c, o, backend));
      if (each) each(all.back());
    }
  return all;
}

const char* verdict_name(CaseVerdict v) {
  return v == CaseVerdict::Ok ? "OK" : v == CaseVerdict::Fail ? "FAIL" : "SKIP";
}

std::string format_case_line(const OpCaseResult& r, bool perf) {
  std::string line = fmt::format("{:<5} {:<14} {:<44} {}", verdict_name(r.verdict), r.op, r.sizes, r.backend);
  if (r.verdict != CaseVerdict::Skip) line += fmt::format("  worst {:.2f} of the allowance", r.worst_ratio);
  if (perf && r.verdict != CaseVerdict::Skip) {
    line += fmt::format("  reference {} ms, peer {} ms", fmt_ms(r.ref_ms), fmt_ms(r.peer_ms));
    if (r.backend != "peer") line += fmt::format(", {} {} ms", r.backend, fmt_ms(r.backend_ms));
  }
  if (!r.why.empty()) line += "\n      " + r.why;
  return line;
}

nlohmann::json case_json(const OpCaseResult& r) {
  nlohmann::json j = {{"op", r.op},
                      {"sizes", r.sizes},
                      {"seed", r.seed},
                      {"backend", r.backend},
                      {"verdict", verdict_name(r.verdict)},
                      {"why", r.why}};
  if (r.verdict == CaseVerdict::Skip) return j;
  j["worst_ratio"] = r.worst_ratio;
  j["taps"] = report_json(r.report)["rows"];
  auto ms = [&](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j["ms"] = {{"reference", ms(r.ref_ms)}, {"peer", ms(r.peer_ms)}, {"backend", ms(r.backend_ms)}};
  return j;
}

}  // namespace salasim
