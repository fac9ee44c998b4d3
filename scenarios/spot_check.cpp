// Spot checks: the reference recomputes chosen query positions of one layer from what a backend handed over.
#include "scenarios/spot_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/bf16.hpp"
#include "model/error.hpp"
#include "model/shape.hpp"
#include "reference/model.hpp"
#include "reference/ops.hpp"

namespace salasim {

using ref::Mat;

int64_t SpotTensor::numel() const { return shape_numel(shape); }

SpotTensor SpotTensor::from_bf16(std::vector<int64_t> shape, const uint16_t* bits) {
  SpotTensor t;
  t.shape = std::move(shape);
  t.data.resize(size_t(t.numel()));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = float_from_bf16(bits[i]);
  return t;
}

SpotTensor SpotTensor::from_f32(std::vector<int64_t> shape, const float* values) {
  SpotTensor t;
  t.shape = std::move(shape);
  t.data.assign(values, values + t.numel());
  return t;
}

SpotRequest spot_request(int64_t len, int n, std::vector<int> layers, int64_t window) {
  if (n < 1) fail("--spot {}: need at least one query position", n);
  if (len < 1) fail("spot check of a {}-token prompt: need at least one token", len);
  SpotRequest r;
  r.layers = std::move(layers);
  r.window_start = std::max<int64_t>(0, (len - window) / 64 * 64);
  const int64_t span = len - r.window_start;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = r.window_start + ((i + 1) * span) / n - 1;
    if (p >= r.window_start && (r.positions.empty() || p > r.positions.back())) r.positions.push_back(p);
  }
  return r;
}

