// The op-case table (op_cases.hpp): full-config shapes (scenarios/models/minicpm-sala-9b.json), counter-based random
// inputs that the host regenerates bit for bit for the reference, FLOPs, bytes and exponentials from the ops' cost
// formulas (ops/cost.hpp, the latency model's), SelectArgs and AttnArgs from their one builder (gpu/sparse_args.hpp).
#include "bench/op_cases.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "compare/report.hpp"
#include "compare/selection.hpp"
#include "compare/tolerance.hpp"
#include "gpu/compress_k.hpp"
#include "gpu/gla.hpp"
#include "gpu/linear.hpp"
#include "gpu/ops.hpp"
#include "gpu/select_blocks.hpp"
#include "gpu/sparse_args.hpp"
#include "model/bf16.hpp"
#include "model/config.hpp"
#include "model/error.hpp"
#include "model/synth.hpp"
#include "reference/model.hpp"
#include "reference/ops.hpp"
#include "reports/hardware.hpp"
#include "ops/cost.hpp"

namespace salasim::bench {

namespace {

namespace cost = op::cost;

using gpu::bf16_t;
using ref::Mat;
constexpr int64_t kChunk = 16384;  // the runner's prefill chunk

const ModelConfig& full_config() {
  static const ModelConfig c = load_config(std::string(SALASIM_SOURCE_DIR) + "/scenarios/models/minicpm-sala-9b.json");
  return c;
}

// Element i of a tensor = synth_bf16(key, i, amp): uniform with standard deviation `std`.
struct Rand {
  uint64_t key;
  float amp;
};
Rand rnd(uint64_t seed, const char* name, double std) {
  return {synth_key(seed, fnv1a64(name)), float(std * std::sqrt(3.0))};
}
void fill(bf16_t* p, int64_t n, Rand r) { gpu::synth_fill(p, n, 0, r.key, r.amp, false, nullptr); }
// Rows [r0, r0 + n), columns [c0, c0 + nc) of a tensor of row stride ld filled by r.
Mat host(Rand r, int64_t ld, int64_t r0, int64_t n, int64_t c0, int64_t nc) {
  Mat m(n, nc);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < nc; ++j)
      m(i, j) = double(float_from_bf16(synth_bf16(r.key, uint64_t((r0 + i) * ld + c0 + j), r.amp)));
  return m;
}
Mat download(const bf16_t* p, int64_t ld, int64_t r0, int64_t n, int64_t c0, int64_t nc) {
  gpu::synchronize();
  std::vector<bf16_t> row = std::vector<bf16_t>(size_t(nc));
  Mat m(n, nc);
  for (int64_t i = 0; i < n; ++i) {
    gpu::copy_to_host(row.data(), p + (r0 + i) * ld + c0, size_t(nc) * 2);
    for (int64_t j = 0; j < nc; ++j) m(i, j) = double(float_from_bf16(row[size_t(j)]));
  }
  return m;
}
// Up to three bands of `n` rows: the first, the middle and the last of T.
std::vector<std::pair<int64_t, int64_t>> bands(int64_t T, int64_t n = 24) {
  if (T <= 3 * n) return {{0, T}};
  return {{0, n}, {T / 2 - n / 2, T / 2 - n / 2 + n}, {T - n, T}};
}
Tap as_tap(const Mat& m) { return Tap{{m.rows(), m.cols()}, {m.data(), m.data() + m.size()}}; }
// The project's gate: err(gpu, ref64) <= mult err(peer, ref64) + floor, per the tolerance row `kind`.
CheckResult gate(const std::string& kind, const Mat& r64, const Mat& peer, const Mat& got) {
  const std::string name = "/op/" + kind;
  TapMap r{{name, as_tap(r64)}}, p{{name, as_tap(peer)}}, g{{name, as_tap(got)}};
  const CompareReport rep = compare_taps(r, &p, g);
  return {rep.pass(), format_report(rep)};
}
CheckResult both(CheckResult a, const CheckResult& b) {
  a.pass = a.pass && b.pass;
  a.report += b.report;
  return a;
}

// A case's name, shape, tolerance row, context and work; its run, check and state are the caller's.
OpCase case_of(std::string op, std::string shape, std::string tolerance, int64_t N, op::Work work) {
  OpCase oc;
  oc.op = std::move(op), oc.shape = std::move(shape), oc.tolerance = std::move(tolerance);
  oc.context = N, oc.work = work;
  return oc;
}

std::string shape_of(int64_t T, const std::string& rest) { return fmt::format("T={} {}", T, rest); }

// ---- embed: the rows of one prefill chunk gathered from the embedding ----
OpCase embed_case(const std::string& /*op*/, int64_t N, uint64_t seed) {
  const ModelConfig& c = full_config();
  const int D = c.hidden_size, V = c.vocab_size;
  const int64_t T = std::min(kChunk, N);
  struct S {
    gpu::Buffer<bf16_t> E, h;
    gpu::Buffer<int32_t> tokens;
    std::vector<int32_t> ids;
  };
  auto s = std::make_shared<S>();
  const Rand rE = rnd(seed, "embed.E", 0.1);
  s->E = gpu::Buffer<bf16_t>(size_t(V) * D, "embedding");
  fill(s->E.get(), int64_t(V) * D, rE);
  for (int64_t t = 0; t < T; ++t) s->ids.push_back(int32_t(synth_key(seed, uint64_t(t)) % uint64_t(V)));
  s->tokens = gpu::to_device(s->ids, "tokens");
  s->h = gpu::Buffer<bf16_t>(size_t(T * D), "h");
  const float scale = float(c.scale_emb);
  OpCase oc = case_of("embed", shape_of(T, fmt::format("D={} V={}", D, V)), "embed/out", N, cost::embed(double(T), D));
  // unchecked, as decode enqueues it: the ids are in range, and the checked form waits for the kernel
  oc.run = [s, T, D, V, scale](gpu::Stream st) {
    gpu::embed(s->E.get(), s->tokens.get(), T, D, V, scale, s->h.get(), st, false);
  };
  oc.check = [s, rE, T, D, V, scale] {
    gpu::fill_bytes(s->h.get(), 0xff, s->h.size() * 2);
    gpu::embed(s->E.get(), s->tokens.get(), T, D, V, scale, s->h.get(), nullptr);
    CheckResult res{true, ""};
    for (auto [r0, r1] : bands(T)) {
      Mat E(r1 - r0, D);  // the band's rows of the embedding, looked up as tokens 0 .. n-1
      std::vector<int32_t> local;
      for (int64_t t = r0; t < r1; ++t) {
        E.row(t - r0) = host(rE, D, s->ids[size_t(t)], 1, 0, D).row(0);
        local.push_back(int32_t(t - r0));
      }
      res = both(res, gate("embed/out", ref::embed(E, local, scale, ref::f64()),
                           ref::embed(E, local, scale, ref::peer()), download(s->h.get(), D, r0, r1 - r0, 0, D)));
    }
    return res;
  };
  oc.state = s;
  return oc;
}

// ---- gla: the whole context in one call (how fla's chunk_simple_gla is timed), the engine automatic picks;
// .wgmma and .mma_sync: that engine (GlaEngine: the one pass on Hopper, the three launches anywhere) ----
OpCase gla_case(const std::string& op, int64_t N, uint64_t seed) {
  const gpu::GlaEngine engine = op.find(".wgmma") != std::string::npos      ? gpu::GlaEngine::wgmma
                                : op.find(".mma_sync") != std::string::npos ? gpu::GlaEngine::mma_sync
                                                                            : gpu::GlaEngine::automatic;
  const ModelConfig& c = full_config();
  const int H = c.lightning_nh, hd = c.lightning_head_dim;
  const int64_t Ld = c.lightning_dim(), T = N, ld = 3 * Ld;
  struct S {
    gpu::Buffer<bf16_t> qkv, o;
    gpu::Buffer<float> St, gamma;
    gpu::Buffer<uint8_t> ws;
  };
  auto s = std::make_shared<S>();
  const Rand r = rnd(seed, "gla.qkv", 1.0);
  s->qkv = gpu::Buffer<bf16_t>(size_t(T * ld), "gla q|k|v");
  fill(s->qkv.get(), T * ld, r);
  s->o = gpu::Buffer<bf16_t>(size_t(T * Ld), "gla out");
  s->St = gpu::Buffer<float>(size_t(H) * hd * hd, "gla state");
  gpu::fill_bytes(s->St.get(), 0, s->St.size() * 4);
  const std::vector<double> decay = c.lightning_decay();
  s->gamma = gpu::to_device(std::vector<float>(decay.begin(), decay.end()), "decay");
  s->ws = gpu::Buffer<uint8_t>(gpu::gla_workspace_bytes(T, H, hd), "gla workspace");
  const float tau = float(c.lightning_tau());
  OpCase oc = case_of(op, shape_of(T, fmt::format("H={} hd={}", H, hd)), "lightning/gla/out", N, cost::gla(T, H, hd));
  oc.run = [s, T, H, hd, Ld, ld, tau, engine](gpu::Stream st) {
    const bf16_t* q = s->qkv.get();
    gpu::gla_chunked(q, q + Ld, q + 2 * Ld, ld, T, H, hd, s->gamma.get(), tau, s->St.get(), s->o.get(), Ld, s->ws.get(),
                     st, engine);
  };
  oc.check = [s, r, T, H, hd, Ld, ld, tau, decay, run = oc.run] {
    gpu::fill_bytes(s->St.get(), 0, s->St.size() * 4);
    gpu::fill_bytes(s->o.get(), 0xff, s->o.size() * 2);
    run(nullptr);
    const Mat q = host(r, ld, 0, T, 0, Ld), k = host(r, ld, 0, T, Ld, Ld), v = host(r, ld, 0, T, 2 * Ld, Ld);
    std::vector<Mat> S64(size_t(H), Mat::Zero(hd, hd)), Spe = S64;
    const Mat o64 = ref::gla_chunked(q, k, v, decay, tau, S64, ref::f64());
    const Mat ope = ref::gla_chunked(q, k, v, decay, tau, Spe, ref::peer());
    CheckResult res = gate("lightning/gla/out", o64, ope, download(s->o.get(), Ld, 0, T, 0, Ld));
    Mat s64(H * hd, hd), spe(H * hd, hd), got(H * hd, hd);
    const std::vector<float> st = s->St.download();
    for (int h = 0; h < H; ++h) {
      s64.middleRows(h * hd, hd) = S64[size_t(h)];
      spe.middleRows(h * hd, hd) = Spe[size_t(h)];
      for (int i = 0; i < hd * hd; ++i) got(h * hd + i / hd, i % hd) = double(st[size_t(h * hd * hd + i)]);
    }
    return both(res, gate("lightning/gla/state", s64, spe, got));
  };
  oc.state = s;
  return oc;
}

// ---- the sparse layer's data: the 16K-query chunk ending at N, a key/value cache of N, compressed keys ----
struct Sparse {
  int64_t N = 0, T = 0, pos0 = 0, cap1 = 0, cap2 = 0, NB = 0;
  ref::SelectParams sp;
  Rand rq{}, rk{}, rv{};
  gpu::Buffer<bf16_t> q, K, V, K1, K2, out;
  gpu::Buffer<int32_t> blocks;
  gpu::Buffer<float> scores;
  gpu::Buffer<uint8_t> sel_ws, attn_ws;
  gpu::SparseCache cache;
  gpu::SelectArgs sel;
};
// T = 0: one prefill chunk (kChunk queries) ending at N; T = 1: the single query of a decode step at position N - 1.
// select: run the selection the sparse attention attends over.
std::shared_ptr<Sparse> sparse_data(int64_t N, uint64_t seed, int64_t T = 0, bool select = true) {
  const ModelConfig& c = full_config();
  auto s = std::make_shared<Sparse>();
  s->sp = sparse_rules(c);
  const ref::SelectParams& sp = s->sp;
  s->N = N;
  s->T = T > 0 ? std::min(T, N) : std::min(kChunk, N);
  s->pos0 = N - s->T;
  s->NB = (N + sp.block - 1) / sp.block;
  s->cap1 = std::max<int64_t>(1, ref::n_windows(N, sp.kernel, sp.stride));
  s->cap2 = std::max<int64_t>(1, ref::n_windows(N, 4 * sp.kernel, 4 * sp.stride));
  s->rq = rnd(seed, "sparse.q", 1.0);
  s->rk = rnd(seed, "sparse.k", 1.0);
  s->rv = rnd(seed, "sparse.v", 1.0);
  const int64_t HD = int64_t(sp.heads) * sp.hd;
  s->q = gpu::Buffer<bf16_t>(size_t(s->T * HD), "queries");
  fill(s->q.get(), s->T * HD, s->rq);
  s->K = gpu::Buffer<bf16_t>(size_t(sp.groups * N * sp.hd), "key cache");
  fill(s->K.get(), sp.groups * N * sp.hd, s->rk);
  s->V = gpu::Buffer<bf16_t>(size_t(sp.groups * N * sp.hd), "value cache");
  fill(s->V.get(), sp.groups * N * sp.hd, s->rv);
  s->K1 = gpu::Buffer<bf16_t>(size_t(sp.groups * s->cap1 * sp.hd), "K1");
  s->K2 = gpu::Buffer<bf16_t>(size_t(sp.groups * s->cap2 * sp.hd), "K2");
  gpu::compress_k(s->K.get(), N, sp.groups, sp.hd, 0, N, sp.kernel, sp.stride, s->K1.get(), s->cap1, nullptr);
  gpu::compress_k(s->K.get(), N, sp.groups, sp.hd, 0, N, 4 * sp.kernel, 4 * sp.stride, s->K2.get(), s->cap2, nullptr);
  s->out = gpu::Buffer<bf16_t>(size_t(s->T * HD), "attention out");
  s->blocks = gpu::Buffer<int32_t>(size_t(s->T * sp.groups * sp.k_sel), "selected blocks");
  s->sel_ws = gpu::Buffer<uint8_t>(gpu::select_blocks_workspace(s->T, N, sp.heads, sp.groups, sp.kernel, sp.stride),
                                   "select workspace");
  s->attn_ws = gpu::Buffer<uint8_t>(std::max<size_t>(1, gpu::sparse_attn_workspace_bytes(s->T, sp.groups, sp.k_sel, N)),
                                    "attention split partials");
  s->cache = {s->K.get(), s->V.get(), N, s->K1.get(), s->cap1, s->K2.get(), s->cap2};
  s->sel = gpu::select_args(s->sp, {s->q.get(), HD, s->T, s->pos0}, s->cache, s->blocks.get(), nullptr, s->NB,
                            {s->sel_ws.get(), s->sel_ws.size()});
  if (select) gpu::select_blocks(s->sel, nullptr);  // the selection sparse_attn attends over
  gpu::synchronize();
  return s;
}
std::vector<Mat> host_heads(Rand r, int64_t N, int G, int hd) {
  std::vector<Mat> m;
  for (int g = 0; g < G; ++g) m.push_back(host(r, hd, int64_t(g) * N, N, 0, hd));
  return m;
}
ref::Selection selection_rows(const std::vector<int32_t>& all, int64_t r0, int64_t r1, int G, int K) {
  ref::Selection sel;
  sel.T = r1 - r0;
  sel.G = G;
  sel.K = K;
  sel.blocks.assign(all.begin() + r0 * G * K, all.begin() + r1 * G * K);
  return sel;
}
std::string sparse_shape(const Sparse& s) {
  return fmt::format("T={} pos0={} H={} G={} hd={}", s.T, s.pos0, s.sp.heads, s.sp.groups, s.sp.hd);
}

// A selection with the overlap a trained model's has at most: every query of the same 256 positions (four 64-token
// blocks) picks the same other blocks (a hash of the kv group and the position's 256-token span), beside its forced
// ones (block 0 and the 33 local blocks); ascending, -1 padded. Synthetic weights give the other extreme, picks that
// neighbouring queries hardly share; the kernels' cost lies between the two (docs/performance.md).
std::vector<int32_t> shared_selection(int64_t pos0, int64_t T, const ref::SelectParams& sp, uint64_t seed) {
  std::vector<int32_t> out(size_t(T * sp.groups * sp.k_sel), -1);
  for (int64_t t = 0; t < T; ++t)
    for (int g = 0; g < sp.groups; ++g) {
      const int64_t qb = (pos0 + t) / sp.block, lo_local = std::max<int64_t>(0, qb - sp.local_blocks);
      std::vector<int32_t> pick;
      for (int64_t b = 0; b < std::min<int64_t>(sp.init_blocks, lo_local); ++b) pick.push_back(int32_t(b));
      const int64_t pool = lo_local - sp.init_blocks;  // blocks between the forced ones
      const int64_t want = std::min<int64_t>(sp.k_sel - (qb - lo_local + 1) - int64_t(pick.size()), pool);
      uint64_t h = seed * 0x9E3779B97F4A7C15ull ^ (uint64_t(g) << 40) ^ uint64_t((pos0 + t) / (4 * sp.block));
      std::vector<int32_t> far;
      while (int64_t(far.size()) < want) {  // distinct draws from the pool, by a splitmix64 stream
        h += 0x9E3779B97F4A7C15ull;
        uint64_t z = h;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        const int32_t b = int32_t(sp.init_blocks + int64_t((z ^ (z >> 31)) % uint64_t(pool)));
        if (std::find(far.begin(), far.end(), b) == far.end()) far.push_back(b);
      }
      pick.insert(pick.end(), far.begin(), far.end());
      for (int64_t b = lo_local; b <= qb; ++b) pick.push_back(int32_t(b));
      std::sort(pick.begin(), pick.end());
      std::copy(pick.begin(), pick.end(), out.begin() + (t * sp.groups + g) * sp.k_sel);
    }
  return out;
}

// sparse_attn over the selection; sparse_attn.decode: the one query of a decode step (the split + combine kernels);
// dense_attn: every causal block, as the sparse layers attend below dense_len. .overlap: on shared_selection instead
// of select_blocks' own; .cp_async: the prefill's tile kernel instead of the ring (AttnArgs::Engine, the same bits),
// the comparison point; .mma_sync: the ring with every block on its warps' own mma.sync (AttnArgs::wg_takers = 5),
// as before the warpgroup path, beside the automatic choice; .in_turn: a warpgroup whose whole union runs on wgmma
// waits on each block's products in turn instead of pipelining them (AttnArgs::wg_pipeline).
OpCase attention_case(const std::string& op, int64_t N, uint64_t seed) {
  const bool decode = op == "sparse_attn.decode", dense = base_op(op) == "dense_attn";
  const bool overlap = op.find(".overlap") != std::string::npos;
  auto s = sparse_data(N, seed, decode ? 1 : 0, !dense && !overlap);
  const ref::SelectParams sp = s->sp;
  const int64_t HD = int64_t(sp.heads) * sp.hd;
  if (overlap) s->blocks.upload(shared_selection(s->pos0, s->T, sp, seed));
  OpCase oc = case_of(op, sparse_shape(*s), "sparse/attn/out", N,
                      dense ? cost::dense_attn(s->pos0, N, sp.heads, sp.groups, sp.hd)
                            : cost::sparse_attn(s->pos0, N, sp.heads, sp.groups, sp.hd, sp.block, sp.k_sel));
  gpu::AttnArgs a = gpu::attn_args(s->sp, {s->q.get(), HD, s->T, s->pos0}, s->cache, dense ? nullptr : s->blocks.get(),
                                   s->out.get(), HD, {s->attn_ws.get(), s->attn_ws.size()});
  if (op.size() > 9 && op.compare(op.size() - 9, 9, ".cp_async") == 0) a.engine = gpu::AttnArgs::Engine::cp_async;
  if (op.find(".mma_sync") != std::string::npos) a.wg_takers = 5;
  if (op.find(".in_turn") != std::string::npos) a.wg_pipeline = false;
  oc.run = [s, a, dense](gpu::Stream st) { dense ? gpu::dense_attn(a, st) : gpu::sparse_attn(a, st); };
  oc.check = [s, sp, HD, dense, run = oc.run] {
    gpu::fill_bytes(s->out.get(), 0xff, s->out.size() * 2);
    run(nullptr);
    const std::vector<int32_t> blocks = dense ? std::vector<int32_t>() : s->blocks.download();
    const std::vector<Mat> K = host_heads(s->rk, s->N, sp.groups, sp.hd), V = host_heads(s->rv, s->N, sp.groups, sp.hd);
    CheckResult res{true, ""};
    for (auto [r0, r1] : bands(s->T)) {
      const Mat q = host(s->rq, HD, r0, r1 - r0, 0, HD);
      const int64_t p0 = s->pos0 + r0;
      const auto ref_of = [&](const ref::Num& num) {
        if (dense) return ref::dense_attn(q, p0, K, V, sp.hd, sp.tau, num);
        return ref::sparse_attn(q, p0, K, V, selection_rows(blocks, r0, r1, sp.groups, sp.k_sel), sp.block, sp.tau,
                                num);
      };
      res = both(res, gate("sparse/attn/out", ref_of(ref::f64()), ref_of(ref::peer()),
                           download(s->out.get(), HD, r0, r1 - r0, 0, HD)));
    }
    return res;
  };
  oc.state = s;
  return oc;
}

// decode: select_blocks.decode, the one query of a decode step
// select_blocks.decode.coarse / .fine: a decode step in one grid geometry throughout (SelectArgs::Geometry), beside
// the automatic choice of select_blocks.decode
// select_blocks.mma: the prefill chunk on the mma.sync kernels (SelectArgs::Engine), beside select_blocks' automatic
// choice (the wgmma kernels on an H200)
OpCase select_blocks_case(const std::string& op, int64_t N, uint64_t seed) {
  const bool decode = op.find(".decode") != std::string::npos;
  auto s = sparse_data(N, seed, decode ? 1 : 0);
  if (op == "select_blocks.mma") s->sel.engine = gpu::SelectArgs::Engine::mma;
  if (op == "select_blocks.decode.coarse") s->sel.geometry = gpu::SelectArgs::Geometry::coarse;
  if (op == "select_blocks.decode.fine") s->sel.geometry = gpu::SelectArgs::Geometry::fine;
  const ref::SelectParams sp = s->sp;
  const int64_t HD = int64_t(sp.heads) * sp.hd;
  OpCase oc = case_of(op, sparse_shape(*s), "sparse/select/blocks", N,
                      cost::select_blocks(s->pos0, N, sp.heads, sp.groups, sp.hd, sp.kernel, sp.stride, sp.block));
  oc.run = [s](gpu::Stream st) {
    gpu::SelectArgs a = s->sel;
    a.scores = nullptr;
    gpu::select_blocks(a, st);
  };
  oc.check = [s, sp, HD] {
    s->scores = gpu::Buffer<float>(size_t(s->T * sp.groups * s->NB), "pooled scores");
    gpu::SelectArgs a = s->sel;
    a.scores = s->scores.get();
    gpu::fill_bytes(s->blocks.get(), 0xff, s->blocks.size() * 4);
    gpu::select_blocks(a, nullptr);
    gpu::synchronize();
    const std::vector<int32_t> blocks = s->blocks.download();
    const std::vector<float> scores = s->scores.download();
    s->scores = gpu::Buffer<float>();
    const std::vector<Mat> K = host_heads(s->rk, s->N, sp.groups, sp.hd);
    std::vector<Mat> K1, K2;
    for (const Mat& k : K) {
      K1.push_back(ref::compress_k(k, s->N, sp.kernel, sp.stride, ref::peer()));
      K2.push_back(ref::compress_k(k, s->N, 4 * sp.kernel, 4 * sp.stride, ref::peer()));
    }
    const double band = tolerance_row(tolerance_table(), "sparse/select/blocks").tie_band;
    const int64_t G = sp.groups, Ks = sp.k_sel, NB = s->NB;
    CheckResult res{true, ""};
    for (auto [r0, r1] : bands(s->T, 8)) {
      const int64_t n = r1 - r0;
      const Mat q = host(s->rq, HD, r0, n, 0, HD);
      const ref::Selection r64 = ref::select_blocks(q, s->pos0 + r0, K1, K2, sp, NB, true, ref::f64());
      const ref::Selection rpe = ref::select_blocks(q, s->pos0 + r0, K1, K2, sp, NB, true, ref::peer());
      const Tap sc{{n, G, NB}, r64.scores, false, 0};
      const std::vector<int32_t> gb(blocks.begin() + r0 * G * Ks, blocks.begin() + r1 * G * Ks);
      auto ids = [&](const std::vector<int32_t>& v) {
        return Tap{{n, G, Ks}, std::vector<double>(v.begin(), v.end()), true, 0};
      };
      const SelectionReport rep = compare_selection("/op/sparse/select/blocks", ids(r64.blocks), ids(gb), &sc, band);
      res.pass = res.pass && rep.pass();
      res.report += fmt::format("rows {}..{}: {} of {} rows differ, {} in band, {} out of band\n", r0, r1 - 1,
                                rep.rows_differing, rep.rows, rep.in_band, rep.out_of_band);
      auto mat = [&](const std::vector<double>& v) {
        Mat m(n * G, NB);
        for (int64_t i = 0; i < m.size(); ++i) m(i / NB, i % NB) = std::isfinite(v[size_t(i)]) ? v[size_t(i)] : 0.0;
        return m;
      };
      const std::vector<double> got(scores.begin() + r0 * G * NB, scores.begin() + r1 * G * NB);
      res = both(res, gate("sparse/select/scores", mat(r64.scores), mat(rpe.scores), mat(got)));
    }
    return res;
  };
  oc.state = s;
  return oc;
}

OpCase compress_k_case(const std::string& /*op*/, int64_t N, uint64_t seed) {
  auto s = sparse_data(N, seed);
  const ref::SelectParams sp = s->sp;
  OpCase oc = case_of("compress_k", fmt::format("T={} pos0={} G={} hd={} (K1 and K2)", s->T, s->pos0, sp.groups, sp.hd),
                      "sparse/compress_k/k1", N, cost::compress_k(double(s->T), double(sp.groups) * sp.hd));
  oc.run = [s, sp](gpu::Stream st) {
    gpu::compress_k(s->K.get(), s->N, sp.groups, sp.hd, s->pos0, s->N, sp.kernel, sp.stride, s->K1.get(), s->cap1, st);
    gpu::compress_k(s->K.get(), s->N, sp.groups, sp.hd, s->pos0, s->N, 4 * sp.kernel, 4 * sp.stride, s->K2.get(),
                    s->cap2, st);
  };
  oc.check = [s, sp, run = oc.run] {
    run(nullptr);
    const std::vector<Mat> K = host_heads(s->rk, s->N, sp.groups, sp.hd);
    CheckResult res{true, ""};
    for (int kind = 0; kind < 2; ++kind) {
      const int kernel = kind ? 4 * sp.kernel : sp.kernel, stride = kind ? 4 * sp.stride : sp.stride;
      const int64_t lo = ref::n_windows(s->pos0, kernel, stride), hi = ref::n_windows(s->N, kernel, stride);
      const int64_t cap = kind ? s->cap2 : s->cap1;
      if (hi <= lo) continue;
      Mat r64(sp.groups * (hi - lo), sp.hd), rpe = r64, got = r64;
      for (int g = 0; g < sp.groups; ++g) {
        r64.middleRows(g * (hi - lo), hi - lo) =
            ref::compress_k(K[size_t(g)], s->N, kernel, stride, ref::f64()).middleRows(lo, hi - lo);
        rpe.middleRows(g * (hi - lo), hi - lo) =
            ref::compress_k(K[size_t(g)], s->N, kernel, stride, ref::peer()).middleRows(lo, hi - lo);
        got.middleRows(g * (hi - lo), hi - lo) =
            download((kind ? s->K2 : s->K1).get(), sp.hd, g * cap + lo, hi - lo, 0, sp.hd);
      }
      res = both(res, gate(kind ? "sparse/compress_k/k2" : "sparse/compress_k/k1", r64, rpe, got));
    }
    return res;
  };
  oc.state = s;
  return oc;
}

// ---- elementwise ops over one prefill chunk ----
struct Elem {
  int64_t T = 0;
  gpu::Buffer<bf16_t> x, z, w, y;
  gpu::Buffer<float> inv_freq;
};

OpCase rope_case(const std::string& /*op*/, int64_t N, uint64_t seed) {
  const ModelConfig& c = full_config();
  const int H = c.lightning_nh, hd = c.lightning_head_dim;
  const int64_t Ld = c.lightning_dim(), T = std::min(kChunk, N), pos0 = N - T;
  auto s = std::make_shared<Elem>();
  s->T = T;
  const Rand rx = rnd(seed, "rope.x", 1.0), rw = rnd(seed, "rope.w", 0.3);
  s->x = gpu::Buffer<bf16_t>(size_t(T * Ld), "q");
  s->w = gpu::Buffer<bf16_t>(size_t(hd), "q_norm");
  fill(s->x.get(), T * Ld, rx);
  fill(s->w.get(), hd, rw);
  const ref::RopeTable tab = ref::rope_table(hd, c.rope_theta, ref::RopeAngles::Fp32);
  s->inv_freq = gpu::to_device(tab.inv_freq32, "rope inv_freq");
  const float eps = float(c.rms_norm_eps);
  OpCase oc = case_of("rope", shape_of(T, fmt::format("pos0={} H={} hd={} (q-norm + RoPE, in place)", pos0, H, hd)),
                      "lightning/qk_rope/q", N, cost::rope(double(T), double(Ld)));
  oc.run = [s, T, Ld, H, hd, eps, pos0](gpu::Stream st) {
    gpu::rope(s->x.get(), Ld, T, H, hd, s->w.get(), eps, pos0, s->inv_freq.get(), st);
  };
  oc.check = [s, rx, rw, tab, T, Ld, hd, eps, pos0, run = oc.run] {
    fill(s->x.get(), T * Ld, rx);
    run(nullptr);
    const Mat wv = host(rw, hd, 0, 1, 0, hd);
    CheckResult res{true, ""};
    for (auto [r0, r1] : bands(T)) {
      const Mat x = host(rx, Ld, r0, r1 - r0, 0, Ld);
      Mat r64 = ref::rmsnorm_heads(x, wv.row(0).transpose(), hd, eps, ref::f64());
      Mat rpe = ref::rmsnorm_heads(x, wv.row(0).transpose(), hd, eps, ref::peer());
      ref::rope(r64, pos0 + r0, tab, ref::f64());
      ref::rope(rpe, pos0 + r0, tab, ref::peer());
      res = both(res, gate("lightning/qk_rope/q", r64, rpe, download(s->x.get(), Ld, r0, r1 - r0, 0, Ld)));
    }
    return res;
  };
  oc.state = s;
  return oc;
}

// residual (h += s b, then the next RMSNorm) and plain rmsnorm share a shape
OpCase norm_case(const std::string& op, int64_t N, uint64_t seed) {
  const ModelConfig& c = full_config();
  const int D = c.hidden_size;
  const int64_t T = std::min(kChunk, N);
  const bool res_op = op == "residual";
  auto s = std::make_shared<Elem>();
  s->T = T;
  const Rand rh = rnd(seed, "norm.h", 1.0), rb = rnd(seed, "norm.b", 1.0), rw = rnd(seed, "norm.w", 0.3);
  s->x = gpu::Buffer<bf16_t>(size_t(T * D), "h");
  s->z = gpu::Buffer<bf16_t>(size_t(T * D), "branch");
  s->w = gpu::Buffer<bf16_t>(size_t(D), "norm weight");
  s->y = gpu::Buffer<bf16_t>(size_t(T * D), "normed");
  fill(s->x.get(), T * D, rh);
  fill(s->z.get(), T * D, rb);
  fill(s->w.get(), D, rw);
  const float eps = float(c.rms_norm_eps), scale = float(c.residual_scale());
  OpCase oc = case_of(op, shape_of(T, fmt::format("D={}", D)), res_op ? "residual/h" : "input_norm/out", N,
                      res_op ? cost::residual(double(T), D, true) : cost::rmsnorm(double(T), D));
  oc.run = [s, T, D, eps, scale, res_op](gpu::Stream st) {
    if (res_op) gpu::residual(s->x.get(), s->z.get(), T, D, scale, s->w.get(), eps, s->y.get(), st);
    else gpu::rmsnorm(s->x.get(), D, s->w.get(), T, D, eps, s->y.get(), D, st);
  };
  oc.check = [s, rh, rb, rw, T, D, eps, scale, res_op, run = oc.run] {
    fill(s->x.get(), T * D, rh);
    run(nullptr);
    const ref::Vec w = host(rw, D, 0, 1, 0, D).row(0).transpose();
    CheckResult res{true, ""};
    for (auto [r0, r1] : bands(T)) {
      Mat h64 = host(rh, D, r0, r1 - r0, 0, D), hpe = h64;
      if (res_op) {
        const Mat b = host(rb, D, r0, r1 - r0, 0, D);
        ref::residual(h64, b, scale, ref::f64());
        ref::residual(hpe, b, scale, ref::peer());
        res = both(res, gate("residual/h", h64, hpe, download(s->x.get(), D, r0, r1 - r0, 0, D)));
      }
      res = both(res, gate(res_op ? "post_norm/out" : "input_norm/out", ref::rmsnorm(h64, w, eps, ref::f64()),
                           ref::rmsnorm(hpe, w, eps, ref::peer()), download(s->y.get(), D, r0, r1 - r0, 0, D)));
    }
    return res;
  };
  oc.state = s;
  return oc;
}

// gate (x * sigmoid(z)) and mlp (silu(g) * u) on an [x | z] row pair: two inputs of one width, one output;
// gate.rmsnorm: the Lightning o_norm then the gate, fused (rmsnorm_gate)
OpCase pair_case(const std::string& op, int64_t N, uint64_t seed) {
  const ModelConfig& c = full_config();
  const bool mlp = op == "mlp", norm = op == "gate.rmsnorm";
  const float eps = float(c.rms_norm_eps);
  const int n = mlp ? c.intermediate_size : int(c.lightning_dim());
  const int64_t T = std::min(kChunk, N);
  auto s = std::make_shared<Elem>();
  s->T = T;
  const Rand rx = rnd(seed, "pair.x", 1.0);
  s->x = gpu::Buffer<bf16_t>(size_t(T * 2 * n), "x|z");  // gate: x | z side by side; mlp: g | u
  s->y = gpu::Buffer<bf16_t>(size_t(T * n), "out");
  fill(s->x.get(), T * 2 * n, rx);
  const Rand rw = rnd(seed, "pair.w", 0.3);
  if (norm) {
    s->w = gpu::Buffer<bf16_t>(size_t(n), "norm weight");
    fill(s->w.get(), n, rw);
  }
  OpCase oc = case_of(op, shape_of(T, fmt::format("n={}", n)), mlp ? "mlp/act" : "lightning/gate/out", N,
                      mlp ? cost::mlp(double(T), n) : cost::gate(double(T), n));
  oc.run = [s, T, n, mlp, norm, eps](gpu::Stream st) {
    if (mlp) gpu::mlp_act(s->x.get(), T, n, s->y.get(), st);
    else if (norm)
      gpu::rmsnorm_gate(s->x.get(), 2 * n, s->w.get(), s->x.get() + n, 2 * n, T, n, eps, s->y.get(), n, nullptr, st);
    else gpu::gate(s->x.get(), 2 * n, s->x.get() + n, 2 * n, T, n, s->y.get(), n, st);
  };
  oc.check = [s, rx, rw, T, n, mlp, norm, eps, run = oc.run] {
    gpu::fill_bytes(s->y.get(), 0xff, s->y.size() * 2);
    run(nullptr);
    CheckResult res{true, ""};
    for (auto [r0, r1] : bands(T)) {
      const Mat a = host(rx, 2 * n, r0, r1 - r0, 0, n), b = host(rx, 2 * n, r0, r1 - r0, n, n);
      const Mat got = download(s->y.get(), n, r0, r1 - r0, 0, n);
      if (norm) {
        const ref::Vec w = host(rw, n, 0, 1, 0, n).row(0).transpose();
        res = both(res, gate("lightning/gate/out", ref::gate(ref::rmsnorm(a, w, eps, ref::f64()), b, ref::f64()),
                             ref::gate(ref::rmsnorm(a, w, eps, ref::peer()), b, ref::peer()), got));
        continue;
      }
      res = both(res, mlp ? gate("mlp/act", ref::mlp_act(a, b, ref::f64()), ref::mlp_act(a, b, ref::peer()), got)
                          : gate("lightning/gate/out", ref::gate(a, b, ref::f64()), ref::gate(a, b, ref::peer()), got));
    }
    return res;
  };
  oc.state = s;
  return oc;
}

// ---- the projections of one layer over a chunk (linear.<site>), and the single-token GEMVs of decode
// (linear.<site>.decode: the custom kernel; .decode.cublas: cuBLAS on the same shape, for the side-by-side
// measurement); logits: the lm_head GEMV of the last position (logits.cublas likewise) ----
// linear.mlp_gate_up.decode.act: the gate|up GEMV with the mlp activation fused (decode's path, gemv_mlp_act);
// linear.o_proj.decode.gate: the Lightning o_proj GEMV with o_norm and the z gate in its prologue (gemv_gate).
OpCase gemm_case(const std::string& op, int64_t N, uint64_t seed) {
  const ModelConfig& c = full_config();
  const int D = c.hidden_size, I = c.intermediate_size, Ld = int(c.lightning_dim());
  const bool logits = op.rfind("logits", 0) == 0;
  auto ends = [&](const char* tail) {
    const std::string t = tail;
    return op.size() > t.size() && op.compare(op.size() - t.size(), t.size(), t) == 0;
  };
  const bool gemv = logits || op.find(".decode") != std::string::npos, cublas = ends(".cublas");
  const bool act = ends(".act"), gated = ends(".gate");
  const std::string site = logits ? "lm_head" : op.substr(7, op.find('.', 7) - 7);  // after "linear."
  int in = D, out = 4 * Ld;  // qkvz: the Lightning q|k|v|z projection
  const char* tol = "lightning/proj/q";
  if (site == "mlp_gate_up") out = 2 * I, tol = act ? "mlp/act" : "mlp/out";
  if (site == "mlp_down") in = I, out = D, tol = "mlp/out";
  if (site == "o_proj") in = Ld, out = D, tol = "lightning/o_proj/out";
  if (site == "lm_head") out = c.vocab_size, tol = "final/logits";
  const int64_t T = gemv ? 1 : std::min(kChunk, N);
  struct S {
    std::unique_ptr<gpu::Blas> blas;  // bound to the stream of the last run (cuBLAS launches on its handle's stream)
    gpu::Stream stream = nullptr;
    gpu::Buffer<bf16_t> x, W, y, z, wn;  // z, wn: the gated form's gate input and norm weight
  };
  auto s = std::make_shared<S>();
  const Rand rx = rnd(seed, "gemm.x", 1.0), rW = rnd(seed, "gemm.W", 1.0 / std::sqrt(double(in)));
  s->x = gpu::Buffer<bf16_t>(size_t(T * in), "x");
  s->W = gpu::Buffer<bf16_t>(size_t(out) * in, "W");
  const int n_y = act ? I : out;  // elements of y a row
  s->y = gpu::Buffer<bf16_t>(size_t(T * n_y), "y");
  fill(s->x.get(), T * in, rx);
  fill(s->W.get(), int64_t(out) * in, rW);
  const Rand rz = rnd(seed, "gemm.z", 2.0), rn = rnd(seed, "gemm.norm_w", 1.0);
  if (gated) {
    s->z = gpu::Buffer<bf16_t>(size_t(in), "z");
    s->wn = gpu::Buffer<bf16_t>(size_t(in), "norm weight");
    fill(s->z.get(), in, rz);
    fill(s->wn.get(), in, rn);
  }
  const float eps = float(c.rms_norm_eps);
  // the fused forms write n_y (act: silu(g) * u alone) and read the gate's z and norm weight besides
  OpCase oc = case_of(op, shape_of(T, fmt::format("in={} out={}", in, out)), tol, N, {});
  oc.work = logits ? cost::logits(double(T), out, in, 2.0 * out * in)
                   : cost::linear(double(T), double(in) * out, double(in) + n_y, 2.0 * out * in);
  if (gated) oc.work.bytes += double(in) * 4;
  oc.run = [s, T, in, out, cublas, act, gated, eps](gpu::Stream st) {
    if (act) return gpu::gemv_mlp_act(s->W.get(), s->x.get(), in, out / 2, s->y.get(), 1.0f, st);
    if (gated) {
      gpu::GemvGate g;
      g.a = s->x.get();
      g.z = s->z.get();
      g.w = s->wn.get();
      g.eps = eps;
      return gpu::gemv_gate(s->W.get(), g, in, out, s->y.get(), 1.0f, st);
    }
    if (!s->blas || s->stream != st) {
      s->blas = std::make_unique<gpu::Blas>(st);
      s->stream = st;
    }
    gpu::linear(*s->blas, s->x.get(), in, s->W.get(), T, in, out, s->y.get(), out, 1.0f,
                cublas ? gpu::Gemv::cublas : gpu::Gemv::custom);
  };
  oc.check = [s, rx, rW, rz, rn, T, in, out, n_y, act, gated, eps, tol, run = oc.run] {
    gpu::fill_bytes(s->y.get(), 0xff, s->y.size() * 2);
    run(nullptr);
    const Mat W = host(rW, in, 0, out, 0, in);
    CheckResult res{true, ""};
    if (act) {  // T = 1
      const Mat x = host(rx, in, 0, 1, 0, in), Wg = W.topRows(out / 2), Wu = W.bottomRows(out / 2);
      const auto num64 = ref::f64(), num_peer = ref::peer();
      return gate(tol, ref::mlp_act(ref::linear(x, Wg, num64), ref::linear(x, Wu, num64), num64),
                  ref::mlp_act(ref::linear(x, Wg, num_peer), ref::linear(x, Wu, num_peer), num_peer),
                  download(s->y.get(), n_y, 0, 1, 0, n_y));
    }
    if (gated) {  // T = 1
      const Mat x = host(rx, in, 0, 1, 0, in), z = host(rz, in, 0, 1, 0, in);
      const ref::Vec w = host(rn, in, 0, 1, 0, in).row(0).transpose();
      const auto ref_of = [&](const ref::Num& num) {
        return ref::linear(ref::gate(ref::rmsnorm(x, w, eps, num), z, num), W, num);
      };
      return gate(tol, ref_of(ref::f64()), ref_of(ref::peer()), download(s->y.get(), out, 0, 1, 0, out));
    }
    for (auto [r0, r1] : bands(T, 8)) {
      const Mat x = host(rx, in, r0, r1 - r0, 0, in);
      res = both(res, gate(tol, ref::linear(x, W, ref::f64()), ref::linear(x, W, ref::peer()),
                           download(s->y.get(), out, r0, r1 - r0, 0, out)));
    }
    return res;
  };
  oc.state = s;
  return oc;
}

// Every case, by name, with the function that makes it: the one list of cases, in the registry's op order.
using Maker = OpCase (*)(const std::string& op, int64_t context, uint64_t seed);
const std::vector<std::pair<std::string, Maker>>& cases() {
  static const std::vector<std::pair<std::string, Maker>> c = {
      {"embed", embed_case},
      {"linear.qkvz", gemm_case},
      {"linear.mlp_gate_up", gemm_case},
      {"linear.mlp_down", gemm_case},
      {"linear.o_proj", gemm_case},
      {"linear.qkvz.decode", gemm_case},
      {"linear.qkvz.decode.cublas", gemm_case},
      {"linear.mlp_gate_up.decode", gemm_case},
      {"linear.mlp_gate_up.decode.cublas", gemm_case},
      {"linear.mlp_down.decode", gemm_case},
      {"linear.mlp_down.decode.cublas", gemm_case},
      {"linear.o_proj.decode", gemm_case},
      {"linear.o_proj.decode.cublas", gemm_case},
      {"linear.mlp_gate_up.decode.act", gemm_case},
      {"linear.o_proj.decode.gate", gemm_case},
      {"rmsnorm", norm_case},
      {"rope", rope_case},
      {"gla", gla_case},
      {"gla.wgmma", gla_case},
      {"gla.mma_sync", gla_case},
      {"compress_k", compress_k_case},
      {"select_blocks", select_blocks_case},
      {"select_blocks.mma", select_blocks_case},
      {"select_blocks.decode", select_blocks_case},
      {"select_blocks.decode.coarse", select_blocks_case},
      {"select_blocks.decode.fine", select_blocks_case},
      {"sparse_attn", attention_case},
      {"sparse_attn.cp_async", attention_case},
      {"sparse_attn.overlap", attention_case},
      {"sparse_attn.overlap.cp_async", attention_case},
      {"sparse_attn.mma_sync", attention_case},
      {"sparse_attn.overlap.mma_sync", attention_case},
      {"sparse_attn.overlap.in_turn", attention_case},
      {"sparse_attn.decode", attention_case},
      {"dense_attn", attention_case},
      {"dense_attn.cp_async", attention_case},
      {"dense_attn.mma_sync", attention_case},
      {"dense_attn.in_turn", attention_case},
      {"gate", pair_case},
      {"gate.rmsnorm", pair_case},
      {"mlp", pair_case},
      {"residual", norm_case},
      {"logits", gemm_case},
      {"logits.cublas", gemm_case},
  };
  return c;
}

}  // namespace

const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, make] : cases()) n.push_back(name);
    return n;
  }();
  return names;
}

std::string base_op(const std::string& name) { return name.substr(0, name.find('.')); }

OpCase make_case(const std::string& op, int64_t context, uint64_t seed) {
  for (const auto& [name, make] : cases())
    if (name == op) return make(op, context, seed);
  fail("op case '{}': unknown; known: {}", op, fmt::join(op_names(), ", "));
}

double floor_seconds(const OpCase& c) {
  static const reports::HwProfile hw = reports::load_hw("h200");
  return std::max({c.work.flops / hw.bf16_flops, c.work.bytes / hw.bandwidth, c.work.exps / hw.exp_per_s});
}

}  // namespace salasim::bench
