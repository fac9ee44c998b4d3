// `salasim run`: the CUDA path on a config at a context length with synthetic (or checkpoint) weights: TTFT,
// decode ms/token, peak device memory measured beside the planner's prediction, time per op class; with
// --dump-taps FILE --taps PATTERN [--rows LIST], the chosen taps' chosen rows written to a tap dump as the run goes.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "compare/dump_align.hpp"
#include "compare/row_select_sink.hpp"
#include "model/config.hpp"
#include "model/error.hpp"
#include "model/generate.hpp"
#include "model/limits.hpp"
#include "model/tap_select.hpp"
#include "model/weights.hpp"
#include "reports/context.hpp"
#include "scenarios/scenario.hpp"
#ifdef SALASIM_HAVE_CUDA
#include <cuda_profiler_api.h>

#include "gpu/linear.hpp"
#include "gpu/runner.hpp"
#endif

namespace salasim::cli {

namespace {

// --fuse: "on", "off", or a comma list of the fusions to take (residual, gate, rope). Returns the three switches, or
// nothing with *why set.
struct FuseChoice {
  bool residual = false, gate = false, rope = false;
};
std::optional<FuseChoice> parse_fuse(const std::string& v, std::string* why) {
  if (v == "on") return FuseChoice{true, true, true};
  if (v == "off") return FuseChoice{};
  FuseChoice f;
  std::istringstream in(v);
  for (std::string item; std::getline(in, item, ',');) {
    if (item == "residual") f.residual = true;
    else if (item == "gate") f.gate = true;
    else if (item == "rope") f.rope = true;
    else {
      *why = fmt::format("'{}' is not a fusion (expected on, off, or a comma list of residual, gate, rope)", item);
      return std::nullopt;
    }
  }
  return f;
}
std::string fusion_error(const std::string& v) {
  std::string why;
  return parse_fuse(v, &why) ? std::string() : why;
}

#ifdef SALASIM_HAVE_CUDA
gpu::DecodeFusion fusion_of(const std::string& v) {
  std::string why;
  const FuseChoice f = parse_fuse(v, &why).value_or(FuseChoice{true, true, true});  // checked by the option
  gpu::DecodeFusion d;
  d.residual = f.residual, d.gate = f.gate, d.rope = f.rope;
  return d;
}
// The record's "decode_fusion": "on", "off", or the list taken.
std::string fusion_name(const gpu::DecodeFusion& d) {
  if (d.residual && d.gate && d.rope) return "on";
  std::string s;
  for (const auto& [on, name] : {std::pair{d.residual, "residual"}, {d.gate, "gate"}, {d.rope, "rope"}})
    if (on) s += (s.empty() ? "" : ",") + std::string(name);
  return s.empty() ? "off" : s;
}

// The NVIDIA kernel driver's version ("580.159.04"), for the run record: Linux publishes it in
// /proc/driver/nvidia/version, as "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." or, for the open
// kernel modules, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  ...": the version is the
// first word after "Kernel Module" that starts with a digit and has a dot.
std::string driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return "unknown (no /proc/driver/nvidia/version)";
  const std::string key = "Kernel Module";
  const size_t at = line.find(key);
  std::istringstream rest(at == std::string::npos ? line : line.substr(at + key.size()));
  for (std::string word; rest >> word;)
    if (std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos) return word;
  return line;
}
#endif

struct Args {
  std::string config = "scenarios/models/minicpm-sala-9b.json";
  std::string context = "64K";
  std::string checkpoint;
  int decode = 32;
  int64_t chunk = 16384;
  uint64_t seed = 1;
  bool json = false;
  std::string json_out;  // also write the JSON record here
  bool plan_only = false;
  double time_limit = 0;  // seconds; 0 = none
  bool extrapolate = false;
  int profiler_steps = 0;  // decode steps bracketed by cudaProfilerStart/Stop (ncu --profile-from-start off)
  std::string gemv = "custom";  // "custom" or "cublas" for the single-token GEMMs (RunnerOptions::gemv)
  std::string pdl = "on";    // "on" or "off": programmatic dependent launch (RunnerOptions::pdl)
  std::string fuse = "on";   // "on", "off" or a list of residual, gate, rope (fusion_of; RunnerOptions::fusion)
  std::string ahead = "on";  // decode steps enqueued one ahead, the token picked on the device (model/generate.hpp)
  int64_t prompt_seed = -1;  // the prompt's random tokens; -1: --seed
  std::string dump_taps;     // tap dump of the chosen taps and rows
  std::string taps;          // --taps: patterns, comma-separated (model/taps.hpp TapFilter)
  std::string rows;          // --rows: prefill rows (model/tap_select.hpp RowList); "" = all
  std::string command_line;
};

// What --dump-taps writes, checked before the run: the patterns against the run's tap list (from the config), the
// rows against the prompt, the file's folder and room, and the host memory the recorder holds.
struct DumpChoice {
  std::vector<std::string> patterns;
  TapFilter filter;
  RowList rows;
  std::vector<int64_t> row_ids;
  DumpBudget budget;
  bool scores = false;  // a select/scores tap is chosen: the runner plans its score buffers
};

std::optional<DumpChoice> choose_dump(const Args& a, const ModelConfig& c, int64_t N) {
  if (a.dump_taps.empty()) {
    if (!a.taps.empty() || !a.rows.empty())
      fail("{} chooses what --dump-taps writes; give --dump-taps FILE.h5 too", a.taps.empty() ? "--rows" : "--taps");
    return std::nullopt;
  }
  if (a.taps.empty())
    fail("--dump-taps {}: give --taps PATTERN (tap names or globs, comma-separated, e.g. layer_*/residual/h or "
         "layer_03/lightning/gla/out; '*' for every tap)",
         a.dump_taps);
  DumpChoice d;
  d.patterns = split_patterns(a.taps);
  d.filter = TapFilter{d.patterns};
  d.rows = parse_row_list(a.rows.empty() ? "all" : a.rows);
  d.row_ids = d.rows.resolve(N);
  const std::vector<TapSpec> catalog = tap_catalog(c, N, a.decode, true);
  check_patterns(d.patterns, catalog);
  d.budget = dump_budget(catalog, d.filter, N, d.row_ids, std::min<int64_t>(a.chunk, N));
  for (const SelectedTap& t : d.budget.taps) d.scores = d.scores || tap_kind(t.name) == "sparse/select/scores";
  check_dump_target(a.dump_taps, d.budget.file_bytes);
  // The parts of the host memory the recorder needs: one call's largest tap, and the state taps of the phase that
  // holds the most (each phase's are written when it ends).
  std::map<std::string, std::pair<double, int>> state;  // phase -> bytes, taps
  for (const SelectedTap& t : d.budget.taps)
    if (!TapSpec{t.name, t.shape, false}.per_token()) {
      auto& [bytes, n] = state[tap_phase(t.name)];
      bytes += t.file_bytes;
      ++n;
    }
  std::string detail = fmt::format("  one forward call's largest tap, {} ({} rows of --chunk {}), as downloaded and "
                                   "as float64: {:.2f} GB\n",
                                   d.budget.largest_download, std::min<int64_t>(a.chunk, N), a.chunk,
                                   d.budget.download_bytes / 1e9);
  const auto most = std::max_element(state.begin(), state.end(),
                                     [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
  if (most != state.end())
    detail += fmt::format("  state taps of /{} (the phase that holds the most; each phase's are written when it "
                          "ends): {} taps, {:.2f} GB\n",
                          most->first, most->second.second, most->second.first / 1e9);
  detail += "Choose fewer taps (a phase: /prefill/...), fewer rows, or a smaller --chunk.";
  check_host_memory(d.budget.held_bytes, fmt::format("--dump-taps {} (--taps {}, --rows {})", a.dump_taps, a.taps,
                                                     a.rows.empty() ? "all" : a.rows),
                    detail);
  return d;
}

int run(const Args& a) {
  const ModelConfig c = load_config(data_path(a.config));
  const std::vector<int64_t> contexts = reports::parse_contexts(a.context);
  if (contexts.size() != 1) fail("--context {}: give one context length", a.context);
  const int64_t N = contexts[0];
  if (a.profiler_steps > a.decode - std::min(8, a.decode / 4))
    fail("--profiler-steps {}: at most {} with --decode {} (the last quarter of the steps, at most 8, carry CUDA events)",
         a.profiler_steps, a.decode - std::min(8, a.decode / 4), a.decode);
  check_positions(c, N, a.decode, a.extrapolate, fmt::format("--context {} --decode {}", a.context, a.decode));
  if (const auto dir = std::filesystem::path(a.json_out).parent_path(); !a.json_out.empty() && !dir.empty())
    make_output_folder(dir.string(), "--json-out");  // refused now, not after the run
  const std::optional<DumpChoice> dump = choose_dump(a, c, N);  // bad choices refused before weights or a GPU
  // The checkpoint is validated (headers against the inventory) before anything else, --plan included.
  const WeightSource w = a.checkpoint.empty() ? synthetic_weights(a.seed) : checkpoint_weights(a.checkpoint, tensor_inventory(c));
#ifndef SALASIM_HAVE_CUDA
  (void)w;
  (void)dump;
  fail("salasim run needs the CUDA path, and this build has none (configure with nvcc on PATH, SALASIM_CUDA=ON); "
       "the memory plan without it: salasim model memory --config {} --context {}",
       a.config, N);
#else
  gpu::RunnerOptions o;
  o.max_context = N + a.decode;
  o.chunk = a.chunk;
  o.profile = true;
  o.taps = dump && dump->scores;  // the pooled block scores' buffers
  o.gemv = a.gemv == "cublas" ? gpu::Gemv::cublas : gpu::Gemv::custom;
  o.pdl = a.pdl == "on";
  o.fusion = fusion_of(a.fuse);
  if (a.plan_only) {
    fmt::print("memory plan for context {} + {} decode, chunk {}:\n{}", N, a.decode, a.chunk, gpu::plan_memory(c, o).table());
    if (dump)
      fmt::print("--dump-taps {}: {} taps, {:.3f} GB on disk, {:.3f} GB of host memory at most\n", a.dump_taps,
                 dump->budget.taps.size(), dump->budget.file_bytes / 1e9, dump->budget.held_bytes / 1e9);
    return 0;
  }
  std::string why;
  if (!gpu::available(&why)) fail("salasim run needs a GPU: {}", why);
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  gpu::Runner r(c, w, o);
  const double load_s = std::chrono::duration<double>(clock::now() - t0).count();
  const std::vector<int32_t> prompt = random_tokens(a.prompt_seed >= 0 ? uint64_t(a.prompt_seed) : a.seed, N, c.vocab_size);

  // The prompt goes in chunk-sized pieces (the same computation as one call: absolute positions, the mode fixed by
  // the total length) so progress can be shown and a time limit can stop a run cleanly between chunks. Generation
  // is Runner::generate, the loop `salasim ruler run` uses too: `--decode D` generates D + 1 tokens, the first from
  // the prefill's logits, so D decode steps are timed.
  const int64_t report_every = std::max<int64_t>(a.chunk, N / 16);
  int64_t next_report = report_every;
  gpu::PhaseTimes prefill_phases;
  const auto t_prefill = clock::now();
  GenerateOptions go;
  go.max_new = int64_t(a.decode) + 1;
  go.piece = a.chunk;
  go.ahead = a.ahead == "on";
  go.on_prefill = [&](int64_t done, int64_t total) {
    const double el = std::chrono::duration<double>(clock::now() - t_prefill).count();
    if (done >= next_report || done == total) {
      const gpu::PhaseTimes p = r.times();
      fmt::print(stderr, "  prefill {:>9}/{} tokens  {:8.2f} s  (gemm {:.2f}, select {:.2f}, sparse_attn {:.2f}, dense_attn {:.2f}, gla {:.2f}, other {:.2f})\n",
                 done, total, el, p.gemm, p.select, p.sparse_attn, p.dense_attn, p.gla, p.other);
      std::fflush(stderr);
      next_report += report_every;
    }
    if (done == total) {
      prefill_phases = r.times();
      r.set_profile(false);
    }
    return !(a.time_limit > 0 && el > a.time_limit);
  };
  const int profiled = std::min(8, a.decode / 4);
  // --profiler-steps: the first decode steps (never the event-profiled ones) inside a CUDA profiler range, so an
  // external profiler (ncu --profile-from-start off) sees those steps' kernels and nothing of the prefill.
  bool in_range = false;
  auto range = [&](bool on) {
    if (on == in_range) return;
    in_range = on;
    if (on) (void)cudaProfilerStart();
    else (void)cudaProfilerStop();
  };
  go.before_decode = [&](int64_t step) {
    if (a.profiler_steps > 0) range(step < a.profiler_steps);
    if (step == a.decode - profiled) r.set_profile(true);
  };
  // --dump-taps: the same loop (model/generate.hpp) with a tap recorder on every call, into the file.
  std::unique_ptr<TapFileSink> dump_file;
  std::unique_ptr<RowSelectSink> dump_sink;
  std::unique_ptr<TapRecorder> rec;
  if (dump) {
    DumpInfo info;
    info.scenario = fmt::format("run {} context {}", std::filesystem::path(c.source).stem().string(), N);
    info.git_revision = git_revision();
    info.backend = "cuda:" + gpu::device_name();
    info.extra = {{kTapSelectionAttr, a.taps}, {kRowSelectionAttr, a.rows.empty() ? "all" : a.rows},
                  {"config", c.source}, {"weights", w.describe()},
                  {"prompt", fmt::format("{} random tokens, seed {}", N, a.prompt_seed >= 0 ? uint64_t(a.prompt_seed) : a.seed)},
                  {"command", a.command_line}};
    dump_file = std::make_unique<TapFileSink>(a.dump_taps, info, !dump->rows.all);
    dump_sink = std::make_unique<RowSelectSink>(*dump_file, dump->row_ids, dump->rows.all);
    rec = std::make_unique<TapRecorder>(TapRecorder{dump->filter, nullptr, "prefill", dump_sink.get()});
  }
  struct TappedSteps {  // the Runner as generate_loop wants it, recording taps (Runner::generate records none)
    gpu::Runner& r;
    TapRecorder* rec;
    void begin_prefill(int64_t n) { r.begin_prefill(n); }
    std::vector<float> prefill_piece(const std::vector<int32_t>& t) { return r.prefill_piece(t, rec); }
    std::vector<float> decode(int32_t t) { return r.decode(t, rec); }
    std::vector<LayerSelection> last_selection(bool scores) const { return r.last_selection(scores); }
  };
  TappedSteps steps{r, rec.get()};
  const Generation gen = dump ? generate_loop(steps, prompt, go) : r.generate(prompt, go);
  range(false);
  std::string dumped;
  if (dump) {
    const int n = dump_sink->close();
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(a.dump_taps, ec);
    dumped = fmt::format("wrote {} taps ({}) to {}: {:.1f} MB; host memory held by the recorder at most {:.1f} MB "
                         "(times above include the taps' downloads and writes)",
                         n, dump->rows.all ? "all rows" : fmt::format("prefill rows {}", a.rows), a.dump_taps,
                         ec ? 0.0 : double(bytes) / 1e6, dump_sink->peak_held_bytes() / 1e6);
  }
  if (gen.prefill_stopped) {
    const double el = gen.prefill_s;
    const int64_t done = r.len();
    const gpu::PhaseTimes p = r.times();
    fmt::print("prefill STOPPED by --time-limit {} s at position {} of {} after {:.2f} s ({:.0f} tokens/s)\n",
               a.time_limit, done, N, el, double(done) / el);
    fmt::print("  by op class: gemm {:.3f} s, select {:.3f} s, sparse_attn {:.3f} s, dense_attn {:.3f} s, gla {:.3f} s, "
               "other {:.3f} s\n", p.gemm, p.select, p.sparse_attn, p.dense_attn, p.gla, p.other);
    fmt::print("device memory in use: {:.2f} GiB (planner {:.2f} GiB)\n", double(r.device_bytes_in_use()) / double(1ull << 30),
               double(r.plan().total) / double(1ull << 30));
    // Not a complete measurement (no TTFT, no JSON record): exit 1, as a check that failed.
    fmt::print("run: INCOMPLETE (stopped by --time-limit; no record written{})\n",
               dump ? fmt::format("; the incomplete {} removed", a.dump_taps) : "");
    return kExitCheckFailed;
  }
  const double ttft = gen.prefill_s;
  // Decode steps are timed without the per-op CUDA events (they cost host time on every op); the last quarter of
  // them (at most 8) run profiled for the per-class split, whose sum is a step's GPU time: the rest of a step's
  // wall time is host and launch overhead. token_s[i] is the decode step that produced token i. The token just
  // before the first profiled step is left out too: with steps enqueued ahead (--ahead on), that step's enqueue
  // waits for its events (Runner flush_profile), so the token awaited across it arrives a step late.
  std::vector<double> step_ms;
  for (int i = 1; i < a.decode - profiled && i < int(gen.token_s.size()); ++i) step_ms.push_back(gen.token_s[size_t(i)] * 1e3);
  gpu::PhaseTimes dph;  // the profiled decode steps' GPU time per class, ms per token
  {
    const gpu::PhaseTimes all = r.times();
    const double n = std::max(profiled, 1);
    dph.gemm = (all.gemm - prefill_phases.gemm) / n * 1e3;
    dph.select = (all.select - prefill_phases.select) / n * 1e3;
    dph.sparse_attn = (all.sparse_attn - prefill_phases.sparse_attn) / n * 1e3;
    dph.dense_attn = (all.dense_attn - prefill_phases.dense_attn) / n * 1e3;
    dph.gla = (all.gla - prefill_phases.gla) / n * 1e3;
    dph.other = (all.other - prefill_phases.other) / n * 1e3;
  }
  std::vector<double> sorted = step_ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
  // Host time to enqueue a step (median over the same unprofiled steps): when it is well below the step's wall
  // time the GPU is what a step waits on, and launch overhead shows only as gaps between kernels.
  std::vector<double> enq;
  const std::vector<double>& es = r.decode_enqueue_s();
  for (int i = 0; i < a.decode - profiled && i < int(es.size()); ++i) enq.push_back(es[size_t(i)] * 1e3);
  std::sort(enq.begin(), enq.end());
  const double enqueue_ms = enq.empty() ? 0 : enq[enq.size() / 2];
  const bool finite = gen.logits_finite;
  size_t fr = 0, tot = 0;
  gpu::mem_info(&fr, &tot);
  const size_t peak = std::max(r.device_bytes_in_use(), tot - fr);
  const std::string gpu_name = gpu::device_name();
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  const auto& ph = prefill_phases;
  {
    nlohmann::json j = {{"date", date},
                        {"gpu", gpu_name},
                        {"driver", driver_version()},
                        {"revision", git_revision()},
                        {"command", a.command_line},
                        {"config", c.source},
                        {"context", N},
                        {"decode_tokens", a.decode},
                        {"chunk", a.chunk},
                        {"ttft_s", ttft},
                        {"decode_ms_per_token", median},
                        {"decode_host_enqueue_ms", enqueue_ms},
                        {"decode_gemv", a.gemv},
                        {"pdl", a.pdl},
                        {"decode_fusion", fusion_name(o.fusion)},
                        {"decode_ahead", dump ? "off" : a.ahead},
                        {"peak_vram_bytes", peak},
                        {"planner_peak_bytes", r.plan().total},
                        {"weights_load_s", load_s},
                        {"logits_finite", finite},
                        {"phases",
                         {{"gemm_s", ph.gemm},
                          {"select_s", ph.select},
                          {"sparse_attn_s", ph.sparse_attn},
                          {"dense_attn_s", ph.dense_attn},
                          {"gla_s", ph.gla},
                          {"other_s", ph.other}}}};
    if (dump)
      j["dump_taps"] = {{"file", a.dump_taps}, {"taps", a.taps}, {"rows", a.rows.empty() ? "all" : a.rows},
                        {"note", "times include the taps' downloads and writes"}};
    if (profiled > 0)  // fewer than 4 decode steps profile none: then there is no split to record
      j["decode_gpu_ms_per_token"] = {{"gemm_ms", dph.gemm},       {"select_ms", dph.select},
                                      {"sparse_attn_ms", dph.sparse_attn}, {"dense_attn_ms", dph.dense_attn},
                                      {"gla_ms", dph.gla},         {"other_ms", dph.other},
                                      {"total_ms", dph.total()},   {"profiled_steps", profiled}};
    if (a.json) fmt::print("{}\n", j.dump(2));
    if (!a.json_out.empty()) {
      std::FILE* f = std::fopen(a.json_out.c_str(), "w");
      if (!f) fail("{}: cannot write the JSON record", a.json_out);
      fmt::print(f, "{}\n", j.dump(2));
      std::fclose(f);
    }
  }
  if (!a.json) {
    fmt::print("salasim run: {} ({}), context {} + {} decode, prefill chunk {}\n", c.source, w.describe(), N, a.decode, a.chunk);
    fmt::print("device: {}\n", gpu_name);
    fmt::print("memory plan:\n{}", r.plan().table());
    fmt::print("device memory in use: {:.2f} GiB measured (planner {:.2f} GiB + CUDA context)\n",
               double(peak) / double(1ull << 30), double(r.plan().total) / double(1ull << 30));
    fmt::print("weights ready in {:.2f} s\n", load_s);
    fmt::print("TTFT: {:.3f} s for {} tokens ({:.0f} tokens/s)\n", ttft, N, double(N) / ttft);
    fmt::print("  prefill by op class: gemm {:.3f} s, select {:.3f} s, sparse_attn {:.3f} s, dense_attn {:.3f} s, "
               "gla {:.3f} s, other {:.3f} s\n", ph.gemm, ph.select, ph.sparse_attn, ph.dense_attn, ph.gla, ph.other);
    if (!step_ms.empty())
      fmt::print("decode: {} tokens, median {:.2f} ms/token (min {:.2f}, max {:.2f}) over the {} unprofiled steps\n",
                 a.decode, median, sorted.front(), sorted.back(), step_ms.size());
    if (!enq.empty())
      fmt::print("  host time to enqueue a step: median {:.2f} ms ({:.0f}% of the step's wall time)\n", enqueue_ms,
                 median > 0 ? 100.0 * enqueue_ms / median : 0.0);
    if (profiled > 0) {
      // The profiled steps' op intervals include the events' own cost and any gap between ops, so they can add up
      // to more than an unprofiled step's wall time: then the host overhead is below what this can separate.
      const double overhead = median - dph.total();
      fmt::print("  decode GPU time per token ({} profiled steps): {:.2f} ms (gemm {:.2f}, select {:.2f}, sparse_attn {:.2f}, "
                 "dense_attn {:.2f}, gla {:.2f}, other {:.2f}); {}\n",
                 profiled, dph.total(), dph.gemm, dph.select, dph.sparse_attn, dph.dense_attn, dph.gla, dph.other,
                 overhead >= 0 ? fmt::format("host and launch overhead {:.2f} ms", overhead)
                               : std::string("the profiled steps take longer than the unprofiled median (the events' own "
                                             "cost), so the host overhead is not separable here"));
    }
    fmt::print("logits finite: {}\n", finite ? "yes" : "NO");
    if (!dumped.empty()) fmt::print("{}\n", dumped);
  }
  return finite ? 0 : 1;
#endif
}
}  // namespace

void add_run(CLI::App& app, Run& run_out, const std::string& command_line) {
  auto a = std::make_shared<Args>();
  a->command_line = command_line;
  CLI::App* c = app.add_subcommand("run", "Run the CUDA path at a context length: TTFT, decode ms/token, peak VRAM");
  c->add_option("--config", a->config, "config.json")->capture_default_str();
  c->add_option("--context", a->context, "prompt length, e.g. 65536, 64K, 1M, 2048K")->capture_default_str();
  c->add_option("--decode", a->decode, "tokens to generate")->capture_default_str()->check(whole_number(0, 1 << 20));
  c->add_option("--chunk", a->chunk, "prefill chunk (multiple of 64)")->capture_default_str()->check(whole_number(64, kMaxChunk));
  c->add_option("--seed", a->seed, "synthetic weights and prompt seed")->capture_default_str()->check(seed_number());
  c->add_option("--checkpoint", a->checkpoint, "safetensors checkpoint instead of synthetic weights");
  c->add_flag("--plan", a->plan_only, "print the memory plan only (no GPU needed)");
  c->add_option("--time-limit", a->time_limit,
                "stop the prefill after this many seconds and report how far it got (exit 1: no complete measurement)")
      ->check(seconds(1e7));
  c->add_flag("--extrapolate", a->extrapolate,
              "allow context + decode past the config's max_position_embeddings, up to 4x it (1M and 2048K runs of "
              "the released config)");
  c->add_flag("--json", a->json, "machine-readable output (the reports/measured/<hw>/*.json record format)");
  c->add_option("--json-out", a->json_out, "also write that JSON record to this file");
  c->add_option("--gemv", a->gemv, "single-token GEMMs of decode: custom (gpu/gemv.cu) or cublas, to measure the "
                                    "two side by side (docs/performance.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"custom", "cublas"}));
  c->add_option("--pdl", a->pdl, "programmatic dependent launch of every kernel (gpu/pdl.cuh): on or off, to "
                                  "measure what the overlap of launches buys; results are the same bits")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  c->add_option("--fuse", a->fuse, "the decode step's kernel fusions (docs/cuda.md): on (all), off, or a comma list "
                                    "of residual (inside the GEMV that reads its norm), gate (inside the output "
                                    "projection's GEMV), rope (inside the recurrent GLA); results are the same bits")
      ->capture_default_str()
      ->check([](const std::string& v) { return fusion_error(v); });
  c->add_option("--ahead", a->ahead, "decode steps enqueued one ahead of the token awaited, each picking its token on "
                                      "the device (model/generate.hpp): on (default) or off, each step then waiting "
                                      "for its logits on the host; --dump-taps runs off; the tokens are the same")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  c->add_option("--profiler-steps", a->profiler_steps,
                "bracket the first N decode steps with cudaProfilerStart/Stop, for ncu --profile-from-start off "
                "(they must not be the event-profiled last quarter: N <= 3/4 of --decode)")
      ->check(whole_number(0, 1 << 20));
  c->add_option("--prompt-seed", a->prompt_seed,
                "seed of the prompt's random tokens (default: --seed); 7 gives the prompt of `salasim ref --tokens N`")
      ->check(seed_number());
  c->add_option("--dump-taps", a->dump_taps,
                "write the taps chosen by --taps (their prefill rows chosen by --rows) to this HDF5 tap dump as the run "
                "goes (docs/interop.md)");
  c->add_option("--taps", a->taps,
                "taps for --dump-taps: names or globs, comma-separated, matched from the start of a tap's name after "
                "its phase ('*' within one part): layer_03/lightning/gla/out, layer_*/residual/h; a leading / "
                "matches the full name (/prefill/final/norm)");
  c->add_option("--rows", a->rows,
                "prefill rows (prompt positions) for --dump-taps: N, A:B (A .. B-1), A:B:S, comma-separated; negative "
                "counts from the end (-1 = the last prompt token); default all. Decode steps' taps are one row each, "
                "kept whole");
  c->callback([a, &run_out] { run_out = [a] { return run(*a); }; });
}

}  // namespace salasim::cli
