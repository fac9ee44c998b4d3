// Where weights come from: the seeded synthetic generator or a safetensors checkpoint, behind one interface.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/inventory.hpp"
#include "model/safetensors.hpp"

namespace salasim {

struct WeightSource {
  uint64_t seed = 0;                        // synthetic when ckpt is null
  std::shared_ptr<const Checkpoint> ckpt;   // checkpoint otherwise

  bool synthetic() const { return ckpt == nullptr; }
  std::string describe() const;  // "synthetic seed 1" / "checkpoint DIR"
};

WeightSource synthetic_weights(uint64_t seed);
// Opens the checkpoint and validates it against the inventory; throws listing every problem.
WeightSource checkpoint_weights(const std::string& path, const std::vector<TensorSpec>& inv);

// Rows [row0, row0 + nrows) of tensor t (row-major, rows of t.cols() elements).
// Synthetic values are exactly the bf16 weights the GPU generates; checkpoint values are converted exactly.
void weight_rows(const WeightSource& w, const TensorSpec& t, int64_t row0, int64_t nrows, double* out);
void weight_rows_bf16(const WeightSource& w, const TensorSpec& t, int64_t row0, int64_t nrows, uint16_t* out);
std::vector<double> weight_tensor(const WeightSource& w, const TensorSpec& t);

// Synthetic generator parameters of one tensor (what the GPU fill kernel needs).
struct SynthParams {
  uint64_t key = 0;
  float amp = 0;     // uniform amplitude = std * sqrt(3), as float
  bool ones = false; // norm weights
};
SynthParams synth_params(uint64_t seed, const TensorSpec& t);

// Checkpoint against inventory.
struct CheckpointIssue {
  std::string kind;  // "missing", "extra", "shape", "dtype"
  std::string name;
  std::string detail;
};
struct CheckpointReport {
  std::vector<CheckpointIssue> issues;
  int64_t params_present = 0;  // elements of every tensor in the checkpoint
  int64_t tensors_present = 0;
  bool ok() const { return issues.empty(); }
};
CheckpointReport check_checkpoint(const Checkpoint& ck, const std::vector<TensorSpec>& inv);

}  // namespace salasim

namespace salasim {
// Writes every inventory tensor of `w` as BF16 into a sharded checkpoint folder (with config.json copied from
// the config's source file): small real-format checkpoints for tests and for trying `params --checkpoint`.
void export_checkpoint(const std::string& dir, const ModelConfig& c, const std::vector<TensorSpec>& inv,
                       const WeightSource& w, int n_shards);
}  // namespace salasim
