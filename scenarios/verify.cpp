// Truth runs, the teacher-forced backend run, and failure dumps.
#include "scenarios/verify.hpp"

#include <fmt/format.h>

#include <cmath>

#include "compare/failure_inputs.hpp"
#include "scenarios/truth_pair.hpp"

namespace salasim {

TapFilter selection_filter(const ModelConfig& c) {
  TapFilter f;
  for (int l = 0; l < c.num_hidden_layers; ++l)
    if (c.layers[size_t(l)] == Mixer::Sparse) f.patterns.push_back(layer_dir(l) + "/sparse/select/");
  return f;
}

TapFilter with_selections(const ModelConfig& c, TapFilter f) {
  if (f.patterns.size() == 1 && f.patterns[0] == "*") return f;
  for (std::string& p : selection_filter(c).patterns) f.patterns.push_back(std::move(p));
  return f;
}

Truth run_truth(const Scenario& s, const TapFilter& filter, std::shared_ptr<const ref::RefWeights> weights,
                const PairOptions& opt) {
  Truth t;
  TapMapSink ref_sink(&t.ref), peer_sink(&t.peer);
  PairTimes times = run_ref_and_peer(s, with_selections(s.cfg, filter), std::move(weights), ref_sink, peer_sink, opt);
  t.ref_times = std::move(times.ref);
  t.peer_times = std::move(times.peer);
  return t;
}

StreamedTruth run_truth_streaming(const Scenario& s, std::shared_ptr<const ref::RefWeights> weights, KeepTaps keep,
                                  const PairOptions& opt) {
  StreamCompare cmp(std::move(keep));
  PairOptions o = opt;
  o.on_failure = [&cmp, &opt] {
    cmp.abort();
    if (opt.on_failure) opt.on_failure();
  };
  StreamedTruth t;
  try {
    t.times = run_ref_and_peer(s, TapFilter::all(), std::move(weights), cmp.sink(StreamCompare::Reference),
                               cmp.sink(StreamCompare::Peer), o);
  } catch (...) {  // when the comparison failed first, the runs only saw it stop: report why it did
    if (std::exception_ptr e = cmp.comparison_error()) std::rethrow_exception(e);
    throw;
  }
  t.result = cmp.finish();
  return t;
}

VerifyResult verify_backend(const Scenario& s, const Truth& truth, Backend& backend, const TapFilter& filter) {
  VerifyResult v;
  v.run = backend.run(s, with_selections(s.cfg, filter), &truth.ref);
  v.report = compare_taps(truth.ref, &truth.peer, v.run.taps);
  return v;
}

int dump_failures(const std::string& path, const CompareReport& report, const TapMap& ref, const TapMap& backend,
                  const DumpInfo& info, bool replace) {
  std::vector<FailureEntry> entries = failure_entries(report, ref, backend);
  add_failure_inputs(entries, ref, backend);
  write_failures(path, entries, info, replace);
  return int(entries.size());
}

double run_tap_bytes(const Scenario& s) {
  const ModelConfig& c = s.cfg;
  const double T = double(s.prompt.size()), h = c.hidden_size, I = c.intermediate_size;
  const double Q = double(c.num_attention_heads) * c.head_dim, KV = double(c.num_key_value_heads) * c.head_dim;
  const double L = double(c.lightning_nh) * c.lightning_head_dim, G = c.num_key_value_heads;
  const double nb = std::ceil((T + s.decode_steps) / c.sparse.block_size), k = c.sparse.k_sel();
  double per_token = 5 * h + I;  // norms, residuals, MLP (every layer)
  double per_layer = 0;
  for (Mixer m : c.layers)
    per_layer += m == Mixer::Sparse ? 4 * Q + 2 * KV + h + G * (nb + k)     // q, g, attn, gate; k, v; o; scores, blocks
                                    : 9 * L + h;                            // q, k, v, z, rope q, k, gla, norm, gate; o
  per_token = double(c.num_hidden_layers) * per_token + per_layer + 2 * h;  // + embed, final norm
  return 8 * per_token * (T + s.decode_steps);
}

double streamed_tap_bytes(const Scenario& s) {
  const double n = double(s.prompt.size()), piece = s.prefill_chunk > 0 ? std::min<double>(s.prefill_chunk, n) : n;
  return 2 * run_tap_bytes(s) * piece / (n + s.decode_steps) + double(kStreamBudgetBytes);
}

std::string format_times(const std::vector<PhaseTime>& times) {
  std::string out;
  for (const PhaseTime& p : times)
    out += fmt::format("{}{} {} tokens {:.2f} s", out.empty() ? "" : ", ", p.phase, p.tokens, p.seconds);
  return out.empty() ? "-" : out;
}

}  // namespace salasim
