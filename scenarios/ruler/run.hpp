// `salasim ruler run`: each sample of a data file through tokenize, prefill, greedy decode, detokenize, score and
// needle-block recall, one JSON line per sample appended (one checked write + fsync, under the results file's lock)
// as soon as it is done, so a killed run resumes where it stopped; shards for many GPUs or MPI/Slurm ranks.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/tokenizer.hpp"
#include "scenarios/ruler/generator.hpp"
#include "scenarios/ruler/results_file.hpp"
#include "scenarios/ruler/sample_io.hpp"

namespace salasim::ruler {

struct Shard {
  int k = 0, n = 1;
  std::string from;  // "--shard", "MPI", "Slurm", or "" (no sharding)
};
// --shard K/N ("" = none), else OMPI_COMM_WORLD_RANK/SIZE, else SLURM_PROCID/NTASKS, else 0/1.
Shard resolve_shard(const std::string& option);
// results.jsonl -> results.shard-K-of-N.jsonl (N > 1); the path itself otherwise.
std::string shard_path(const std::string& out, const Shard& s);

struct RunOptions {
  std::string data, out;
  int64_t max_new = 128;
  bool resume = false;
  bool force = false;  // replace an existing results file (never a file that is not one)
  Shard shard;
  std::vector<std::string>
      also_done;       // results files whose samples count as done (the merged file of a resumed --gpus all)
  bool quiet = false;  // no progress on stderr
  // What each results line records of where it came from (ruler report's summary.json lists them).
  std::string revision;  // the binary's git revision
  std::string weights;   // "checkpoint DIR" or "synthetic seed S"
};

struct RunSummary {
  int64_t total = 0, skipped = 0, ran = 0, redone_torn = 0;
  std::string out;
};

// The sample's id in results: "<task>/<max_seq_length>/<index>".
std::string sample_id(const Sample& s);
// The ids of a data file's samples, in order: sample_id, and where RULER's `index` repeats (files concatenated from
// prepare.py's chunks, --chunk_idx / --chunk_amount, each number their samples from 0) the k-th repetition of an id
// gets ".k" (k >= 2). The same file in the same order gives the same ids, so --resume and the shards agree on them.
std::vector<std::string> sample_ids(const std::vector<DataLine>& data);

// Opens the results file this run writes (shard_path(o.out, o.shard)) under the rules of results_file.hpp: not
// the data file nor an --also-done file, locked, checked, resumed or replaced. Call it before any long work (a
// tokenizer, weights), so a wrong --out is refused at once.
std::unique_ptr<ResultsFile> open_results_file(const RunOptions& o);

// Runs the shard's samples not already in the results file. The generator is made once the samples are known
// (make(max_context)), so the GPU runner is planned for the longest one; every length is checked first against
// the config's max_positions with extrapolation (RULER runs go to 4x the trained length, as the paper's do).
RunSummary run_samples(const RunOptions& o, ResultsFile& results, const ModelConfig& cfg, const Tokenizer& tok,
                       const std::vector<DataLine>& data,
                       const std::function<std::unique_ptr<Generator>(int64_t max_context)>& make);
// The same, opening the results file itself.
RunSummary run_samples(const RunOptions& o, const ModelConfig& cfg, const Tokenizer& tok,
                       const std::vector<DataLine>& data,
                       const std::function<std::unique_ptr<Generator>(int64_t max_context)>& make);

}  // namespace salasim::ruler
