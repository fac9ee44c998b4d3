// `salasim tolerances`: prints the tolerance table the harness gates every tap with (compare/tolerance.cpp).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "compare/tolerance.hpp"

namespace salasim::cli {

namespace {
int run_tolerances(bool json) {
  const ToleranceTable& t = tolerance_table();
  if (!json) {
    fmt::print("{}", format_tolerance_table(t));
    return 0;
  }
  nlohmann::json j = nlohmann::json::array();
  for (const ToleranceRow& r : t)
    j.push_back({{"kind", r.kind}, {"stored", r.stored}, {"gate", r.gate == Gate::Float ? "float" : "selection"},
                 {"mult", r.mult}, {"rms_floor", r.rms_floor}, {"max_mult", r.max_mult}, {"max_floor", r.max_floor},
                 {"inf_must_match", r.inf_must_match}, {"tie_band", r.tie_band}, {"reason", r.reason}});
  fmt::print("{}\n", j.dump(2));
  return 0;
}
}  // namespace

void add_tolerances(CLI::App& app, Run& run) {
  auto json = std::make_shared<bool>(false);
  CLI::App* c = app.add_subcommand("tolerances", "Print the tolerance table (one row per tap kind, with its reason)");
  c->add_flag("--json", *json, "machine-readable output");
  c->callback([json, &run] { run = [json] { return run_tolerances(*json); }; });
}

}  // namespace salasim::cli
