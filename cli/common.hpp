// Helpers shared by the salasim subcommands: path resolution and number formatting.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compare/hdf5_io.hpp"
#include "model/data_path.hpp"
#include "scenarios/progress.hpp"
#include "scenarios/truth_pair.hpp"

namespace salasim::cli {

// Data paths (config, scenario) resolve through model/data_path.hpp: the current directory, then the source tree.
using salasim::data_path;
using salasim::source_relative;

std::string default_config_path();    // scenarios/models/minicpm-sala-9b.json
std::string default_scenario_path();  // scenarios/tiny-sparse.json, the main command's scenario

// `git describe --always --dirty` of the source tree when the binary was built (so a binary carried to another
// machine still names its code), else of the source tree now, or "" when neither is a git checkout.
std::string git_revision();
std::string with_commas(int64_t v);  // 9,477,203,968

// An option check for a whole number in [lo, hi]: the parser refuses anything else, naming the option and the
// range ("--tokens: 0 is not a whole number in [1, 268435456]"), so a negative or zero count never reaches a
// subcommand as "not given".
CLI::Validator whole_number(int64_t lo, int64_t hi);
// The same for a seed: any whole number in [0, 2^63 - 1] (a negative one would wrap to a huge unsigned seed).
CLI::Validator seed_number();
// A number of seconds in [0, hi].
CLI::Validator seconds(double hi);

// Every numeric option of `app` and its subcommands (CLI11's INT, UINT and FLOAT values) read strictly, before the
// option's own checks: plain decimal only. CLI11 alone reads integers with strtoll(..., 0), so "010" is 8, "0x10"
// 16, " 5" and "+5" pass, "-1" is 2^64 - 1 for an unsigned option and past 64 bits saturates without a word; it
// also takes "nan" and "inf" for floats. Each of those is refused naming the option ("--seed: '-1' is not a whole
// number >= 0 ..."), and an accepted one is rewritten as plain decimal for CLI11 to convert. Called once, by main.
void strict_numbers(CLI::App& app);

// The float64 reference and the peer hold every weight as float64 and the taps they keep: refuse plainly, before
// allocating, a scenario (prompt, decode steps) that cannot fit in this machine's memory (the full 9.48B model's
// weights alone are 76 GB; block scores grow with the square of the prompt), instead of dying half-way. `tap_runs`
// runs keep every tap (verify: 2 or 3; ref: 1); 0 counts one layer's activations, what a run holds at a time.
void check_reference_fits(const Scenario& s, const std::string& who, int tap_runs);
// The same with the bytes of taps held given, and what they are ("taps compared as the runs produce them").
void check_reference_fits(const Scenario& s, const std::string& who, double tap_bytes, const std::string& held);

// Creates `dir` (and its parents) for output, or throws salasim::Error naming `option`, the folder and the reason:
// an unwritable output place is the user's input, not an internal error.
void make_output_folder(const std::string& dir, const std::string& option);

// Refuses (a salasim::Error naming `option` and the folder) a dump of about `bytes` that would not fit in the free
// space of `dir`'s file system, before anything runs.
void check_dump_room(const std::string& dir, double bytes, const std::string& option);

// --dump-taps FILE: refused (an Error naming `option`) before running when FILE names a folder or another
// non-regular file, exists and !force (model/output_file.hpp), its folder cannot be made or written, or the taps
// (`bytes`, 0 when unknown) would not fit there.
void check_dump_target(const std::string& file, double bytes, bool force, const std::string& option = "--dump-taps");

// Progress on stderr for a long command (scenarios/progress.hpp): shown when asked (--progress), or when stderr is a
// terminal and neither --quiet nor --json asks for silence; null when not shown. `runs` names the runs that report
// layers ("reference", "peer").
struct ProgressFlags {
  bool progress = false;  // --progress: shown even when stderr is not a terminal
  bool quiet = false;     // --quiet: never shown
  bool json = false;      // --json: not shown unless --progress
};
std::unique_ptr<Progress> make_progress(const ProgressFlags& f, const Scenario& s, std::vector<std::string> runs);
// The layer hooks of the reference and peer runs (scenarios/truth_pair.hpp) feeding `p` (none when p is null).
PairOptions progress_hooks(Progress* p);
// --progress and --quiet on a subcommand.
void add_progress_flags(CLI::App* c, ProgressFlags& f);

// A dump's file attributes: the scenario's name, this build's revision, `backend` ("reference", "peer", "cuda:H200").
DumpInfo dump_info(const Scenario& s, const std::string& backend);

}  // namespace salasim::cli
