// The CUDA model runner (host code): planning, allocation, and the layer loop over chunks of the prompt.
#include "gpu/runner.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>

#include "gpu/check.cuh"
#include "gpu/compress_k.hpp"
#include "gpu/device_weights.hpp"
#include "gpu/gla.hpp"
#include "gpu/linear.hpp"
#include "gpu/ops.hpp"
#include "gpu/select_blocks.hpp"
#include "gpu/sparse_args.hpp"
#include "gpu/sparse_attn.hpp"
#include "model/bf16.hpp"
#include "model/error.hpp"
#include "model/memory.hpp"
#include "model/runner_plan.hpp"
#include "model/taps.hpp"
#include "model/windows.hpp"

namespace salasim::gpu {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void check_supported(const ModelConfig& c, const RunnerOptions& o) {
  const SparseConfig& s = c.sparse;
  if (c.head_dim != 128 || c.lightning_head_dim != 128)
    fail("{}: the CUDA path needs head_dim = lightning_head_dim = 128 (got {} and {})", c.source, c.head_dim,
         c.lightning_head_dim);
  if (s.kernel_size != 32 || s.kernel_stride != 16 || s.block_size != 64)
    fail("{}: the CUDA path implements the released sparse rules (kernel 32, stride 16, block 64)", c.source);
  if (o.chunk < 64 || o.chunk % 64 != 0) fail("prefill chunk {}: must be a positive multiple of 64", o.chunk);
  if (o.max_context < 1) fail("max_context {}: need at least one token", o.max_context);
  if (o.max_context >= (int64_t(1) << 24))
    fail("context {}: positions past 2^24 are not exact in the fp32 RoPE angle table", o.max_context);
}

int64_t n_sparse_layers(const ModelConfig& c) { return c.n_layers(Mixer::Sparse); }
int64_t block_cap(const ModelConfig& c, const RunnerOptions& o) { return ceil_div(o.max_context, c.sparse.block_size); }
// Per sparse layer [G, k_sel] ids (+ [G, n_blocks] scores), and one [G, k_sel] scratch for the one-query selection.
size_t last_selection_bytes(const ModelConfig& c, const RunnerOptions& o) {
  const int64_t G = c.num_key_value_heads, K = c.sparse.k_sel();
  const int64_t per = G * K * 4 + (o.selection_scores ? G * block_cap(c, o) * 4 : 0);
  return size_t(n_sparse_layers(c) * per + G * K * 4);
}

}  // namespace

std::string MemoryPlan::table() const {
  std::string out;
  for (const MemoryItem& i : items)
    out += fmt::format("  {:<34} {:>10.3f} GiB\n", i.name, double(i.bytes) / double(1ull << 30));
  out += fmt::format("  {:<34} {:>10.3f} GiB\n", "total", double(total) / double(1ull << 30));
  return out;
}

MemoryPlan plan_memory(const ModelConfig& c, const RunnerOptions& o) {
  check_supported(c, o);
  MemoryPlan p;
  auto add = [&](std::string name, size_t b) {
    p.items.push_back({std::move(name), b});
    p.total += b;
  };
  add("weights (bf16)", device_weight_bytes(c));
  add(fmt::format("KV cache ({} tokens)", o.max_context), size_t(kv_cache_bytes(c, o.max_context)));
  add("compressed keys K1 + K2", size_t(compressed_key_bytes(c, o.max_context)));
  add("GLA state (fp32)", size_t(gla_state_bytes(c)));
  const RunnerWorkspace a = runner_workspace(c, o.chunk, o.max_context, o.taps);
  add(fmt::format("activations, chunk of {}", a.chunk), a.activations());
  add("GLA segment states", a.gla_ws);
  add("selection (ids + workspace)", a.blocks + a.sel_ws + a.scores);
  add("attention split partials", a.attn_ws + a.attn_stats);
  add("cuBLAS workspace", a.cublas);
  if (o.selection || o.selection_scores) add("last-token selections", last_selection_bytes(c, o));
  return p;
}

// ---- the runner ----

struct Runner::Impl {
  ModelConfig cfg;
  RunnerOptions opt;
  MemoryPlan plan;
  Stream stream;  // its pdl flag: opt.pdl
  std::unique_ptr<Blas> blas;
  DeviceWeights w;
  // caches
  std::vector<Buffer<bf16_t>> K, V, K1, K2;  // per layer (sparse only): [G, cap, hd], [G, cap1, hd], [G, cap2, hd]
  std::vector<Buffer<float>> S;              // per layer (Lightning only): [H, hd, hd]
  int64_t cap = 0, cap1 = 0, cap2 = 0;
  Buffer<float> gamma, inv_freq;
  // activations
  Buffer<bf16_t> h, a, y, proj, attn, gu, act, logits_bf16;
  Buffer<float> logits_f32, scores;
  Buffer<uint8_t> gla_ws, sel_ws, attn_ws;
  Buffer<unsigned long long> attn_stats;  // AttnArgs::tile_stats of every sparse prefill call since the last reset
  Buffer<int32_t> blocks, forced_blocks, tokens;
  size_t in_use = 0;
  // state
  int64_t len = 0, prefill_total = -1;
  int decode_steps = 0;
  std::vector<double> enqueue_s;  // per decode step: host seconds to enqueue its work (Runner::decode_enqueue_s)
  // decode_ahead's steps in flight: each ends with greedy_token writing its token into tokens[0] (the next step's
  // input) and into its slot of `ring` (host-mapped [kRing, 2]: token, finite), then records its slot's event.
  static constexpr int kRing = 4;
  int32_t* ring = nullptr;
  int32_t* ring_dev = nullptr;
  cudaEvent_t ring_done[kRing] = {};
  int64_t ahead_issued = 0, ahead_read = 0;  // decode_ahead calls so far; decode_wait calls so far
  bool greedy_on_device = false;             // tokens[0] holds the last step's greedy token (not an uploaded id)
  void no_steps_in_flight(const char* what) const {
    if (ahead_issued != ahead_read)
      fail("{} with {} decode_ahead steps in flight: decode_wait for them first", what, ahead_issued - ahead_read);
  }
  // decode steps as CUDA graphs (RunnerOptions::graph): one executable per topology, keyed by its node count (two
  // topologies of one count only cost a fresh instantiation: cudaGraphExecUpdate refuses a graph whose nodes or
  // edges differ from the executable's, and then that key's executable is rebuilt)
  std::map<size_t, cudaGraphExec_t> graphs;
  DecodeGraphStats graph_stats;
  // profiling
  struct Seg {
    int cls;
    cudaEvent_t a, b;
  };
  std::vector<Seg> segs;
  std::vector<cudaEvent_t> pool;
  PhaseTimes times;

