// `salasim op NAME --in X.h5 --out Y.h5 [--backend reference|peer|gpu]`: one op of reference/ops.hpp on tensors a user
// provides (docs/op.md). The op registry (ops/op.hpp) names each op's datasets, shapes, dtypes and attributes
// for --help and for the checks; the output is a tap dump (docs/formats.md) whose datasets are named as the model's
// taps, so `salasim diff` compares the outputs of two backends with the tolerance table. `salasim op NAME --random`
// and `salasim op --sweep` run generated cases (scenarios/op_sweep.hpp) and print their verdicts.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "compare/h5_inputs.hpp"
#include "compare/hdf5_io.hpp"
#include "compare/metrics.hpp"
#include "compare/op_table.hpp"
#include "model/error.hpp"
#include "model/output_file.hpp"
#include "scenarios/op_backends.hpp"
#include "scenarios/op_sweep.hpp"

namespace salasim::cli {

namespace {

struct OpArgs {
  std::string in, out, backend = "reference";
  bool force = false;
  // --random
  bool random = false, perf = false, json = false;
  std::string shape, save_inputs;
  uint64_t seed = 0;
  int rounds = 5;
};

int run_op(const op::OpSpec& spec, const OpArgs& a) {
  namespace fs = std::filesystem;
  // The output place is refused before anything is read or run; an existing file is kept unless --force
  // (model/output_file.hpp).
  if (fs::is_directory(a.out)) fail("--out {}: is a folder; expected a file name", a.out);
  if (const fs::path dir = fs::path(a.out).parent_path(); !dir.empty()) make_output_folder(dir.string(), "--out");
  check_output_file(a.out, a.force, "--out");
  if (a.backend == "gpu") check_gpu();  // before a large file is read
  const op::OpInputs x = op::read_op_inputs(spec, a.in);

  std::string backend = a.backend;
  TapMap taps;
  if (a.backend == "gpu") {
    std::string device;
    taps = run_op_gpu(x, &device);
    backend = "cuda:" + device;
  } else {
    taps = run_op_reference(x, a.backend == "peer");
  }

  DumpInfo info;
  info.scenario = "op " + spec.name;
  info.git_revision = git_revision();
  info.backend = backend;
  info.extra["op"] = spec.name;
  info.extra["op_input"] = a.in;
  // Written beside the target and renamed over it, so a failed write leaves no partial file and --force loses
  // nothing until the new file is whole.
  write_taps(a.out, taps, info, FloatStorage::Float64, false, a.force);
  std::string shapes;
  for (const op::OutputSpec& o : spec.outputs)
    shapes += fmt::format("\n  {} {}", o.tap, format_shape(taps.at(o.tap).shape));
  fmt::print("{} ({}): wrote {} output(s) to {}:{}\n", spec.name, backend, taps.size(), a.out, shapes);
  return kExitOk;
}

// Exit status of generated-input cases: 0 when none fails (skips included), 1 when one does.
int case_exit(const std::vector<OpCaseResult>& rs) {
  for (const OpCaseResult& r : rs)
    if (r.verdict == CaseVerdict::Fail) return kExitCheckFailed;
  return kExitOk;
}

std::string case_totals(const std::vector<OpCaseResult>& rs) {
  int n[3] = {0, 0, 0};
  for (const OpCaseResult& r : rs) ++n[int(r.verdict)];
  return fmt::format("{} case(s): {} OK, {} FAIL, {} SKIP", rs.size(), n[0], n[1], n[2]);
}

nlohmann::json cases_json(const std::vector<OpCaseResult>& rs, const SweepOptions& o) {
  nlohmann::json j = {{"git_revision", git_revision()},
                      {"backend", o.backend},
                      {"seed", o.seed},
                      {"perf", o.perf},
                      {"rounds", o.perf ? o.rounds : 0}};
  j["cases"] = nlohmann::json::array();
  for (const OpCaseResult& r : rs) j["cases"].push_back(case_json(r));
  j["totals"] = case_totals(rs);
  j["pass"] = case_exit(rs) == kExitOk;
  return j;
}

SweepOptions sweep_options(const OpArgs& a) {
  if (a.backend == "reference")
    fail(
        "--backend reference: generated cases gate a backend against the reference; choose peer (the default) or "
        "gpu");
  if (a.backend == "gpu") check_gpu();
  SweepOptions o;
  o.backend = a.backend, o.perf = a.perf, o.rounds = a.rounds, o.seed = a.seed;
  return o;
}

// `salasim op NAME --random`: one generated case.
int run_op_random(const op::OpSpec& spec, const OpArgs& a) {
  if (!a.in.empty() || !a.out.empty())
    fail("salasim op {} --random makes its own inputs: --in and --out do not apply (--save-inputs FILE writes them)",
         spec.name);
  const SweepOptions o = sweep_options(a);
  const op::CaseSizes c = op::parse_case(spec, a.shape);
  if (!a.save_inputs.empty()) {
    check_output_file(a.save_inputs, a.force, "--save-inputs");
    write_input_file(a.save_inputs, op::random_file(spec, c, a.seed), a.force, "--save-inputs");
  }
  const std::vector<OpCaseResult> rs = {run_op_case(spec, c, o, sweep_backend(o.backend))};
  if (a.json) {
    nlohmann::json j = cases_json(rs, o);
    if (!a.save_inputs.empty()) j["inputs_file"] = a.save_inputs;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}\n{}\n", format_case_line(rs[0], a.perf), case_totals(rs));
    if (!a.save_inputs.empty())
      fmt::print("inputs written to {} (salasim op {} --in {} runs them again)\n", a.save_inputs, spec.name,
                 a.save_inputs);
  }
  return case_exit(rs);
}

struct SweepArgs {
  OpArgs common;
  bool sweep = false;
  std::vector<std::string> ops;
};

// `salasim op --sweep`: every op's sweep cases, a line each as it finishes.
int run_sweep(const SweepArgs& a) {
  SweepOptions o = sweep_options(a.common);
  o.ops = a.ops;
  for (const std::string& n : o.ops) op::find_op(n);  // an unknown name before any case runs
  const std::vector<OpCaseResult> rs = run_op_sweep(o, [&](const OpCaseResult& r) {
    if (!a.common.json) fmt::print("{}\n", format_case_line(r, o.perf));
    std::fflush(stdout);
  });
  if (a.common.json) fmt::print("{}\n", cases_json(rs, o).dump(2));
  else fmt::print("{}\n", case_totals(rs));
  return case_exit(rs);
}

void add_random_flags(CLI::App* s, OpArgs& a, bool one_op) {
  if (one_op) {
    s->add_flag("--random", a.random, "generated inputs instead of --in (sizes from --shape, values from --seed)");
    s->add_option("--shape", a.shape, "sizes of the generated case, KEY=SIZE,... (keys below; the rest default)");
    s->add_option("--save-inputs", a.save_inputs, "with --random: also write the generated inputs, a file for --in");
  }
  s->add_option("--seed", a.seed, "seed of the generated values (default 0)")->check(seed_number());
  s->add_flag("--perf", a.perf, "with --random/--sweep: time each backend (median of --rounds after a warm-up)");
  s->add_option("--rounds", a.rounds, "timed runs per backend with --perf (default 5)")->check(whole_number(1, 1000));
  s->add_flag("--json", a.json, "with --random/--sweep: the cases as JSON");
}

// A refusal found while parsing, raised when the command runs (so it exits 2 with salasim's message, as every error
// of the command does).
void refuse(Run& run, std::string why) {
  run = [why] {
    fail("{}", why);
    return kExitBadInput;
  };
}

}  // namespace