std::vector<int> default_spot_layers(const ModelConfig& c) {
  int sparse = -1, lightning = -1;
  for (int l = 0; l < c.num_hidden_layers; ++l) (c.layers[size_t(l)] == Mixer::Sparse ? sparse : lightning) = l;
  std::vector<int> out;
  for (int l : {sparse, lightning})
    if (l >= 0) out.push_back(l);
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

std::string where(const SpotInput& s) { return fmt::format("spot input of layer {}", s.layer); }

void expect(const SpotInput& s, const char* field, const SpotTensor& t, const std::vector<int64_t>& want) {
  if (t.shape != want)
    fail("{}: field '{}' has shape {}, expected {}", where(s), field, format_shape(t.shape), format_shape(want));
  if (int64_t(t.data.size()) != t.numel())
    fail("{}: field '{}' holds {} values, its shape {} needs {}", where(s), field, t.data.size(), format_shape(t.shape),
         t.numel());
}

// Rows [row0, row0 + rows) of a tensor viewed as [*, cols].
Mat rows_of(const SpotTensor& t, int64_t row0, int64_t rows, int64_t cols) {
  Mat m(rows, cols);
  const float* src = t.data.data() + row0 * cols;
  for (int64_t i = 0; i < rows * cols; ++i) m.data()[i] = double(src[i]);
  return m;
}

// [n_groups, n, cols] -> n_groups matrices [n, cols].
std::vector<Mat> split(const SpotTensor& t, int64_t n_groups, int64_t n, int64_t cols) {
  std::vector<Mat> out;
  for (int64_t g = 0; g < n_groups; ++g) out.push_back(rows_of(t, g * n, n, cols));
  return out;
}

Tap tap_of(const SpotTensor& t, bool integer = false) {
  Tap x;
  x.shape = t.shape;
  x.data.assign(t.data.begin(), t.data.end());
  x.integer = integer;
  return x;
}

Tap tap_of(const std::vector<Mat>& ms, std::vector<int64_t> shape) {
  Tap x;
  x.shape = std::move(shape);
  for (const Mat& m : ms) x.data.insert(x.data.end(), m.data(), m.data() + m.size());
  return x;
}

// The three sides of one spot tap, appended row by row.
struct Sides {
  TapMap* ref;
  TapMap* peer;
  TapMap* backend;
  int64_t* order;
  void put(const std::string& name, Tap r, Tap p, Tap b) {
    const int64_t o = (*order)++;
    r.order = p.order = b.order = o;
    (*ref)[name] = std::move(r);
    (*peer)[name] = std::move(p);
    (*backend)[name] = std::move(b);
  }
};

const ref::Num kNums[2] = {ref::f64(), ref::peer()};

void check_sparse(const ModelConfig& c, const SpotInput& s, Sides& out) {
  const SparseSpot& in = s.sparse;
  const ref::SelectParams sp = sparse_rules(c);
  const int64_t N = int64_t(s.positions.size()), H = c.num_attention_heads, G = c.num_key_value_heads, hd = c.head_dim,
                len = s.len, K = sp.k_sel;
  const int64_t NB = (len + sp.block - 1) / sp.block;
  const int k2k = c.sparse.k2_kernel(), k2s = c.sparse.k2_stride();
  if (len < c.sparse.dense_len)
    fail("{}: len {} is below dense_len {}: spot checks cover the sparse path, where every query selects blocks",
         where(s), len, c.sparse.dense_len);
  expect(s, "q", in.q, {N, H * hd});
  expect(s, "k_cache", in.k_cache, {G, len, hd});
  expect(s, "v_cache", in.v_cache, {G, len, hd});
  expect(s, "blocks", in.blocks, {N, G, K});
  expect(s, "scores", in.scores, {N, G, NB});
  expect(s, "attn", in.attn, {N, H * hd});
  const int64_t n1 = ref::n_windows(len, sp.kernel, sp.stride), n2 = ref::n_windows(len, k2k, k2s);
  if (!in.k1.empty()) expect(s, "k1", in.k1, {G, n1, hd});
  if (!in.k2.empty()) expect(s, "k2", in.k2, {G, n2, hd});

  const std::vector<Mat> Kc = split(in.k_cache, G, len, hd), Vc = split(in.v_cache, G, len, hd);
  std::vector<Mat> K1[2], K2[2];
  for (int side = 0; side < 2; ++side)
    for (int64_t g = 0; g < G; ++g) {
      K1[side].push_back(ref::compress_k(Kc[size_t(g)], len, sp.kernel, sp.stride, kNums[side]));
      K2[side].push_back(ref::compress_k(Kc[size_t(g)], len, k2k, k2s, kNums[side]));
    }
  const std::string L = "/spot/" + layer_dir(s.layer) + "/sparse/";
  if (!in.k1.empty())
    out.put(L + "compress_k/k1", tap_of(K1[0], {G, n1, hd}), tap_of(K1[1], {G, n1, hd}), tap_of(in.k1));
  if (!in.k2.empty())
    out.put(L + "compress_k/k2", tap_of(K2[0], {G, n2, hd}), tap_of(K2[1], {G, n2, hd}), tap_of(in.k2));

  Tap blocks[2], scores[2], attn[2];
  for (int side = 0; side < 2; ++side) {
    blocks[side] = Tap{{N, G, K}, {}, true, 0};
    scores[side] = Tap{{N, G, NB}, {}, false, 0};
    attn[side] = Tap{{N, H * hd}, {}, false, 0};
  }
  for (int64_t i = 0; i < N; ++i) {
    const int64_t p = s.positions[size_t(i)], qb = p / sp.block;
    const Mat q = rows_of(in.q, i, 1, H * hd);
    ref::Selection mine[2];
    for (int side = 0; side < 2; ++side) {
      mine[side] = ref::select_blocks(q, p, K1[side], K2[side], sp, NB, true, kNums[side]);
      blocks[side].data.insert(blocks[side].data.end(), mine[side].blocks.begin(), mine[side].blocks.end());
      scores[side].data.insert(scores[side].data.end(), mine[side].scores.begin(), mine[side].scores.end());
    }
    // Attention over what the backend attended to; an id its kernel could not have used (outside [0, qb]) fails
    // the selection gate, and the attention then falls back to the reference's selection.
    ref::Selection theirs = mine[0];
    bool valid = true;
    for (int64_t j = 0; j < G * K; ++j) {
      const float b = in.blocks.data[size_t(i * G * K + j)];
      valid = valid && (b == -1 || (b >= 0 && b <= float(qb) && b == std::floor(b)));
    }
    if (valid)
      for (int64_t j = 0; j < G * K; ++j) theirs.blocks[size_t(j)] = int32_t(in.blocks.data[size_t(i * G * K + j)]);
    for (int side = 0; side < 2; ++side) {
      const Mat a = ref::sparse_attn(q, p, Kc, Vc, theirs, sp.block, sp.tau, kNums[side]);
      attn[side].data.insert(attn[side].data.end(), a.data(), a.data() + a.size());
    }
  }
  out.put(L + "select/scores", scores[0], scores[1], tap_of(in.scores));
  out.put(L + "select/blocks", blocks[0], blocks[1], tap_of(in.blocks, true));
  out.put(L + "attn/out", attn[0], attn[1], tap_of(in.attn));
}

void check_lightning(const ModelConfig& c, const SpotInput& s, Sides& out) {
  const LightningSpot& in = s.lightning;
  const int64_t N = int64_t(s.positions.size()), H = c.lightning_nh, hd = c.lightning_head_dim, HD = H * hd;
  const int64_t W = in.k.shape.empty() ? 0 : in.k.shape[0], c0 = in.window_start;
  expect(s, "state0", in.state0, {H, hd, hd});
  expect(s, "q", in.q, {N, HD});
  expect(s, "k", in.k, {W, HD});
  expect(s, "v", in.v, {W, HD});
  expect(s, "out", in.out, {N, HD});
  if (!in.state1.empty()) expect(s, "state1", in.state1, {H, hd, hd});
  for (int64_t p : s.positions)
    if (p < c0 || p >= c0 + W)
      fail("{}: position {} lies outside the window [{}, {}) that k and v cover", where(s), p, c0, c0 + W);

  const std::vector<double> gamma = c.lightning_decay();
  const double tau = c.lightning_tau();
  const std::vector<Mat> S0 = split(in.state0, H, hd, hd);
  const Mat Kw = rows_of(in.k, 0, W, HD), Vw = rows_of(in.v, 0, W, HD);

  Tap o_ref{{N, HD}, {}, false, 0}, o_peer{{N, HD}, {}, false, 0};
  Mat Qw = Mat::Zero(W, HD);  // the peer runs the window as the GPU does; rows of other positions stay 0
  for (int64_t i = 0; i < N; ++i) {
    const int64_t t = s.positions[size_t(i)] - c0;
    const ref::RowVec q = rows_of(in.q, i, 1, HD).row(0);
    const ref::RowVec o = ref::gla_closed_form(q, Kw, Vw, gamma, tau, S0, t);
    o_ref.data.insert(o_ref.data.end(), o.data(), o.data() + o.size());
    Qw.row(t) = q;
  }
  std::vector<Mat> S_peer = S0;
  const Mat op = W < 64 ? ref::gla_recurrent(Qw, Kw, Vw, gamma, tau, S_peer, ref::peer())
                        : ref::gla_chunked(Qw, Kw, Vw, gamma, tau, S_peer, ref::peer());
  for (int64_t i = 0; i < N; ++i) {
    const auto row = op.row(s.positions[size_t(i)] - c0);
    o_peer.data.insert(o_peer.data.end(), row.data(), row.data() + row.size());
  }
  const std::string L = "/spot/" + layer_dir(s.layer) + "/lightning/";
  out.put(L + "gla/out", o_ref, o_peer, tap_of(in.out));
  if (in.state1.empty()) return;
  // S_W = lambda^W S_0 + sum_s lambda^(W-1-s) k_s^T v_s: the state's closed form over the window
  std::vector<Mat> S_ref(static_cast<size_t>(H));
  for (int64_t h = 0; h < H; ++h) {
    const double g = gamma[size_t(h)];
    Mat Kd = Kw.middleCols(h * hd, hd);
    for (int64_t r = 0; r < W; ++r) Kd.row(r) *= std::exp(g * double(W - 1 - r));
    S_ref[size_t(h)] = std::exp(g * double(W)) * S0[size_t(h)] + Kd.transpose() * Vw.middleCols(h * hd, hd);
  }
  out.put(L + "gla/state", tap_of(S_ref, {H, hd, hd}), tap_of(S_peer, {H, hd, hd}), tap_of(in.state1));
}

}  // namespace