  ~Impl() {
    // Teardown is best effort and must not throw: a CUDA error here was already raised by the call that caused it.
    try {
      flush_profile();
    } catch (const Error&) {}
    for (cudaEvent_t e : pool) cudaEventDestroy(e);
    for (auto& [n, x] : graphs) cudaGraphExecDestroy(x);  // a launch still in flight is freed when it completes
    for (cudaEvent_t e : ring_done)
      if (e) cudaEventDestroy(e);
    if (ring) cudaFreeHost(ring);
    blas.reset();
    if (stream) cudaStreamDestroy(stream);
  }

  // op classes of PhaseTimes
  enum { kGemm, kSelect, kSparse, kDense, kGla, kOther };
  cudaEvent_t event() {
    if (!pool.empty()) {
      cudaEvent_t e = pool.back();
      pool.pop_back();
      return e;
    }
    cudaEvent_t e;
    CUDA_CHECK(cudaEventCreate(&e), "profiler event");
    return e;
  }
  template <class F>
  void timed(int cls, F&& f) {
    if (!opt.profile) return f();
    Seg s{cls, event(), event()};
    CUDA_CHECK(cudaEventRecord(s.a, stream), "profiler");
    f();
    CUDA_CHECK(cudaEventRecord(s.b, stream), "profiler");
    segs.push_back(s);
  }
  void flush_profile() {
    if (segs.empty()) return;
    CUDA_CHECK(cudaStreamSynchronize(stream), "profiler");
    double* slot[] = {&times.gemm, &times.select, &times.sparse_attn, &times.dense_attn, &times.gla, &times.other};
    for (Seg& s : segs) {
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, s.a, s.b), "profiler");
      *slot[s.cls] += ms * 1e-3;
      pool.push_back(s.a);
      pool.push_back(s.b);
    }
    segs.clear();
  }

  void gemm(const bf16_t* x, int64_t ldx, const bf16_t* W, int64_t T, int in, int out, bf16_t* yy, int64_t ldy,
            float alpha = 1.0f) {
    timed(kGemm, [&] { linear(*blas, x, ldx, W, T, in, out, yy, ldy, alpha, opt.gemv); });
  }

  // ---- the residual stream ----
  // A decode step without taps runs each residual, and the norm after it, inside the GEMV that reads the norm
  // (gemv_residual, linear.hpp): add_residual leaves the residual pending and the next gemm_in applies it. That
  // kernel writes the new stream to a row other than the one it reads, so the stream alternates between h's first
  // two rows (hc: the current one); T > 1, or any tap, takes residual() in place on h's rows.
  bf16_t* hc = nullptr;
  bool fuse = false;
  // The decode step's other fusions (DecodeFusion, runner.hpp): each mixer's gate inside its output projection's GEMV
  // (gemv_gate), qk-norm and RoPE inside the recurrent GLA kernel (gla_recurrent_rope).
  bool fuse_gate = false, fuse_rope = false;
  const bf16_t* pending = nullptr;  // the norm weight of a residual not yet applied (fuse only)
  GemvResidual pending_residual(const bf16_t* norm) const {
    GemvResidual r;
    r.h = hc;
    r.b = y.get();
    r.scale = float(cfg.residual_scale());
    r.w = norm;
    r.eps = float(cfg.rms_norm_eps);
    r.h_out = hc == h.get() ? h.get() + cfg.hidden_size : h.get();
    r.a_out = a.get();
    return r;
  }
  // h += rs * y, then the norm into a: now, or left pending when fused.
  void add_residual(int64_t T, const bf16_t* norm) {
    pending = norm;
    if (!fuse) apply_pending(T);
  }
  void apply_pending(int64_t T) {
    if (!pending) return;
    const bf16_t* norm = pending;
    pending = nullptr;
    timed(kOther, [&] {
      residual(hc, y.get(), T, int(cfg.hidden_size), float(cfg.residual_scale()), norm, float(cfg.rms_norm_eps),
               a.get(), stream);
    });
  }
  // yy = alpha * a W^T for a, the normed stream; act: the gate|up form with mlp_act (T = 1). A pending residual is
  // applied inside the GEMV where gemv_residual takes the shapes, on its own before it otherwise.
  void gemm_in(const bf16_t* W, int64_t T, int out, bf16_t* yy, int64_t ldy, float alpha = 1.0f, bool act = false) {
    const int D = int(cfg.hidden_size);
    if (pending) {
      const GemvResidual r = pending_residual(pending);
      if (gemv_residual_supported(r, W, D)) {
        timed(kGemm, [&] { gemv_residual(W, r, D, out, yy, alpha, act, stream); });
        hc = r.h_out;
        pending = nullptr;
        return;
      }
      apply_pending(T);
    }
    if (act) timed(kGemm, [&] { gemv_mlp_act(W, a.get(), D, out, yy, alpha, stream); });
    else gemm(a.get(), D, W, T, D, out, yy, ldy, alpha);
  }
  // The end of a forward call: a pending residual applied on its own. The stream's last value may sit in h's second
  // row; nothing reads it after the call (the next call's embedding overwrites h), so it is not copied back.
  void settle_residual(int64_t T) {
    apply_pending(T);
    hc = h.get();
  }

  // ---- taps ----
  std::vector<double> download(const bf16_t* p, int64_t rows, int64_t cols, int64_t ld) {
    std::vector<bf16_t> raw(size_t(rows * cols));
    CUDA_CHECK(cudaMemcpy2DAsync(raw.data(), size_t(cols) * 2, p, size_t(ld) * 2, size_t(cols) * 2, size_t(rows),
                                 cudaMemcpyDeviceToHost, stream),
               "tap download");
    CUDA_CHECK(cudaStreamSynchronize(stream), "tap download");
    std::vector<double> d(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) d[i] = double(float_from_bf16(raw[i]));
    return d;
  }
  void tap(TapRecorder* t, const std::string& rel, const bf16_t* p, int64_t rows, int64_t cols, int64_t ld) {
    if (!t || !t->wants(rel)) return;
    t->put_doubles(rel, download(p, rows, cols, ld), {rows, cols});
  }
  void tap_cache(TapRecorder* t, const std::string& rel, const bf16_t* p, int64_t n, int64_t ccap) {
    if (!t || !t->wants(rel)) return;
    const int G = cfg.num_key_value_heads, hd = cfg.head_dim;
    Tap out;
    out.shape = {G, n, hd};
    for (int g = 0; g < G; ++g) {
      std::vector<double> d = download(p + int64_t(g) * ccap * hd, n, hd, hd);
      out.data.insert(out.data.end(), d.begin(), d.end());
    }
    t->replace(rel, std::move(out));
  }

  void allocate() {
    const ModelConfig& c = cfg;
    cudaStream_t raw = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&raw, cudaStreamNonBlocking), "runner stream");
    stream = Stream(raw, opt.pdl);
    blas = std::make_unique<Blas>(stream);
    w = load_device_weights(c, weights_src, stream);
    const int G = c.num_key_value_heads, hd = c.head_dim;
    cap = opt.max_context;
    cap1 = std::max<int64_t>(1, n_windows(cap, c.sparse.kernel_size, c.sparse.kernel_stride));
    cap2 = std::max<int64_t>(1, n_windows(cap, c.sparse.k2_kernel(), c.sparse.k2_stride()));
    K.resize(size_t(c.num_hidden_layers));
    V.resize(K.size());
    K1.resize(K.size());
    K2.resize(K.size());
    S.resize(K.size());
    for (int l = 0; l < c.num_hidden_layers; ++l) {
      if (c.layers[size_t(l)] == Mixer::Sparse) {
        K[size_t(l)] = Buffer<bf16_t>(size_t(G * cap * hd), "KV cache K");
        V[size_t(l)] = Buffer<bf16_t>(size_t(G * cap * hd), "KV cache V");
        K1[size_t(l)] = Buffer<bf16_t>(size_t(G * cap1 * hd), "compressed keys K1");
        K2[size_t(l)] = Buffer<bf16_t>(size_t(G * cap2 * hd), "compressed keys K2");
      } else {
        S[size_t(l)] = Buffer<float>(size_t(c.lightning_nh) * c.lightning_head_dim * c.lightning_head_dim, "GLA state");
        fill_bytes(S[size_t(l)].get(), 0, S[size_t(l)].size() * 4);
      }
    }
    std::vector<float> g;
    for (double x : c.lightning_decay()) g.push_back(float(x));
    gamma = to_device(g, "decay");
    std::vector<float> f;  // the fp32 angle table of reference/rope.cpp
    for (int i = 0; i < c.lightning_head_dim / 2; ++i) {
      const float e = float(2 * i) / float(c.lightning_head_dim);
      f.push_back(1.0f / float(std::pow(double(float(c.rope_theta)), double(e))));
    }
    inv_freq = to_device(f, "rope inv_freq");
    const RunnerWorkspace s = runner_workspace(c, opt.chunk, opt.max_context, opt.taps);
    h = Buffer<bf16_t>(s.h / 2, "residual stream");
    a = Buffer<bf16_t>(s.a / 2, "normed input");
    y = Buffer<bf16_t>(s.y / 2, "branch output");
    proj = Buffer<bf16_t>(s.proj / 2, "fused projection");
    attn = Buffer<bf16_t>(s.attn / 2, "mixer output");
    gu = Buffer<bf16_t>(s.gu / 2, "mlp gate|up");
    act = Buffer<bf16_t>(s.act / 2, "mlp activation");
    gla_ws = Buffer<uint8_t>(s.gla_ws, "GLA segment states");
    blocks = Buffer<int32_t>(s.blocks / 8, "selected blocks");
    forced_blocks = Buffer<int32_t>(s.blocks / 8, "forced blocks");
    sel_ws = Buffer<uint8_t>(s.sel_ws, "selection workspace");
    attn_ws = Buffer<uint8_t>(s.attn_ws, "attention split partials");
    if (s.attn_stats) {
      attn_stats = Buffer<unsigned long long>(s.attn_stats / 8, "sparse_attn tile counters");
      fill_bytes(attn_stats.get(), 0, s.attn_stats);
    }
    scores = Buffer<float>(s.scores / 4, "block scores");
    tokens = Buffer<int32_t>(s.tokens / 4, "tokens");
    logits_bf16 = Buffer<bf16_t>(size_t(c.vocab_size), "logits");
    logits_f32 = Buffer<float>(size_t(c.vocab_size), "logits fp32");
    CUDA_CHECK(cudaStreamSynchronize(stream), "weight fill");
    size_t fr = 0, tot = 0;
    mem_info(&fr, &tot);
    in_use = tot - fr;
  }
  WeightSource weights_src;

  // ---- one layer's mixers ----
  // y = W gate(...) for one token, the gate inside the GEMV (fuse_gate; the shapes gemv_gate takes): true when done.
  bool gated_o_proj(const GemvGate& gg, const bf16_t* W, int in) {
    if (!fuse_gate || !gemv_gate_supported(gg, W, in)) return false;
    timed(kGemm, [&] { gemv_gate(W, gg, in, int(cfg.hidden_size), y.get(), 1.0f, stream); });
    return true;
  }

  void lightning(int l, int64_t T, int64_t pos0, bool recurrent, TapRecorder* taps) {
    const ModelConfig& c = cfg;
    const LayerBuffers& L = w.layers[size_t(l)];
    const int64_t D = c.hidden_size, Ld = c.lightning_dim(), ld = 4 * Ld;
    const int H = c.lightning_nh, hd = c.lightning_head_dim;
    const std::string P = layer_dir(l) + "/lightning/";
    bf16_t *q = proj.get(), *k = q + Ld, *v = q + 2 * Ld, *z = q + 3 * Ld;
    gemm_in(L.proj.get(), T, int(4 * Ld), proj.get(), ld);
    tap(taps, P + "proj/q", q, T, Ld, ld);
    tap(taps, P + "proj/k", k, T, Ld, ld);
    tap(taps, P + "proj/v", v, T, Ld, ld);
    tap(taps, P + "proj/z", z, T, Ld, ld);
    const bool rope_in_gla = fuse_rope && recurrent;  // then q and k stay unrotated in proj (no tap reads them)
    if (!rope_in_gla)
      timed(kOther, [&] {  // k = q + Ld: q's and k's heads in one launch
        rope_qk(q, ld, T, H, hd, L.q_norm.get(), L.k_norm.get(), float(c.rms_norm_eps), pos0, inv_freq.get(), stream);
      });
    tap(taps, P + "qk_rope/q", q, T, Ld, ld);
    tap(taps, P + "qk_rope/k", k, T, Ld, ld);
    float* St = S[size_t(l)].get();
    timed(kGla, [&] {
      if (rope_in_gla) {
        const GlaRope r{L.q_norm.get(), L.k_norm.get(), float(c.rms_norm_eps), pos0, inv_freq.get()};
        gla_recurrent_rope(q, k, v, ld, T, H, hd, r, gamma.get(), float(c.lightning_tau()), St, attn.get(), Ld, stream);
      } else if (recurrent) {
        gla_recurrent(q, k, v, ld, T, H, hd, gamma.get(), float(c.lightning_tau()), St, attn.get(), Ld, stream);
      } else {
        gla_chunked(q, k, v, ld, T, H, hd, gamma.get(), float(c.lightning_tau()), St, attn.get(), Ld, gla_ws.get(),
                    stream);
      }
    });
    tap(taps, P + "gla/out", attn.get(), T, Ld, Ld);
    if (taps && taps->wants(P + "gla/state")) {
      std::vector<float> st = S[size_t(l)].download();
      taps->replace(P + "gla/state", Tap{{H, hd, hd}, std::vector<double>(st.begin(), st.end())});
    }
    // o_norm and the z gate in one pass; o_norm's output is written out only for its tap, into the MLP's gate|up
    // buffer ([chunk, 2I], free until the MLP) where T * Ld elements fit (the two ops apart otherwise: same bits)
    const float eps = float(c.rms_norm_eps);
    if (gated_o_proj(GemvGate{attn.get(), z, L.o_norm.get(), eps, nullptr}, L.o.get(), int(Ld))) return;
    const bool want_norm = taps && taps->wants(P + "o_norm/out");
    if (want_norm && gu.size() < size_t(T * Ld)) {
      timed(kOther, [&] { rmsnorm(attn.get(), Ld, L.o_norm.get(), T, int(Ld), eps, attn.get(), Ld, stream); });
      tap(taps, P + "o_norm/out", attn.get(), T, Ld, Ld);
      timed(kOther, [&] { gate(attn.get(), Ld, z, ld, T, int(Ld), attn.get(), Ld, stream); });
    } else {
      bf16_t* normed = want_norm ? gu.get() : nullptr;
      timed(kOther, [&] {
        rmsnorm_gate(attn.get(), Ld, L.o_norm.get(), z, ld, T, int(Ld), eps, attn.get(), Ld, normed, stream);
      });
      if (normed) tap(taps, P + "o_norm/out", normed, T, Ld, Ld);
    }
    tap(taps, P + "gate/out", attn.get(), T, Ld, Ld);
    gemm(attn.get(), Ld, L.o.get(), T, int(Ld), int(D), y.get(), D);
    tap(taps, P + "o_proj/out", y.get(), T, D, D);
  }

  void sparse_layer(int l, int64_t T, int64_t pos0, bool sparse, int64_t n_blocks, const std::string& phase,
                    int64_t row0, TapRecorder* taps, const TapMap* forced) {
    const ModelConfig& c = cfg;
    const LayerBuffers& L = w.layers[size_t(l)];
    const int64_t D = c.hidden_size, Q = c.q_dim(), KVd = c.kv_dim(), ld = 2 * Q + 2 * KVd;
    const int G = c.num_key_value_heads, hd = c.head_dim, Ks = c.sparse.k_sel();
    const std::string P = layer_dir(l) + "/sparse/";
    bf16_t *q = proj.get(), *k = q + Q, *v = k + KVd, *g = v + KVd;
    gemm_in(L.proj.get(), T, int(ld), proj.get(), ld);
    tap(taps, P + "proj/q", q, T, Q, ld);
    tap(taps, P + "proj/k", k, T, KVd, ld);
    tap(taps, P + "proj/v", v, T, KVd, ld);
    tap(taps, P + "proj/g", g, T, Q, ld);
    bf16_t *Kc = K[size_t(l)].get(), *Vc = V[size_t(l)].get();
    // append this chunk's keys and values to the caches' rows pos0 .. pos0 + T - 1 of every kv head
    timed(kOther, [&] { kv_append(k, v, ld, T, G, hd, Kc, Vc, cap, pos0, stream); });
    const int64_t len_new = pos0 + T;
    timed(kSelect, [&] {
      compress_k(Kc, cap, G, hd, pos0, len_new, c.sparse.kernel_size, c.sparse.kernel_stride, K1[size_t(l)].get(), cap1,
                 stream);
      compress_k(Kc, cap, G, hd, pos0, len_new, c.sparse.k2_kernel(), c.sparse.k2_stride(), K2[size_t(l)].get(), cap2,
                 stream);
    });
    tap_cache(taps, P + "compress_k/k1", K1[size_t(l)].get(),
              n_windows(len_new, c.sparse.kernel_size, c.sparse.kernel_stride), cap1);
    tap_cache(taps, P + "compress_k/k2", K2[size_t(l)].get(),
              n_windows(len_new, c.sparse.k2_kernel(), c.sparse.k2_stride()), cap2);
    const SparseRules rules = sparse_rules(c);
    const QueryRows rows{q, ld, T, pos0};
    const SparseCache cache{Kc, Vc, cap, K1[size_t(l)].get(), cap1, K2[size_t(l)].get(), cap2};
    AttnArgs at = attn_args(rules, rows, cache, nullptr, attn.get(), Q, {attn_ws.get(), attn_ws.size()});
    at.engine = opt.attn_engine;
    at.tile_stats = T > kAttnSplitMaxT ? attn_stats.get() : nullptr;
    if (sparse) {
      const bool want_scores = taps && taps->wants(P + "select/scores") && scores.size() > 0;
      const SelectArgs sa = select_args(rules, rows, cache, blocks.get(), want_scores ? scores.get() : nullptr,
                                        n_blocks, {sel_ws.get(), sel_ws.size()});
      timed(kSelect, [&] { select_blocks(sa, stream); });
      keep_selection(l, sa);
      if (taps && taps->wants(P + "select/blocks")) {
        std::vector<int32_t> b(size_t(T * G * Ks));
        CUDA_CHECK(cudaMemcpyAsync(b.data(), blocks.get(), b.size() * 4, cudaMemcpyDeviceToHost, stream), "tap blocks");
        CUDA_CHECK(cudaStreamSynchronize(stream), "tap blocks");
        taps->put_ints(P + "select/blocks", b, {T, G, Ks});
      }
      if (want_scores) {
        std::vector<float> sc(size_t(T * G * n_blocks));
        CUDA_CHECK(cudaMemcpyAsync(sc.data(), scores.get(), sc.size() * 4, cudaMemcpyDeviceToHost, stream),
                   "tap scores");
        CUDA_CHECK(cudaStreamSynchronize(stream), "tap scores");
        taps->put_doubles(P + "select/scores", std::vector<double>(sc.begin(), sc.end()), {T, G, n_blocks});
      }
      at.blocks = blocks.get();
      if (forced) at.blocks = upload_forced(*forced, "/" + phase + "/" + P + "select/blocks", row0, T);
      timed(kSparse, [&] { sparse_attn(at, stream); });
    } else {
      timed(kDense, [&] { dense_attn(at, stream); });
      keep_dense(l, pos0 + T - 1);
    }
    tap(taps, P + "attn/out", attn.get(), T, Q, Q);
    if (gated_o_proj(GemvGate{attn.get(), g, nullptr, 0.0f, nullptr}, L.o.get(), int(Q))) return;
    timed(kOther, [&] { gate(attn.get(), Q, g, ld, T, int(Q), attn.get(), Q, stream); });
    tap(taps, P + "gate/out", attn.get(), T, Q, Q);
    gemm(attn.get(), Q, L.o.get(), T, int(Q), int(D), y.get(), D);
    tap(taps, P + "o_proj/out", y.get(), T, D, D);
  }

  // ---- the last token's selection per sparse layer (Runner::last_selection) ----
  struct KeptSelection {
    bool dense = true;
    int64_t pos = -1, n_blocks = 0;
  };
  std::vector<KeptSelection> kept;          // per layer
  Buffer<int32_t> kept_blocks, one_blocks;  // [layers, G, k_sel]; [G, k_sel] scratch
  Buffer<float> kept_scores;                // [layers, G, block_cap]
  int64_t kept_cap = 0;

  void allocate_selection() {
    if (opt.selection_scores) opt.selection = true;
    if (!opt.selection) return;
    const int64_t L = cfg.num_hidden_layers, G = cfg.num_key_value_heads, K = cfg.sparse.k_sel();
    kept.assign(size_t(L), {});
    kept_blocks = Buffer<int32_t>(size_t(L * G * K), "last-token selections");
    one_blocks = Buffer<int32_t>(size_t(G * K), "one-query selection");
    kept_cap = block_cap(cfg, opt);
    if (opt.selection_scores) kept_scores = Buffer<float>(size_t(L * G * kept_cap), "last-token block scores");
  }
  void keep_dense(int l, int64_t pos) {
    if (!opt.selection) return;
    kept[size_t(l)] = {true, pos, 0};
  }
  // sa: the call's selection, already enqueued. Row T-1 is the last token's; its scores come from the same
  // function run for that one query (the chunk's call writes no scores unless taps ask, and [T, G, n_blocks]
  // scores of a whole chunk would not fit).
  void keep_selection(int l, const SelectArgs& sa) {
    if (!opt.selection) return;
    const int64_t G = sa.G, K = sa.k_sel;
    kept[size_t(l)] = {false, sa.pos0 + sa.T - 1, sa.n_blocks};
    CUDA_CHECK(cudaMemcpyAsync(kept_blocks.get() + int64_t(l) * G * K, sa.blocks + (sa.T - 1) * G * K,
                               size_t(G * K) * 4, cudaMemcpyDeviceToDevice, stream),
               "keep selection");
    if (!opt.selection_scores) return;
    if (sa.n_blocks > kept_cap) fail("selection of {} blocks exceeds the planned {}", sa.n_blocks, kept_cap);
    SelectArgs one = sa;
    one.q = sa.q + (sa.T - 1) * sa.ldq;
    one.T = 1;
    one.pos0 = sa.pos0 + sa.T - 1;
    one.blocks = one_blocks.get();
    one.scores = kept_scores.get() + int64_t(l) * G * kept_cap;
    one.n_blocks = sa.n_blocks;
    timed(kSelect, [&] { select_blocks(one, stream); });
  }

  const int32_t* upload_forced(const TapMap& forced, const std::string& name, int64_t row0, int64_t T) {
    auto it = forced.find(name);
    if (it == forced.end()) fail("teacher forcing: no selection '{}' to force", name);
    const Tap& t = it->second;
    const int64_t per = int64_t(cfg.num_key_value_heads) * cfg.sparse.k_sel();
    if (t.shape.size() != 3 || t.shape[1] * t.shape[2] != per || row0 + T > t.shape[0])
      fail("teacher forcing: '{}' has the wrong shape for rows [{}, {})", name, row0, row0 + T);
    std::vector<int32_t> b(size_t(T * per));
    for (size_t i = 0; i < b.size(); ++i) b[i] = int32_t(t.data[size_t(row0 * per) + i]);
    CUDA_CHECK(cudaMemcpyAsync(forced_blocks.get(), b.data(), b.size() * 4, cudaMemcpyHostToDevice, stream),
               "forced upload");
    CUDA_CHECK(cudaStreamSynchronize(stream), "forced upload");
    return forced_blocks.get();
  }

  // tokens[0 .. T) = host ids for positions len .. len + T - 1, each checked against the vocabulary first.
  void upload_tokens(const int32_t* host_tokens, int64_t T) {
    for (int64_t t = 0; t < T; ++t)
      if (host_tokens[t] < 0 || host_tokens[t] >= cfg.vocab_size)
        fail("token {} at position {} is outside the vocabulary [0, {})", host_tokens[t], len + t, cfg.vocab_size);
    CUDA_CHECK(cudaMemcpyAsync(tokens.get(), host_tokens, size_t(T) * 4, cudaMemcpyHostToDevice, stream),
               "tokens upload");
    greedy_on_device = false;
  }

  // One forward call over tokens at positions len..len+T-1 (T <= chunk). host_tokens: the ids, checked here and
  // uploaded; nullptr: tokens[0] already holds the one id (T = 1), written by the step before's greedy_token.
  void forward(const int32_t* host_tokens, int64_t T, bool sparse, int64_t n_blocks, bool recurrent_gla,
               const std::string& phase, int64_t row0, TapRecorder* taps, const TapMap* forced, bool want_logits) {
    const ModelConfig& c = cfg;
    const int64_t D = c.hidden_size, pos0 = len;
    const float eps = float(c.rms_norm_eps);
    if (taps) taps->phase = phase;
    if (host_tokens) upload_tokens(host_tokens, T);
    hc = h.get();
    pending = nullptr;
    const int I = c.intermediate_size;
    const bool step = T == 1 && !taps && opt.gemv == Gemv::custom;    // a decode step the fused kernels can take
    fuse = step && h.size() >= size_t(2 * D) && opt.fusion.residual;  // two rows for the stream to alternate
    fuse_gate = step && opt.fusion.gate;
    fuse_rope = step && opt.fusion.rope;
    hc = h.get();
    timed(kOther, [&] {  // ids checked above or written by greedy_token: no wait for the kernel's own check
      embed(w.embed.get(), tokens.get(), T, int(D), c.vocab_size, float(c.scale_emb), h.get(), stream, false);
    });
    tap(taps, "embed/out", h.get(), T, D, D);
    timed(kOther, [&] { rmsnorm(h.get(), D, w.layers[0].input_norm.get(), T, int(D), eps, a.get(), D, stream); });
    for (int l = 0; l < c.num_hidden_layers; ++l) {
      const LayerBuffers& L = w.layers[size_t(l)];
      const std::string ldir = layer_dir(l) + "/";
      tap(taps, ldir + "input_norm/out", a.get(), T, D, D);
      if (L.mixer == Mixer::Lightning) lightning(l, T, pos0, recurrent_gla, taps);
      else sparse_layer(l, T, pos0, sparse, n_blocks, phase, row0, taps, forced);
      add_residual(T, L.post_norm.get());
      tap(taps, ldir + "residual/mid", hc, T, D, D);
      tap(taps, ldir + "post_norm/out", a.get(), T, D, D);
      if (T == 1 && opt.gemv == Gemv::custom &&
          gemv_supported(a.get(), L.gate_up.get(), int(D))) {  // decode: one launch
        gemm_in(L.gate_up.get(), T, I, act.get(), I, 1.0f, true);
      } else {
        gemm(a.get(), D, L.gate_up.get(), T, int(D), 2 * I, gu.get(), 2 * I);
        timed(kOther, [&] { mlp_act(gu.get(), T, I, act.get(), stream); });
      }
      tap(taps, ldir + "mlp/act", act.get(), T, I, I);
      gemm(act.get(), I, L.down.get(), T, I, int(D), y.get(), D);
      tap(taps, ldir + "mlp/out", y.get(), T, D, D);
      const bf16_t* next = l + 1 < c.num_hidden_layers ? w.layers[size_t(l) + 1].input_norm.get() : w.final_norm.get();
      add_residual(T, next);
      tap(taps, ldir + "residual/h", hc, T, D, D);
    }
    tap(taps, "final/norm", a.get(), T, D, D);
    // generation needs the last row only; /16 folded into the GEMM's alpha (exact)
    const float logit_alpha = float(1.0 / c.logit_divisor());
    const bool fused_logits = want_logits && pending;  // T = 1: the final norm's residual inside the lm_head GEMV
    if (fused_logits) gemm_in(w.lm_head_ptr(), 1, c.vocab_size, logits_bf16.get(), c.vocab_size, logit_alpha);
    settle_residual(T);
    if (want_logits) {
      if (!fused_logits)
        gemm(a.get() + (T - 1) * D, D, w.lm_head_ptr(), 1, int(D), c.vocab_size, logits_bf16.get(), c.vocab_size,
             logit_alpha);
      if (taps && taps->wants("final/logits")) {
        std::vector<double> lg = download(logits_bf16.get(), 1, c.vocab_size, c.vocab_size);
        taps->replace("final/logits", Tap{{1, c.vocab_size}, lg});
      }
    }
    len += T;
    flush_profile();
  }

  // Whether a decode step can run as a graph: nothing in it may wait on the host (tap downloads, forced uploads and
  // profiling events each synchronise the stream inside the step).
  bool graph_step(const TapRecorder* taps, const TapMap* forced) const {
    return opt.graph && !taps && !forced && !opt.profile;
  }
  // Runs enqueue() under stream capture and launches what it enqueued as one graph: the executable kept for the
  // captured topology updated with the new arguments, or a fresh one. Launches of an executable already in flight
  // keep the arguments they were launched with (cudaGraphExecUpdate affects later launches only).
  template <class F>
  void as_graph(F&& enqueue) {
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "decode graph: begin capture");
    cudaGraph_t g = nullptr;
    try {
      enqueue();
    } catch (...) {  // end the capture so the stream is usable again, then report the step's own error
      if (cudaStreamEndCapture(stream, &g) == cudaSuccess && g) cudaGraphDestroy(g);
      (void)cudaGetLastError();
      throw;
    }
    CUDA_CHECK(cudaStreamEndCapture(stream, &g), "decode graph: end capture");
    const std::unique_ptr<CUgraph_st, cudaError_t (*)(cudaGraph_t)> owned(g, cudaGraphDestroy);
    size_t n = 0;
    CUDA_CHECK(cudaGraphGetNodes(g, nullptr, &n), "decode graph: node count");
    cudaGraphExec_t& x = graphs[n];
    bool updated = false;
    if (x) {
      cudaGraphExecUpdateResultInfo info{};
      updated = cudaGraphExecUpdate(x, g, &info) == cudaSuccess;
      if (!updated) {
        (void)cudaGetLastError();  // cudaErrorGraphExecUpdateFailure: another topology of the same size
        CUDA_CHECK(cudaGraphExecDestroy(x), "decode graph: destroy");
        x = nullptr;
      }
    }
    if (!x) CUDA_CHECK(cudaGraphInstantiate(&x, g, 0), "decode graph: instantiate");
    ++(updated ? graph_stats.updated : graph_stats.instantiated);
    CUDA_CHECK(cudaGraphLaunch(x, stream), "decode graph: launch");
  }

  // One decode step's forward (token: the host id to upload, or nullptr when tokens[0] holds it), as a graph where
  // graph_step allows.
  void decode_forward(const int32_t* token, const std::string& phase, TapRecorder* taps, const TapMap* forced,
                      const std::function<void()>& after = {}) {
    const int64_t p = len;
    const bool sparse = p + 1 >= cfg.sparse.dense_len;
    const int64_t n_blocks = ceil_div(p + 1, cfg.sparse.block_size);
    if (!graph_step(taps, forced)) {
      forward(token, 1, sparse, n_blocks, true, phase, 0, taps, forced, true);
      if (after) after();
      return;
    }
    if (token) upload_tokens(token, 1);  // pageable host memory: outside the capture
    as_graph([&] {
      forward(nullptr, 1, sparse, n_blocks, true, phase, 0, nullptr, nullptr, true);
      if (after) after();
    });
  }

  std::vector<float> logits() {
    bf16_to_f32(logits_bf16.get(), cfg.vocab_size, logits_f32.get(), stream);
    std::vector<float> out(size_t(cfg.vocab_size));
    CUDA_CHECK(cudaMemcpyAsync(out.data(), logits_f32.get(), out.size() * 4, cudaMemcpyDeviceToHost, stream), "logits");
    CUDA_CHECK(cudaStreamSynchronize(stream), "logits");
    return out;
  }
};

