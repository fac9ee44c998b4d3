// Each subcommand registers itself on the CLI11 app; its callback returns the process exit code.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace salasim::cli {

using Run = std::function<int()>;

// Each adds one subcommand and sets `run` when that subcommand is chosen.
void add_params(CLI::App& app, Run& run);
void add_synth_checkpoint(CLI::App& app, Run& run);
void add_ref(CLI::App& app, Run& run);
void add_run(CLI::App& app, Run& run, const std::string& command_line);  // salasim run (CUDA)
void add_model(CLI::App& app, Run& run);                                 // salasim model memory|latency|compare
void add_model_compare(CLI::App* model, Run& run);                       // salasim model compare (measured)
void add_report(CLI::App& app, Run& run);                                // salasim report
void add_diff(CLI::App& app, Run& run);
void add_tolerances(CLI::App& app, Run& run);
void add_verify(CLI::App& app, Run& run);                        // salasim verify: the main job
void add_golden(CLI::App& app, Run& run);                        // salasim golden record|check
void add_explain(CLI::App& app, Run& run);                       // salasim explain OP
void add_op(CLI::App& app, Run& run);                            // salasim op NAME: one op on a user's tensors
void add_ruler(CLI::App& app, Run& run, int argc, char** argv);  // salasim ruler generate|run|report|train-tokenizer
void add_env(CLI::App& app, Run& run);                           // salasim env: this binary and this machine
std::string version_text();                                      // salasim --version: revision, build, libraries

}  // namespace salasim::cli
