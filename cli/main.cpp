// The salasim command: parses arguments, runs one subcommand, maps errors to exit codes
// (0 success, 1 a check failed, 2 bad input or usage or an unavailable backend, 3 internal error).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "model/error.hpp"

int main(int argc, char** argv) {
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
  salasim::cli::add_ruler(app, run, argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    return run ? run() : 2;
  } catch (const salasim::Error& e) {
    fmt::print(stderr, "salasim: error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "salasim: internal error: {}\n", e.what());
    return 3;
  }
}