Runner::Runner(const ModelConfig& c, const WeightSource& w, RunnerOptions o) : impl_(std::make_unique<Impl>()) {
  impl_->cfg = c;
  impl_->opt = o;
  impl_->plan = plan_memory(c, o);
  size_t fr = 0, tot = 0;
  mem_info(&fr, &tot);
  const size_t margin = size_t(512) << 20;  // CUDA context, cuBLAS kernels, allocator slack
  if (impl_->plan.total + margin > fr)
    fail("memory plan needs {:.2f} GiB (+ {:.2f} GiB margin) but the device has {:.2f} GiB free of {:.2f} GiB:\n{}",
         double(impl_->plan.total) / double(1ull << 30), double(margin) / double(1ull << 30),
         double(fr) / double(1ull << 30), double(tot) / double(1ull << 30), impl_->plan.table());
  impl_->weights_src = w;
  impl_->allocate();
  impl_->allocate_selection();
}

Runner::~Runner() = default;

void Runner::begin_prefill(int64_t total_len) {
  Impl& m = *impl_;
  if (total_len < 1) fail("prefill of {} tokens: need at least one", total_len);
  m.no_steps_in_flight("begin_prefill");
  if (m.len != 0) fail("prefill after {} tokens: a prefill starts a fresh sequence", m.len);
  if (total_len > m.opt.max_context)
    fail("prefill of {} tokens exceeds the planned context of {}", total_len, m.opt.max_context);
  m.prefill_total = total_len;
}

