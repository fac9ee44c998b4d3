// The Backend interface's defaults and the helpers its implementations share.
#include "scenarios/backend.hpp"

#include <algorithm>

#include "model/error.hpp"

namespace salasim {

namespace {

// Rows `rows` (absolute positions) of a [T, ...] tap whose row 0 is position `first_row`, as [rows.size(), ...].
SpotTensor tap_rows(const Tap& t, int64_t first_row, const std::vector<int64_t>& rows, const std::string& who,
                    const std::string& name) {
  const int64_t per = t.numel() / t.shape[0];
  SpotTensor s;
  s.shape = t.shape;
  s.shape[0] = int64_t(rows.size());
  s.data.reserve(rows.size() * size_t(per));
  for (int64_t r : rows) {
    const int64_t i = r - first_row;
    if (i < 0 || i >= t.shape[0])
      fail("{} spot inputs: '{}' has rows for positions {}..{}, not position {}", who, name, first_row,
           first_row + t.shape[0] - 1, r);
    s.data.insert(s.data.end(), t.data.begin() + i * per, t.data.begin() + (i + 1) * per);
  }
  return s;
}

SpotTensor whole(const Tap& t) {
  SpotTensor s;
  s.shape = t.shape;
  s.data.assign(t.data.begin(), t.data.end());
  return s;
}

std::vector<int64_t> range(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

}  // namespace

std::string backend_label(const std::string& backend, const std::string& device) {
  return backend.find(device) != std::string::npos ? backend : backend + " on " + device;
}

std::vector<int64_t> prefill_cuts(const Scenario& s, std::vector<int64_t> extra) {
  const int64_t n = int64_t(s.prompt.size()), piece = s.prefill_chunk > 0 ? s.prefill_chunk : n;
  std::vector<int64_t> cuts = std::move(extra);
  for (int64_t i = 0; i < n; i += piece) cuts.push_back(i);
  cuts.push_back(n);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

SpotInput spot_input_from_taps(const ModelConfig& c, const TapMap& taps, const SpotRequest& req, int layer,
                               int64_t prompt_len, int64_t first_row, const std::string& who) {
  SpotInput in;
  in.layer = layer;
  in.mixer = c.layers.at(size_t(layer));
  in.len = prompt_len;
  in.positions = req.positions;
  const std::string P = "/prefill/" + layer_dir(layer);
  auto tap = [&](const std::string& rel) -> const Tap& {
    auto it = taps.find(P + rel);
    if (it == taps.end())
      fail("{} spot inputs: layer {} recorded no '{}' (prompt of {} tokens; a sparse layer runs dense below "
           "dense_len {})",
           who, layer, rel, prompt_len, c.sparse.dense_len);
    return it->second;
  };
  auto rows = [&](const std::string& rel, const std::vector<int64_t>& r) {
    return tap_rows(tap(rel), first_row, r, who, P + rel);
  };
  const std::vector<int64_t> window = range(req.window_start, prompt_len);
  if (in.mixer == Mixer::Sparse) {
    SparseSpot& sp = in.sparse;
    sp.q = rows("/sparse/proj/q", req.positions);
    sp.blocks = rows("/sparse/select/blocks", req.positions);
    sp.scores = rows("/sparse/select/scores", req.positions);
    sp.attn = rows("/sparse/attn/out", req.positions);
    sp.k1 = whole(tap("/sparse/compress_k/k1"));  // the compressed keys of the whole prompt, as the tap holds them
    sp.k2 = whole(tap("/sparse/compress_k/k2"));
  } else {
    LightningSpot& lt = in.lightning;
    lt.window_start = req.window_start;
    lt.q = rows("/lightning/qk_rope/q", req.positions);
    lt.k = rows("/lightning/qk_rope/k", window);
    lt.v = rows("/lightning/proj/v", window);
    lt.out = rows("/lightning/gla/out", req.positions);
  }
  return in;
}

std::vector<SpotInput> Backend::spot_inputs(const Scenario&, const SpotRequest&) {
  fail("backend '{}' cannot hand over spot-check inputs", name());
}

}  // namespace salasim
