// `salasim model memory|latency`: the analytic memory and latency models (reports/) for configs, a hardware
// profile and context lengths, as a text table, --json or --csv.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "model/error.hpp"
#include "model/limits.hpp"
#include "model/memory.hpp"
#include "reports/calibrate.hpp"
#include "reports/context.hpp"
#include "reports/measured.hpp"
#include "reports/paper.hpp"
#include "model/data_path.hpp"
#include "reports/sweep.hpp"

namespace salasim::cli {

namespace {

using namespace salasim::reports;

struct ModelArgs {
  std::vector<std::string> configs;
  std::string hw = "h200";
  std::string contexts = "4K,8K,16K,32K,64K,128K,256K,512K,1024K,2048K";
  std::string weights = "bf16";
  int64_t chunk = WorkspaceParams{}.chunk;
  int64_t decode_tokens = 1024;
  std::string measured;  // default reports/measured/<hw>/
  std::string hold_out;  // contexts whose runs stay out of the fit and are shown as predictions
  bool floor = false;
  bool json = false;
  bool csv = false;
};

Sweep make_sweep(const ModelArgs& a) {
  Sweep s;
  std::vector<std::string> configs = a.configs;
  if (configs.empty()) configs.push_back("scenarios/models/minicpm-sala-9b.json");
  for (const std::string& c : configs) s.models.push_back(load_model(c));
  s.formats = parse_weight_formats(a.weights);
  s.hw = load_hw(a.hw);
  s.contexts = parse_contexts(a.contexts);
  s.ws.chunk = a.chunk;
  s.decode_tokens = a.decode_tokens;
  s.floor = a.floor;
  return s;
}

Table without_command(Table t) {  // the terminal table leaves out the (long) command column
  t.header.pop_back();
  for (auto& r : t.rows) r.pop_back();
  return t;
}

void print_facts(const Sweep& s) {
  for (const Model& m : s.models) {
    std::string line = fmt::format("{} ({}): weights", m.name, source_relative(m.path));
    for (WeightFormat f : s.formats)
      line += fmt::format(" {} {} B", weight_format_name(f), with_commas(model_weight_bytes(m, f)));
    line += fmt::format("; KV {} B/token", with_commas(model_kv_bytes_per_token(m)));
    if (m.kind == ModelKind::Sala)
      line +=
          fmt::format("; K1+K2 {:g} B/token; GLA state {} B", k1_bytes_per_token(m.sala) + k2_bytes_per_token(m.sala),
                      with_commas(gla_state_bytes(m.sala)));
    fmt::print("{}\n", line);
  }
}

int run_memory(const ModelArgs& a) {
  const Sweep s = make_sweep(a);
  if (a.json) {
    fmt::print("{}\n", memory_json(s).dump(2));
    return 0;
  }
  const Table t = memory_table(s);
  if (a.csv) {
    fmt::print("{}", to_csv(t));
    return 0;
  }
  fmt::print("memory model: prefill chunk {}, card {} = {} ({} GiB)\n", s.ws.chunk, s.hw.name, s.hw.gpu,
             gib(s.hw.memory_bytes));
  print_facts(s);
  fmt::print("\n{}", to_text(without_command(t)));
  return 0;
}

// Splits `runs` into those the fit uses and those --hold-out keeps out (an out-of-sample check: the model's
// prediction for a run it was not fitted on). A held-out context with no run is an error.
std::vector<MeasuredRun> hold_out(std::vector<MeasuredRun>& runs, const std::string& list, const std::string& path) {
  std::vector<MeasuredRun> held;
  if (list.empty()) return held;
  for (int64_t ctx : parse_contexts(list)) {
    auto it = std::stable_partition(runs.begin(), runs.end(), [ctx](const MeasuredRun& r) { return r.context != ctx; });
    if (it == runs.end())
      fail("--hold-out {}: no measured run at context {} in {}", list, context_label(ctx), source_relative(path));
    held.insert(held.end(), it, runs.end());
    runs.erase(it, runs.end());
  }
  return held;
}

int run_latency(const ModelArgs& a) {
  const Sweep s = make_sweep(a);
  const std::string measured = a.measured.empty() ? measured_path(s.hw.name) : data_path(a.measured);
  // The default folder may be absent (a card without runs is uncalibrated, and says so); a named one must exist.
  if (!a.measured.empty() && !a.floor && !std::filesystem::exists(measured))
    fail("--measured {}: no such file or folder (the measured runs to calibrate from; --floor ignores them)",
         a.measured);
  if (a.floor && !a.hold_out.empty()) fail("--hold-out needs the measured runs, and --floor ignores them");
  std::vector<MeasuredRun> runs = a.floor ? std::vector<MeasuredRun>{} : load_measured(measured);
  const std::vector<MeasuredRun> held = hold_out(runs, a.hold_out, measured);
  const FitResult fit = fit_runs(runs, s.hw);
  std::string status = a.floor ? "--floor: efficiency factors from the hardware profile (1.0 = the floor)"
                               : fit.summary(s.hw.efficiency);
  if (!held.empty()) status += fmt::format("; held out of the fit: {} run(s) at {}", held.size(), a.hold_out);
  const PaperData paper = load_paper(paper_file());
  if (a.json) {
    nlohmann::json j = latency_json(s, fit.eff, &paper);
    j["calibration"] = status;
    j["measured_file"] = source_relative(measured);
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  const Table t = latency_table(s, fit.eff, &paper);
  if (a.csv) {
    fmt::print("{}", to_csv(t));
    return 0;
  }
  fmt::print("latency model on {} = {}: {:.1f} TFLOP/s bf16, {:.2f} TB/s, {:.3g} exp/s; prefill chunk {}\n", s.hw.name,
             s.hw.gpu, s.hw.bf16_flops / 1e12, s.hw.bandwidth / 1e12, s.hw.exp_per_s, s.ws.chunk);
  fmt::print("{}\n\n{}", status, to_text(without_command(t)));
  if (!runs.empty())
    fmt::print("\nmeasured runs ({}){}:\n{}", source_relative(measured), held.empty() ? "" : ", in the fit",
               to_text(without_command(measured_table(runs, s.hw, fit.eff))));
  if (!held.empty())
    fmt::print("\nheld out of the fit (predicted from the runs above alone):\n{}",
               to_text(without_command(measured_table(held, s.hw, fit.eff))));
  std::vector<MeasuredRun> all = runs;  // a record that says it is not as `salasim run` wrote it, says so here
  all.insert(all.end(), held.begin(), held.end());
  for (const MeasuredRun& r : all)
    if (!r.source.empty()) fmt::print("note: {}: {}\n", source_relative(r.file), r.source);
  return 0;
}

void add_common_options(CLI::App* c, ModelArgs& a) {
  c->add_option("--config", a.configs,
                "config.json, repeatable: MiniCPM-SALA or a dense comparator such as scenarios/models/qwen3-8b.json "
                "(default scenarios/models/minicpm-sala-9b.json)");
  c->add_option("--hw", a.hw, fmt::format("hardware profile: {} (reports/hw/) or a JSON file", reports::known_hw()))
      ->capture_default_str();
  c->add_option("--context", a.contexts, "context lengths, e.g. 4K,64K,1M,2048K (K = 1024, M = 1048576)")
      ->capture_default_str();
  c->add_option("--weights", a.weights, "weight formats: bf16, w4a16 (GPTQ 4-bit, group 128), or both: bf16,w4a16")
      ->capture_default_str();
  c->add_option("--chunk", a.chunk, "prefill chunk in tokens")
      ->check(whole_number(1, kMaxChunk))
      ->capture_default_str();
  auto* json = c->add_flag("--json", a.json, "machine-readable output");
  c->add_flag("--csv", a.csv, "CSV output (with the command that reproduces each row)")->excludes(json);
}

}  // namespace

void add_model(CLI::App& app, Run& run) {
  CLI::App* model = app.add_subcommand("model", "Analytic memory and latency models across context lengths");
  model->require_subcommand(1);

  auto m = std::make_shared<ModelArgs>();
  CLI::App* mem =
      model->add_subcommand("memory", "Peak VRAM: weights, KV cache, compressed keys, GLA state and prefill workspace");
  add_common_options(mem, *m);
  mem->callback([m, &run] { run = [m] { return run_memory(*m); }; });

  auto l = std::make_shared<ModelArgs>();
  CLI::App* lat =
      model->add_subcommand("latency",
                            "TTFT, decode ms/token and end-to-end time from FLOPs, bytes and exponentials per op");
  add_common_options(lat, *l);
  lat->add_option("--decode-tokens", l->decode_tokens, "generated tokens for E2E (the first comes from the prefill)")
      ->check(whole_number(0, kMaxDecodeTokens))
      ->capture_default_str();
  lat->add_option("--measured", l->measured,
                  "measured runs to calibrate from: a folder of salasim run --json-out records, or one file "
                  "(default reports/measured/<hw>/)");
  lat->add_option("--hold-out", l->hold_out,
                  "contexts (e.g. 2048K) whose measured runs stay out of the fit: their rows show the prediction "
                  "from the other runs alone (an out-of-sample check)");
  lat->add_flag("--floor", l->floor, "ignore measured runs: use the profile's efficiency factors (the floor)");
  lat->callback([l, &run] { run = [l] { return run_latency(*l); }; });
  add_model_compare(model, run);
}

}  // namespace salasim::cli