std::vector<float> Runner::prefill_piece(const std::vector<int32_t>& tokens, TapRecorder* taps, const TapMap* forced) {
  Impl& m = *impl_;
  if (m.prefill_total < 0) fail("prefill_piece without begin_prefill");
  const int64_t n = int64_t(tokens.size());
  if (n == 0 || m.len + n > m.prefill_total) fail("prefill piece of {} tokens does not fit the announced prompt", n);
  const bool sparse = m.prefill_total >= m.cfg.sparse.dense_len;
  const int64_t n_blocks = ceil_div(m.prefill_total, m.cfg.sparse.block_size);
  const bool recurrent = n < 64;  // HF's dispatch is by the call's new tokens, not by chunk
  for (int64_t i = 0; i < n; i += m.opt.chunk) {
    const int64_t T = std::min(m.opt.chunk, n - i);
    m.forward(tokens.data() + i, T, sparse, n_blocks, recurrent, "prefill", m.len, taps, forced, i + T == n);
  }
  if (m.len == m.prefill_total) m.prefill_total = -1;
  return m.logits();
}

std::vector<float> Runner::decode(int32_t token, TapRecorder* taps, const TapMap* forced) {
  Impl& m = *impl_;
  if (m.prefill_total >= 0) fail("decode before the prefill finished");
  m.no_steps_in_flight("decode");
  if (m.len + 1 > m.opt.max_context) fail("decode past the planned context of {}", m.opt.max_context);
  const std::string phase = decode_phase(m.decode_steps++);
  const auto t0 = std::chrono::steady_clock::now();
  m.decode_forward(&token, phase, taps, forced);
  m.enqueue_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return m.logits();
}

