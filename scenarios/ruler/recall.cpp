// Needle-block selection recall from a step's selections.
#include "scenarios/ruler/recall.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace salasim::ruler {

std::vector<int64_t> needle_blocks(const std::vector<std::pair<int64_t, int64_t>>& spans, int block) {
  std::set<int64_t> b;
  for (auto [s, e] : spans)
    for (int64_t p = s; p < e; ++p) b.insert(p / block);
  return {b.begin(), b.end()};
}

std::vector<LayerRecall> selection_recall(const StepSelection& s, const std::vector<int64_t>& blocks, int block) {
  std::vector<LayerRecall> out;
  for (const LayerSelection& l : s.layers) {
    LayerRecall r;
    r.layer = l.layer;
    r.dense = l.dense;
    std::vector<int64_t> visible;
    for (int64_t b : blocks)
      if (b <= l.pos / block) visible.push_back(b);
    if (l.dense || visible.empty()) {
      r.recall = visible.empty() ? 0 : 1;
      out.push_back(r);
      continue;
    }
    int64_t hit = 0;
    for (int g = 0; g < l.groups; ++g) {
      const int32_t* row = l.blocks.data() + int64_t(g) * l.k_sel;
      for (int64_t b : visible) hit += std::find(row, row + l.k_sel, int32_t(b)) != row + l.k_sel ? 1 : 0;
    }
    r.recall = double(hit) / double(int64_t(l.groups) * int64_t(visible.size()));
    if (!l.scores.empty()) {
      for (int g = 0; g < l.groups; ++g) {
        const float* sc = l.scores.data() + int64_t(g) * l.n_blocks;
        for (int64_t b : visible) {
          if (b >= l.n_blocks) continue;
          int64_t rank = 1;
          for (int64_t o = 0; o < l.n_blocks; ++o)
            if (o != b && (sc[o] > sc[b] || (sc[o] == sc[b] && o < b))) ++rank;
          if (r.best_rank == 0 || rank < r.best_rank) r.best_rank = rank;
        }
      }
    }
    out.push_back(r);
  }
  return out;
}

nlohmann::json recall_json(int64_t pos, const std::vector<LayerRecall>& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const LayerRecall& l : r) {
    nlohmann::json j = {{"layer", l.layer}};
    if (l.dense) j["dense"] = true;
    else j["recall"] = std::round(l.recall * 1e4) / 1e4;
    if (l.best_rank > 0) j["rank"] = l.best_rank;
    layers.push_back(j);
  }
  return {{"pos", pos}, {"layers", layers}};
}

}  // namespace salasim::ruler
