// `salasim verify`: the main job. The float64 reference, its bf16 peer and a backend (the GPU path, or on a
// machine without one the peer itself) run a scenario side by side; every tap of every layer is compared; the table,
// the first divergence and the timings are printed; failing taps go to HDF5. `--spot N` instead checks N query
// positions of chosen layers from inputs the backend hands over (long contexts the reference cannot rerun).
// Exit 0 when everything passes, 1 when a check fails, 2 on bad input or an unavailable backend.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "compare/source_hash.hpp"
#include "model/error.hpp"
#include "model/limits.hpp"
#include "scenarios/backend.hpp"
#include "scenarios/golden.hpp"
#include "scenarios/verify.hpp"

namespace salasim::cli {

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

struct VerifyArgs {
  std::string scenario;
  std::string backend = "auto";
  std::string dump;
  bool json = false;
  bool failures_only = false;
  int64_t tokens = 0;
  bool extrapolate = false;
  int spot = 0;
  std::vector<int> spot_layers;
};

double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

// Text mode prints progress as it goes (a default run takes a minute or two on a laptop); JSON mode stays quiet.
struct Out {
  bool json = false;
  template <class... A>
  void say(fmt::format_string<A...> f, A&&... a) const {
    if (json) return;
    fmt::print(f, std::forward<A>(a)...);
    std::fflush(stdout);
  }
};

struct Chosen {
  std::unique_ptr<Backend> backend;
  bool peer = false;
  std::string note;  // why the peer runs when the GPU was not asked for explicitly
};

// The peer loads its own weights if it ever runs: in peer mode its run is the truth's, and spot checks need none.
Chosen choose_backend(const std::string& which) {
  Chosen c;
  if (which == "gpu" || which == "auto") {
    std::string why;
    c.backend = make_gpu_backend(&why);
    if (!c.backend && which == "gpu")
      fail("--backend gpu: no GPU backend here: {}. Without a GPU, `salasim verify --backend peer` (the default "
           "there) checks the harness, the reference and the recorded goldens, not a GPU",
           why);
    if (!c.backend) c.note = fmt::format("no GPU backend ({}): running the peer backend", why);
  }
  if (!c.backend) {
    c.backend = make_peer_backend();
    c.peer = true;
  }
  return c;
}

std::string describe(const Scenario& s) {
  const int64_t n = int64_t(s.prompt.size());
  return fmt::format("scenario {} ({}): {}, {}, prompt {} tokens ({} prefill{}), {} decode steps", s.name,
                     source_relative(s.path), source_relative(s.cfg.source), s.weights.describe(), n,
                     n >= s.cfg.sparse.dense_len ? "sparse" : "dense",
                     s.prefill_chunk > 0 ? fmt::format(" in pieces of {}", s.prefill_chunk) : "", s.decode_steps);
}

const char* kPeerNote =
    "PEER MODE: the backend is the bf16-emulating reference itself, so this run checks the harness and the "
    "reference's self-consistency (every tap recorded and finite, the peer's own block selections inside the tie "
    "band of the float64 reference's), not a GPU. GPU numerics are checked here through the scenario's golden, "
    "when one was recorded.";

nlohmann::json times_json(const std::vector<PhaseTime>& t) {
  nlohmann::json j = nlohmann::json::array();
  for (const PhaseTime& p : t) j.push_back({{"phase", p.phase}, {"tokens", p.tokens}, {"seconds", p.seconds}});
  return j;
}

std::string dump_path(const std::string& dir, const std::string& name) {
  make_output_folder(dir, "--dump");
  return (fs::path(dir) / name).string();
}

DumpInfo dump_info(const Scenario& s, const std::string& backend) {
  DumpInfo info;
  info.scenario = s.name;
  info.git_revision = git_revision();
  info.backend = backend;
  return info;
}

// The golden of the scenario, checked against the truth this run already computed (peer mode).
struct GoldenPart {
  bool present = false;
  bool pass = true;
  std::string text;
  nlohmann::json json;
};

GoldenPart golden_part(const Scenario& s, const Truth& truth, bool prompt_overridden) {
  GoldenPart g;
  const std::string rel = "tests/golden/" + s.name + ".h5";
  const std::string path = std::string(SALASIM_SOURCE_DIR) + "/" + rel;
  if (!fs::exists(path)) {
    g.text = fmt::format("golden: none for this scenario ({}): recorded GPU numerics are not checked\n", rel);
    g.json = nullptr;
    return g;
  }
  g.present = true;
  if (prompt_overridden) {
    g.text = fmt::format("golden: {} not checked: --tokens changed the scenario's prompt\n", rel);
    g.json = {{"file", rel}, {"checked", false}};
    return g;
  }
  try {
    const Golden gold = read_golden(path);
    const GoldenCheck c = check_golden(gold, s, truth, gpu_source_hash(), rel);
    g.pass = c.pass();
    g.text = format_golden_check(c, gold, rel);
    g.json = {{"file", rel}, {"checked", true}, {"pass", c.pass()}, {"tap_set_ok", c.tap_set_ok()},
              {"device", gold.meta.device},
              {"recorded_hash", c.recorded_hash}, {"current_hash", c.current_hash}, {"report", report_json(c.report)},
              {"rerecord", c.rerecord}};
  } catch (const Error& e) {  // a golden of another prompt length, a damaged file: the golden fails, loudly
    g.pass = false;
    g.text = fmt::format("golden check: FAIL: {}\nRe-record it on a GPU machine:\n  {}\n", e.what(),
                         rerecord_command(source_relative(s.path), rel));
    g.json = {{"file", rel}, {"checked", true}, {"pass", false}, {"error", e.what()}};
  }
  return g;
}

int run_full(const VerifyArgs& a, const Scenario& s, const Out& out) {
  Chosen ch = choose_backend(a.backend);
  check_reference_fits(s, "verify", ch.peer ? 2 : 3);
  const auto t_load = clock_type::now();
  std::shared_ptr<const ref::RefWeights> w = ref::load_ref_weights(s.cfg, s.weights);
  const double load_s = since(t_load);
  out.say("salasim verify: {}\n", describe(s));
  if (!ch.note.empty()) out.say("{}\n", ch.note);
  out.say("backend: {}\n", ch.backend->name());
  if (ch.peer) out.say("{}\n", kPeerNote);
  out.say("teacher forcing: the peer and the backend attend over the float64 reference's block selections; their "
          "own selections are recorded and compared inside the tie band\n");

  out.say("running the float64 reference and the peer ...\n");
  const Truth truth = run_truth(s, TapFilter::all(), w);
  out.say("reference (float64): {}\npeer (bf16):         {}\n", format_times(truth.ref_times),
          format_times(truth.peer_times));

  CompareReport report;
  std::vector<PhaseTime> backend_times;
  std::string device;
  const TapMap* backend_taps = nullptr;
  VerifyResult v;
  const auto t_cmp = clock_type::now();
  if (ch.peer) {  // the backend's run is the peer's run: one run, both roles
    report = compare_taps(truth.ref, &truth.peer, truth.peer);
    backend_times = truth.peer_times;
    device = "CPU";
    backend_taps = &truth.peer;
  } else {
    out.say("running the backend ...\n");
    v = verify_backend(s, truth, *ch.backend);
    report = std::move(v.report);
    backend_times = v.run.times;
    device = v.run.device;
    backend_taps = &v.run.taps;
  }
  double compare_s = since(t_cmp);
  if (!ch.peer)
    for (const PhaseTime& p : backend_times) compare_s -= p.seconds;  // verify_backend ran the backend, then compared

  std::string dumped;
  if (!a.dump.empty() && !report.pass()) {
    const std::string path = dump_path(a.dump, s.name + "-failures.h5");
    const int n = dump_failures(path, report, truth.ref, *backend_taps, dump_info(s, ch.backend->name()));
    dumped = fmt::format("wrote {} failing tap(s) with reference, backend, difference and the op's inputs to {}", n, path);
  } else if (!a.dump.empty()) {
    dumped = "every tap passes: no failure dump written";
  }
  GoldenPart golden;
  if (ch.peer) golden = golden_part(s, truth, a.tokens > 0);
  const bool pass = report.pass() && golden.pass;

  if (a.json) {
    nlohmann::json j;
    j["scenario"] = {{"name", s.name}, {"path", source_relative(s.path)}, {"prompt_tokens", s.prompt.size()},
                     {"decode_steps", s.decode_steps}};
    j["backend"] = ch.backend->name();
    j["device"] = device;
    j["peer_mode"] = ch.peer;
    if (ch.peer) j["peer_mode_note"] = kPeerNote;
    if (!ch.note.empty()) j["note"] = ch.note;
    j["times"] = {{"weights_s", load_s}, {"reference", times_json(truth.ref_times)},
                  {"peer", times_json(truth.peer_times)}, {"backend", times_json(backend_times)},
                  {"compare_s", compare_s}};
    j["report"] = report_json(report);
    j["golden"] = golden.json;
    j["dump"] = dumped;
    j["pass"] = pass;
    fmt::print("{}\n", j.dump(2));
    return pass ? 0 : 1;
  }
  const std::string label = backend_label(ch.backend->name(), device);
  if (!ch.peer) out.say("backend {}: {}\n", label, format_times(backend_times));
  out.say("{}", format_report(report, PrintOptions{a.failures_only}));
  if (!dumped.empty()) out.say("{}\n", dumped);
  if (ch.peer) out.say("{}", golden.text);
  out.say("times: weights {:.2f} s | reference {} | peer {} | backend {}{} | compare {:.2f} s | total {:.1f} s\n",
          load_s, format_times(truth.ref_times), format_times(truth.peer_times), format_times(backend_times),
          ch.peer ? " (the peer's run)" : "", compare_s, since(t_load));
  out.say("verify: {} (backend {}, scenario {})\n", pass ? "PASS" : "FAIL", label, s.name);
  return pass ? 0 : 1;
}

int run_spot(const VerifyArgs& a, const Scenario& s, const Out& out) {
  const std::vector<int> layers = a.spot_layers.empty() ? default_spot_layers(s.cfg) : a.spot_layers;
  const SpotRequest req = spot_request(int64_t(s.prompt.size()), a.spot, layers);
  Chosen ch = choose_backend(a.backend);
  if (ch.peer) check_reference_fits(s, "the peer standing in for the GPU", 0);
  out.say("salasim verify --spot {}: {}\n", a.spot, describe(s));
  if (!ch.note.empty()) out.say("{}\n", ch.note);
  out.say("backend: {}\n", ch.backend->name());
  if (ch.peer)
    out.say("PEER MODE: the peer stands in for the GPU: this checks the spot-check machinery, not a GPU\n");
  out.say("layers {}, query positions {} (GLA window from {}); the backend's prefill hands them over ...\n",
          fmt::join(req.layers, ","), fmt::join(req.positions, ","), req.window_start);
  const auto t0 = clock_type::now();
  const std::vector<SpotInput> inputs = ch.backend->spot_inputs(s, req);
  const double backend_s = since(t0);
  const auto t1 = clock_type::now();
  const SpotCheck check = check_spots(s.cfg, inputs);
  const double check_s = since(t1);
  std::string dumped;
  if (!a.dump.empty() && !check.report.pass()) {
    const std::string path = dump_path(a.dump, s.name + "-spot-failures.h5");
    const int n = dump_failures(path, check.report, check.ref, check.backend, dump_info(s, ch.backend->name()));
    dumped = fmt::format("wrote {} failing spot tap(s) to {} (row n is query position n of the list above)", n, path);
  }
  if (a.json) {
    nlohmann::json j;
    j["scenario"] = {{"name", s.name}, {"path", source_relative(s.path)}, {"prompt_tokens", s.prompt.size()}};
    j["backend"] = ch.backend->name();
    j["peer_mode"] = ch.peer;
    j["spot"] = {{"layers", req.layers}, {"positions", req.positions}, {"window_start", req.window_start}};
    j["times"] = {{"backend_s", backend_s}, {"check_s", check_s}};
    j["report"] = report_json(check.report);
    j["dump"] = dumped;
    j["pass"] = check.report.pass();
    fmt::print("{}\n", j.dump(2));
    return check.report.pass() ? 0 : 1;
  }
  out.say("{}", format_report(check.report, PrintOptions{a.failures_only}));
  if (!dumped.empty()) out.say("{}\n", dumped);
  out.say("times: backend prefill and hand-over {:.2f} s, reference recomputation {:.2f} s\n", backend_s, check_s);
  out.say("verify --spot: {} (backend {}, scenario {})\n", check.report.pass() ? "PASS" : "FAIL",
          ch.backend->name(), s.name);
  return check.report.pass() ? 0 : 1;
}

int run_verify(const VerifyArgs& a) {
  Scenario s = load_scenario(data_path(a.scenario.empty() ? default_scenario_path() : a.scenario));
  s.extrapolate = s.extrapolate || a.extrapolate;
  if (a.tokens > 0) resize_prompt(s, a.tokens, 7);
  if (!a.dump.empty()) make_output_folder(a.dump, "--dump");  // refused now, not after minutes of running
  const Out out{a.json};
  return a.spot > 0 ? run_spot(a, s, out) : run_full(a, s, out);
}

}  // namespace

