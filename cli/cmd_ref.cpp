// `salasim ref`: runs the float64 reference alone on a scenario and prints a per-layer summary of every tap;
// `--dump-taps FILE` also writes every recorded tap, all rows, to a tap dump (docs/formats.md).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "compare/tap_file_sink.hpp"
#include "model/error.hpp"
#include "model/limits.hpp"
#include "scenarios/run_reference.hpp"
#include "scenarios/verify.hpp"

namespace salasim::cli {

namespace {
struct Args {
  std::string scenario = "scenarios/tiny-sparse.json";
  int64_t tokens = 0;
  int decode = -1;
  bool peer = false;
  bool exact_rope = false;
  bool extrapolate = false;
  bool json = false;
  std::vector<std::string> taps{"*"};
  std::string dump_taps;   // a tap dump of every recorded tap
  bool force = false;      // replace an existing --dump-taps
  ProgressFlags progress;  // --progress, --quiet
};

// A tap's summary, folded as its rows arrive, so the run keeps no tap (the dump, if any, streams to its file).
struct Summary {
  std::vector<int64_t> shape;
  int64_t order = 0;
  double sum2 = 0, max_abs = 0;
  int64_t finite = 0;
  int64_t nonfinite = 0;  // NaN, and infinities except in block scores (where +-inf mark forced / future blocks)
  double rms() const { return finite ? std::sqrt(sum2 / double(finite)) : 0; }
  void add(const std::string& name, const double* v, int64_t n) {
    const bool inf_ok = tap_kind(name) == "sparse/select/scores";
    for (int64_t i = 0; i < n; ++i) {
      const double x = v[i];
      if (!std::isfinite(x)) {
        if (std::isnan(x) || !inf_ok) nonfinite++;
        continue;
      }
      sum2 += x * x;
      max_abs = std::max(max_abs, std::abs(x));
      ++finite;
    }
  }
};

// Every recorded tap's summary, in a map by name; Tap::order as a TapMap would number them.
struct SummarySink : TapSink {
  std::map<std::string, Summary> taps;
  Summary& at(const std::string& name) {
    auto [it, fresh] = taps.try_emplace(name);
    if (fresh) it->second.order = int64_t(taps.size()) - 1;
    return it->second;
  }
  void append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool) override {
    Summary& t = at(name);
    if (t.shape.empty()) t.shape = shape;
    else t.shape[0] += shape[0];
    t.add(name, data, shape_numel(shape));
  }
  void replace(const std::string& name, Tap tap) override {  // the latest value wins, as in a TapMap
    Summary& t = at(name);
    t = Summary{tap.shape, t.order};
    t.add(name, tap.data.data(), int64_t(tap.data.size()));
  }
};

int run(const Args& a) {
  Scenario s = load_scenario(data_path(a.scenario));
  s.extrapolate = s.extrapolate || a.extrapolate;
  override_lengths(s, a.tokens, a.decode);
  // Taps are summarized (and dumped) as they come and never kept: one layer's activations at a time, refused before
  // allocating if too big.
  const bool all_taps = a.taps.size() == 1 && a.taps[0] == "*";
  check_reference_fits(s, a.peer ? "ref --peer" : "ref", 0);
  if (!a.dump_taps.empty()) check_dump_target(a.dump_taps, all_taps ? run_tap_bytes(s) : 0, a.force);
  ref::RefOptions opt;
  opt.num = a.peer ? ref::peer() : ref::f64();
  opt.rope = a.exact_rope ? ref::RopeAngles::Exact : ref::RopeAngles::Fp32;
  // a 9000-token scenario takes a minute or more on a small machine: where the run is, on stderr
  std::unique_ptr<Progress> progress =
      make_progress({a.progress.progress, a.progress.quiet, a.json}, s, {a.peer ? "peer" : "reference"});
  if (progress)
    opt.on_layer = [p = progress.get()](const ref::RefModel& m, int layer, int64_t rows) {
      p->layer_done(0, m.phase, m.len, rows, layer);
    };
  SummarySink summary;
  int dumped = 0;
  RefRun r;
  if (a.dump_taps.empty()) {
    r = run_reference_to(s, opt, TapFilter{a.taps}, summary);
  } else {
    TapFileSink file(a.dump_taps, dump_info(s, a.peer ? "peer" : "reference"), false, a.force);
    TeeSink both(file, summary);
    r = run_reference_to(s, opt, TapFilter{a.taps}, both);
    dumped = file.close();
  }
  if (progress) progress->done();

  std::vector<std::pair<std::string, const Summary*>> rows;
  for (auto& [name, t] : summary.taps) rows.emplace_back(name, &t);
  std::sort(rows.begin(), rows.end(), [](auto& x, auto& y) { return x.second->order < y.second->order; });
  const bool sparse = int64_t(s.prompt.size()) >= s.cfg.sparse.dense_len;
  if (a.json) {
    nlohmann::json j;
    j["scenario"] = s.path;
    j["precision"] = a.peer ? "bf16-peer" : "float64";
    j["prompt_tokens"] = s.prompt.size();
    j["prefill_mode"] = sparse ? "sparse" : "dense";
    for (const PhaseTime& p : r.times)
      j["times"].push_back({{"phase", p.phase}, {"tokens", p.tokens}, {"seconds", p.seconds}});
    if (!a.dump_taps.empty()) j["dump_taps"] = {{"file", a.dump_taps}, {"taps", dumped}};
    for (auto& [name, t] : rows)
      j["taps"].push_back({{"name", name},
                           {"shape", t->shape},
                           {"rms", t->rms()},
                           {"max_abs", t->max_abs},
                           {"nonfinite", t->nonfinite}});
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("reference ({}) on {}: {} ({}), prompt {} tokens ({} prefill{}), {} decode steps\n",
             a.peer ? "bf16 peer" : "float64", s.name, s.cfg.source, s.weights.describe(), s.prompt.size(),
             sparse ? "sparse" : "dense", s.prefill_chunk > 0 ? fmt::format(", pieces of {}", s.prefill_chunk) : "",
             s.decode_steps);
  fmt::print("{:<14} {:<28} {:>22} {:>12} {:>12}\n", "where", "tap", "shape", "rms", "max|x|");
  for (auto& [name, t] : rows) {
    const Summary& sm = *t;
    const std::string where = tap_phase(name) + (tap_layer(name) >= 0 ? "/" + layer_dir(tap_layer(name)) : "");
    fmt::print("{:<14} {:<28} {:>22} {:>12.5g} {:>12.5g}{}\n", where, tap_kind(name),
               fmt::format("[{}]", fmt::join(t->shape, ",")), sm.rms(), sm.max_abs,
               sm.nonfinite ? fmt::format("  {} NON-FINITE", sm.nonfinite) : "");
  }
  for (const PhaseTime& p : r.times)
    fmt::print("{}: {} tokens in {:.2f} s ({:.1f} tokens/s)\n", p.phase, p.tokens, p.seconds,
               double(p.tokens) / p.seconds);
  if (!a.dump_taps.empty()) fmt::print("wrote {} taps, all rows, to {}\n", dumped, a.dump_taps);
  return 0;
}
}  // namespace

void add_ref(CLI::App& app, Run& run_out) {
  auto a = std::make_shared<Args>();
  CLI::App* c = app.add_subcommand("ref", "Run the float64 reference alone and print the RMS of every tap");
  c->add_option("--scenario", a->scenario, "scenario file")->capture_default_str();
  const int64_t most = kExtrapolationFactor * kMaxPositions;  // the model's own limit is checked when it is known
  c->add_option("--tokens", a->tokens, "prompt length (random tokens), overriding the scenario's prompt")
      ->check(whole_number(1, most));
  c->add_option("--decode", a->decode, "decode steps, overriding the scenario")->check(whole_number(0, most));
  c->add_flag("--extrapolate", a->extrapolate,
              "allow prompt + decode past the config's max_position_embeddings, up to 4x it");
  c->add_flag("--peer", a->peer, "run the bf16-emulating peer instead of float64");
  c->add_flag("--exact-rope", a->exact_rope, "float64 RoPE angles instead of the model's fp32 angle table");
  c->add_option("--taps", a->taps, "tap patterns to record (default all), e.g. layer_00/ final/")
      ->capture_default_str();
  c->add_option("--dump-taps", a->dump_taps,
                "also write every recorded tap, all rows, to this HDF5 tap dump "
                "(refused when it exists, unless --force)");
  c->add_flag("--force", a->force, "replace --dump-taps when it exists");
  c->add_flag("--json", a->json, "machine-readable output");
  add_progress_flags(c, a->progress);
  c->callback([a, &run_out] { run_out = [a] { return run(*a); }; });
}

}  // namespace salasim::cli
