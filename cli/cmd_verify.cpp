// `salasim verify`: the main job. The float64 reference, its bf16 peer and a backend (the GPU path, or on a
// machine without one the peer itself) run a scenario side by side; every tap of every layer is compared; the table,
// the first divergence and the timings are printed; failing taps go to HDF5. `--spot N` instead checks N query
// positions of chosen layers from inputs the backend hands over (long contexts the reference cannot rerun).
// Exit 0 when everything passes, 1 when a check fails, 2 on bad input or an unavailable backend.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "compare/failure_inputs.hpp"
#include "compare/source_hash.hpp"
#include "compare/tap_file_sink.hpp"
#include "model/error.hpp"
#include "model/limits.hpp"
#include "model/output_file.hpp"
#include "model/tap_select.hpp"
#include "scenarios/backend.hpp"
#include "scenarios/golden.hpp"
#include "scenarios/progress.hpp"
#include "scenarios/verify.hpp"

namespace salasim::cli {

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

struct VerifyArgs {
  std::string scenario;
  std::string backend = "auto";
  std::string dump;
  std::string dump_taps;  // folder for <scenario>-reference.h5, -peer.h5, -backend.h5
  bool force = false;     // replace existing dump files
  bool json = false;
  bool failures_only = false;
  ProgressFlags progress;  // --progress, --quiet
  int64_t tokens = 0;
  bool extrapolate = false;
  int spot = 0;
  std::vector<int> spot_layers;
  ProgressFlags flags() const { return {progress.progress, progress.quiet, json}; }
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
      fail(
          "--backend gpu: no GPU backend here: {}. Without a GPU, `salasim verify --backend peer` (the default "
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

// verify --dump-taps: a tap dump per run, written as the run records (the reference and the peer stream their taps
// through the comparison and keep none, so the files are written as the taps go by, not from kept maps).
struct TapDumps {
  std::unique_ptr<TapFileSink> ref, peer;
  std::string backend_path;
  void attach(PairOptions& o) const {
    o.ref_copy = ref.get();
    o.peer_copy = peer.get();
  }
  static TapDumps open(const VerifyArgs& a, const Scenario& s, const std::string& backend) {
    TapDumps d;
    if (a.dump_taps.empty()) return d;
    const fs::path dir(a.dump_taps);
    if (!backend.empty()) {  // checked before the runs, not after them
      d.backend_path = (dir / (s.name + "-backend.h5")).string();
      check_output_file(d.backend_path, a.force, "--dump-taps");
    }
    d.ref = std::make_unique<TapFileSink>((dir / (s.name + "-reference.h5")).string(), dump_info(s, "reference"), false,
                                          a.force);
    d.peer =
        std::make_unique<TapFileSink>((dir / (s.name + "-peer.h5")).string(), dump_info(s, "peer"), false, a.force);
    return d;
  }
  // Closes the files: "wrote every tap of the reference (N taps) to ..., ...".
  std::string close() {
    if (!ref) return "";
    const int nr = ref->close(), np = peer->close();
    return fmt::format("wrote every tap of the reference ({} taps) to {}, of the peer ({} taps) to {}", nr, ref->path(),
                       np, peer->path());
  }
};

// The golden of the scenario, checked against the truth this run already computed (peer mode). Read before the run,
// so the run keeps exactly the taps and rows the golden holds.
struct GoldenPart {
  bool present = false;
  bool pass = true;
  std::string rel;
  std::optional<Golden> gold;  // read and to be checked
  std::string text;
  nlohmann::json json;
};

GoldenPart golden_fail(GoldenPart g, const Scenario& s, const std::string& why) {
  g.pass = false;
  g.text = fmt::format("golden check: FAIL: {}\nRe-record it on a GPU machine:\n  {}\n", why,
                       rerecord_command(source_relative(s.path), g.rel));
  g.json = {{"file", g.rel}, {"checked", true}, {"pass", false}, {"error", why}};
  return g;
}

GoldenPart golden_load(const Scenario& s, bool prompt_overridden) {
  GoldenPart g;
  g.rel = "tests/golden/" + s.name + ".h5";
  const std::string path = std::string(SALASIM_SOURCE_DIR) + "/" + g.rel;
  if (!fs::exists(path)) {
    g.text = fmt::format("golden: none for this scenario ({}): recorded GPU numerics are not checked\n", g.rel);
    g.json = nullptr;
    return g;
  }
  g.present = true;
  if (prompt_overridden) {
    g.text = fmt::format("golden: {} not checked: --tokens changed the scenario's prompt\n", g.rel);
    g.json = {{"file", g.rel}, {"checked", false}};
    return g;
  }
  try {
    g.gold = read_golden(path);
  } catch (const Error& e) {  // a damaged file: the golden fails, loudly
    return golden_fail(std::move(g), s, e.what());
  }
  return g;
}

// `streamed`: the truth run that kept golden_keep(gold, s); its kept_error: why the golden's rows could not be kept.
GoldenPart golden_check(GoldenPart g, const Scenario& s, const StreamResult& streamed) {
  if (!g.gold) return g;
  if (!streamed.kept_error.empty()) return golden_fail(std::move(g), s, streamed.kept_error);
  try {
    const GoldenCheck c = check_golden(*g.gold, s, golden_truth(streamed, s), gpu_source_hash(), g.rel);
    g.pass = c.pass();
    g.text = format_golden_check(c, *g.gold, g.rel);
    g.json = {{"file", g.rel},
              {"checked", true},
              {"pass", c.pass()},
              {"tap_set_ok", c.tap_set_ok()},
              {"device", g.gold->meta.device},
              {"recorded_hash", c.recorded_hash},
              {"current_hash", c.current_hash},
              {"report", report_json(c.report)},
              {"rerecord", c.rerecord}};
  } catch (const Error& e) {
    return golden_fail(std::move(g), s, e.what());
  }
  return g;
}

// The failing taps of `report` and the taps their ops read: what a failure dump holds.
KeepTaps dump_keep(const CompareReport& report) {
  KeepTaps k;
  k.what = "failure dump";
  for (const TapResult& r : report.rows) {
    if (r.pass) continue;
    k.names.insert(r.name);
    for (std::string& in : op_input_taps(r.name)) k.names.insert(std::move(in));
  }
  return k;
}

// The second pass of a failure dump keeps the failing taps and their ops' inputs of both runs whole: refused, with
// the numbers, when they would not fit in the host memory available now (the weights are loaded already).
void check_second_pass_memory(const Scenario& s, const KeepTaps& keep) {
  double bytes = 0;
  std::vector<std::pair<double, std::string>> big;
  for (const TapSpec& t : tap_catalog(s.cfg, int64_t(s.prompt.size()), s.decode_steps, true)) {
    if (!keep.names.count(t.name)) continue;
    const double b = 2 * 8.0 * double(shape_numel(t.shape));  // the reference's and the peer's, float64
    bytes += b;
    big.emplace_back(b, t.name);
  }
  std::sort(big.rbegin(), big.rend());
  std::string detail;
  for (size_t i = 0; i < big.size() && i < 6; ++i)
    detail += fmt::format("  {}: {:.2f} GB (reference and peer)\n", big[i].second, big[i].first / 1e9);
  if (big.size() > 6) detail += fmt::format("  ... and {} more taps\n", big.size() - 6);
  detail += "Rerun without --dump, or with a shorter prompt (--tokens N) to dump the failing taps";
  check_host_memory(bytes + double(kStreamBudgetBytes),
                    fmt::format("--dump: keeping the {} failing and input taps of the reference and the peer",
                                keep.names.size()),
                    detail);
}

struct FullRun {
  CompareReport report;
  std::vector<PhaseTime> ref_times, peer_times, backend_times;
  std::string device;
  double compare_s = 0;
  PairTimes pair;             // CPU and waits of the reference and the peer
  double wait_s[2] = {0, 0};  // peer mode: time the reference / the peer waited for the other to catch up
  bool streamed = false;
  std::string dumped;
  std::string dumped_taps;  // --dump-taps
  GoldenPart golden;
};

// Peer mode: the backend is the peer, so its run is the truth's peer run, every tap compared as both runs produce it.
// A failure dump needs the failing tensors the comparison dropped: a second pass keeps just those and their inputs.
FullRun run_peer_mode(const VerifyArgs& a, const Scenario& s, std::shared_ptr<const ref::RefWeights> w,
                      const Backend& backend, const Out& out) {
  FullRun f;
  f.golden = golden_load(s, a.tokens > 0);
  out.say(
      "running the float64 reference and the peer side by side ({} thread(s) each), comparing every tap as both "
      "produce it ...\n",
      threads_per_run());
  std::unique_ptr<Progress> progress = make_progress(a.flags(), s, {"reference", "peer"});
  TapDumps dumps = TapDumps::open(a, s, "");
  PairOptions hooks = progress_hooks(progress.get());
  dumps.attach(hooks);
  StreamedTruth t = run_truth_streaming(s, w, f.golden.gold ? golden_keep(*f.golden.gold, s) : KeepTaps{}, hooks);
  if (progress) progress->done();
  f.dumped_taps = dumps.close();
  f.report = std::move(t.result.report);
  f.pair = t.times;
  f.ref_times = t.times.ref;
  f.peer_times = t.times.peer;
  f.backend_times = t.times.peer;
  f.wait_s[0] = t.result.wait_s[0];
  f.wait_s[1] = t.result.wait_s[1];
  f.device = "CPU";
  f.compare_s = t.result.busy_s;
  f.streamed = true;
  out.say("reference (float64): {}\npeer (bf16):         {}\n", format_times(f.ref_times), format_times(f.peer_times));
  f.golden = golden_check(std::move(f.golden), s, t.result);

  if (!a.dump.empty() && !f.report.pass()) {
    out.say(
        "{} tap(s) failed: running the reference and the peer again to keep them and their ops' inputs for the "
        "dump (the first pass compared every tap as it came and kept none) ...\n",
        f.report.failed);
    const KeepTaps keep = dump_keep(f.report);
    check_second_pass_memory(s, keep);
    std::unique_ptr<Progress> again = make_progress(a.flags(), s, {"reference", "peer"});
    StreamedTruth d = run_truth_streaming(s, w, keep, progress_hooks(again.get()));
    if (again) again->done();
    const std::string path = dump_path(a.dump, s.name + "-failures.h5");
    const int n =
        dump_failures(path, f.report, d.result.ref_kept, d.result.peer_kept, dump_info(s, backend.name()), a.force);
    f.dumped =
        fmt::format("wrote {} failing tap(s) with reference, backend, difference and the op's inputs to {}", n, path);
  } else if (!a.dump.empty()) {
    f.dumped = "every tap passes: no failure dump written";
  }
  return f;
}

// A separate backend (the GPU): the truth keeps every tap of both runs, the backend runs teacher-forced with the
// reference's selections, then every tap is compared.
FullRun run_backend_mode(const VerifyArgs& a, const Scenario& s, std::shared_ptr<const ref::RefWeights> w,
                         Backend& backend, const Out& out) {
  FullRun f;
  out.say("running the float64 reference and the peer side by side ({} thread(s) each) ...\n", threads_per_run());
  std::unique_ptr<Progress> progress = make_progress(a.flags(), s, {"reference", "peer"});
  Truth truth;
  TapDumps dumps = TapDumps::open(a, s, backend.name());
  {
    TapMapSink ref_sink(&truth.ref), peer_sink(&truth.peer);
    PairOptions hooks = progress_hooks(progress.get());
    dumps.attach(hooks);
    f.pair = run_ref_and_peer(s, TapFilter::all(), w, ref_sink, peer_sink, hooks);
    truth.ref_times = f.ref_times = f.pair.ref;
    truth.peer_times = f.peer_times = f.pair.peer;
  }
  out.say("reference (float64): {}\npeer (bf16):         {}\n", format_times(f.ref_times), format_times(f.peer_times));
  out.say("running the backend ...\n");
  if (progress) progress->stage("backend " + backend.name() + ": prefill and decode, then the comparison");
  const auto t_cmp = clock_type::now();
  VerifyResult v = verify_backend(s, truth, backend);
  if (progress) progress->done();
  f.report = std::move(v.report);
  f.backend_times = v.run.times;
  f.device = v.run.device;
  f.compare_s = since(t_cmp);
  for (const PhaseTime& p : f.backend_times) f.compare_s -= p.seconds;  // verify_backend ran the backend, then compared
  f.dumped_taps = dumps.close();
  if (!dumps.backend_path.empty()) {  // the backend's taps are kept whole for the comparison: written from its map
    write_taps(dumps.backend_path, v.run.taps, dump_info(s, backend.name()), FloatStorage::Float64, false, a.force);
    f.dumped_taps += fmt::format(", of the backend ({} taps) to {}", v.run.taps.size(), dumps.backend_path);
  }
  if (!a.dump.empty() && !f.report.pass()) {
    const std::string path = dump_path(a.dump, s.name + "-failures.h5");
    const int n = dump_failures(path, f.report, truth.ref, v.run.taps, dump_info(s, backend.name()), a.force);
    f.dumped =
        fmt::format("wrote {} failing tap(s) with reference, backend, difference and the op's inputs to {}", n, path);
  } else if (!a.dump.empty()) {
    f.dumped = "every tap passes: no failure dump written";
  }
  return f;
}

int run_full(const VerifyArgs& a, const Scenario& s, const Out& out) {
  Chosen ch = choose_backend(a.backend);
  if (ch.peer) check_reference_fits(s, "verify", streamed_tap_bytes(s), "taps compared as the runs produce them");
  else check_reference_fits(s, "verify", 3);
  if (!a.dump_taps.empty()) check_dump_room(a.dump_taps, (ch.peer ? 2 : 3) * run_tap_bytes(s), "--dump-taps");
  const auto t_load = clock_type::now();
  std::shared_ptr<const ref::RefWeights> w = ref::load_ref_weights(s.cfg, s.weights);
  const double load_s = since(t_load);
  out.say("salasim verify: {}\n", describe(s));
  if (!ch.note.empty()) out.say("{}\n", ch.note);
  out.say("backend: {}\n", ch.backend->name());
  if (ch.peer) out.say("{}\n", kPeerNote);
  out.say(
      "teacher forcing: the peer and the backend attend over the float64 reference's block selections; their "
      "own selections are recorded and compared inside the tie band\n");

  const FullRun f = ch.peer ? run_peer_mode(a, s, w, *ch.backend, out) : run_backend_mode(a, s, w, *ch.backend, out);
  const bool pass = f.report.pass() && f.golden.pass;
  const std::string compare_note = f.streamed ? " of CPU alongside the runs" : "";

  if (a.json) {
    nlohmann::json j;
    j["scenario"] = {{"name", s.name},
                     {"path", source_relative(s.path)},
                     {"prompt_tokens", s.prompt.size()},
                     {"decode_steps", s.decode_steps}};
    j["backend"] = ch.backend->name();
    j["device"] = f.device;
    j["peer_mode"] = ch.peer;
    if (ch.peer) j["peer_mode_note"] = kPeerNote;
    if (!ch.note.empty()) j["note"] = ch.note;
    j["times"] = {{"weights_s", load_s},
                  {"reference", times_json(f.ref_times)},
                  {"peer", times_json(f.peer_times)},
                  {"backend", times_json(f.backend_times)},
                  {"compare_s", f.compare_s},
                  {"compare_alongside_runs", f.streamed},
                  {"total_s", since(t_load)},
                  {"threads_per_run", threads_per_run()},
                  {"reference_cpu_s", f.pair.ref_cpu_s},
                  {"peer_cpu_s", f.pair.peer_cpu_s},
                  {"peer_waited_for_selections_s", f.pair.peer_wait_s},
                  {"reference_waited_for_peer_s", f.wait_s[0]},
                  {"peer_waited_for_reference_s", f.wait_s[1]}};
    j["report"] = report_json(f.report);
    j["golden"] = f.golden.json;
    j["dump"] = f.dumped;
    j["dump_taps"] = f.dumped_taps;
    j["pass"] = pass;
    fmt::print("{}\n", j.dump(2));
    return pass ? 0 : 1;
  }
  const std::string label = backend_label(ch.backend->name(), f.device);
  if (!ch.peer) out.say("backend {}: {}\n", label, format_times(f.backend_times));
  out.say("{}", format_report(f.report, PrintOptions{a.failures_only}));
  if (!f.dumped.empty()) out.say("{}\n", f.dumped);
  if (!f.dumped_taps.empty()) out.say("{}\n", f.dumped_taps);
  if (ch.peer) out.say("{}", f.golden.text);
  out.say("times: weights {:.2f} s | reference {} | peer {} | backend {}{} | compare {:.2f} s{} | total {:.1f} s\n",
          load_s, format_times(f.ref_times), format_times(f.peer_times), format_times(f.backend_times),
          ch.peer ? " (the peer's run)" : "", f.compare_s, compare_note, since(t_load));
  out.say(
      "CPU: reference {:.1f} s, peer {:.1f} s ({} thread(s) each, OpenMP helpers not counted); waits: peer for the "
      "reference's selections {:.1f} s{}\n",
      f.pair.ref_cpu_s, f.pair.peer_cpu_s, threads_per_run(), f.pair.peer_wait_s,
      f.streamed
          ? fmt::format(", reference for the peer {:.1f} s, peer for the reference {:.1f} s", f.wait_s[0], f.wait_s[1])
          : "");
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
  if (ch.peer) out.say("PEER MODE: the peer stands in for the GPU: this checks the spot-check machinery, not a GPU\n");
  out.say("layers {}, query positions {} (GLA window from {}); the backend's prefill hands them over ...\n",
          fmt::join(req.layers, ","), fmt::join(req.positions, ","), req.window_start);
  // a spot check's work is two stages without layers to count: each shown with its elapsed time
  std::unique_ptr<Progress> progress = make_progress(a.flags(), s, {});
  if (progress)
    progress->stage(fmt::format("backend {}: prefill of {} tokens and the hand-over of {} layers", ch.backend->name(),
                                s.prompt.size(), req.layers.size()));
  const auto t0 = clock_type::now();
  const std::vector<SpotInput> inputs = ch.backend->spot_inputs(s, req);
  const double backend_s = since(t0);
  if (progress)
    progress->stage(
        fmt::format("reference: recomputing {} positions of {} layers", req.positions.size(), req.layers.size()));
  const auto t1 = clock_type::now();
  const SpotCheck check = check_spots(s.cfg, inputs);
  const double check_s = since(t1);
  if (progress) progress->done();
  std::string dumped;
  if (!a.dump.empty() && !check.report.pass()) {
    const std::string path = dump_path(a.dump, s.name + "-spot-failures.h5");
    const int n =
        dump_failures(path, check.report, check.ref, check.backend, dump_info(s, ch.backend->name()), a.force);
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
  out.say("verify --spot: {} (backend {}, scenario {})\n", check.report.pass() ? "PASS" : "FAIL", ch.backend->name(),
          s.name);
  return check.report.pass() ? 0 : 1;
}

int run_verify(const VerifyArgs& a) {
  Scenario s = load_scenario(data_path(a.scenario.empty() ? default_scenario_path() : a.scenario));
  s.extrapolate = s.extrapolate || a.extrapolate;
  if (a.tokens > 0) resize_prompt(s, a.tokens, 7);
  // Output places are refused now, not after minutes of running: the folders made, the files that would be written
  // refused when they exist (unless --force; the backend's tap dump is checked once the backend is known).
  if (!a.dump.empty()) {
    make_output_folder(a.dump, "--dump");
    check_output_file(dump_path(a.dump, s.name + (a.spot > 0 ? "-spot-failures.h5" : "-failures.h5")), a.force,
                      "--dump");
  }
  if (!a.dump_taps.empty() && a.spot > 0)
    fail(
        "--dump-taps writes every tap of full runs; --spot recomputes a few positions (its failing taps go to --dump)");
  if (!a.dump_taps.empty()) {
    make_output_folder(a.dump_taps, "--dump-taps");
    for (const char* run : {"-reference.h5", "-peer.h5"})
      check_output_file((fs::path(a.dump_taps) / (s.name + run)).string(), a.force, "--dump-taps");
  }
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
  c->add_option("--dump-taps", a->dump_taps,
                "folder for <scenario>-reference.h5, -peer.h5 and (with a GPU backend) -backend.h5: every tap of each "
                "run, all rows, written as the runs go");
  c->add_flag("--force", a->force, "replace dump files of --dump and --dump-taps that exist (else they are refused)");
  c->add_flag("--json", a->json, "machine-readable output");
  c->add_flag("--failures-only", a->failures_only, "print only the failing taps (and the totals)");
  add_progress_flags(c, a->progress);
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
