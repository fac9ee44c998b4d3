// `salasim diff A.h5 B.h5 [--peer P.h5]`: two tap dumps compared offline with the harness's metrics and tolerance
// table (A is the reference). Exit 0 when every tap passes, 1 when one fails, 2 on bad input.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "compare/hdf5_io.hpp"
#include "compare/report.hpp"

namespace salasim::cli {

namespace {

struct DiffArgs {
  std::string reference;
  std::string backend;
  std::string peer;
  bool json = false;
  bool failures_only = false;
};

std::string describe(const std::string& path, const DumpInfo& i) {
  return fmt::format("{} (backend '{}', scenario '{}', git {}, created {})", path, i.backend, i.scenario,
                     i.git_revision.empty() ? "?" : i.git_revision, i.created);
}

int run_diff(const DiffArgs& a) {
  const TapDump ref = read_taps(a.reference);
  const TapDump be = read_taps(a.backend);
  std::optional<TapDump> peer;
  if (!a.peer.empty()) peer = read_taps(a.peer);
  const CompareReport rep = compare_taps(ref.taps, peer ? &peer->taps : nullptr, be.taps);

  if (a.json) {
    nlohmann::json j = report_json(rep);
    j["reference_file"] = a.reference;
    j["backend_file"] = a.backend;
    j["peer_file"] = a.peer.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.peer);
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("reference: {}\n", describe(a.reference, ref.info));
    fmt::print("backend:   {}\n", describe(a.backend, be.info));
    if (peer)
      fmt::print("peer:      {}\n", describe(a.peer, peer->info));
    else
      fmt::print("peer:      none (--peer not given): only the floors apply\n");
    fmt::print("{}", format_report(rep, PrintOptions{a.failures_only}));
  }
  return rep.pass() ? 0 : 1;
}

}  // namespace

void add_diff(CLI::App& app, Run& run) {
  auto a = std::make_shared<DiffArgs>();
  CLI::App* c = app.add_subcommand("diff", "Compare two tap dumps (A is the reference) with the tolerance table");
  c->add_option("A", a->reference, "reference tap dump (.h5)")->required();
  c->add_option("B", a->backend, "tap dump under test (.h5)")->required();
  c->add_option("--peer", a->peer, "peer tap dump: allowed = mult * err(peer, A) + floor (without it: floor only)");
  c->add_flag("--json", a->json, "machine-readable output");
  c->add_flag("--failures-only", a->failures_only, "print only the failing taps (and the totals)");
  c->callback([a, &run] { run = [a] { return run_diff(*a); }; });
}

}  // namespace salasim::cli
