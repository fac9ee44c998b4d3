// The generated-input runs of scenarios/op_sweep.hpp.
#include "scenarios/op_sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "compare/h5_inputs.hpp"
#include "model/error.hpp"
#include "scenarios/op_backends.hpp"
#include "scenarios/op_user.hpp"

namespace salasim {

namespace {

using Clock = std::chrono::steady_clock;

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
    const auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

std::string fmt_ms(double ms) { return ms >= 100 ? fmt::format("{:.0f}", ms) : fmt::format("{:.3g}", ms); }

// The CUDA path: the kernels' refusal of sizes they are not built for is a skip with its message.
OpRun run_gpu(const op::OpInputs& x) {
  OpRun r;
  try {
    r.taps = run_op_gpu(x, &r.device);
  } catch (const DeviceError&) {
    throw;
  } catch (const InternalError&) {
    throw;
  } catch (const Error& e) {
    r.skip = e.what();
  }
  return r;
}

// The report without the rows of `skipped` taps (outputs the implementation left out). The comparison itself ran on
// every reference tap, so a selection keeps the reference's scores for its tie band when the scores are skipped.
CompareReport without(const CompareReport& rep, const std::vector<std::string>& skipped) {
  if (skipped.empty()) return rep;
  CompareReport r;
  r.with_peer = rep.with_peer;
  for (const TapResult& t : rep.rows)
    if (std::find(skipped.begin(), skipped.end(), t.name) == skipped.end()) add_row(r, t);
  finish_report(r);
  return r;
}

void gate(OpCaseResult& r, const op::OpInputs& x, const TapMap& ref, const TapMap& peer, const OpRun& b,
          bool peer_is_backend) {
  static const ToleranceTable peer_table = peer_sweep_table();
  if (peer_is_backend) {
    r.report = compare_taps(ref, nullptr, peer, peer_table);
  } else {
    // Outputs the implementation says it leaves out, and (for a user's implementation) any it did not hand back.
    std::set<std::string> skipped(b.not_produced.begin(), b.not_produced.end());
    for (const op::OutputSpec& o : x.spec->outputs)
      if (!b.taps.count(o.tap) && is_user_backend(r.backend)) skipped.insert(o.tap);
    TapMap got = b.taps;
    for (const std::string& n : skipped) got.erase(n);
    r.skipped_outputs.assign(skipped.begin(), skipped.end());
    if (r.skipped_outputs.size() == x.spec->outputs.size()) {
      r.verdict = CaseVerdict::Fail;
      r.why = fmt::format("the implementation produced none of {}'s outputs", x.spec->name);
      return;
    }
    r.report = without(compare_taps(ref, &peer, got), r.skipped_outputs);
  }
  for (const TapResult& t : r.report.rows) {
    if (t.gate == Gate::Float) r.worst_ratio = std::max({r.worst_ratio, t.rel_rms.ratio, t.max_err.ratio});
    if (!t.pass) r.why += fmt::format("{}{}: {}", r.why.empty() ? "" : "; ", t.name, t.why);
  }
  r.verdict = r.report.pass() ? CaseVerdict::Ok : CaseVerdict::Fail;
}

}  // namespace

ToleranceTable peer_sweep_table() {
  ToleranceTable t = tolerance_table();
  for (ToleranceRow& r : t) r.max_floor = std::numeric_limits<double>::infinity();
  return t;
}

bool is_user_backend(const std::string& backend) { return is_user_spec(backend); }

OpBackend make_backend(const SweepOptions& o) {
  if (o.backend == "peer") return nullptr;  // the peer itself is what is gated
  if (o.backend == "gpu") return run_gpu;
  if (is_user_spec(o.backend)) return user_backend(o.backend, UserOptions{o.python});
  fail("--backend '{}': expected peer, gpu, exec:'PROGRAM ARGS', py:MODULE[:FUNCTION] or lib:PATH.so", o.backend);
}

OpCaseResult check_op_case(const op::OpInputs& x, const SweepOptions& o, const OpBackend& backend) {
  const auto t0 = Clock::now();
  OpCaseResult r;
  r.op = x.spec->name;
  r.sizes = x.file;
  r.seed = o.seed;
  r.backend = backend ? o.backend : "peer";
  TapMap ref, peer;
  OpRun b;
  r.ref_ms = timed(o.perf, o.rounds, [&] { ref = run_op_reference(x, false); });
  r.peer_ms = timed(o.perf, o.rounds, [&] { peer = run_op_reference(x, true); });
  if (backend) {
    r.backend_ms = timed(o.perf, o.rounds, [&] { b = backend(x); });
    if (!b.device.empty()) r.backend = "cuda:" + b.device;
    if (!b.skip.empty() || !b.failed.empty()) {
      r.verdict = b.skip.empty() ? CaseVerdict::Fail : CaseVerdict::Skip;
      r.why = b.skip.empty() ? b.failed : b.skip;
      r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      return r;
    }
  }
  gate(r, x, ref, peer, b, !backend);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

OpCaseResult run_op_case(const op::OpSpec& s, const op::CaseSizes& c, const SweepOptions& o, const OpBackend& backend,
                         int index) {
  const auto t0 = Clock::now();
  const op::OpInputs x = op::random_inputs(s, c, o.seed, o.drawn);
  std::string saved;
  if (!o.save_inputs.empty()) {
    saved = (std::filesystem::path(o.save_inputs) / fmt::format("{}_{}.h5", s.name, index)).string();
    write_input_file(saved, op::input_file(x), o.force, "--save-inputs");
  }
  OpCaseResult r = check_op_case(x, o, backend);
  r.sizes = op::format_case(s, c);
  r.inputs_file = saved;
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

std::vector<OpCaseResult> run_op_sweep(const SweepOptions& o, const std::function<void(const OpCaseResult&)>& each) {
  std::vector<const op::OpSpec*> ops;
  if (o.ops.empty())
    for (const op::OpSpec& s : op::registry()) ops.push_back(&s);
  else
    for (const std::string& n : o.ops) ops.push_back(&op::find_op(n));
  const OpBackend backend = make_backend(o);
  std::vector<OpCaseResult> all;
  for (const op::OpSpec* s : ops) {
    int index = 0;
    for (const op::CaseSizes& c : op::sweep_cases(*s)) {
      all.push_back(run_op_case(*s, c, o, backend, index++));
      if (each) each(all.back());
    }
  }
  return all;
}

void require_some_case_ran(const std::vector<OpCaseResult>& rs, const SweepOptions& o) {
  if (!is_user_backend(o.backend) || rs.empty()) return;
  for (const OpCaseResult& r : rs)
    if (r.verdict != CaseVerdict::Skip) return;
  fail("--backend {}: the implementation ran on none of the {} case(s), so nothing was checked (the first: {} {}: {})",
       o.backend, rs.size(), rs[0].op, rs[0].sizes, rs[0].why);
}

const char* verdict_name(CaseVerdict v) {
  return v == CaseVerdict::Ok ? "OK" : v == CaseVerdict::Fail ? "FAIL" : "SKIP";
}

std::string format_case_line(const OpCaseResult& r, bool perf) {
  std::string line = fmt::format("{:<5} {:<14} {:<44} {}", verdict_name(r.verdict), r.op, r.sizes, r.backend);
  if (std::any_of(r.report.rows.begin(), r.report.rows.end(), [](const TapResult& t) { return t.gate == Gate::Float; }))
    line += fmt::format("  worst {:.2f} of the allowance", r.worst_ratio);
  if (perf && r.verdict != CaseVerdict::Skip) {
    line += fmt::format("  reference {} ms, peer {} ms", fmt_ms(r.ref_ms), fmt_ms(r.peer_ms));
    if (r.backend != "peer") line += fmt::format(", {} {} ms", r.backend, fmt_ms(r.backend_ms));
  }
  for (const std::string& s : r.skipped_outputs)
    line += fmt::format("\n      skipped output {}: the implementation does not produce it", s);
  if (!r.why.empty()) line += "\n      " + r.why;
  if (!r.inputs_file.empty() && r.verdict == CaseVerdict::Fail) line += "\n      inputs: " + r.inputs_file;
  return line;
}

nlohmann::json case_json(const OpCaseResult& r) {
  nlohmann::json j = {{"op", r.op},
                      {"sizes", r.sizes},
                      {"seed", r.seed},
                      {"backend", r.backend},
                      {"verdict", verdict_name(r.verdict)},
                      {"why", r.why},
                      {"skipped_outputs", r.skipped_outputs},
                      {"seconds", r.seconds}};
  if (!r.inputs_file.empty()) j["inputs_file"] = r.inputs_file;
  if (r.verdict == CaseVerdict::Skip) return j;
  j["worst_ratio"] = r.worst_ratio;
  j["taps"] = report_json(r.report)["rows"];
  auto ms = [&](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j["ms"] = {{"reference", ms(r.ref_ms)}, {"peer", ms(r.peer_ms)}, {"backend", ms(r.backend_ms)}};
  return j;
}

}  // namespace salasim
