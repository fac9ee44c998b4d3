// The CUDA model runner: chunked prefill (activation memory bounded by the chunk, not the prompt) and decode,
// with the caches the model needs (KV + compressed keys for the sparse layers only, fp32 GLA state), the same
// dense/sparse rule and tap names as the reference (reference/model.hpp), and a memory planner that computes the
// peak before allocating and refuses, with the numbers, what would not fit.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gpu/common.hpp"
#include "gpu/linear.hpp"
#include "gpu/sparse_attn.hpp"
#include "model/config.hpp"
#include "model/generate.hpp"
#include "model/tap_recorder.hpp"
#include "model/weights.hpp"

namespace salasim::gpu {

// Which kernel fusions a decode step without taps takes (gpu/runner.cpp; all by default): the residual and the next
// norm inside the GEMV that reads the norm (gemv_residual); each mixer's gate inside its output projection's GEMV
// (gemv_gate); the qk-norm and RoPE inside the recurrent GLA kernel (gla_recurrent_rope). Each gives the same bits;
// the choice exists to measure what each buys and to test that the bits agree (`salasim run --fuse
// on|off|residual,gate,rope`). Taps and T > 1 always take the separate kernels.
struct DecodeFusion {
  bool residual = true, gate = true, rope = true;
};

struct RunnerOptions {
  int64_t max_context = 0;        // tokens the caches hold (prompt + generated)
  int64_t chunk = 16384;          // prefill chunk (a multiple of 64)
  bool taps = false;              // buffers for recording taps (scores of the selection) are planned
  bool profile = false;           // per-phase timings with CUDA events
  bool selection = false;         // keep each sparse layer's selection of the last processed token (last_selection)
  bool selection_scores = false;  // ... and its pooled block scores (implies selection)
  // Variants of how the work is launched, each giving the same bits (docs/decisions.md has what each buys):
  bool pdl = true;           // programmatic dependent launch on the runner's stream (gpu/common.hpp Stream)
  Gemv gemv = Gemv::custom;  // single-token GEMMs: the custom gemv or cuBLAS (gpu/linear.hpp)
  DecodeFusion fusion;       // decode steps' fused kernels (above)
  // A decode step without taps, forced selections or profiling is captured as one CUDA graph and launched as one
  // (Runner::decode_graph_stats): the GPU then runs the step's few hundred kernels with no host launch between them.
  bool graph = true;
  AttnArgs::Engine attn_engine = AttnArgs::Engine::automatic;  // sparse_attn's prefill kernel (gpu/sparse_attn.hpp)
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

// The decode steps run as CUDA graphs since the sequence began (RunnerOptions::graph). Each step is captured anew
// (its positions and lengths are kernel arguments) and either updates the executable graph kept for its topology
// (cudaGraphExecUpdate: the same kernels and edges, new arguments) or, when none fits, instantiates one. Topologies
// differ by the kernels a step launches: compress_k's only when a window completes, the selection's only past
// dense_len, so a long decode keeps a handful of executables and updates them.
struct DecodeGraphStats {
  int64_t updated = 0, instantiated = 0;
  int64_t steps() const { return updated + instantiated; }  // every graph step either updated or instantiated one
};

// How much the sparse prefill's query tiles shared (AttnArgs::tile_stats summed over every sparse layer and chunk
// since the sequence began): blocks loaded (the union of a tile's selections), blocks attended (per query), tiles,
// queries. attended / loaded is how many queries each loaded block served.
struct AttnTileStats {
  int64_t loaded = 0, attended = 0, tiles = 0, queries = 0;
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

  // Greedy decode steps enqueued ahead (what Runner::generate runs when no selection is recorded): decode_ahead
  // enqueues one step and returns without waiting; its input is *token, or with nullptr the greedy token of the
  // step before, which must have been a decode_ahead step (it stays on the device: greedy_token, gpu/ops.hpp).
  // The step ends by picking its own greedy token on the device, so the host can enqueue the next step while this
  // one runs: no logits download, host argmax or token upload between steps. decode_wait returns the token (and
  // whether every logit was finite) of the oldest step not yet waited for. At most 4 steps in flight; decode,
  // begin_prefill and last_selection refuse while any is. A step enqueued past a stop id still runs: the runner
  // has then consumed that id, len() counting it.
  void decode_ahead(const int32_t* token);
  GreedyStep decode_wait();

  // Per decode step since the sequence began: host seconds spent enqueueing the step's work (embedding to logits,
  // before the wait for the logits; with graphs: the capture, the update or instantiation, and the one launch).
  // Below the step's wall time, the GPU is what a step waits on; without graphs the launches are then hidden except
  // for the gaps between kernels on the GPU.
  const std::vector<double>& decode_enqueue_s() const;
  DecodeGraphStats decode_graph_stats() const;

  // Per-op CUDA events (times()) on or off from the next call; they cost host time on every op.
  void set_profile(bool on);

  // ---- generation (model/generate.hpp: the one loop shared with the reference) ----
  // Greedy generation of a fresh sequence (reset() first when the runner was used): the prompt in pieces of
  // opt.chunk, then decode steps; the caller plans max_context >= prompt + max_new. With o.record_selection the
  // runner must have been built with RunnerOptions::selection.
  Generation generate(const std::vector<int32_t>& prompt, const GenerateOptions& o);
  // Forgets the sequence (length 0, GLA states zeroed) so the next prefill starts fresh on the same allocation.
  void reset();

  // ---- needle-block recall: the selection of the LAST processed token ----
  // Contract (any rewrite of the prefill/decode kernels keeps it): with RunnerOptions::selection, after every
  // prefill_piece and every decode, last_selection() returns one LayerSelection per sparse layer, in layer order,
  // for the query at position len() - 1:
  //   - dense = true, blocks/scores empty, when that call ran the layer dense (prompt total < dense_len, or a decode
  //     at p + 1 < dense_len): every block is visible, there is no selection to report;
  //   - otherwise blocks = the [G, k_sel] ids the sparse attention of that token used (ascending, -1 unused), the
  //     row select_blocks wrote for that token in that call (no second pass over the sequence); and, when
  //     with_scores (needs RunnerOptions::selection_scores), scores = that token's pooled block scores [G, n_blocks]
  //     (n_blocks = blocks of the call's sequence; +inf forced, -inf after the query's block), from select_blocks run
  //     for that one query.
  // Device-side buffers: [G, k_sel] ids and [G, ceil(max_context/block)] floats per sparse layer (planned); this
  // call copies them to the host (a few KB of ids; scores 4 B per block per kv group).
  std::vector<LayerSelection> last_selection(bool with_scores) const;

  const MemoryPlan& plan() const;
  PhaseTimes times() const;
  AttnTileStats attn_tile_stats() const;  // (synchronises)
  size_t device_bytes_in_use() const;     // cudaMemGetInfo total - free, measured after allocation
  int64_t len() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace salasim::gpu
