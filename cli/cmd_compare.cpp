// `salasim model compare`: MiniCPM-SALA beside the dense comparator as measured on one card (reports/comparison.hpp):
// TTFT and peak memory per length from the committed records, their ratios and the paper's figures.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "model/data_path.hpp"
#include "reports/comparison.hpp"
#include "reports/context.hpp"

namespace salasim::cli {

namespace {

using namespace salasim::reports;

struct CompareArgs {
  ComparisonInput in;
  std::string contexts;
  bool json = false, csv = false, markdown = false;
};

int run_compare(CompareArgs a) {
  if (!a.contexts.empty()) a.in.contexts = parse_contexts(a.contexts);
  const Comparison c = load_comparison(a.in, load_paper(paper_file()));
  if (a.json) {
    fmt::print("{}\n", comparison_json(c).dump(2));
    return 0;
  }
  Table t = comparison_table(c);
  if (a.csv || a.markdown) {
    fmt::print("{}", a.csv ? to_csv(t) : to_markdown(t));
    return 0;
  }
  t.header.pop_back();  // the terminal table leaves out the command column (each row's is this command)
  for (auto& r : t.rows) r.pop_back();
  fmt::print("{} / {} measured on {}: {} records of {} in {}, {} of {} in {}; the paper's columns are its {} figures\n",
             c.other.name, c.sala.name, c.hw, c.sala_records, c.sala.name, source_relative(c.sala_dir), c.other_records,
             c.other.name, source_relative(c.other_dir), c.paper_gpu);
  fmt::print("\n{}", to_text(t));
  return 0;
}

}  // namespace

void add_model_compare(CLI::App* model, Run& run) {
  auto a = std::make_shared<CompareArgs>();
  CLI::App* c = model->add_subcommand(
      "compare",
      "MiniCPM-SALA beside Qwen3-8B as measured: TTFT and peak memory ratios from the records, and the paper's");
  c->add_option("--hw", a->in.hw, "the card whose records are compared (reports/measured/<hw>/)")
      ->capture_default_str();
  c->add_option("--measured", a->in.root,
                "a folder laid out as reports/measured/: <hw>/run_*.json (salasim run --json-out) and "
                "<hw>/<comparator>/run_*.json (bench/qwen3_hf.py) (default reports/measured)");
  c->add_option("--context", a->contexts, "context lengths (default 16K,64K,128K,256K)");
  c->add_option("--config", a->in.sala_config, "the MiniCPM-SALA config")->capture_default_str();
  c->add_option("--comparator", a->in.other_config, "the dense comparator's config")->capture_default_str();
  c->add_option("--paper-gpu", a->in.paper_gpu, "the card of the paper's figures (a6000d, rtx5090)")
      ->capture_default_str();
  auto* json = c->add_flag("--json", a->json, "machine-readable output");
  auto* csv = c->add_flag("--csv", a->csv, "CSV output (with the command of each row)")->excludes(json);
  c->add_flag("--markdown", a->markdown, "a Markdown table (with the command of each row)")
      ->excludes(json)
      ->excludes(csv);
  c->callback([a, &run] { run = [a] { return run_compare(*a); }; });
}

}  // namespace salasim::cli
