// `salasim diff A.h5 B.h5 [--peer P.h5]`: two tap dumps compared offline with the harness's metrics and tolerance
// table (A is the reference). Exit 0 when every tap passes, 1 when one fails, 2 on bad input. A dump of chosen taps
// and rows (`salasim run --dump-taps --taps --rows`) is compared on the taps it holds and the rows both hold
// (compare/dump_align.hpp).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "compare/dump_align.hpp"
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
  auto chosen = [](const TapDump& d) { return d.info.extra.count(kTapSelectionAttr) > 0 || !d.rows.empty(); };
  std::optional<AlignedDumps> al;  // only when a dump holds chosen taps or rows: whole dumps are compared as read
  if (chosen(ref) || chosen(be) || (peer && chosen(*peer))) al = align_dumps(ref, peer ? &*peer : nullptr, be);
  const CompareReport rep = al ? compare_taps(al->ref, al->peer ? &*al->peer : nullptr, al->backend)
                               : compare_taps(ref.taps, peer ? &peer->taps : nullptr, be.taps);
  const std::string chosen_note =
      al ? fmt::format("chosen taps and rows: {} tap(s) compared on the rows both dumps hold, {} left out (a dump of "
                       "chosen taps lacks them)",
                       al->cut, al->skipped)
         : "";

  if (a.json) {
    nlohmann::json j = report_json(rep);
    j["reference_file"] = a.reference;
    j["backend_file"] = a.backend;
    j["peer_file"] = a.peer.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.peer);
    if (al) j["chosen"] = {{"cut_taps", al->cut}, {"left_out_taps", al->skipped}, {"notes", al->notes}};
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("reference: {}\n", describe(a.reference, ref.info));
    fmt::print("backend:   {}\n", describe(a.backend, be.info));
    if (peer)
      fmt::print("peer:      {}\n", describe(a.peer, peer->info));
    else
      fmt::print("peer:      none (--peer not given): only the floors apply\n");
    if (al) {
      fmt::print("{}\n", chosen_note);
      for (const std::string& n : al->notes) fmt::print("  rows not lined up: {}\n", n);
    }
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