void Runner::decode_ahead(const int32_t* token) {
  Impl& m = *impl_;
  if (m.prefill_total >= 0) fail("decode_ahead before the prefill finished");
  if (m.len + 1 > m.opt.max_context) fail("decode_ahead past the planned context of {}", m.opt.max_context);
  const int64_t flying = m.ahead_issued - m.ahead_read;
  if (flying >= Impl::kRing) fail("decode_ahead: {} steps already in flight; decode_wait for one first", flying);
  if (!token && !m.greedy_on_device)
    fail(
        "decode_ahead without a token: the last step was not a decode_ahead step, so no greedy token is on the device");
  if (!m.ring) {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, sizeof(int32_t) * 2 * Impl::kRing, cudaHostAllocMapped), "decode_ahead ring");
    m.ring = static_cast<int32_t*>(p);
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&m.ring_dev), p, 0), "decode_ahead ring");
    for (cudaEvent_t& e : m.ring_done)
      CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "decode_ahead event");
  }
  const int slot = int(m.ahead_issued % Impl::kRing);
  const std::string phase = decode_phase(m.decode_steps++);
  const auto t0 = std::chrono::steady_clock::now();
  m.decode_forward(token, phase, nullptr, nullptr, [&] {  // the step's own greedy token, inside its graph
    greedy_token(m.logits_bf16.get(), m.cfg.vocab_size, m.tokens.get(), m.ring_dev + 2 * slot, m.stream);
  });
  m.greedy_on_device = true;
  CUDA_CHECK(cudaEventRecord(m.ring_done[slot], m.stream), "decode_ahead event");
  m.enqueue_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  ++m.ahead_issued;
}

