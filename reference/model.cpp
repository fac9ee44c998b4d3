// The layer loop: embed, per layer pre-norm mixer + residual, pre-norm MLP + residual, final norm, logits.
#include "reference/model.hpp"

#include "model/error.hpp"
#include "model/taps.hpp"

namespace salasim::ref {

RefModel::RefModel(const ModelConfig& c, std::shared_ptr<const RefWeights> weights, RefOptions o)
    : cfg(c), w(std::move(weights)), opt(o) {
  rope_tab = rope_table(c.lightning_head_dim, c.rope_theta, opt.rope);
  gamma = c.lightning_decay();
  gla_state.resize(size_t(c.num_hidden_layers));
  kv.resize(size_t(c.num_hidden_layers));
  for (int l = 0; l < c.num_hidden_layers; ++l)
    if (c.layers[size_t(l)] == Mixer::Lightning)
      gla_state[size_t(l)].assign(size_t(c.lightning_nh), Mat::Zero(c.lightning_head_dim, c.lightning_head_dim));
}

Qkv project_qkv(const Mat& a, const LayerWeights& W, const std::string& prefix, TapRecorder* taps, const Num& num) {
  Qkv p{linear(a, W.q, num), linear(a, W.k, num), linear(a, W.v, num)};
  if (taps) {
    taps->put(prefix + "proj/q", p.q);
    taps->put(prefix + "proj/k", p.k);
    taps->put(prefix + "proj/v", p.v);
  }
  return p;
}

Mat gate_o_proj(Mat x, const Mat& z, bool gated, const Mat& Wo, const std::string& prefix, TapRecorder* taps,
                const Num& num) {
  if (gated) {
    x = gate(x, z, num);
    if (taps) taps->put(prefix + "gate/out", x);
  }
  Mat y = linear(x, Wo, num);
  if (taps) taps->put(prefix + "o_proj/out", y);
  return y;
}

namespace {

// One forward call over tokens at positions m.len .. m.len+T-1; `sparse` and `n_blocks` are the call's rule.
Mat forward(RefModel& m, const std::vector<int32_t>& tokens, bool sparse, int64_t n_blocks, TapRecorder* taps) {
  const ModelConfig& c = m.cfg;
  const Num& num = m.opt.num;
  const int64_t pos0 = m.len;
  const double s = c.residual_scale();
  Mat h = embed(m.w->embed, tokens, c.scale_emb, num);
  if (taps) taps->put("embed/out", h);
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const LayerWeights& W = m.w->layers[size_t(l)];
    const std::string L = layer_dir(l) + "/";
    Mat a = rmsnorm(h, W.input_norm, c.rms_norm_eps, num);
    if (taps) taps->put(L + "input_norm/out", a);
    Mat y = W.mixer == Mixer::Lightning ? lightning_mixer(m, l, a, pos0, m.gla_state[size_t(l)], taps)
                                        : sparse_mixer(m, l, a, pos0, sparse, n_blocks, m.kv[size_t(l)], taps);
    residual(h, y, s, num);
    if (taps) taps->put(L + "residual/mid", h);
    Mat b = rmsnorm(h, W.post_norm, c.rms_norm_eps, num);
    if (taps) taps->put(L + "post_norm/out", b);
    Mat act = mlp_act(linear(b, W.mlp_gate, num), linear(b, W.mlp_up, num), num);
    if (taps) taps->put(L + "mlp/act", act);
    Mat mo = linear(act, W.mlp_down, num);
    if (taps) taps->put(L + "mlp/out", mo);
    residual(h, mo, s, num);
    if (taps) taps->put(L + "residual/h", h);
    if (m.opt.on_layer) m.opt.on_layer(m, l, int64_t(tokens.size()));
  }
  Mat hn = rmsnorm(h, m.w->final_norm, c.rms_norm_eps, num);
  if (taps) taps->put("final/norm", hn);
  Mat lg = logits(hn.bottomRows(1), m.w->lm_head, c.logit_divisor(), num);  // generation needs the last row only
  if (taps && taps->wants("final/logits"))
    taps->replace("final/logits", Tap{{1, lg.cols()}, {lg.data(), lg.data() + lg.size()}});
  m.len += int64_t(tokens.size());
  return lg;
}

int64_t blocks_for(int64_t len, int block) { return (len + block - 1) / block; }

}  // namespace

void RefModel::begin_prefill(int64_t total_len) {
  if (total_len < 1) fail("prefill of {} tokens: need at least one", total_len);
  if (len != 0) fail("prefill after {} tokens: a prefill starts a fresh sequence", len);
  prefill_total = total_len;
}

Mat RefModel::prefill_piece(const std::vector<int32_t>& tokens, TapRecorder* taps) {
  if (prefill_total < 0) fail("prefill_piece without begin_prefill");
  if (tokens.empty()) fail("prefill piece of zero tokens");
  if (len + int64_t(tokens.size()) > prefill_total)
    fail("prefill pieces exceed the announced prompt length {}", prefill_total);
  const bool sparse = prefill_total >= cfg.sparse.dense_len;
  phase = "prefill";
  phase_row0 = len;
  if (taps) taps->phase = phase;
  Mat lg = forward(*this, tokens, sparse, blocks_for(prefill_total, cfg.sparse.block_size), taps);
  if (len == prefill_total) prefill_total = -1;
  return lg;
}

Mat RefModel::prefill(const std::vector<int32_t>& tokens, TapRecorder* taps) {
  begin_prefill(int64_t(tokens.size()));
  return prefill_piece(tokens, taps);
}

Mat RefModel::decode(int32_t token, TapRecorder* taps) {
  if (prefill_total >= 0) fail("decode before the prefill of {} tokens finished", prefill_total);
  const int64_t p = len;
  phase = decode_phase(decode_steps);
  phase_row0 = 0;
  if (taps) taps->phase = phase;
  ++decode_steps;
  return forward(*this, {token}, p + 1 >= cfg.sparse.dense_len, blocks_for(p + 1, cfg.sparse.block_size), taps);
}

}  // namespace salasim::ref
