// `salasim op NAME --in X.h5 --out Y.h5 [--backend reference|peer|gpu]`: one op of reference/ops.hpp on tensors a user
// provides (docs/op.md). The op registry (ops/op.hpp) names each op's datasets, shapes, dtypes and attributes
// for --help and for the checks; the output is a tap dump (docs/formats.md) whose datasets are named as the model's
// taps, so `salasim diff` compares the outputs of two backends with the tolerance table. `salasim op NAME --random`
// and `salasim op --sweep` run generated cases (scenarios/op_sweep.hpp) and print their verdicts; with a user's
// implementation as the backend (exec:, py:, lib:, scenarios/op_user.hpp) they gate it, on generated cases or on
// an input file (docs/check-your-implementation.md); --sensitivity shows what the gate catches
// (scenarios/op_sensitivity.hpp); --junit writes the verdicts for CI (scenarios/op_junit.hpp).
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
#include "scenarios/op_abi.hpp"
#include "scenarios/op_backends.hpp"
#include "scenarios/op_junit.hpp"
#include "scenarios/op_sensitivity.hpp"
#include "scenarios/op_sweep.hpp"
#include "scenarios/op_user.hpp"

namespace salasim::cli {

namespace {

namespace fs = std::filesystem;

struct OpArgs {
  std::string in, out, backend = "reference";
  bool force = false;
  // generated inputs, and the checks of a user's implementation
  bool random = false, perf = false, json = false, sensitivity = false, float64_inputs = false;
  std::string shape, save_inputs, junit, python;
  uint64_t seed = 0;
  int rounds = 5;
};

int run_op(const op::OpSpec& spec, const OpArgs& a) {
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

// Exit status of checked cases: 0 when none fails (skips included), 1 when one does.
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
                      {"inputs", o.drawn == op::Drawn::GpuStores ? "as the GPU stores them" : "float64"},
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
        "--backend reference: generated cases gate a backend against the reference; choose peer (the default), gpu, "
        "or your implementation (exec:, py:, lib:)");
  if (!a.python.empty() && a.backend.rfind("py:", 0) != 0)
    fail("--python {}: goes with --backend py:MODULE[:FUNCTION]", a.python);
  if (a.backend == "gpu") check_gpu();
  SweepOptions o;
  o.backend = a.backend, o.perf = a.perf, o.rounds = a.rounds, o.seed = a.seed, o.python = a.python;
  o.drawn = a.float64_inputs ? op::Drawn::Float64 : op::Drawn::GpuStores;
  o.force = a.force;
  return o;
}

// --junit FILE: refused before anything runs when it cannot be written (model/output_file.hpp).
void check_junit(const OpArgs& a) {
  if (a.junit.empty()) return;
  if (const fs::path dir = fs::path(a.junit).parent_path(); !dir.empty()) make_output_folder(dir.string(), "--junit");
  check_output_file(a.junit, a.force, "--junit");
}

// The verdicts of checked cases: lines (or JSON), totals, the JUnit file; the exit status.
int report_cases(const std::vector<OpCaseResult>& rs, const SweepOptions& o, const OpArgs& a, bool lines_printed) {
  require_some_case_ran(rs, o);
  if (!a.junit.empty()) write_file_atomic(a.junit, junit_cases(rs, o.backend, o.seed), a.force, "--junit");
  if (a.json) {
    nlohmann::json j = cases_json(rs, o);
    if (!a.junit.empty()) j["junit_file"] = a.junit;
    fmt::print("{}\n", j.dump(2));
    return case_exit(rs);
  }
  if (!lines_printed)
    for (const OpCaseResult& r : rs) fmt::print("{}\n", format_case_line(r, o.perf));
  fmt::print("{}\n", case_totals(rs));
  if (!a.junit.empty()) fmt::print("JUnit XML written to {}\n", a.junit);
  return case_exit(rs);
}

int report_sensitivity(const std::vector<SensitivityCase>& cs, const SweepOptions& o, const OpArgs& a,
                       const std::vector<std::string>& ops) {
  if (!a.junit.empty()) write_file_atomic(a.junit, junit_sensitivity(cs, o.seed), a.force, "--junit");
  int missed = 0, faults = 0;
  for (const SensitivityCase& c : cs)
    for (const OutputSensitivity& out : c.outputs)
      for (const FaultResult& f : out.faults) {
        missed += f.outcome == FaultOutcome::Missed;
        faults += f.outcome == FaultOutcome::Caught || f.outcome == FaultOutcome::Missed;
      }
  const std::string totals =
      fmt::format("{} case(s), {} fault(s) injected: {} caught, {} MISSED", cs.size(), faults, faults - missed, missed);
  if (a.json) {
    nlohmann::json j = {{"git_revision", git_revision()}, {"seed", o.seed}, {"totals", totals}, {"pass", missed == 0}};
    j["cases"] = nlohmann::json::array();
    for (const SensitivityCase& c : cs) j["cases"].push_back(sensitivity_json(c));
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{}\n{}", totals, sensitivity_legend(ops));
    if (!a.junit.empty()) fmt::print("JUnit XML written to {}\n", a.junit);
  }
  return missed ? kExitCheckFailed : kExitOk;
}

// `salasim op NAME --random`: one generated case.
int run_op_random(const op::OpSpec& spec, const OpArgs& a) {
  if (!a.in.empty() || !a.out.empty())
    fail("salasim op {} --random makes its own inputs: --in and --out do not apply (--save-inputs FILE writes them)",
         spec.name);
  check_junit(a);
  const op::CaseSizes c = op::parse_case(spec, a.shape);
  const SweepOptions o = sweep_options(a);
  if (!a.save_inputs.empty()) {
    check_output_file(a.save_inputs, a.force, "--save-inputs");
    write_input_file(a.save_inputs, op::random_file(spec, c, a.seed, o.drawn), a.force, "--save-inputs");
  }
  if (a.sensitivity) {
    const std::vector<SensitivityCase> cs = {sensitivity_case(spec, c, o)};
    if (!a.json) fmt::print("{}\n{}\n", sensitivity_header(), format_sensitivity(cs[0]));
    return report_sensitivity(cs, o, a, {spec.name});
  }
  const std::vector<OpCaseResult> rs = {run_op_case(spec, c, o, make_backend(o))};
  const int rc = report_cases(rs, o, a, false);
  if (!a.save_inputs.empty() && !a.json)
    fmt::print("inputs written to {} (salasim op {} --in {} runs them again)\n", a.save_inputs, spec.name,
               a.save_inputs);
  return rc;
}

// `salasim op NAME --in X.h5 --backend exec:|py:|lib:`: a user's implementation on the file's inputs, gated.
int run_op_user_file(const op::OpSpec& spec, const OpArgs& a) {
  check_junit(a);
  const SweepOptions o = sweep_options(a);
  const OpBackend backend = make_backend(o);
  const OpCaseResult r = check_op_case(op::read_op_inputs(spec, a.in), o, backend);
  if (!a.json) {
    fmt::print("{}\n", format_case_line(r, a.perf));
    if (!r.report.rows.empty()) fmt::print("{}", format_report(r.report));
  }
  return report_cases({r}, o, a, true);
}

struct SweepArgs {
  OpArgs common;
  bool sweep = false, abi_header = false;
  std::vector<std::string> ops;
};

// `salasim op --sweep`: every op's sweep cases, a line each as it finishes.
int run_sweep(const SweepArgs& a) {
  check_junit(a.common);
  SweepOptions o = sweep_options(a.common);
  o.ops = a.ops;
  for (const std::string& n : o.ops) op::find_op(n);  // an unknown name before any case runs
  std::vector<std::string> names = o.ops;
  if (names.empty())
    for (const op::OpSpec& s : op::registry()) names.push_back(s.name);
  if (a.common.sensitivity) {
    if (!a.common.json) fmt::print("{}\n", sensitivity_header());
    const std::vector<SensitivityCase> cs = run_sensitivity(o, [&](const SensitivityCase& c) {
      if (!a.common.json) fmt::print("{}\n", format_sensitivity(c));
      std::fflush(stdout);
    });
    return report_sensitivity(cs, o, a.common, names);
  }
  if (!a.common.save_inputs.empty()) {
    make_output_folder(a.common.save_inputs, "--save-inputs");
    o.save_inputs = a.common.save_inputs;
  }
  const std::vector<OpCaseResult> rs = run_op_sweep(o, [&](const OpCaseResult& r) {
    if (!a.common.json) fmt::print("{}\n", format_case_line(r, o.perf));
    std::fflush(stdout);
  });
  const int rc = report_cases(rs, o, a.common, true);
  if (!o.save_inputs.empty() && !a.common.json)
    fmt::print("inputs written to {}/NAME_I.h5 (salasim op NAME --in FILE runs one again)\n", o.save_inputs);
  return rc;
}

// --backend of the sweep and of --random: peer, gpu or a user's implementation; of an op on a file also reference.
CLI::Validator backend_check(bool with_reference) {
  return CLI::Validator(
      [with_reference](std::string& v) -> std::string {
        if (v == "peer" || v == "gpu" || (with_reference && v == "reference") || is_user_spec(v)) return "";
        return fmt::format(
            "'{}' is not a backend: expected {}peer, gpu, exec:'PROGRAM ARGS', py:MODULE[:FUNCTION] or "
            "lib:PATH.so",
            v, with_reference ? "reference, " : "");
      },
      "BACKEND");
}

void add_check_flags(CLI::App* s, OpArgs& a, bool one_op) {
  if (one_op) {
    s->add_flag("--random", a.random, "generated inputs instead of --in (sizes from --shape, values from --seed)");
    s->add_option("--shape", a.shape, "sizes of the generated case, KEY=SIZE,... (keys below; the rest default)");
    s->add_option("--save-inputs", a.save_inputs, "with --random: also write the generated inputs, a file for --in");
  } else {
    s->add_option("--save-inputs", a.save_inputs,
                  "also write each case's inputs into this folder, as NAME_I.h5 (I: the case's place among the op's)");
    s->add_flag("--force", a.force, "replace --save-inputs files and --junit when they exist");
  }
  s->add_option("--seed", a.seed, "seed of the generated values (default 0)")->check(seed_number());
  s->add_flag("--float64-inputs", a.float64_inputs,
              "keep the generated values as drawn (float64) instead of rounding them to the bf16 (fp32) the CUDA path "
              "stores");
  s->add_flag("--perf", a.perf, "with --random/--sweep: time each backend (median of --rounds after a warm-up)");
  s->add_option("--rounds", a.rounds, "timed runs per backend with --perf (default 5)")->check(whole_number(1, 1000));
  s->add_flag("--json", a.json, "with --random/--sweep (or an implementation on --in): the cases as JSON");
  s->add_option("--junit", a.junit, "also write the verdicts as JUnit XML to this file (a testsuite per op)");
  s->add_option("--python", a.python,
                "with --backend py:...: the Python to run it (default: the first of python3 and "
                "/usr/bin/python3 that imports h5py, numpy and the module)");
  s->add_flag("--sensitivity", a.sensitivity,
              "with --random/--sweep: inject named faults into a correct output of each case and report which the "
              "gate catches (no --backend)");
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
      "inputs, or check your own implementation of it (docs/op.md, docs/check-your-implementation.md)");
  c->require_subcommand(0, 1);
  c->footer(
      "Each op reads datasets at the root of --in and attributes of its root group (names, shapes and dtypes below;\n"
      "float inputs may be float16/32/64, integer inputs any integer type) and writes a tap dump (docs/formats.md)\n"
      "holding its outputs as float64 (int64 for block ids). --backend peer rounds the inputs as the CUDA path stores\n"
      "them and runs the reference's bf16-emulating peer (the one `salasim verify` uses); --backend gpu runs the CUDA\n"
      "kernels. `salasim diff REF.h5 GPU.h5 --peer PEER.h5` gates two outputs with the tolerance table.\n"
      "`salasim op NAME --random` and `salasim op --sweep` draw the inputs themselves and gate the peer (or, with\n"
      "--backend gpu, the CUDA path) against the reference on the spot. Your own implementation is the backend with\n"
      "--backend exec:'PROGRAM ARGS' (run with --in X.h5 --out Y.h5), py:MODULE[:FUNCTION] (a Python callable) or\n"
      "lib:PATH.so (the C ABI of include/salasim/op_abi.h): docs/check-your-implementation.md.\n\n" +
      op::all_ops_help());
  auto sw = std::make_shared<SweepArgs>();
  sw->common.backend = "peer";
  c->add_flag("--sweep", sw->sweep, "run every op's generated cases (or --ops'), OK/FAIL/SKIP a line each");
  c->add_option("--ops", sw->ops, "with --sweep: only these ops (names as below)")->delimiter(',');
  c->add_option("--backend", sw->common.backend,
                "with --sweep: peer (default), gpu, or your implementation: exec:'PROGRAM ARGS', py:MODULE[:FUNCTION], "
                "lib:PATH.so")
      ->check(backend_check(false));
  c->add_flag("--abi-header", sw->abi_header,
              "print the C header of the lib: ABI (include/salasim/op_abi.h) this salasim calls");
  add_check_flags(c, sw->common, false);
  c->callback([c, sw, &run] {
    if (!c->get_subcommands().empty()) {
      if (sw->sweep)
        return refuse(run, "salasim op --sweep runs every op; it takes no op name (--ops NAME,... chooses)");
      for (const char* only : {"--ops", "--backend", "--seed", "--perf", "--rounds", "--json", "--junit", "--python",
                               "--sensitivity", "--save-inputs", "--float64-inputs"})
        if (c->count(only))
          return refuse(run,
                        fmt::format("salasim op {} goes with --sweep; after the op's name it sets the op's own", only));
      return;
    }
    if (sw->abi_header) {
      run = [] {
        fmt::print("{}", abi::header());
        return kExitOk;
      };
      return;
    }
    if (!sw->sweep) return refuse(run, "salasim op: name an op (salasim op --help lists them) or give --sweep");
    if (sw->common.sensitivity && c->count("--backend"))
      return refuse(run, "--sensitivity measures the gate on the reference's own outputs; it takes no --backend");
    for (const char* other : {"--save-inputs", "--perf", "--rounds"})
      if (sw->common.sensitivity && c->count(other))
        return refuse(run, fmt::format("--sensitivity runs no backend's cases: {} does not apply", other));
    run = [sw] { return run_sweep(*sw); };
  });
  for (const op::OpSpec& spec : op::registry()) {
    auto a = std::make_shared<OpArgs>();
    CLI::App* s = c->add_subcommand(spec.name, spec.summary);
    s->add_option("--in", a->in, "HDF5 file with the op's input datasets and attributes (or --random)");
    s->add_option("--out", a->out, "tap dump to write (refused when it exists, unless --force)");
    s->add_option("--backend", a->backend,
                  "reference (float64, default), peer (bf16-emulating), gpu (CUDA path), or your implementation: "
                  "exec:'PROGRAM ARGS', py:MODULE[:FUNCTION], lib:PATH.so; with --random, the one gated: peer "
                  "(default), gpu or yours")
        ->check(backend_check(true));
    s->add_flag("--force", a->force, "replace --out (or --save-inputs, --junit) when it exists");
    add_check_flags(s, *a, true);
    s->footer(op::op_help(spec) + op::random_help(spec));
    s->callback([a, s, &run, &spec] {
      const bool user = is_user_spec(a->backend);
      if (a->sensitivity && (!a->random || s->count("--backend")))
        return refuse(run, fmt::format("salasim op {}: --sensitivity goes with --random and takes no --backend "
                                       "(it measures the gate on the reference's own outputs)",
                                       spec.name));
      for (const char* other : {"--perf", "--rounds"})
        if (a->sensitivity && s->count(other))
          return refuse(run, fmt::format("salasim op {}: --sensitivity runs no backend: {} does not apply", spec.name,
                                         other));
      if (a->random) {
        if (s->count("--backend") == 0) a->backend = "peer";
        run = [a, &spec] { return run_op_random(spec, *a); };
        return;
      }
      if (user) {
        for (const char* only : {"--shape", "--save-inputs", "--seed", "--float64-inputs"})
          if (s->count(only)) return refuse(run, fmt::format("salasim op {}: {} goes with --random", spec.name, only));
        if (a->in.empty())
          return refuse(run, fmt::format("salasim op {} --backend {}: give --in FILE (your inputs) or --random",
                                         spec.name, a->backend));
        if (!a->out.empty())
          return refuse(run, fmt::format("salasim op {}: --out writes a backend's outputs (reference, peer, gpu); your "
                                         "implementation is gated against the reference instead, and its outputs "
                                         "are its own",
                                         spec.name));
        run = [a, &spec] { return run_op_user_file(spec, *a); };
        return;
      }
      for (const char* only : {"--shape", "--save-inputs", "--perf", "--json", "--rounds", "--seed", "--junit",
                               "--python", "--float64-inputs"})
        if (s->count(only)) return refuse(run, fmt::format("salasim op {}: {} goes with --random", spec.name, only));
      if (a->in.empty() || a->out.empty())
        return refuse(run, fmt::format("salasim op {}: --in and --out are required (or --random for generated inputs)",
                                       spec.name));
      run = [a, &spec] { return run_op(spec, *a); };
    });
  }
}

}  // namespace salasim::cli
