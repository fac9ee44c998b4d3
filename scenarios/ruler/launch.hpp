// `salasim ruler run --gpus all|N` on one host: one worker process per GPU (each sees one device through
// CUDA_VISIBLE_DEVICES and runs shard K/N into its own shard file, locked by it), then the shards merged into
// --out. The merge writes the merged file whole (model/output_file.hpp: a temporary renamed into place) and only
// then removes the shard files, so a failure or a kill at any point leaves either the shards or the merged file,
// never neither; a merge interrupted after its rename is finished by the next --resume.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace salasim::ruler {

// At most this many workers: one per GPU of one host.
constexpr int kMaxGpuWorkers = 64;

// The devices of `--gpus`: "all" = CUDA_VISIBLE_DEVICES's entries when it is set (each non-empty), else every GPU
// this process sees; "N" (1..kMaxGpuWorkers) = devices 0..N-1. Throws naming the option otherwise.
std::vector<std::string> gpu_devices(const std::string& option);

// The command line of worker K of N: `argv` (argv[0] first) without --gpus and its value, with --shard=K/N and,
// when resuming, --also-done=OUT (the merged file's samples count as done).
std::vector<std::string> worker_args(const std::vector<std::string>& argv, int k, int n, const std::string& out,
                                     bool resume);

// Starts `exe` once per entry of `args` (args[k][0] is its argv[0]) with CUDA_VISIBLE_DEVICES=devices[k], waits
// for all of them, and returns their exit codes (128 + the signal for one a signal ended; 127 when exec failed).
std::vector<int> run_workers(const std::string& exe, const std::vector<std::vector<std::string>>& args,
                             const std::vector<std::string>& devices);

struct MergeSummary {
  int64_t kept = 0;     // lines already in --out (a resumed run's earlier results)
  int64_t merged = 0;   // lines taken from the shards
  int64_t already = 0;  // shard lines whose sample --out held already (a merge stopped before removing its shards)
};
// Merges the n shard files of `out` (shard_path) into `out`: its own lines first (it must be a results file, or
// absent), then each shard's, every line checked as a results line and each sample once (a sample in two shards
// is an Error and nothing is changed). Each shard is locked while it is read, so a worker still writing one is
// refused. The merged file replaces `out` in one rename; then the shard files are removed. A missing shard (a
// worker with no samples) is skipped.
MergeSummary merge_shards(const std::string& out, int n);

}  // namespace salasim::ruler
