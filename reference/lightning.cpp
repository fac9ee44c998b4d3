// The Lightning mixer (docs/spec.md §3): q/k/v/z projections, per-head qk RMSNorm, RoPE, GLA, o_norm over all
// heads, sigmoid z gate, o_proj. HF dispatches the recurrent kernel below 64 new tokens, the chunked one above.
#include "model/taps.hpp"
#include "reference/model.hpp"

namespace salasim::ref {

Mat lightning_mixer(const RefModel& m, int layer, const Mat& a, int64_t pos0, std::vector<Mat>& state,
                    TapRecorder* taps) {
  const ModelConfig& c = m.cfg;
  const LayerWeights& W = m.w->layers[size_t(layer)];
  const Num& num = m.opt.num;
  const std::string L = layer_dir(layer) + "/lightning/";
  auto tap = [&](const char* name, const Mat& x) {
    if (taps) taps->put(L + name, x);
  };
  auto [q, k, v] = project_qkv(a, W, L, taps, num);
  Mat z;
  if (c.use_output_gate) {
    z = linear(a, W.z, num);
    tap("proj/z", z);
  }
  if (c.qk_norm) {
    q = rmsnorm_heads(q, W.q_norm, c.lightning_head_dim, c.rms_norm_eps, num);
    k = rmsnorm_heads(k, W.k_norm, c.lightning_head_dim, c.rms_norm_eps, num);
  }
  if (c.lightning_use_rope) {
    rope(q, pos0, m.rope_tab, num);
    rope(k, pos0, m.rope_tab, num);
  }
  tap("qk_rope/q", q);
  tap("qk_rope/k", k);
  Mat o = a.rows() < 64 ? gla_recurrent(q, k, v, m.gamma, c.lightning_tau(), state, num)
                        : gla_chunked(q, k, v, m.gamma, c.lightning_tau(), state, num);
  tap("gla/out", o);
  if (taps && taps->wants(L + "gla/state")) {
    const int64_t H = c.lightning_nh, hd = c.lightning_head_dim;
    Tap s;
    s.shape = {H, hd, hd};
    for (const Mat& S : state) s.data.insert(s.data.end(), S.data(), S.data() + S.size());
    taps->replace(L + "gla/state", std::move(s));
  }
  if (c.use_output_norm) {
    o = rmsnorm(o, W.o_norm, c.rms_norm_eps, num);
    tap("o_norm/out", o);
  }
  return gate_o_proj(o, z, c.use_output_gate, W.o, L, taps, num);
}

}  // namespace salasim::ref
