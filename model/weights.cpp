// Weight sources: synthetic (counter-based, see model/synth.hpp) or checkpoint (validated against the inventory).
#include "model/weights.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/ranges.h>

#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/output_file.hpp"
#include "model/safetensors_writer.hpp"
#include "model/synth.hpp"

namespace salasim {

std::string WeightSource::describe() const {
  return synthetic() ? fmt::format("synthetic seed {}", seed) : fmt::format("checkpoint {}", ckpt->path());
}

WeightSource synthetic_weights(uint64_t seed) { return WeightSource{seed, nullptr}; }

WeightSource checkpoint_weights(const std::string& path, const std::vector<TensorSpec>& inv) {
  auto ck = std::make_shared<const Checkpoint>(path);
  CheckpointReport r = check_checkpoint(*ck, inv);
  if (!r.ok()) {
    std::string msg = fmt::format("{}: checkpoint does not match the config's tensor inventory ({} problems):", path,
                                  r.issues.size());
    for (const CheckpointIssue& i : r.issues) msg += fmt::format("\n  {:<8} {} {}", i.kind, i.name, i.detail);
    throw Error(msg);
  }
  return WeightSource{0, std::move(ck)};
}

SynthParams synth_params(uint64_t seed, const TensorSpec& t) {
  SynthParams p;
  p.key = synth_key(seed, fnv1a64(t.name));
  p.amp = float(t.init_std * std::sqrt(3.0));
  p.ones = t.init_std == 0;
  return p;
}

void weight_rows(const WeightSource& w, const TensorSpec& t, int64_t row0, int64_t nrows, double* out) {
  if (!w.synthetic()) return read_rows(w.ckpt->at(t.name), row0, nrows, out);
  if (row0 < 0 || row0 + nrows > t.rows())
    fail("synthetic tensor '{}': rows [{}, {}) out of range", t.name, row0, row0 + nrows);
  const SynthParams p = synth_params(w.seed, t);
  const int64_t cols = t.cols(), first = row0 * cols, n = nrows * cols;
  for (int64_t i = 0; i < n; ++i)
    out[i] = p.ones ? 1.0 : double(float_from_bf16(synth_bf16(p.key, uint64_t(first + i), p.amp)));
}

void weight_rows_bf16(const WeightSource& w, const TensorSpec& t, int64_t row0, int64_t nrows, uint16_t* out) {
  const int64_t n = nrows * t.cols();
  if (w.synthetic()) {
    const SynthParams p = synth_params(w.seed, t);
    const int64_t first = row0 * t.cols();
    for (int64_t i = 0; i < n; ++i)
      out[i] = p.ones ? bf16_from_float(1.0f) : synth_bf16(p.key, uint64_t(first + i), p.amp);
    return;
  }
  std::vector<float> f(static_cast<size_t>(n));
  read_rows(w.ckpt->at(t.name), row0, nrows, f.data());
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_from_float(f[size_t(i)]);
}

std::vector<double> weight_tensor(const WeightSource& w, const TensorSpec& t) {
  std::vector<double> v(size_t(t.numel()));
  weight_rows(w, t, 0, t.rows(), v.data());
  return v;
}

CheckpointReport check_checkpoint(const Checkpoint& ck, const std::vector<TensorSpec>& inv) {
  CheckpointReport r;
  std::map<std::string, const TensorSpec*> want;
  for (const TensorSpec& t : inv) want[t.name] = &t;
  auto shape_str = [](const std::vector<int64_t>& s) { return fmt::format("[{}]", fmt::join(s, ", ")); };
  for (const StTensor* t : ck.tensors()) {
    r.tensors_present++;
    r.params_present = checked_add(r.params_present, t->numel(), ck.path() + ": parameters present");
    auto it = want.find(t->name);
    if (it == want.end()) {
      r.issues.push_back(
          {"extra", t->name,
           fmt::format("{} {} not in the config's inventory", dtype_name(t->dtype), shape_str(t->shape))});
      continue;
    }
    const TensorSpec& s = *it->second;
    if (t->shape != s.shape)
      r.issues.push_back(
          {"shape", t->name, fmt::format("is {}, expected {}", shape_str(t->shape), shape_str(s.shape))});
    if (t->dtype != s.dtype)
      r.issues.push_back(
          {"dtype", t->name, fmt::format("is {}, expected {}", dtype_name(t->dtype), dtype_name(s.dtype))});
  }
  for (const TensorSpec& s : inv)
    if (!ck.find(s.name))
      r.issues.push_back({"missing", s.name, fmt::format("{} {}", dtype_name(s.dtype), shape_str(s.shape))});
  return r;
}

}  // namespace salasim

namespace salasim {

void export_checkpoint(const std::string& dir, const ModelConfig& c, const std::vector<TensorSpec>& inv,
                       const WeightSource& w, int n_shards) {
  if (n_shards < 1) fail("export_checkpoint: need at least one shard, got {}", n_shards);
  if (size_t(n_shards) > inv.size())
    fail("--shards {}: {} has {} tensors, so at most {} shards (each shard holds at least one tensor)", n_shards,
         c.source, inv.size(), inv.size());
  // Shard by shard, tensor by tensor, rows in pieces of at most 64 MiB (write_safetensors_streamed): the 9.48B
  // config's 17.7 GiB never sit in memory at once.
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  nlohmann::json idx = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  uint64_t total = 0;
  for (int s = 0; s < n_shards; ++s) {
    const std::string file = fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, n_shards);
    std::vector<StPlanned> part;
    std::vector<size_t> of;  // inventory index of each tensor of the shard
    for (size_t i = 0; i < inv.size(); ++i)
      if (int(i * size_t(n_shards) / inv.size()) == s) {
        part.push_back({inv[i].name, DType::BF16, inv[i].shape});
        of.push_back(i);
        idx["weight_map"][inv[i].name] = file;
      }
    total +=
        write_safetensors_streamed((fs::path(dir) / file).string(), part,
                                   [&](size_t k, int64_t row0, int64_t nrows, uint8_t* dst) {
                                     weight_rows_bf16(w, inv[of[k]], row0, nrows, reinterpret_cast<uint16_t*>(dst));
                                   });
  }
  idx["metadata"]["total_size"] = total;
  write_file_atomic((fs::path(dir) / "model.safetensors.index.json").string(), idx.dump(2) + "\n", true);
  std::ifstream cfg(c.source, std::ios::binary);
  std::ostringstream text;
  text << cfg.rdbuf();
  if (!cfg && !cfg.eof()) fail("{}: cannot read the config to copy it into the checkpoint", c.source);
  write_file_atomic((fs::path(dir) / "config.json").string(), text.str(), true);
}

}  // namespace salasim
