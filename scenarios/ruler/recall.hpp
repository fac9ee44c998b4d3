// Needle-block selection recall: for one query token and one sparse layer, how many of the 64-token blocks that
// hold the answer needles are among InfLLM-v2's selected blocks, and the rank of the best needle block by its
// pooled score (1 = the highest; forced blocks, +inf, rank first; equal scores rank the lower block first, as the
// top-k breaks ties).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/generate.hpp"

namespace salasim::ruler {

// Blocks covering [begin, end) token spans (model positions), ascending and unique.
std::vector<int64_t> needle_blocks(const std::vector<std::pair<int64_t, int64_t>>& spans, int block);

struct LayerRecall {
  int layer = 0;
  bool dense = false;      // every block visible: recall 1 by construction, not a selection
  double recall = 0;       // selected (group, needle block) pairs / (G x needle blocks visible to the query)
  int64_t best_rank = 0;   // 0 when unknown (no scores) or dense
};
// needle blocks past the query's own block are not visible to it and are left out.
std::vector<LayerRecall> selection_recall(const StepSelection& s, const std::vector<int64_t>& blocks, int block);

// {"pos", "layers": [{"layer", "dense" | "recall", "rank"}...]} for results.jsonl
nlohmann::json recall_json(int64_t pos, const std::vector<LayerRecall>& r);

}  // namespace salasim::ruler
