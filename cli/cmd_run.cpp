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
#include "model/output_file.hpp"
#include "model/tap_select.hpp"
#include "model/weights.hpp"
#include "reports/context.hpp"
#include "reports/run_record.hpp"
#include "scenarios/no_gpu.hpp"
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
  bool force = false;    // replace an existing --json-out or --dump-taps
  bool plan_only = false;
  double time_limit = 0;  // seconds; 0 = none
  bool extrapolate = false;
  int profiler_steps = 0;       // decode steps bracketed by cudaProfilerStart/Stop (ncu --profile-from-start off)
  std::string gemv = "custom";  // "custom" or "cublas" for the single-token GEMMs (RunnerOptions::gemv)
  std::string pdl = "on";       // "on" or "off": programmatic dependent launch (RunnerOptions::pdl)
  std::string fuse = "on";      // "on", "off" or a list of residual, gate, rope (fusion_of; RunnerOptions::fusion)
  std::string ahead = "on";     // decode steps enqueued one ahead, the token picked on the device (model/generate.hpp)
  std::string graph = "on";     // decode steps captured and launched as CUDA graphs (RunnerOptions::graph)
  std::string attn_engine = "auto";  // sparse_attn's prefill kernel: auto, tma or cp_async (RunnerOptions::attn_engine)
  int64_t prompt_seed = -1;          // the prompt's random tokens; -1: --seed
  std::string dump_taps;             // tap dump of the chosen taps and rows
  std::string taps;                  // --taps: patterns, comma-separated (model/taps.hpp TapFilter)
  std::string rows;                  // --rows: prefill rows (model/tap_select.hpp RowList); "" = all
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
    fail(
        "--dump-taps {}: give --taps PATTERN (tap names or globs, comma-separated, e.g. layer_*/residual/h or "
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
  check_dump_target(a.dump_taps, d.budget.file_bytes, a.force);
  // The parts of the host memory the recorder needs: one call's largest tap, and the state taps of the phase that
  // holds the most (each phase's are written when it ends).
  std::map<std::string, std::pair<double, int>> state;  // phase -> bytes, taps
  for (const SelectedTap& t : d.budget.taps)
    if (!TapSpec{t.name, t.shape, false}.per_token()) {
      auto& [bytes, n] = state[tap_phase(t.name)];
      bytes += t.file_bytes;
      ++n;
    }
  std::string detail = fmt::format(
      "  one forward call's largest tap, {} ({} rows of --chunk {}), as downloaded and "
      "as float64: {:.2f} GB\n",
      d.budget.largest_download, std::min<int64_t>(a.chunk, N), a.chunk, d.budget.download_bytes / 1e9);
  const auto most = std::max_element(state.begin(), state.end(),
                                     [](const auto& x, const auto& y) { return x.second.first < y.second.first; });
  if (most != state.end())
    detail += fmt::format(
        "  state taps of /{} (the phase that holds the most; each phase's are written when it "
        "ends): {} taps, {:.2f} GB\n",
        most->first, most->second.second, most->second.first / 1e9);
  detail += "Choose fewer taps (a phase: /prefill/...), fewer rows, or a smaller --chunk.";
  check_host_memory(d.budget.held_bytes,
                    fmt::format("--dump-taps {} (--taps {}, --rows {})", a.dump_taps, a.taps,
                                a.rows.empty() ? "all" : a.rows),
                    detail);
  return d;
}

// What a run is asked to do, checked before weights are read or a GPU is asked for: the config, the one context,
// the positions, the output places, the dump's choice; then the weights (a checkpoint's headers against the
// inventory, --plan included).
struct Prepared {
  ModelConfig c;
  int64_t N = 0;
  std::optional<DumpChoice> dump;
  WeightSource w;
};
Prepared prepare(const Args& a) {
  Prepared p;
  p.c = load_config(data_path(a.config));
  const std::vector<int64_t> contexts = reports::parse_contexts(a.context);
  if (contexts.size() != 1) fail("--context {}: give one context length", a.context);
  p.N = contexts[0];
  const int most = a.decode - reports::profiled_steps(a.decode);
  if (a.profiler_steps > most)
    fail(
        "--profiler-steps {}: at most {} with --decode {} (the last quarter of the steps, at most 8, carry CUDA events)",
        a.profiler_steps, most, a.decode);
  check_positions(p.c, p.N, a.decode, a.extrapolate, fmt::format("--context {} --decode {}", a.context, a.decode));
  if (!a.json_out.empty()) {  // refused now, not after the run
    if (const auto dir = std::filesystem::path(a.json_out).parent_path(); !dir.empty())
      make_output_folder(dir.string(), "--json-out");
    check_output_file(a.json_out, a.force, "--json-out");
  }
  p.dump = choose_dump(a, p.c, p.N);  // bad choices refused before weights or a GPU
  p.w = a.checkpoint.empty() ? synthetic_weights(a.seed) : checkpoint_weights(a.checkpoint, tensor_inventory(p.c));
  return p;
}

