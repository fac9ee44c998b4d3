// `salasim report`: writes the VRAM / latency report bundle (Markdown, CSV, plots) for every hardware profile.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "model/limits.hpp"
#include "model/output_file.hpp"
#include "reports/context.hpp"
#include "reports/hardware.hpp"
#include "reports/report.hpp"

namespace salasim::cli {

namespace {

struct ReportArgs {
  reports::ReportOptions opt;
  std::string contexts;
  std::vector<std::string> configs;
  std::vector<std::string> hw;
  std::string op_context;
  bool force = false;  // replace an existing --out folder
};

int run_report(ReportArgs a) {
  if (!a.contexts.empty()) a.opt.contexts = reports::parse_contexts(a.contexts);
  if (!a.configs.empty()) a.opt.configs = a.configs;
  if (!a.hw.empty()) a.opt.hw = a.hw;
  if (!a.op_context.empty()) a.opt.op_context = reports::parse_context(a.op_context, "--op-context");
  // The bundle is built in a temporary folder beside --out and renamed into place whole (model/output_file.hpp): an
  // existing folder is kept unless --force, and a failed or interrupted run leaves none.
  OutputFolder folder(a.opt.out, a.force, "--out");
  a.opt.dir = folder.temp();
  const reports::ReportOutcome r = reports::write_report(a.opt);
  folder.commit();
  fmt::print("wrote {} files to {}/ (open {}/README.md)\n", r.files.size(), a.opt.out, a.opt.out);
  for (const std::string& c : r.calibration) fmt::print("  {}\n", c);
  for (const std::string& c : r.comparison) fmt::print("  {}\n", c);
  fmt::print("  {}\n", r.plots_note);
  fmt::print("  {}\n", r.architecture_note);
  return r.mismatches.empty() ? 0 : 1;
}

}  // namespace

void add_report(CLI::App& app, Run& run) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* c = app.add_subcommand("report", "Write the VRAM / latency report bundle: README.md, CSV tables, plots");
  c->add_option("--out", a->opt.out, "output folder (refused when it exists, unless --force)")->capture_default_str();
  c->add_flag("--force", a->force, "replace the --out folder when it exists");
  c->add_option("--context", a->contexts, "context lengths (default 4K,8K,...,2048K)");
  c->add_option("--config", a->configs,
                "configs, repeatable (default scenarios/models/minicpm-sala-9b.json and qwen3-8b.json)");
  c->add_option("--hw", a->hw,
                fmt::format("hardware profiles, repeatable: {} (reports/hw/) or JSON files (default {})",
                            reports::known_hw(), fmt::join(reports::ReportOptions{}.hw, ", ")));
  c->add_option("--chunk", a->opt.ws.chunk, "prefill chunk in tokens")
      ->check(whole_number(1, kMaxChunk))
      ->capture_default_str();
  c->add_option("--checkpoint", a->opt.checkpoint,
                "safetensors checkpoint folder: check every count of architecture.html against its headers (exit 1 "
                "when one differs)");
  c->add_option("--op-context", a->op_context,
                "architecture.html: the context of VRAM by component and of the per-op table (FLOPs, bytes, "
                "intensity, bound, time at the floor on the first --hw); default 64K");
  c->add_option("--measured", a->opt.measured,
                "measured records: a folder laid out as reports/measured/ (<hw>/run_*.json, <hw>/<comparator>/"
                "run_*.json); default reports/measured");
  c->add_option("--decode-tokens", a->opt.decode_tokens, "generated tokens for E2E")
      ->check(whole_number(0, kMaxDecodeTokens))
      ->capture_default_str();
  c->callback([a, &run] { run = [a] { return run_report(*a); }; });
}

}  // namespace salasim::cli