void add_op(CLI::App& app, Run& run) {
  CLI::App* c = app.add_subcommand(
      "op",
      "Run one op of the reference (or its peer, or the CUDA path) on tensors from an HDF5 file, or on generated "
      "inputs (docs/op.md)");
  c->require_subcommand(0, 1);
  c->footer(
      "Each op reads datasets at the root of --in and attributes of its root group (names, shapes and dtypes below;\n"
      "float inputs may be float16/32/64, integer inputs any integer type) and writes a tap dump (docs/formats.md)\n"
      "holding its outputs as float64 (int64 for block ids). --backend peer rounds the inputs as the CUDA path stores\n"
      "them and runs the reference's bf16-emulating peer (the one `salasim verify` uses); --backend gpu runs the CUDA\n"
      "kernels. `salasim diff REF.h5 GPU.h5 --peer PEER.h5` gates two outputs with the tolerance table.\n"
      "`salasim op NAME --random` and `salasim op --sweep` draw the inputs themselves and gate the peer (or, with\n"
      "--backend gpu, the CUDA path) against the reference on the spot.\n\n" +
      op::all_ops_help());
  auto sw = std::make_shared<SweepArgs>();
  sw->common.backend = "peer";
  c->add_flag("--sweep", sw->sweep, "run every op's generated cases (or --ops'), OK/FAIL/SKIP a line each");
  c->add_option("--ops", sw->ops, "with --sweep: only these ops (names as below)")->delimiter(',');
  c->add_option("--backend", sw->common.backend, "with --sweep: peer (default) or gpu")
      ->check(CLI::IsMember({"peer", "gpu"}));
  add_random_flags(c, sw->common, false);
  c->callback([c, sw, &run] {
    if (!c->get_subcommands().empty()) {
      if (sw->sweep)
        return refuse(run, "salasim op --sweep runs every op; it takes no op name (--ops NAME,... chooses)");
      for (const char* only : {"--ops", "--backend", "--seed", "--perf", "--rounds", "--json"})
        if (c->count(only))
          return refuse(run,
                        fmt::format("salasim op {} goes with --sweep; after the op's name it sets the op's own", only));
      return;
    }
    if (!sw->sweep) return refuse(run, "salasim op: name an op (salasim op --help lists them) or give --sweep");
    run = [sw] { return run_sweep(*sw); };
  });
  for (const op::OpSpec& spec : op::registry()) {
    auto a = std::make_shared<OpArgs>();
    CLI::App* s = c->add_subcommand(spec.name, spec.summary);
    s->add_option("--in", a->in, "HDF5 file with the op's input datasets and attributes (or --random)");
    s->add_option("--out", a->out, "tap dump to write (refused when it exists, unless --force)");
    s->add_option("--backend", a->backend,
                  "reference (float64, default), peer (bf16-emulating) or gpu (CUDA path); with --random, the one "
                  "gated: peer (default) or gpu")
        ->check(CLI::IsMember({"reference", "peer", "gpu"}));
    s->add_flag("--force", a->force, "replace --out (or --save-inputs) when it exists");
    add_random_flags(s, *a, true);
    s->footer(op::op_help(spec) + op::random_help(spec));
    s->callback([a, s, &run, &spec] {
      if (a->random) {
        if (s->count("--backend") == 0) a->backend = "peer";
        run = [a, &spec] { return run_op_random(spec, *a); };
        return;
      }
      for (const char* only : {"--shape", "--save-inputs", "--perf", "--json", "--rounds", "--seed"})
        if (s->count(only)) return refuse(run, fmt::format("salasim op {}: {} goes with --random", spec.name, only));
      if (a->in.empty() || a->out.empty())
        return refuse(run, fmt::format("salasim op {}: --in and --out are required (or --random for generated inputs)",
                                       spec.name));
      run = [a, &spec] { return run_op(spec, *a); };
    });
  }
}

}  // namespace salasim::cli
