// `salasim synth-checkpoint`: writes the synthetic weights of a config as a real sharded safetensors folder,
// so checkpoint loading and `params --checkpoint` can be tried without downloading 18 GB.
#include <fmt/format.h>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "model/config.hpp"
#include "model/error.hpp"
#include "model/inventory.hpp"
#include "model/output_file.hpp"
#include "model/weights.hpp"

namespace salasim::cli {

namespace {
struct Args {
  std::string config = "scenarios/models/tiny.json";
  std::string out;
  uint64_t seed = 1;
  int shards = 2;
  bool force = false;  // replace an existing --out folder
};

int run(const Args& a) {
  const ModelConfig c = load_config(data_path(a.config));
  const auto inv = tensor_inventory(c);
  const ParamCount pc = count_params(c, inv);
  if (pc.bf16_bytes > (int64_t(4) << 30))
    fmt::print(stderr, "note: writing {:.1f} GiB of bf16 weights\n", double(pc.bf16_bytes) / double(1ull << 30));
  if (size_t(a.shards) > inv.size())  // each shard holds at least one tensor: the count written is the count asked
    fail("--shards {}: {} has {} tensors, so at most {} shards", a.shards, a.config, inv.size(), inv.size());
  // Built in a temporary folder beside --out and renamed into place whole (model/output_file.hpp): a folder that
  // exists (a checkpoint, say) is kept unless --force, and a failed or interrupted write leaves none. The free space
  // is checked first, so a full disk is refused before 17 GiB are written, not after.
  OutputFolder folder(a.out, a.force, "--out");
  std::error_code ec;
  const auto room = std::filesystem::space(folder.temp(), ec);
  if (!ec && double(pc.bf16_bytes) > double(room.available))
    fail("--out {}: the checkpoint needs {:.2f} GB and its file system has {:.2f} GB free", a.out,
         double(pc.bf16_bytes) / 1e9, double(room.available) / 1e9);
  export_checkpoint(folder.temp(), c, inv, synthetic_weights(a.seed), a.shards);
  folder.commit();
  fmt::print("wrote {} tensors ({} parameters, synthetic seed {}) in {} shards to {}\n", inv.size(),
             with_commas(pc.total), a.seed, a.shards, a.out);
  return 0;
}
}  // namespace

void add_synth_checkpoint(CLI::App& app, Run& run_out) {
  auto a = std::make_shared<Args>();
  CLI::App* c =
      app.add_subcommand("synth-checkpoint", "Write a config's synthetic weights as a sharded safetensors checkpoint");
  c->add_option("--config", a->config, "config.json")->capture_default_str();
  c->add_option("--out", a->out, "output folder (refused when it exists, unless --force)")->required();
  c->add_flag("--force", a->force, "replace the --out folder when it exists");
  c->add_option("--seed", a->seed, "synthetic weight seed")->capture_default_str()->check(seed_number());
  c->add_option("--shards", a->shards, "number of shard files")->capture_default_str()->check(whole_number(1, 1 << 16));
  c->callback([a, &run_out] { run_out = [a] { return run(*a); }; });
}

}  // namespace salasim::cli
