// The sparse (InfLLM-v2) mixer (docs/spec.md §4): q/k/v projections (NoPE, GQA), KV cache and compressed keys,
// dense attention below dense_len or block selection + sparse attention from it, sigmoid o_gate, o_proj.
#include <fmt/ranges.h>

#include "model/error.hpp"
#include "model/taps.hpp"
#include "reference/model.hpp"

namespace salasim::ref {

void cache_append(SparseCache& cache, const Mat& k, const Mat& v, int64_t pos0, int hd) {
  const int64_t G = k.cols() / hd, need = pos0 + k.rows();
  if (cache.K.empty()) {
    cache.K.assign(size_t(G), Mat(0, hd));
    cache.V.assign(size_t(G), Mat(0, hd));
    cache.K1.assign(size_t(G), Mat(0, hd));
    cache.K2.assign(size_t(G), Mat(0, hd));
  }
  for (int64_t g = 0; g < G; ++g) {
    Mat& K = cache.K[size_t(g)];
    Mat& V = cache.V[size_t(g)];
    if (K.rows() < need) {  // grow geometrically; rows past len are never read
      const int64_t cap = std::max<int64_t>(need, 2 * K.rows());
      K.conservativeResize(cap, hd);
      V.conservativeResize(cap, hd);
    }
    K.middleRows(pos0, k.rows()) = k.middleCols(g * hd, hd);
    V.middleRows(pos0, v.rows()) = v.middleCols(g * hd, hd);
  }
}

void use_forced_selection(const TapMap& forced, const std::string& name, int64_t row0, Selection& sel) {
  auto it = forced.find(name);
  if (it == forced.end()) fail("teacher forcing: no selection '{}' to force", name);
  const Tap& t = it->second;
  if (t.shape.size() != 3 || t.shape[1] != sel.G || t.shape[2] != sel.K || row0 + sel.T > t.shape[0])
    fail("teacher forcing: '{}' has shape [{}], expected [>= {}, {}, {}]", name, fmt::join(t.shape, ", "), row0 + sel.T,
         sel.G, sel.K);
  const size_t per = size_t(sel.G * sel.K), first = size_t(row0) * per;
  for (size_t i = 0; i < sel.blocks.size(); ++i) sel.blocks[i] = int32_t(t.data[first + i]);
}

Mat sparse_mixer(const RefModel& m, int layer, const Mat& a, int64_t pos0, bool sparse, int64_t n_blocks,
                 SparseCache& cache, TapRecorder* taps) {
  const ModelConfig& c = m.cfg;
  const LayerWeights& W = m.w->layers[size_t(layer)];
  const Num& num = m.opt.num;
  const std::string L = layer_dir(layer) + "/sparse/";
  auto tap = [&](const char* name, const Mat& x) {
    if (taps) taps->put(L + name, x);
  };
  const int hd = c.head_dim;
  const int64_t T = a.rows(), G = c.num_key_value_heads, len = pos0 + T;
  const auto [q, k, v] = project_qkv(a, W, L, taps, num);
  Mat z;
  if (c.attn_use_output_gate) {
    z = linear(a, W.z, num);
    tap("proj/g", z);
  }
  cache_append(cache, k, v, pos0, hd);
  for (int64_t g = 0; g < G; ++g) {
    compress_k_append(cache.K1[size_t(g)], cache.K[size_t(g)], len, c.sparse.kernel_size, c.sparse.kernel_stride, num);
    compress_k_append(cache.K2[size_t(g)], cache.K[size_t(g)], len, c.sparse.k2_kernel(), c.sparse.k2_stride(), num);
  }
  if (taps) {  // the compressed keys of the whole sequence so far: [G, n, hd]
    auto put_ck = [&](const char* name, const std::vector<Mat>& ck) {
      if (!taps->wants(L + name)) return;
      Tap t;
      t.shape = {G, ck[0].rows(), hd};
      for (const Mat& x : ck) t.data.insert(t.data.end(), x.data(), x.data() + x.size());
      taps->replace(L + name, std::move(t));
    };
    put_ck("compress_k/k1", cache.K1);
    put_ck("compress_k/k2", cache.K2);
  }
  Mat attn;
  if (sparse) {
    const bool scores = taps && m.opt.record_scores && taps->wants(L + "select/scores");
    Selection sel = select_blocks(q, pos0, cache.K1, cache.K2, sparse_rules(c), n_blocks, scores, num);
    if (taps) {
      taps->put_ints(L + "select/blocks", sel.blocks, {T, G, sel.K});
      if (scores) taps->put_doubles(L + "select/scores", sel.scores, {T, G, sel.NB});
    }
    const std::string forced = "/" + m.phase + "/" + L + "select/blocks";
    if (m.opt.forced_source) m.opt.forced_source(forced, m.phase_row0, sel);
    else if (m.opt.forced_selection) use_forced_selection(*m.opt.forced_selection, forced, m.phase_row0, sel);
    attn = sparse_attn(q, pos0, cache.K, cache.V, sel, c.sparse.block_size, c.attn_scale(), num);
  } else {
    attn = dense_attn(q, pos0, cache.K, cache.V, hd, c.attn_scale(), num);
  }
  tap("attn/out", attn);
  return gate_o_proj(attn, z, c.attn_use_output_gate, W.o, L, taps, num);
}

}  // namespace salasim::ref