GreedyStep Runner::decode_wait() {
  Impl& m = *impl_;
  if (m.ahead_read == m.ahead_issued) fail("decode_wait: no decode_ahead step in flight");
  const int slot = int(m.ahead_read % Impl::kRing);
  CUDA_CHECK(cudaEventSynchronize(m.ring_done[slot]), "decode_wait");
  ++m.ahead_read;
  const volatile int32_t* r = m.ring + 2 * slot;  // written by the device through the mapping
  return GreedyStep{r[0], r[1] != 0};
}

const std::vector<double>& Runner::decode_enqueue_s() const { return impl_->enqueue_s; }
DecodeGraphStats Runner::decode_graph_stats() const { return impl_->graph_stats; }

std::vector<float> Runner::gla_state(int layer) const {
  const Impl& m = *impl_;
  if (layer < 0 || layer >= m.cfg.num_hidden_layers || m.cfg.layers[size_t(layer)] != Mixer::Lightning)
    fail("gla_state: layer {} is not a Lightning layer", layer);
  CUDA_CHECK(cudaStreamSynchronize(m.stream), "gla_state");
  return m.S[size_t(layer)].download();
}

std::vector<bf16_t> Runner::kv_cache(int layer, bool values) const {
  const Impl& m = *impl_;
  if (layer < 0 || layer >= m.cfg.num_hidden_layers || m.cfg.layers[size_t(layer)] != Mixer::Sparse)
    fail("kv_cache: layer {} is not a sparse layer", layer);
  const int64_t G = m.cfg.num_key_value_heads, hd = m.cfg.head_dim;
  std::vector<bf16_t> out(size_t(G * m.len * hd));
  const Buffer<bf16_t>& src = values ? m.V[size_t(layer)] : m.K[size_t(layer)];
  CUDA_CHECK(cudaStreamSynchronize(m.stream), "kv_cache");
  for (int64_t g = 0; g < G; ++g)
    copy_to_host(out.data() + g * m.len * hd, src.get() + g * m.cap * hd, size_t(m.len * hd) * 2);
  return out;
}

