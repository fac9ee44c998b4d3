// `salasim golden record|check`: goldens are the GPU path's taps of a small scenario, kept in tests/golden/ so a CI
// without a GPU notices a kernel change whose numerics were not re-verified (scenarios/golden.hpp).
//   record (needs the GPU backend): verify the GPU on the scenario, then write its golden subset.
//   check (CPU): recompute the reference and the peer, check the golden's tap set and scenario, gate its taps,
//   compare the hash of the GPU path's inputs.
//   inputs: compare gpu/golden_inputs.txt (what that hash covers) with a CUDA build's compiler output; --write
//   rewrites it.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "compare/gpu_inputs.hpp"
#include "compare/report.hpp"
#include "compare/source_hash.hpp"
#include "model/error.hpp"
#include "model/output_file.hpp"
#include "scenarios/golden.hpp"

namespace salasim::cli {

namespace {

namespace fs = std::filesystem;

struct GoldenArgs {
  std::string scenario;
  std::string golden;  // record: --out; check: --golden
  bool all = false;
  bool force = false;  // record: replace an existing --out
  bool json = false;   // check: the result as JSON
  ProgressFlags progress;
};

std::string golden_for(const std::string& scenario_name) { return "tests/golden/" + scenario_name + ".h5"; }

int run_record(const GoldenArgs& a) {
  const std::string scenario_path = data_path(a.scenario);
  std::string why;
  std::unique_ptr<Backend> gpu = make_gpu_backend(&why);
  if (!gpu)
    fail(
        "golden record needs the GPU backend, and there is none here: {}. A golden holds GPU numerics: record it "
        "on a machine with an NVIDIA GPU and a CUDA build: build/salasim golden record --scenario {}",
        why, source_relative(scenario_path));
  const Scenario s = load_scenario(scenario_path);
  const std::string out = a.golden.empty() ? std::string(SALASIM_SOURCE_DIR) + "/" + golden_for(s.name) : a.golden;
  if (fs::path(out).has_parent_path()) make_output_folder(fs::path(out).parent_path().string(), "--out");
  check_output_file(out, a.force, "--out");  // before the GPU run, not after it
  fmt::print("golden record: {} on {} ({})\n", gpu->name(), s.name, source_relative(scenario_path));
  std::shared_ptr<const ref::RefWeights> w = ref::load_ref_weights(s.cfg, s.weights);
  const Truth truth = run_truth(s, TapFilter::all(), w);
  VerifyResult v = verify_backend(s, truth, *gpu);
  fmt::print("{}", format_report(v.report, PrintOptions{true}));
  if (!v.report.pass()) {
    fmt::print(
        "golden record: the GPU run fails verify, so no golden was written (fix it, or see "
        "`salasim verify --backend gpu --scenario {} --dump DIR`)\n",
        source_relative(scenario_path));
    return 1;
  }
  const Golden g =
      make_golden(s, source_relative(scenario_path), v.run, gpu->name(), gpu_source_hash(), git_revision());
  write_golden(out, g, a.force);
  fmt::print("wrote {}: {} taps ({} prefill rows, {} decode steps), {:.1f} MB, device {}, GPU sources {}\n", out,
             g.taps.size(), g.meta.rows.size(), s.decode_steps, double(fs::file_size(out)) / 1e6, g.meta.device,
             g.meta.gpu_hash);
  return 0;
}

int run_check(const GoldenArgs& a) {
  std::string golden = a.golden;
  if (golden.empty()) {
    const std::string sp = data_path(a.scenario.empty() ? "scenarios/tiny-sparse.json" : a.scenario);
    const Scenario s = load_scenario(sp);
    golden = data_path(golden_for(s.name));
    if (!fs::exists(golden))
      fail(
          "no golden for scenario '{}' ({} does not exist): record one on a GPU machine with `build/salasim golden "
          "record --scenario {}`",
          s.name, golden_for(s.name), source_relative(sp));
  }
  const Golden g = read_golden(golden);
  const std::string scenario_path = data_path(a.scenario.empty() ? g.meta.scenario_path : a.scenario);
  const Scenario s = load_scenario(scenario_path);
  const std::string shown = source_relative(golden);
  if (s.name != g.meta.scenario)
    fail("{}: the golden was recorded on scenario '{}', but {} is scenario '{}'", shown, g.meta.scenario,
         source_relative(scenario_path), s.name);
  // Every tap, not only the golden's: what the golden must hold comes from the reference's full run (minutes for
  // the default scenario on a small machine: progress on stderr).
  std::unique_ptr<Progress> progress =
      make_progress({a.progress.progress, a.progress.quiet, a.json}, s, {"reference", "peer"});
  const Truth truth =
      run_truth(s, TapFilter::all(), ref::load_ref_weights(s.cfg, s.weights), progress_hooks(progress.get()));
  if (progress) progress->done();
  GoldenCheck c;
  try {
    c = check_golden(g, s, truth, gpu_source_hash(), shown);
  } catch (const Error& e) {  // e.g. the scenario's prompt changed under the golden: it must be re-recorded
    const std::string again = rerecord_command(g.meta.scenario_path, shown);
    if (a.json) {
      fmt::print("{}\n",
                 nlohmann::json{{"golden", shown}, {"pass", false}, {"error", e.what()}, {"rerecord", again}}.dump(2));
      return 1;
    }
    fmt::print("golden check of {}: FAIL: {}\nRe-record it on a GPU machine:\n  {}\n", shown, e.what(), again);
    return 1;
  }
  if (a.json) {
    const GoldenMeta& m = g.meta;
    nlohmann::json j = {{"golden", shown},
                        {"pass", c.pass()},
                        {"scenario", {{"name", c.scenario}, {"ok", c.scenario_ok}, {"recorded_on", m.scenario}}},
                        {"prefill_rows", {{"ok", c.rows_ok}, {"recorded", m.rows}, {"now", c.rows}}},
                        {"tap_set_ok", c.tap_set_ok()},
                        {"taps", g.taps.size()},
                        {"device", m.device},
                        {"git_revision", m.git_revision},
                        {"created", m.created},
                        {"gpu_sources",
                         {{"recorded", c.recorded_hash},
                          {"now", c.current_hash},
                          {"match", c.hash_ok()},
                          {"changed", c.changed_inputs}}},
                        {"report", report_json(c.report)},
                        {"times",
                         {{"reference", format_times(truth.ref_times)}, {"peer", format_times(truth.peer_times)}}}};
    if (!c.pass()) j["rerecord"] = c.rerecord;
    fmt::print("{}\n", j.dump(2));
    return c.pass() ? 0 : 1;
  }
  fmt::print("{}", format_golden_check(c, g, shown, a.all));
  fmt::print("reference {}; peer {}\n", format_times(truth.ref_times), format_times(truth.peer_times));
  return c.pass() ? 0 : 1;
}

struct InputsArgs {
  std::string build = SALASIM_BINARY_DIR;  // the build this binary comes from
  bool write = false;
};

// The manifest against the build: exit 0 when they agree, 1 (each difference named) when not; --write makes them
// agree and prints the new hash.
int run_inputs(const InputsArgs& a) {
  const std::string root = SALASIM_SOURCE_DIR;
  const std::string manifest_path = root + "/" + kGpuInputsFile;
  const GpuInputs build = gpu_inputs_of_build(a.build, root);
  if (a.write) {
    const std::string text = format_gpu_inputs(build);
    write_text_atomic(manifest_path, text);
    fmt::print("wrote {}: {} files, CUDA flags '{}'; the golden hash is now {}\n", kGpuInputsFile, build.files.size(),
               fmt::join(build.cuda_flags, " "), hash_inputs(root, build).hex);
    return 0;
  }
  const GpuInputs manifest = read_gpu_inputs(manifest_path);
  const std::vector<std::string> diff = diff_gpu_inputs(manifest, build);
  if (diff.empty()) {
    fmt::print(
        "golden inputs: {} lists exactly what the build in {} compiles for the GPU path ({} files, CUDA flags "
        "'{}'); hash {}\n",
        kGpuInputsFile, a.build, manifest.files.size(), fmt::join(manifest.cuda_flags, " "),
        hash_inputs(root, manifest).hex);
    return 0;
  }
  fmt::print("golden inputs: FAIL: {} and the build in {} differ:\n", kGpuInputsFile, a.build);
  for (const std::string& d : diff) fmt::print("  {}\n", d);
  fmt::print(
      "The golden hash must cover what the GPU path compiles: `build/salasim golden inputs --write`, then "
      "re-record the goldens on a GPU (docs/goldens.md).\n");
  return 1;
}

}  // namespace

void add_golden(CLI::App& app, Run& run) {
  CLI::App* g = app.add_subcommand("golden", "Record (on a GPU) or check (on a CPU) the GPU goldens in tests/golden/");
  g->require_subcommand(1);

  auto r = std::make_shared<GoldenArgs>();
  CLI::App* rec =
      g->add_subcommand("record", "Verify the GPU backend on a scenario and write its golden (needs a GPU)");
  rec->add_option("--scenario", r->scenario, "scenario file")->required();
  rec->add_option("--out", r->golden,
                  "golden file (default tests/golden/<scenario>.h5 in the source tree; refused "
                  "when it exists, unless --force)");
  rec->add_flag("--force", r->force, "replace --out when it exists (re-recording a committed golden)");
  rec->callback([r, &run] { run = [r] { return run_record(*r); }; });

  auto c = std::make_shared<GoldenArgs>();
  CLI::App* chk = g->add_subcommand(
      "check",
      "Check a golden against the reference and the current gpu/ sources (CPU; exit 1 with the re-record "
      "command on failure)");
  chk->add_option("--scenario", c->scenario, "scenario file (default: the one the golden was recorded on)");
  chk->add_option("--golden", c->golden, "golden file (default tests/golden/<scenario>.h5)");
  chk->add_flag("--all", c->all, "print every tap, not only the failing ones");
  chk->add_flag("--json", c->json, "the result as JSON: each check, the hashes and the inputs that changed, every tap");
  add_progress_flags(chk, c->progress);
  chk->callback([c, &run] { run = [c] { return run_check(*c); }; });

  auto in = std::make_shared<InputsArgs>();
  CLI::App* inp = g->add_subcommand(
      "inputs",
      "Compare gpu/golden_inputs.txt, the files and flags the golden hash covers, with what a CUDA build's "
      "compiler reports (exit 1 naming each difference); --write rewrites it from the build");
  inp->add_option("--build", in->build, "the CUDA build folder (default: the one this binary was built in)")
      ->capture_default_str();
  inp->add_flag("--write", in->write, "rewrite gpu/golden_inputs.txt from the build");
  inp->callback([in, &run] { run = [in] { return run_inputs(*in); }; });
}

}  // namespace salasim::cli