#ifdef SALASIM_HAVE_CUDA
gpu::RunnerOptions runner_options(const Args& a, const Prepared& p) {
  gpu::RunnerOptions o;
  o.max_context = p.N + a.decode;
  o.chunk = a.chunk;
  o.profile = true;
  o.taps = p.dump && p.dump->scores;  // the pooled block scores' buffers
  o.gemv = a.gemv == "cublas" ? gpu::Gemv::cublas : gpu::Gemv::custom;
  o.pdl = a.pdl == "on";
  o.fusion = fusion_of(a.fuse);
  o.graph = a.graph == "on";
  using E = gpu::AttnArgs::Engine;
  o.attn_engine = a.attn_engine == "tma" ? E::tma : a.attn_engine == "cp_async" ? E::cp_async : E::automatic;
  return o;
}

reports::ClassTimes class_times(const gpu::PhaseTimes& t) {
  return {t.gemm, t.select, t.sparse_attn, t.dense_attn, t.gla, t.other};
}
std::string class_line(const reports::ClassTimes& t, const char* unit) {
  return fmt::format(
      "gemm {:.3f}{u}, select {:.3f}{u}, sparse_attn {:.3f}{u}, dense_attn {:.3f}{u}, gla {:.3f}{u}, "
      "other {:.3f}{u}",
      t[0], t[1], t[2], t[3], t[4], t[5], fmt::arg("u", unit));
}

// --dump-taps: the file, the row selection over it and the recorder, opened before the run.
struct DumpFile {
  std::unique_ptr<TapFileSink> file;
  std::unique_ptr<RowSelectSink> sink;
  std::unique_ptr<TapRecorder> rec;
};
DumpFile open_dump(const Args& a, const Prepared& p) {
  DumpFile d;
  DumpInfo info;
  info.scenario = fmt::format("run {} context {}", std::filesystem::path(p.c.source).stem().string(), p.N);
  info.git_revision = git_revision();
  info.backend = "cuda:" + gpu::device_name();
  info.extra = {{kTapSelectionAttr, a.taps},
                {kRowSelectionAttr, a.rows.empty() ? "all" : a.rows},
                {"config", p.c.source},
                {"weights", p.w.describe()},
                {"prompt",
                 fmt::format("{} random tokens, seed {}", p.N, a.prompt_seed >= 0 ? uint64_t(a.prompt_seed) : a.seed)},
                {"command", a.command_line}};
  d.file = std::make_unique<TapFileSink>(a.dump_taps, info, !p.dump->rows.all, a.force);
  d.sink = std::make_unique<RowSelectSink>(*d.file, p.dump->row_ids, p.dump->rows.all);
  d.rec = std::make_unique<TapRecorder>(TapRecorder{p.dump->filter, nullptr, "prefill", d.sink.get()});
  return d;
}

// What the generation measured: the loop's result, the prefill's and the whole run's times per op class.
struct Measured {
  Generation gen;
  reports::ClassTimes prefill{}, all{};
  std::string dumped;        // the dump's line, when one was written
  nlohmann::json dump_json;  // the record's "dump_taps"
};