void Runner::set_profile(bool on) { impl_->opt.profile = on; }

std::vector<LayerSelection> Runner::last_selection(bool with_scores) const {
  const Impl& m = *impl_;
  if (!m.opt.selection) fail("last_selection: the runner was built without RunnerOptions::selection");
  m.no_steps_in_flight("last_selection");
  if (with_scores && !m.opt.selection_scores)
    fail("last_selection: scores asked of a runner built without RunnerOptions::selection_scores");
  const int G = m.cfg.num_key_value_heads, K = m.cfg.sparse.k_sel();
  CUDA_CHECK(cudaStreamSynchronize(m.stream), "last_selection");
  std::vector<LayerSelection> out;
  for (int l = 0; l < m.cfg.num_hidden_layers; ++l) {
    if (m.cfg.layers[size_t(l)] != Mixer::Sparse) continue;
    const Impl::KeptSelection& k = m.kept[size_t(l)];
    if (k.pos != m.len - 1) fail("last_selection: layer {} kept no selection for position {}", l, m.len - 1);
    LayerSelection s;
    s.layer = l;
    s.pos = k.pos;
    s.dense = k.dense;
    s.groups = G;
    s.k_sel = K;
    s.n_blocks = k.dense ? ceil_div(m.len, m.cfg.sparse.block_size) : k.n_blocks;
    if (!k.dense) {
      s.blocks.resize(size_t(G * K));
      copy_to_host(s.blocks.data(), m.kept_blocks.get() + int64_t(l) * G * K, s.blocks.size() * 4);
      if (with_scores) {  // select_blocks wrote [1, G, n_blocks] contiguously at the layer's slot
        s.scores.resize(size_t(G * k.n_blocks));
        copy_to_host(s.scores.data(), m.kept_scores.get() + int64_t(l) * G * m.kept_cap, s.scores.size() * 4);
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

void Runner::reset() {
  Impl& m = *impl_;
  CUDA_CHECK(cudaStreamSynchronize(m.stream), "reset");
  for (Buffer<float>& st : m.S)
    if (st.size() > 0) fill_bytes(st.get(), 0, st.size() * 4);
  m.len = 0;
  m.prefill_total = -1;
  m.decode_steps = 0;
  m.enqueue_s.clear();
  m.graph_stats = {};                 // the executables stay: the buffers their nodes name are the same allocation
  m.ahead_issued = m.ahead_read = 0;  // the stream is idle: any step in flight has finished, its token unread
  m.greedy_on_device = false;
  for (Impl::KeptSelection& k : m.kept) k = {};
  if (m.attn_stats.size() > 0) fill_bytes(m.attn_stats.get(), 0, m.attn_stats.size() * 8);
  CUDA_CHECK(cudaDeviceSynchronize(), "reset");
}

namespace {
// The Runner as generate_loop wants it.
struct RunnerSteps {
  Runner& r;
  void begin_prefill(int64_t n) { r.begin_prefill(n); }
  std::vector<float> prefill_piece(const std::vector<int32_t>& t) { return r.prefill_piece(t); }
  std::vector<float> decode(int32_t t) { return r.decode(t); }
  void decode_ahead(const int32_t* t) { r.decode_ahead(t); }
  GreedyStep decode_wait() { return r.decode_wait(); }
  std::vector<LayerSelection> last_selection(bool scores) const { return r.last_selection(scores); }
};
}  // namespace

Generation Runner::generate(const std::vector<int32_t>& prompt, const GenerateOptions& o) {
  if (o.record_selection && !impl_->opt.selection)
    fail("generate: selections asked of a runner built without RunnerOptions::selection");
  if (impl_->len != 0) fail("generate: the runner holds a sequence of {} tokens; reset() it first", impl_->len);
  if (int64_t(prompt.size()) + std::max<int64_t>(o.max_new - 1, 0) > impl_->opt.max_context)
    fail("generate: {} prompt tokens + {} new exceed the planned context of {}", prompt.size(), o.max_new,
         impl_->opt.max_context);
  GenerateOptions go = o;
  if (go.piece <= 0) go.piece = impl_->opt.chunk;
  RunnerSteps steps{*this};
  return generate_loop(steps, prompt, go);
}

const MemoryPlan& Runner::plan() const { return impl_->plan; }
PhaseTimes Runner::times() const { return impl_->times; }
AttnTileStats Runner::attn_tile_stats() const {
  const Impl& m = *impl_;
  AttnTileStats r;
  if (m.attn_stats.size() < size_t(kAttnTileStats)) return r;
  CUDA_CHECK(cudaStreamSynchronize(m.stream), "sparse_attn tile counters");
  const std::vector<unsigned long long> v = m.attn_stats.download();
  r.loaded = int64_t(v[0]), r.attended = int64_t(v[1]), r.tiles = int64_t(v[2]), r.queries = int64_t(v[3]);
  return r;
}
size_t Runner::device_bytes_in_use() const { return impl_->in_use; }
int64_t Runner::len() const { return impl_->len; }

}  // namespace salasim::gpu
