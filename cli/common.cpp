// Path resolution and formatting for the CLI.
#include "cli/common.hpp"

#include <unistd.h>

#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "build_revision.hpp"  // generated: SALASIM_BUILD_REVISION (cli/build_revision.cmake)
#include "model/data_path.hpp"
#include "reports/table.hpp"
#include "model/error.hpp"
#include "model/output_file.hpp"
#include "model/inventory.hpp"
#include "model/json_field.hpp"
#include "model/machine_memory.hpp"
#include "scenarios/verify.hpp"

namespace salasim::cli {

std::string default_config_path() { return data_path("scenarios/models/minicpm-sala-9b.json"); }

std::string default_scenario_path() { return data_path("scenarios/tiny-sparse.json"); }

std::string git_revision() {
  // The build's revision names the code that runs; asking git now is the fallback for a build made outside git.
  if (std::string(SALASIM_BUILD_REVISION).size() > 0) return SALASIM_BUILD_REVISION;
  const std::string cmd = std::string("git -C '") + SALASIM_SOURCE_DIR + "' describe --always --dirty 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  char buf[256];
  std::string out;
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string with_commas(int64_t v) { return reports::commas(v); }

CLI::Validator whole_number(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
          return fmt::format("'{}' is not a whole number in [{}, {}]", excerpt(s), lo, hi);
        return "";
      },
      fmt::format("INT in [{}, {}]", lo, hi));
}

CLI::Validator seed_number() { return whole_number(0, INT64_MAX).name("SEED"); }

CLI::Validator seconds(double hi) {
  return CLI::Validator(
      [hi](std::string& s) -> std::string {
        double v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size() || !(v >= 0 && v <= hi))
          return fmt::format("'{}' is not a number of seconds in [0, {:g}]", excerpt(s), hi);
        return "";
      },
      fmt::format("SECONDS in [0, {:g}]", hi));
}

namespace {

// The numeric kinds CLI11 names an option's value by ("INT", "UINT", "FLOAT"), before any validator's ":...".
enum class NumberKind { None, Int, Uint, Float };

NumberKind number_kind(const CLI::Option& o) {
  if (o.get_type_size() <= 0) return NumberKind::None;  // a flag
  const std::string t = o.get_type_name();
  const std::string base = t.substr(0, t.find(':'));
  if (base == "INT") return NumberKind::Int;
  if (base == "UINT") return NumberKind::Uint;
  if (base == "FLOAT") return NumberKind::Float;
  return NumberKind::None;
}

// The strict form of one number, rewritten to plain decimal; "" when it is one, else why not. `ranged`: the option
// has its own range check after this one (a described validator), which then names the range of a negative value
// of an unsigned option; without one, the negative value is refused here.
std::string strict_number(std::string& s, NumberKind kind, bool ranged) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (kind == NumberKind::Float) {
    double v = 0;
    const auto [end, ec] = std::from_chars(b, e, v);  // decimal or exponent form: no hex, no sign '+', no spaces
    if (ec != std::errc() || end != e || !std::isfinite(v))
      return fmt::format("'{}' is not a finite decimal number", excerpt(s));
    s = fmt::format("{}", v);
    return "";
  }
  const bool digits =
      !s.empty() && s.find_first_not_of("0123456789", s[0] == '-' ? 1 : 0) == std::string::npos && s != "-";
  if (kind == NumberKind::Uint && ranged && digits && s[0] == '-') kind = NumberKind::Int;
  if (!digits || (kind == NumberKind::Uint && s[0] == '-'))
    return fmt::format(
        "'{}' is not a whole number{} (decimal digits only: no sign '+', fraction, exponent, hex or "
        "spaces)",
        excerpt(s), kind == NumberKind::Uint ? " >= 0" : "");
  if (kind == NumberKind::Uint) {
    uint64_t v = 0;
    if (std::from_chars(b, e, v).ec != std::errc()) return fmt::format("'{}' does not fit in 64 bits", excerpt(s));
    s = std::to_string(v);
  } else {
    int64_t v = 0;
    if (std::from_chars(b, e, v).ec != std::errc()) return fmt::format("'{}' does not fit in 64 bits", excerpt(s));
    s = std::to_string(v);
  }
  return "";
}