std::vector<std::string> spot_tap_patterns(const ModelConfig& c, const SpotRequest& req, int64_t prompt_len) {
  if (req.positions.empty() || req.positions.front() < req.window_start || req.positions.back() >= prompt_len)
    fail("spot request: positions must lie in [window_start = {}, prompt length = {})", req.window_start, prompt_len);
  std::vector<std::string> patterns;
  for (int l : req.layers) {
    if (l < 0 || l >= c.num_hidden_layers) fail("spot request: layer {} is not a layer of {}", l, c.source);
    const std::string L = layer_dir(l);
    if (c.layers[size_t(l)] == Mixer::Sparse)
      for (const char* p : {"/sparse/proj/q", "/sparse/compress_k/", "/sparse/select/", "/sparse/attn/out"})
        patterns.push_back(L + p);
    else
      for (const char* p : {"/lightning/qk_rope/", "/lightning/proj/v", "/lightning/gla/out"})
        patterns.push_back(L + p);
  }
  return patterns;
}

SpotCheck check_spots(const ModelConfig& c, const std::vector<SpotInput>& spots) {
  SpotCheck out;
  int64_t order = 0;
  Sides sides{&out.ref, &out.peer, &out.backend, &order};
  for (const SpotInput& s : spots) {
    if (s.layer < 0 || s.layer >= c.num_hidden_layers)
      fail("spot input: layer {} is not a layer of {} ({} layers)", s.layer, c.source, c.num_hidden_layers);
    if (c.layers[size_t(s.layer)] != s.mixer)
      fail("{}: mixer '{}' but {} makes layer {} {}", where(s), mixer_name(s.mixer), c.source, s.layer,
           mixer_name(c.layers[size_t(s.layer)]));
    if (s.positions.empty()) fail("{}: no query positions", where(s));
    for (size_t i = 0; i < s.positions.size(); ++i)
      if (s.positions[i] < 0 || s.positions[i] >= s.len || (i && s.positions[i] <= s.positions[i - 1]))
        fail("{}: positions must ascend within [0, len = {}); position {} is {}", where(s), s.len, i, s.positions[i]);
    if (s.mixer == Mixer::Sparse) check_sparse(c, s, sides);
    else check_lightning(c, s, sides);
  }
  out.report = compare_taps(out.ref, &out.peer, out.backend);
  return out;
}

}  // namespace salasim
