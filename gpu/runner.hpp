// The CUDA model runner: chunked prefill (activation memory bounded by the chunk, not the prompt) and decode,
// with the caches the model needs (KV + compressed keys for the sparse layers only, fp32 GLA state), the same
// dense/sparse rule and tap names as the reference (reference/model.hpp), and a memory planner that computes the
// peak before allocating and refuses, with the numbers, what would not fit.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/common.hpp"
#include "model/config.hpp"
#include "model/tap_recorder.hpp"
#include "model/weights.hpp"

namespace salasim::gpu {

struct RunnerOptions {
  int64_t max_context = 0;  // tokens the caches hold (prompt + generated)
  int64_t chunk = 16384;    // prefill chunk (a multiple of 64)
  bool taps = false;        // buffers for recording taps (scores of the selection) are planned
  bool profile = false;     // per-phase timings with CUDA events
};

struct MemoryItem {
  std::string name;
  size_t bytes = 0;
};
struct MemoryPlan {
  std::vector<MemoryItem> items;
  size_t total = 0;
  std::string table() const;  // one line per item and the total, in GiB
};
// The peak the runner will allocate for this config and these options (it allocates everything up front).
MemoryPlan plan_memory(const ModelConfig& c, const RunnerOptions& o);

// Seconds per op class, summed over the run (profile = true).
struct PhaseTimes {
  double gemm = 0, select = 0, sparse_attn = 0, dense_attn = 0, gla = 0, other = 0;
  double total() const { return gemm + select + sparse_attn + dense_attn + gla + other; }
};

class Runner {
 public:
  Runner(const ModelConfig& c, const WeightSource& w, RunnerOptions o);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // As reference/model.hpp: a prefill is sparse iff its total length >= dense_len, pieces use absolute positions,
  // decode at position p is sparse iff p + 1 >= dense_len. forced: teacher-forced selections (verify), or nullptr.
  void begin_prefill(int64_t total_len);
  std::vector<float> prefill_piece(const std::vector<int32_t>& tokens, TapRecorder* taps = nullptr,
                                   const TapMap* forced = nullptr);  // logits of the piece's last token [V]
  std::vector<float> decode(int32_t token, TapRecorder* taps = nullptr, const TapMap* forced = nullptr);

  // For long-context spot checks: layer l's fp32 GLA state [H, hd, hd] (Lightning), and its cached keys or values
  // [G, len, hd] as bf16 bits (sparse).
  std::vector<float> gla_state(int layer) const;
  std::vector<bf16_t> kv_cache(int layer, bool values) const;

  // Per-op CUDA events (times()) on or off from the next call; they cost host time on every op.
  void set_profile(bool on);

  const MemoryPlan& plan() const;
  PhaseTimes times() const;
  size_t device_bytes_in_use() const;  // cudaMemGetInfo total - free, measured after allocation
  int64_t len() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace salasim::gpu