void strict_numbers_in(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    const NumberKind kind = number_kind(*o);
    if (kind == NumberKind::None) continue;
    const bool ranged = o->get_type_name().find(':') != std::string::npos;
    // transform() runs first, before the option's own checks, and may rewrite the text they and CLI11 then read.
    o->transform(CLI::Validator([kind, ranged](std::string& s) { return strict_number(s, kind, ranged); }, ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) strict_numbers_in(*sub);
}

}  // namespace

void strict_numbers(CLI::App& app) { strict_numbers_in(app); }

void check_reference_fits(const Scenario& s, const std::string& who, int tap_runs) {
  const double all_taps = run_tap_bytes(s);
  const double taps = tap_runs > 0 ? tap_runs * all_taps : all_taps / s.cfg.num_hidden_layers;
  check_reference_fits(s, who, taps,
                       tap_runs > 0 ? fmt::format("taps of {} run(s)", tap_runs) : "one layer's activations");
}

void check_reference_fits(const Scenario& s, const std::string& who, double taps, const std::string& held) {
  const int64_t params = count_params(s.cfg, tensor_inventory(s.cfg)).total;
  const double weights = double(params) * 8;
  // what this process may use: physical memory, or less under a cgroup limit or ulimit -v (model/machine_memory.hpp)
  const MachineMemory mm = machine_memory();
  const double have = double(mm.usable);
  if (have > 0 && weights + taps > 0.8 * have)
    fail(
        "{} needs {:.1f} GB here ({:.1f} GB of float64 weights for {} parameters of {}, {:.1f} GB of {} for {} "
        "tokens and {} decode steps), and this process may use {:.1f} GB ({}). Long contexts are checked with --spot "
        "N and the GPU backend; a shorter prompt with --tokens N",
        who, (weights + taps) / 1e9, weights / 1e9, with_commas(params), source_relative(s.cfg.source), taps / 1e9,
        held, s.prompt.size(), s.decode_steps, have / 1e9, mm.limited_by);
}

void make_output_folder(const std::string& dir, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("{} {}: cannot create the folder ({})", option, dir, ec.message());
  if (!fs::is_directory(dir, ec)) fail("{} {}: exists and is not a folder", option, dir);
  if (access(dir.c_str(), W_OK) != 0) fail("{} {}: the folder is not writable ({})", option, dir, std::strerror(errno));
}

void check_dump_room(const std::string& dir, double bytes, const std::string& option) {
  std::error_code ec;
  const std::filesystem::space_info room = std::filesystem::space(dir, ec);
  if (!ec && bytes > double(room.available))
    fail(
        "{} {}: the taps need about {:.2f} GB (float64, estimated from the scenario's prompt and decode steps), and "
        "the folder's file system has {:.2f} GB free",
        option, dir, bytes / 1e9, double(room.available) / 1e9);
}

void check_dump_target(const std::string& file, double bytes, bool force, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(file, ec)) fail("{} {}: is a folder; expected a file name (taps.h5)", option, file);
  const fs::path parent = fs::path(file).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  make_output_folder(dir, option);
  check_output_file(file, force, option);
  check_dump_room(dir, bytes, option);
}

DumpInfo dump_info(const Scenario& s, const std::string& backend) {
  DumpInfo info;
  info.scenario = s.name;
  info.git_revision = git_revision();
  info.backend = backend;
  return info;
}

std::unique_ptr<Progress> make_progress(const ProgressFlags& f, const Scenario& s, std::vector<std::string> runs) {
  const bool tty = isatty(STDERR_FILENO) != 0;
  const bool on = !f.quiet && (f.progress || (!f.json && tty));
  if (!on) return nullptr;
  return std::make_unique<Progress>(s, std::move(runs), stderr, tty);
}

PairOptions progress_hooks(Progress* p) {
  PairOptions o;
  if (p)
    o.on_layer = [p](bool peer, const ref::RefModel& m, int layer, int64_t rows) {
      p->layer_done(peer ? 1 : 0, m.phase, m.len, rows, layer);
    };
  return o;
}

void add_progress_flags(CLI::App* c, ProgressFlags& f) {
  c->add_flag("--progress", f.progress,
              "progress on stderr (phase, prefill piece and layer, elapsed, estimate left) even when stderr is not a "
              "terminal or with --json; on a terminal it is on unless --quiet or --json");
  c->add_flag("--quiet", f.quiet, "no progress on stderr");
}

}  // namespace salasim::cli
