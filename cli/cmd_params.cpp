// `salasim params`: the parameter table of docs/spec.md §6 from a config, optionally checked against a checkpoint.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "model/config.hpp"
#include "model/error.hpp"
#include "model/inventory.hpp"
#include "model/weights.hpp"

namespace salasim::cli {

namespace {

struct ParamsArgs {
  std::string config;
  std::string checkpoint;
  bool json = false;
};

int run_params(const ParamsArgs& a) {
  std::string cfg_path = a.config;
  if (cfg_path.empty() && !a.checkpoint.empty()) {
    // A checkpoint is checked against its own config: without one, checking it against the released config would
    // report a mismatch that says nothing about the checkpoint.
    const std::filesystem::path own = std::filesystem::path(a.checkpoint) / "config.json";
    if (!std::filesystem::exists(own))
      fail("--checkpoint {}: no config.json in it; give the config it was made from with --config PATH (for the "
           "released model: --config scenarios/models/minicpm-sala-9b.json)",
           a.checkpoint);
    cfg_path = own.string();
  }
  if (cfg_path.empty()) cfg_path = default_config_path();
  cfg_path = data_path(cfg_path);

  const ModelConfig cfg = load_config(cfg_path);
  const auto inv = tensor_inventory(cfg);
  const ParamCount pc = count_params(cfg, inv);
  std::optional<CheckpointReport> ck;
  if (!a.checkpoint.empty()) ck = check_checkpoint(Checkpoint(a.checkpoint), inv);

  if (a.json) {
    nlohmann::json j;
    j["config"] = cfg_path;
    j["total"] = pc.total;
    j["bf16_bytes"] = pc.bf16_bytes;
    j["layers"] = {{"lightning", pc.n_lightning}, {"sparse", pc.n_sparse}};
    j["per_layer"] = {{"lightning", pc.lightning_layer}, {"sparse", pc.sparse_layer}};
    j["tensors"] = inv.size();
    for (const ComponentRow& r : pc.rows)
      j["components"].push_back({{"component", component_name(r.component)}, {"label", r.label}, {"each", r.each},
                                 {"count", r.count}, {"total", r.total()}});
    if (ck) {
      j["checkpoint"] = {{"path", a.checkpoint}, {"tensors", ck->tensors_present}, {"params", ck->params_present},
                         {"ok", ck->ok()}, {"issues", nlohmann::json::array()}};
      for (const CheckpointIssue& i : ck->issues)
        j["checkpoint"]["issues"].push_back({{"kind", i.kind}, {"name", i.name}, {"detail", i.detail}});
    }
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("MiniCPM-SALA parameters from {}\n\n", cfg_path);
    fmt::print("{:<56} {:>15} {:>6} {:>15}\n", "component", "each", "count", "total");
    for (const ComponentRow& r : pc.rows)
      fmt::print("{:<56} {:>15} {:>6} {:>15}\n", r.label, with_commas(r.each), r.count, with_commas(r.total()));
    fmt::print("{:<56} {:>15} {:>6} {:>15}\n\n", "total", "", "", with_commas(pc.total));
    fmt::print("per full layer: lightning {} (x{}), sparse {} (x{})\n", with_commas(pc.lightning_layer),
               pc.n_lightning, with_commas(pc.sparse_layer), pc.n_sparse);
    fmt::print("bf16 weights: {} bytes ({:.2f} GiB), {} tensors\n", with_commas(pc.bf16_bytes),
               double(pc.bf16_bytes) / double(1ull << 30), inv.size());
    if (ck) {
      fmt::print("\ncheckpoint {}: {} tensors, {} parameters present\n", a.checkpoint, ck->tensors_present,
                 with_commas(ck->params_present));
      for (const CheckpointIssue& i : ck->issues) fmt::print("  {:<8} {} {}\n", i.kind, i.name, i.detail);
      fmt::print("{}\n", ck->ok() ? "checkpoint matches the inventory"
                                  : fmt::format("checkpoint does NOT match: {} problems", ck->issues.size()));
    }
  }
  return ck && !ck->ok() ? 1 : 0;
}

}  // namespace

void add_params(CLI::App& app, Run& run) {
  auto a = std::make_shared<ParamsArgs>();
  CLI::App* c = app.add_subcommand("params", "Parameter count per component and in total (docs/spec.md §6)");
  c->add_option("--config", a->config, "config.json (default scenarios/models/minicpm-sala-9b.json)");
  c->add_option("--checkpoint", a->checkpoint, "safetensors checkpoint folder: count and check its tensors (headers only)");
  c->add_flag("--json", a->json, "machine-readable output");
  c->callback([a, &run] { run = [a] { return run_params(*a); }; });
}

}  // namespace salasim::cli
