// `salasim op NAME --in X.h5 --out Y.h5 [--backend reference|peer|gpu]`: one op of reference/ops.hpp on tensors a user
// provides (docs/op.md). The op table (compare/op_table.hpp) names each op's datasets, shapes, dtypes and attributes
// for --help and for the checks; the output is a tap dump (docs/formats.md) whose datasets are named as the model's
// taps, so `salasim diff` compares the outputs of two backends with the tolerance table.
#include <fmt/format.h>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/op_backends.hpp"
#include "compare/hdf5_io.hpp"
#include "compare/metrics.hpp"
#include "model/error.hpp"
#include "model/output_file.hpp"

namespace salasim::cli {

namespace {

struct OpArgs {
  std::string in, out, backend = "reference";
  bool force = false;
};

int run_op(const op::OpSpec& spec, const OpArgs& a) {
  namespace fs = std::filesystem;
  // The output place is refused before anything is read or run; an existing file is kept unless --force
  // (model/output_file.hpp).
  if (fs::is_directory(a.out)) fail("--out {}: is a folder; expected a file name", a.out);
  if (const fs::path dir = fs::path(a.out).parent_path(); !dir.empty()) make_output_folder(dir.string(), "--out");
  check_output_file(a.out, a.force, "--out");
#ifdef SALASIM_HAVE_CUDA
  if (a.backend == "gpu") check_gpu();  // before a large file is read
#else
  if (a.backend == "gpu")
    fail(
        "salasim op --backend gpu needs the CUDA path, and this build has none (configure with nvcc on PATH, "
        "SALASIM_CUDA=ON); --backend reference and peer run here");
#endif
  const op::OpInputs x = op::read_op_inputs(spec, a.in);

  std::string backend = a.backend;
  TapMap taps;
  if (a.backend == "gpu") {
#ifdef SALASIM_HAVE_CUDA
    std::string device;
    taps = run_op_gpu(x, &device);
    backend = "cuda:" + device;
#endif
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

}  // namespace

void add_op(CLI::App& app, Run& run) {
  CLI::App* c = app.add_subcommand(
      "op", "Run one op of the reference (or its peer, or the CUDA path) on tensors from an HDF5 file (docs/op.md)");
  c->require_subcommand(1);
  c->footer(
      "Each op reads datasets at the root of --in and attributes of its root group (names, shapes and dtypes below;\n"
      "float inputs may be float16/32/64, integer inputs any integer type) and writes a tap dump (docs/formats.md)\n"
      "holding its outputs as float64 (int64 for block ids). --backend peer rounds the inputs as the CUDA path stores\n"
      "them and runs the reference's bf16-emulating peer (the one `salasim verify` uses); --backend gpu runs the CUDA\n"
      "kernels. `salasim diff REF.h5 GPU.h5 --peer PEER.h5` gates two outputs with the tolerance table.\n\n" +
      op::all_ops_help());
  for (const op::OpSpec& spec : op::op_table()) {
    auto a = std::make_shared<OpArgs>();
    CLI::App* s = c->add_subcommand(spec.name, spec.summary);
    s->add_option("--in", a->in, "HDF5 file with the op's input datasets and attributes")->required();
    s->add_option("--out", a->out, "tap dump to write (refused when it exists, unless --force)")->required();
    s->add_option("--backend", a->backend, "reference (float64, default), peer (bf16-emulating) or gpu (CUDA path)")
        ->check(CLI::IsMember({"reference", "peer", "gpu"}));
    s->add_flag("--force", a->force, "replace --out when it exists");
    s->footer(op::op_help(spec));
    s->callback([a, &run, &spec] { run = [a, &spec] { return run_op(spec, *a); }; });
  }
}

}  // namespace salasim::cli
