// `salasim explain [OP]`: an op card (reports/explain.hpp), or without OP the list of what can be explained.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "reports/context.hpp"
#include "reports/explain.hpp"

namespace salasim::cli {

namespace {

struct ExplainArgs {
  std::string op;
  std::string config;
  std::string context = "64K";
  bool json = false;
};

int run_explain(const ExplainArgs& a) {
  const int64_t context = reports::parse_context(a.context);
  const reports::Model m = reports::load_model(a.config.empty() ? default_config_path() : a.config);
  if (a.op.empty()) {
    fmt::print("salasim explain OP: one card per op of the registry (ops/op.hpp), a layer of each kind, the model\n\n");
    for (const op::OpSpec& o : op::registry()) fmt::print("  {:<16} {}\n", o.name, o.card.title);
    fmt::print("  {:<16} {}\n", "lightning-layer", "one Lightning layer, step by step");
    fmt::print("  {:<16} {}\n", "sparse-layer", "one sparse (InfLLM-v2) layer, step by step");
    fmt::print("  {:<16} {}\n", "model", "the whole forward pass and every parameter");
    return 0;
  }
  const reports::OpCard card = reports::explain(m, a.op, context);
  if (a.json) fmt::print("{}\n", reports::card_json(card).dump(2));
  else fmt::print("{}", reports::format_card(card));
  return 0;
}

}  // namespace

void add_explain(CLI::App& app, Run& run) {
  auto a = std::make_shared<ExplainArgs>();
  CLI::App* c = app.add_subcommand(
      "explain", "Explain an op, a layer or the model: equation, shapes, parameters, cost, tolerance, taps, code");
  c->add_option(
      "op", a->op,
      "an op (salasim op and the benchmarks name the same ones), lightning-layer, sparse-layer or model (none: list them)");
  c->add_option("--config", a->config, "config.json (default scenarios/models/minicpm-sala-9b.json)");
  c->add_option("--context", a->context, "context length for the cost rows (4096, 64K, 1M)")->capture_default_str();
  c->add_flag("--json", a->json, "machine-readable output, equations also in LaTeX");
  c->callback([a, &run] { run = [a] { return run_explain(*a); }; });
}

}  // namespace salasim::cli
