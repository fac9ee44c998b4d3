// The salasim command: parses arguments, runs one subcommand, maps errors to the documented exit codes
// (model/error.hpp, docs/input-limits.md): 0 success, 1 a check failed, 2 bad input or usage or an unavailable
// backend, 3 internal or device error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "model/error.hpp"
#include "model/output_file.hpp"

namespace {

// "salasim frobnicate" (or "salasim op frobnicate") names the word it did not know and the subcommands it does
// (CLI11 alone only says that an argument was not expected). Nested levels are checked where a subcommand
// requires one of its own (model, golden, ruler, op).
bool unknown_subcommand(CLI::App& app, int argc, char** argv) {
  CLI::App* cur = &app;
  std::string path = "salasim";
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    // a leaf's positional arguments (a command whose subcommands are optional, as `op` with --sweep, still names
    // them unless it takes positionals of its own)
    const bool has_subs = !cur->get_subcommands([](CLI::App*) { return true; }).empty();
    const bool positionals = !cur->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
    if (cur != &app && (!has_subs || (cur->get_require_subcommand_min() == 0 && positionals))) return false;
    std::string names;
    CLI::App* next = nullptr;
    for (CLI::App* sub : cur->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() == argv[i]) next = sub;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!next) {
      fmt::print(stderr, "salasim: error: unknown subcommand '{}'{}; expected one of: {} ({} --help lists them)\n",
                 argv[i], cur == &app ? "" : " of " + path, names, path);
      return true;
    }
    cur = next;
    path += " " + cur->get_name();
  }
  return false;
}

// The end of every run: what was printed is flushed and checked (a full disk or a closed pipe on stdout is exit 2,
// not a silent truncation), then the process ends. After a failure it ends with _exit: a write that failed inside
// libhdf5 (a full disk) can leave a file half-closed in the library, and HDF5's own atexit cleanup then crashes on
// it; every output's temporary was already removed by its owner's destructor while the exception unwound.
[[noreturn]] void finish(int code) {
  const bool out_ok = std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (!out_ok) {
    std::fprintf(stderr, "salasim: error: writing standard output failed: %s\n", std::strerror(errno));
    if (code == salasim::kExitOk || code == salasim::kExitCheckFailed) code = salasim::kExitBadInput;
  }
  std::fflush(stderr);
  if (code == salasim::kExitOk || code == salasim::kExitCheckFailed) std::exit(code);
  _exit(code);
}

int report(const std::exception& e) {
  const salasim::ExitReport r = salasim::exit_report(e);
  fmt::print(stderr, "{}\n", r.message);
  return r.code;
}

}  // namespace

int main(int argc, char** argv) {
  salasim::install_output_cleanup();  // SIGINT, SIGTERM, SIGHUP: remove the outputs' temporaries, then end
  salasim::guard_inputs(true);        // no output of this command replaces a file it read
  // The reference's ops return fresh float64 matrices, up to a few hundred MB each ([4608, 4096] is 151 MB), and
  // verify's runs do so from two threads. glibc would map each from the kernel and unmap it when freed (per-thread
  // arenas always do above 64 MB), so every op paid page faults and zeroing: 15% of verify's CPU time. One arena, no
  // mmap and no trimming keep freed blocks for the next op; the heap then stays at the run's peak, which is what
  // verify's peak memory is anyway. (Before any thread exists: arenas are chosen when a thread first allocates.)
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  CLI::App app{"salasim: float64 reference, CUDA path and verification harness for MiniCPM-SALA"};
  app.require_subcommand(1);
  salasim::cli::Run run;
  salasim::cli::add_verify(app, run);
  salasim::cli::add_params(app, run);
  salasim::cli::add_synth_checkpoint(app, run);
  salasim::cli::add_ref(app, run);
  std::string command_line = "salasim";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  salasim::cli::add_run(app, run, command_line);
  salasim::cli::add_model(app, run);
  salasim::cli::add_report(app, run);
  salasim::cli::add_diff(app, run);
  salasim::cli::add_tolerances(app, run);
  salasim::cli::add_golden(app, run);
  salasim::cli::add_explain(app, run);
  salasim::cli::add_op(app, run);
  salasim::cli::add_ruler(app, run, argc, argv);
  salasim::cli::add_env(app, run);
  app.set_version_flag("--version", salasim::cli::version_text(), "print the revision, the build and its libraries");
  salasim::cli::strict_numbers(app);  // every numeric option in plain decimal (cli/common.hpp)
  if (unknown_subcommand(app, argc, argv)) finish(salasim::kExitBadInput);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    finish(rc == 0 ? salasim::kExitOk : salasim::kExitBadInput);
  }
  int code = salasim::kExitBadInput;
  try {
    code = run ? run() : salasim::kExitBadInput;
  } catch (const std::system_error& e) {
    // fmt::print throws when standard output cannot take the text (`salasim diff A B > /dev/full`): that is the
    // user's full disk or closed pipe, exit 2 with finish()'s message, not an internal error.
    code = std::ferror(stdout) ? salasim::kExitBadInput : report(e);
  } catch (const std::exception& e) {
    code = report(e);
  }
  finish(code);
}