// The prompt goes in chunk-sized pieces (the same computation as one call: absolute positions, the mode fixed by
// the total length) so progress can be shown and a time limit can stop a run cleanly between chunks. Generation
// is Runner::generate, the loop `salasim ruler run` uses too: `--decode D` generates D + 1 tokens, the first from
// the prefill's logits, so D decode steps are timed; the last quarter of them (at most 8) with per-op events.
Measured generate_measured(const Args& a, const Prepared& p, gpu::Runner& r) {
  using clock = std::chrono::steady_clock;
  const std::vector<int32_t> prompt =
      random_tokens(a.prompt_seed >= 0 ? uint64_t(a.prompt_seed) : a.seed, p.N, p.c.vocab_size);
  Measured m;
  const int64_t report_every = std::max<int64_t>(a.chunk, p.N / 16);
  int64_t next_report = report_every;
  const auto t_prefill = clock::now();
  GenerateOptions go;
  go.max_new = int64_t(a.decode) + 1;
  go.piece = a.chunk;
  go.ahead = a.ahead == "on";
  go.on_prefill = [&](int64_t done, int64_t total) {
    const double el = std::chrono::duration<double>(clock::now() - t_prefill).count();
    if (done >= next_report || done == total) {
      fmt::print(stderr, "  prefill {:>9}/{} tokens  {:8.2f} s  ({})\n", done, total, el,
                 class_line(class_times(r.times()), ""));
      std::fflush(stderr);
      next_report += report_every;
    }
    if (done == total) {
      m.prefill = class_times(r.times());
      r.set_profile(false);
    }
    return !(a.time_limit > 0 && el > a.time_limit);
  };
  const int profiled = reports::profiled_steps(a.decode);
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
  if (!p.dump) {
    m.gen = r.generate(prompt, go);
  } else {  // the same loop (model/generate.hpp) with a tap recorder on every call, into the file
    DumpFile d = open_dump(a, p);
    struct TappedSteps {  // the Runner as generate_loop wants it, recording taps (Runner::generate records none)
      gpu::Runner& r;
      TapRecorder* rec;
      void begin_prefill(int64_t n) { r.begin_prefill(n); }
      std::vector<float> prefill_piece(const std::vector<int32_t>& t) { return r.prefill_piece(t, rec); }
      std::vector<float> decode(int32_t t) { return r.decode(t, rec); }
      std::vector<LayerSelection> last_selection(bool scores) const { return r.last_selection(scores); }
    };
    TappedSteps steps{r, d.rec.get()};
    m.gen = generate_loop(steps, prompt, go);
    if (!m.gen.prefill_stopped) {  // a stopped run's dump is never closed, so it never appears
      const int n = d.sink->close();
      std::error_code ec;
      const auto bytes = std::filesystem::file_size(a.dump_taps, ec);
      m.dumped = fmt::format(
          "wrote {} taps ({}) to {}: {:.1f} MB; host memory held by the recorder at most {:.1f} MB "
          "(times above include the taps' downloads and writes)",
          n, p.dump->rows.all ? "all rows" : fmt::format("prefill rows {}", a.rows), a.dump_taps,
          ec ? 0.0 : double(bytes) / 1e6, d.sink->peak_held_bytes() / 1e6);
      m.dump_json = {{"file", a.dump_taps},
                     {"taps", a.taps},
                     {"rows", a.rows.empty() ? "all" : a.rows},
                     {"note", "times include the taps' downloads and writes"}};
    }
  }
  range(false);
  m.all = class_times(r.times());
  return m;
}

// A prefill stopped by --time-limit: how far it got. Not a complete measurement (no TTFT, no record): exit 1.
int report_stopped(const Args& a, const Prepared& p, const Measured& m, const gpu::Runner& r) {
  const double el = m.gen.prefill_s;
  const int64_t done = r.len();
  fmt::print("prefill STOPPED by --time-limit {} s at position {} of {} after {:.2f} s ({:.0f} tokens/s)\n",
             a.time_limit, done, p.N, el, double(done) / el);
  fmt::print("  by op class: {}\n", class_line(m.all, " s"));
  fmt::print("device memory in use: {:.2f} GiB (planner {:.2f} GiB)\n",
             double(r.device_bytes_in_use()) / double(1ull << 30), double(r.plan().total) / double(1ull << 30));
  fmt::print("run: INCOMPLETE (stopped by --time-limit; no record written{})\n",
             p.dump ? fmt::format("; the incomplete {} never written", a.dump_taps) : "");
  return kExitCheckFailed;
}

reports::RunRecord make_record(const Args& a, const Prepared& p, const Measured& m, const gpu::Runner& r,
                               const gpu::RunnerOptions& o, double load_s) {
  reports::RunRecord rec;
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  rec.date = date;
  rec.gpu = gpu::device_name();
  rec.driver = driver_version();
  rec.revision = git_revision();
  rec.command = a.command_line;
  rec.config = p.c.source;
  rec.context = p.N;
  rec.decode_tokens = a.decode;
  rec.chunk = a.chunk;
  rec.ttft_s = m.gen.prefill_s;
  rec.decode = reports::decode_stats(m.gen.token_s, r.decode_enqueue_s(), a.decode);
  rec.gemv = a.gemv;
  rec.pdl = a.pdl;
  rec.fusion = fusion_name(o.fusion);
  rec.ahead = p.dump ? "off" : a.ahead;
  rec.attn_engine = a.attn_engine;
  rec.graph = p.dump ? "off" : a.graph;
  const gpu::DecodeGraphStats gs = r.decode_graph_stats();
  rec.graph_updated = gs.updated, rec.graph_instantiated = gs.instantiated;
  const gpu::AttnTileStats ts = r.attn_tile_stats();
  rec.tile_loaded = ts.loaded, rec.tile_attended = ts.attended, rec.tiles = ts.tiles, rec.tile_queries = ts.queries;
  size_t fr = 0, tot = 0;
  gpu::mem_info(&fr, &tot);
  rec.peak_vram_bytes = int64_t(std::max(r.device_bytes_in_use(), tot - fr));
  rec.planner_peak_bytes = int64_t(r.plan().total);
  rec.weights_load_s = load_s;
  rec.logits_finite = m.gen.logits_finite;
  rec.prefill_s = m.prefill;
  if (rec.decode.profiled > 0) {  // the profiled decode steps' GPU time per class, ms per token
    reports::ClassTimes d{};
    for (int k = 0; k < reports::kOpClasses; ++k)
      d[size_t(k)] = (m.all[size_t(k)] - m.prefill[size_t(k)]) / rec.decode.profiled * 1e3;
    rec.decode_gpu_ms = d;
  }
  rec.dump_taps = m.dump_json;
  return rec;
}

