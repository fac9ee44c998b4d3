// Greedy generation on the float64 reference (or its peer): the shared loop of model/generate.hpp, with the
// selection of the last processed token taken from the sparse layers' own select/blocks (and scores) taps.
#include "model/error.hpp"
#include "model/generate.hpp"
#include "model/taps.hpp"
#include "reference/model.hpp"

namespace salasim::ref {

namespace {

// The RefModel as generate_loop wants it; records only the selection taps, and only when asked.
struct RefSteps {
  RefModel& m;
  bool record = false, scores = false;
  TapMap taps;
  std::unique_ptr<TapRecorder> rec;
  bool last_dense = false;  // the call under way ran dense

  RefSteps(RefModel& model, const GenerateOptions& o) : m(model), record(o.record_selection), scores(o.selection_scores) {
    if (!record) return;
    TapFilter f;
    for (int l = 0; l < m.cfg.num_hidden_layers; ++l)
      if (m.cfg.layers[size_t(l)] == Mixer::Sparse) {
        f.patterns.push_back(layer_dir(l) + "/sparse/select/blocks");
        if (scores) f.patterns.push_back(layer_dir(l) + "/sparse/select/scores");
      }
    rec = std::make_unique<TapRecorder>(f, &taps);
  }
  TapRecorder* recorder() {
    taps.clear();  // only the call under way matters: its last row is the last token
    return rec.get();
  }
  void begin_prefill(int64_t n) {
    m.begin_prefill(n);
    last_dense = n < m.cfg.sparse.dense_len;
  }
  Mat prefill_piece(const std::vector<int32_t>& t) { return m.prefill_piece(t, recorder()); }
  Mat decode(int32_t t) {
    last_dense = m.len + 1 < m.cfg.sparse.dense_len;
    return m.decode(t, recorder());
  }
  std::vector<LayerSelection> last_selection(bool want_scores) const {
    std::vector<LayerSelection> out;
    const std::string& phase = m.phase;  // of the last call
    for (int l = 0; l < m.cfg.num_hidden_layers; ++l) {
      if (m.cfg.layers[size_t(l)] != Mixer::Sparse) continue;
      LayerSelection s;
      s.layer = l;
      s.pos = m.len - 1;
      s.dense = last_dense;
      s.groups = m.cfg.num_key_value_heads;
      s.k_sel = m.cfg.sparse.k_sel();
      s.n_blocks = (m.len + m.cfg.sparse.block_size - 1) / m.cfg.sparse.block_size;
      if (!s.dense) {
        const std::string base = "/" + phase + "/" + layer_dir(l) + "/sparse/select/";
        auto it = taps.find(base + "blocks");
        if (it == taps.end()) fail("generate: the reference recorded no selection for layer {}", l);
        const Tap& b = it->second;  // [T, G, K]: the last row is the last token
        const size_t per = size_t(b.shape[1] * b.shape[2]);
        for (size_t i = b.data.size() - per; i < b.data.size(); ++i) s.blocks.push_back(int32_t(b.data[i]));
        auto sc = taps.find(base + "scores");
        if (want_scores && sc != taps.end()) {
          const Tap& t = sc->second;  // [T, G, NB]
          s.n_blocks = t.shape[2];
          const size_t w = size_t(t.shape[1] * t.shape[2]);
          for (size_t i = t.data.size() - w; i < t.data.size(); ++i) s.scores.push_back(float(t.data[i]));
        }
      }
      out.push_back(std::move(s));
    }
    return out;
  }
};

}  // namespace

Generation generate(RefModel& m, const std::vector<int32_t>& prompt, const GenerateOptions& o) {
  if (o.selection_scores && !m.opt.record_scores) fail("generate: selection scores asked of a model that does not record them");
  RefSteps steps(m, o);
  return generate_loop(steps, prompt, o);
}

}  // namespace salasim::ref
