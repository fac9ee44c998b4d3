// Truth runs, the teacher-forced backend run, and failure dumps.
#include "scenarios/verify.hpp"

#include <fmt/format.h>

#include "compare/failure_inputs.hpp"

namespace salasim {

TapFilter selection_filter(const ModelConfig& c) {
  TapFilter f;
  for (int l = 0; l < c.num_hidden_layers; ++l)
    if (c.layers[size_t(l)] == Mixer::Sparse) f.patterns.push_back(layer_dir(l) + "/sparse/select/");
  return f;
}

namespace {
TapFilter with_selections(const ModelConfig& c, TapFilter f) {
  if (f.patterns.size() == 1 && f.patterns[0] == "*") return f;
  for (std::string& p : selection_filter(c).patterns) f.patterns.push_back(std::move(p));
  return f;
}
}  // namespace

Truth run_truth(const Scenario& s, const TapFilter& filter, std::shared_ptr<const ref::RefWeights> weights) {
  if (!weights) weights = ref::load_ref_weights(s.cfg, s.weights);
  const TapFilter f = with_selections(s.cfg, filter);
  Truth t;
  ref::RefOptions ro;  // float64, scores recorded
  RefRun r = run_reference(s, ro, f, weights);
  t.ref = std::move(r.taps);
  t.ref_times = std::move(r.times);
  std::unique_ptr<Backend> peer = make_peer_backend(weights);
  BackendRun p = peer->run(s, f, &t.ref);
  t.peer = std::move(p.taps);
  t.peer_times = std::move(p.times);
  return t;
}

VerifyResult verify_backend(const Scenario& s, const Truth& truth, Backend& backend, const TapFilter& filter) {
  VerifyResult v;
  v.run = backend.run(s, with_selections(s.cfg, filter), &truth.ref);
  v.report = compare_taps(truth.ref, &truth.peer, v.run.taps);
  return v;
}

int dump_failures(const std::string& path, const CompareReport& report, const TapMap& ref, const TapMap& backend,
                  const DumpInfo& info) {
  std::vector<FailureEntry> entries = failure_entries(report, ref, backend);
  add_failure_inputs(entries, ref, backend);
  write_failures(path, entries, info);
  return int(entries.size());
}

std::string format_times(const std::vector<PhaseTime>& times) {
  std::string out;
  for (const PhaseTime& p : times)
    out += fmt::format("{}{} {} tokens {:.2f} s", out.empty() ? "" : ", ", p.phase, p.tokens, p.seconds);
  return out.empty() ? "-" : out;
}

}  // namespace salasim