void print_run(const Args& a, const Prepared& p, const reports::RunRecord& rec, const gpu::Runner& r,
               const std::string& dumped) {
  const reports::DecodeStats& d = rec.decode;
  fmt::print("salasim run: {} ({}), context {} + {} decode, prefill chunk {}\n", p.c.source, p.w.describe(), p.N,
             a.decode, a.chunk);
  fmt::print("device: {}\n", rec.gpu);
  fmt::print("memory plan:\n{}", r.plan().table());
  fmt::print("device memory in use: {:.2f} GiB measured (planner {:.2f} GiB + CUDA context)\n",
             double(rec.peak_vram_bytes) / double(1ull << 30), double(rec.planner_peak_bytes) / double(1ull << 30));
  fmt::print("weights ready in {:.2f} s\n", rec.weights_load_s);
  fmt::print("TTFT: {:.3f} s for {} tokens ({:.0f} tokens/s)\n", rec.ttft_s, p.N, double(p.N) / rec.ttft_s);
  fmt::print("  prefill by op class: {}\n", class_line(rec.prefill_s, " s"));
  if (!d.step_ms.empty())
    fmt::print("decode: {} tokens, median {:.2f} ms/token (min {:.2f}, max {:.2f}) over the {} unprofiled steps\n",
               a.decode, d.median_ms, d.min_ms, d.max_ms, d.step_ms.size());
  const int64_t graph_steps = rec.graph_updated + rec.graph_instantiated;  // DecodeGraphStats::steps()
  if (!d.enqueue_ms.empty())
    fmt::print("  host time to enqueue a step: median {:.2f} ms ({:.0f}% of the step's wall time){}\n",
               d.enqueue_median_ms, d.median_ms > 0 ? 100.0 * d.enqueue_median_ms / d.median_ms : 0.0,
               graph_steps > 0 ? fmt::format("; {} steps as CUDA graphs, {} updated, {} instantiated", graph_steps,
                                             rec.graph_updated, rec.graph_instantiated)
                               : std::string());
  if (rec.decode_gpu_ms) {
    // The profiled steps' op intervals include the events' own cost and any gap between ops, so they can add up
    // to more than an unprofiled step's wall time: then the host overhead is below what this can separate.
    const reports::ClassTimes& g = *rec.decode_gpu_ms;
    const double overhead = d.median_ms - reports::class_total(g);
    fmt::print(
        "  decode GPU time per token ({} profiled steps): {:.2f} ms (gemm {:.2f}, select {:.2f}, sparse_attn {:.2f}, "
        "dense_attn {:.2f}, gla {:.2f}, other {:.2f}); {}\n",
        d.profiled, reports::class_total(g), g[0], g[1], g[2], g[3], g[4], g[5],
        overhead >= 0 ? fmt::format("host and launch overhead {:.2f} ms", overhead)
                      : std::string("the profiled steps take longer than the unprofiled median (the events' own "
                                    "cost), so the host overhead is not separable here"));
  }
  if (const nlohmann::json t = reports::tile_stats_json(rec); !t.is_null())
    fmt::print(
        "  sparse prefill tiles ({} engine): {:.2f} queries a tile loaded {:.1f} distinct blocks, {:.1f} a query: each "
        "loaded block served {:.2f} queries\n",
        a.attn_engine, t["queries_per_tile"].get<double>(), t["blocks_loaded_per_tile"].get<double>(),
        t["blocks_per_query"].get<double>(), t["queries_per_loaded_block"].get<double>());
  fmt::print("logits finite: {}\n", rec.logits_finite ? "yes" : "NO");
  if (!dumped.empty()) fmt::print("{}\n", dumped);
}
#endif