void add_verify(CLI::App& app, Run& run) {
  auto a = std::make_shared<VerifyArgs>();
  CLI::App* c = app.add_subcommand(
      "verify", "Run the reference and a backend side by side, compare every tap of every layer (the main job)");
  c->add_option("--scenario", a->scenario, "scenario file (default scenarios/tiny-sparse.json)");
  c->add_option("--backend", a->backend,
                "gpu, peer, or auto (default: the GPU when this build and machine have one, else the peer)")
      ->check(CLI::IsMember({"auto", "gpu", "peer"}));
  c->add_option("--dump", a->dump, "folder for <scenario>-failures.h5: every failing tap with its op's inputs");
  c->add_flag("--json", a->json, "machine-readable output");
  c->add_flag("--failures-only", a->failures_only, "print only the failing taps (and the totals)");
  c->add_option("--tokens", a->tokens, "prompt length (random tokens), overriding the scenario's prompt")
      ->check(whole_number(1, kExtrapolationFactor * kMaxPositions));
  c->add_flag("--extrapolate", a->extrapolate,
              "allow prompt + decode past the config's max_position_embeddings, up to 4x it");
  c->add_option("--spot", a->spot,
                "spot check instead: N query positions of the chosen layers, recomputed from the backend's inputs")
      ->check(whole_number(1, 1024));
  c->add_option("--spot-layers", a->spot_layers, "layers for --spot (default: the deepest sparse and Lightning layer)")
      ->delimiter(',')
      ->check(whole_number(0, kMaxLayers - 1));
  c->callback([a, &run] { run = [a] { return run_verify(*a); }; });
}

}  // namespace salasim::cli