int run(const Args& a) {
  const Prepared p = prepare(a);
#ifndef SALASIM_HAVE_CUDA
  fail(
      "salasim run needs the CUDA path, and this build has none (configure with nvcc on PATH, SALASIM_CUDA=ON); "
      "the memory plan without it: salasim model memory --config {} --context {}",
      a.config, p.N);
#else
  const gpu::RunnerOptions o = runner_options(a, p);
  if (a.plan_only) {
    fmt::print("memory plan for context {} + {} decode, chunk {}:\n{}", p.N, a.decode, a.chunk,
               gpu::plan_memory(p.c, o).table());
    if (p.dump)
      fmt::print("--dump-taps {}: {} taps, {:.3f} GB on disk, {:.3f} GB of host memory at most\n", a.dump_taps,
                 p.dump->budget.taps.size(), p.dump->budget.file_bytes / 1e9, p.dump->budget.held_bytes / 1e9);
    return 0;
  }
  std::string why;
  if (!gpu::available(&why)) fail("salasim run needs a GPU: {}", plain_no_gpu_reason(why));
  const auto t0 = std::chrono::steady_clock::now();
  gpu::Runner r(p.c, p.w, o);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Measured m = generate_measured(a, p, r);
  if (m.gen.prefill_stopped) return report_stopped(a, p, m, r);
  const reports::RunRecord rec = make_record(a, p, m, r, o, load_s);
  const nlohmann::json j = reports::run_record_json(rec);
  if (a.json) fmt::print("{}\n", j.dump(2));
  if (!a.json_out.empty()) write_file_atomic(a.json_out, j.dump(2) + "\n", a.force, "--json-out");
  if (!a.json) print_run(a, p, rec, r, m.dumped);
  return rec.logits_finite ? 0 : 1;
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
  c->add_option("--chunk", a->chunk, "prefill chunk (multiple of 64)")
      ->capture_default_str()
      ->check(whole_number(64, kMaxChunk));
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
  c->add_option("--json-out", a->json_out,
                "also write that JSON record to this file (refused when it exists, unless --force)");
  c->add_flag("--force", a->force, "replace --json-out and --dump-taps when they exist");
  c->add_option("--gemv", a->gemv,
                "single-token GEMMs of decode: custom (gpu/gemv.cu) or cublas, to measure the "
                "two side by side (docs/performance.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"custom", "cublas"}));
  c->add_option("--pdl", a->pdl,
                "programmatic dependent launch of every kernel (gpu/pdl.cuh): on or off, to "
                "measure what the overlap of launches buys; results are the same bits")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  c->add_option("--fuse", a->fuse,
                "the decode step's kernel fusions (docs/cuda.md): on (all), off, or a comma list "
                "of residual (inside the GEMV that reads its norm), gate (inside the output "
                "projection's GEMV), rope (inside the recurrent GLA); results are the same bits")
      ->capture_default_str()
      ->check([](const std::string& v) { return fusion_error(v); });
  c->add_option("--ahead", a->ahead,
                "decode steps enqueued one ahead of the token awaited, each picking its token on "
                "the device (model/generate.hpp): on (default) or off, each step then waiting "
                "for its logits on the host; --dump-taps runs off; the tokens are the same")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  c->add_option("--graph", a->graph,
                "each unprofiled decode step captured as one CUDA graph and launched as one (gpu/runner.hpp): on "
                "(default) or off, each kernel then launched from the host; --dump-taps runs off; the same bits")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  c->add_option("--attn-engine", a->attn_engine,
                "sparse_attn's prefill kernel (gpu/sparse_attn.hpp): auto (the tensor-copy ring on Hopper, else the "
                "cp.async tile kernel), tma or cp_async, to measure the two side by side; the same bits but for the "
                "blocks the ring takes on the warpgroup MMA, which may round otherwise in the last bit")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "tma", "cp_async"}));
  c->add_option("--profiler-steps", a->profiler_steps,
                "bracket the first N decode steps with cudaProfilerStart/Stop, for ncu --profile-from-start off "
                "(they must not be the event-profiled last quarter: N <= 3/4 of --decode)")
      ->check(whole_number(0, 1 << 20));
  c->add_option("--prompt-seed", a->prompt_seed,
                "seed of the prompt's random tokens (default: --seed); 7 gives the prompt of `salasim ref --tokens N`")
      ->check(seed_number());
  c->add_option(
      "--dump-taps", a->dump_taps,
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
