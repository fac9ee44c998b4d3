// select_blocks on the GPU against the float64 reference and its bf16 peer: block sets equal except inside the tie
// band, pooled scores gated like any bf16 tensor, sub-chunking invisible, decode (T = 1) and long sequences.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "compare/selection.hpp"
#include "compare/tolerance.hpp"
#include "gpu/select_blocks.hpp"
#include "model/error.hpp"
#include "tests/gpu/sparse_support.hpp"

using namespace salasim;
using gpu::bf16_t;

namespace {

double tie_band() { return tolerance_row(tolerance_table(), "sparse/select/blocks").tie_band; }

// Compressed keys (bf16-valued, as the GPU stores them) and queries of one sequence.
struct Seq {
  int64_t L = 0;
  std::vector<ref::Mat> K1, K2;
  ref::Mat q;  // [n_q, H*hd], query row i at position q_pos0 + i
  int64_t q_pos0 = 0;
};

// One direction per kv head (unit length) along which its keys lean and its queries point.
ref::RowVec lean_dir(uint64_t seed, int g, int hd) {
  ref::RowVec d = test::randn(1, hd, seed + 200 + uint64_t(g));
  return d / d.norm();
}

// Keys with structure: every 64-token block leans by a random amount (std 3) along its kv head's direction, plus
// noise; bf16-valued, [L, hd] per kv head. With queries that share that direction (make_seq), block scores spread
// over decades, as in a real model, rather than sitting in a few bf16 ulps.
std::vector<ref::Mat> make_keys(int64_t L, const ref::SelectParams& sp, uint64_t seed) {
  std::vector<ref::Mat> K;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd;
  for (int g = 0; g < sp.groups; ++g) {
    ref::Mat k = test::randn(L, sp.hd, seed + 100 + uint64_t(g));
    const ref::RowVec dir = 3.0 * lean_dir(seed, g, sp.hd);
    for (int64_t b = 0; b * sp.block < L; ++b) {
      const double lean = nd(rng);
      for (int64_t j = b * sp.block; j < std::min<int64_t>(L, (b + 1) * sp.block); ++j) k.row(j) += lean * dir;
    }
    K.push_back(test::bf16_round(k));
  }
  return K;
}

// The compressed keys of K and fresh queries for positions q_pos0 .. q_pos0 + n_q - 1; every head of group g
// carries 4 x its group's lean direction.
Seq make_seq(const std::vector<ref::Mat>& K, int64_t q_pos0, int64_t n_q, const ref::SelectParams& sp, uint64_t seed) {
  Seq s;
  s.L = K[0].rows();
  s.q_pos0 = q_pos0;
  s.K1 = test::compress_heads(K, s.L, sp.kernel, sp.stride);
  s.K2 = test::compress_heads(K, s.L, 4 * sp.kernel, 4 * sp.stride);
  ref::Mat q = test::randn(n_q, sp.heads * sp.hd, seed + 300);
  const int hpg = sp.heads / sp.groups;
  for (int h = 0; h < sp.heads; ++h) {
    const ref::RowVec d = 4.0 * lean_dir(seed, h / hpg, sp.hd);
    for (int64_t t = 0; t < n_q; ++t) q.row(t).segment(h * sp.hd, sp.hd) += d;
  }
  s.q = test::bf16_round(q);
  return s;
}

Seq make_seq(int64_t L, int64_t q_pos0, int64_t n_q, const ref::SelectParams& sp, uint64_t seed) {
  return make_seq(make_keys(L, sp, seed), q_pos0, n_q, sp, seed);
}

struct GpuSelection {
  std::vector<int32_t> blocks;  // [T, G, k_sel]
  std::vector<double> scores;   // [T, G, n_blocks]
};

// The GPU's selection for query rows [r0, r0 + T) of s (positions s.q_pos0 + r0 ..) over the keys before them.
// Compressed-key rows that do not exist yet at the last query are NaN. The workspace is sized for ws_T queries.
// Without want_scores the score output is not asked for (scores comes back empty), as in a run without taps.
GpuSelection gpu_select(const Seq& s, int64_t r0, int64_t T, const ref::SelectParams& sp, int64_t n_blocks,
                        int64_t ws_T, bool want_scores = true,
                        gpu::SelectArgs::Engine engine = gpu::SelectArgs::Engine::automatic) {
  const int64_t pos0 = s.q_pos0 + r0, len = pos0 + T;
  const int64_t n1 = ref::n_windows(len, sp.kernel, sp.stride), n2 = ref::n_windows(len, 4 * sp.kernel, 4 * sp.stride);
  const int64_t cap1 = n1 + 13, cap2 = n2 + 3;
  const gpu::Buffer<bf16_t> k1 = test::upload_heads(s.K1, n1, cap1), k2 = test::upload_heads(s.K2, n2, cap2);
  const gpu::Buffer<bf16_t> qd = test::upload_bf16(s.q.middleRows(r0, T), "queries");
  gpu::Buffer<int32_t> blocks(size_t(T * sp.groups * sp.k_sel), "block ids");
  gpu::Buffer<float> scores(size_t(T * sp.groups * n_blocks), "pooled scores");
  test::poison(blocks);
  test::poison(scores);
  const size_t ws_bytes = gpu::select_blocks_workspace(ws_T, len, sp.heads, sp.groups, sp.kernel, sp.stride);
  gpu::Buffer<uint8_t> ws(ws_bytes, "select workspace");
  test::poison(ws);
  gpu::SparseCache c;
  c.K1 = k1.get(), c.cap1 = cap1, c.K2 = k2.get(), c.cap2 = cap2;
  gpu::SelectArgs a = gpu::select_args(sp, {qd.get(), int64_t(sp.heads) * sp.hd, T, pos0}, c, blocks.get(),
                                       want_scores ? scores.get() : nullptr, n_blocks, {ws.get(), ws.size()});
  a.engine = engine;
  gpu::select_blocks(a, nullptr);
  gpu::synchronize();
  GpuSelection r;
  r.blocks = blocks.download();
  if (want_scores) {
    const std::vector<float> sc = scores.download();
    r.scores.assign(sc.begin(), sc.end());
  }
  return r;
}

// Each row: ascending ids, -1 only as trailing padding, min(k_sel, qb + 1) of them, every forced block present.
void check_rows(const std::vector<int32_t>& blocks, int64_t pos0, int64_t T, const ref::SelectParams& sp) {
  int64_t bad_rows = 0, first_t = -1, first_g = -1;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < sp.groups; ++g) {
      const int32_t* row = blocks.data() + (t * sp.groups + g) * sp.k_sel;
      const int64_t qb = (pos0 + t) / sp.block, want = std::min<int64_t>(sp.k_sel, qb + 1);
      bool ok = true;
      for (int64_t i = 0; i < sp.k_sel; ++i) {
        if (i < want) ok &= row[i] >= 0 && row[i] <= qb && (i == 0 || row[i] > row[i - 1]);
        else ok &= row[i] == -1;
      }
      const std::set<int32_t> s(row, row + want);
      for (int64_t b = 0; b <= qb; ++b)
        if (b < sp.init_blocks || b >= qb - sp.local_blocks) ok &= s.count(int32_t(b)) == 1;
      if (!ok && bad_rows++ == 0) first_t = t, first_g = g;
    }
  INFO("first malformed row: query " << first_t << ", group " << first_g);
  CHECK(bad_rows == 0);
}

// GPU against the float64 reference and against the bf16 peer: sets within the tie band, scores gated.
void check_against_reference(const GpuSelection& got, const ref::Selection& r64, const ref::Selection& peer, int64_t T,
                             const ref::SelectParams& sp) {
  const int64_t G = sp.groups, K = sp.k_sel, NB = r64.NB;
  const Tap gb = test::ids_tap(got.blocks, T, G, K);
  for (const ref::Selection* r : {&r64, &peer}) {
    INFO((r == &r64 ? "against the float64 reference" : "against the bf16 peer"));
    const Tap sc = test::scores_tap(r->scores, T, G, NB);
    const SelectionReport rep =
        compare_selection("/op/sparse/select/blocks", test::ids_tap(r->blocks, T, G, K), gb, &sc, tie_band());
    INFO(rep.rows << " rows, " << rep.rows_differing << " differ, " << rep.in_band << " in band, " << rep.out_of_band
                  << " out of band");
    const SelectionMismatch f = rep.first_out_of_band.value_or(SelectionMismatch{-1, -1, -1, false, 0, 0});
    INFO("first out of band: query " << f.query << ", group " << f.group << ", block " << f.block << " selected by the "
                                     << (f.in_reference ? "reference" : "GPU") << " only (score " << f.score
                                     << ", boundary " << f.boundary << ")");
    CHECK(rep.pass());
  }
  test::check_gate("sparse/select/scores", test::scores_mat(r64.scores, T * G, NB),
                   test::scores_mat(peer.scores, T * G, NB), test::scores_mat(got.scores, T * G, NB));
}

// Reference selections (float64 and peer) of query rows [r0, r0 + T) of s.
std::pair<ref::Selection, ref::Selection> reference(const Seq& s, int64_t r0, int64_t T, const ref::SelectParams& sp,
                                                    int64_t n_blocks) {
  const ref::Mat qs = s.q.middleRows(r0, T);
  const int64_t pos0 = s.q_pos0 + r0;
  return {ref::select_blocks(qs, pos0, s.K1, s.K2, sp, n_blocks, true, ref::f64()),
          ref::select_blocks(qs, pos0, s.K1, s.K2, sp, n_blocks, true, ref::peer())};
}

}  // namespace

TEST_CASE("select_blocks: matches the reference except inside the tie band", "[select_blocks][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 6101;
  const int64_t L = 9011, NB = (L + sp.block - 1) / sp.block;
  const Seq s = make_seq(L, 0, L, sp, seed);
  // (pos0, T): the first queries (no K1 / K2 window yet, all forced), chunks across 6144 and 8192, decode steps of
  // one and two queries (128-window partials, 31-block score CTAs)
  for (auto [pos0, T] : {std::pair<int64_t, int64_t>{0, 200}, {6100, 63}, {8100, 257}, {L - 1, 1}, {5000, 2}}) {
    INFO("seed " << seed << ", queries " << pos0 << " .. " << pos0 + T - 1);
    const GpuSelection got = gpu_select(s, pos0, T, sp, NB, T);
    check_rows(got.blocks, pos0, T, sp);
    if (T <= 2) {  // a workspace sized for 3 queries (coarse partials) still takes decode's finer ones: the same bits
      const GpuSelection wide = gpu_select(s, pos0, T, sp, NB, 3);
      CHECK(wide.blocks == got.blocks);
      CHECK(wide.scores == got.scores);
    }
    const auto [r64, peer] = reference(s, pos0, T, sp, NB);
    check_against_reference(got, r64, peer, T, sp);
  }
}

TEST_CASE("select_blocks: the mma.sync and wgmma engines each match the reference except inside the tie band",
          "[select_blocks][gpu]") {
  using Engine = gpu::SelectArgs::Engine;
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 6131;
  const int64_t L = 9500, NB = (L + sp.block - 1) / sp.block;
  const Seq s = make_seq(L, 0, L, sp, seed);
  // (pos0, T, workspace queries): a partial last CTA of queries (T % 16 != 0) and partial tiles of windows, sub-chunks
  // of 5 queries (a CTA's warpgroups half empty), a decode step forced onto each engine, early queries (all forced),
  // the first queries, before any K1 window exists (zero scores)
  for (auto [pos0, T, ws_T] : {std::tuple<int64_t, int64_t, int64_t>{9000, 37, 37},
                               {8191, 21, 5},
                               {L - 1, 1, 1},
                               {6150, 2, 2},
                               {100, 40, 40},
                               {0, 20, 20}}) {
    for (const Engine e : {Engine::mma, Engine::wgmma}) {
      INFO("seed " << seed << ", queries " << pos0 << " .. " << pos0 + T - 1 << ", engine "
                   << (e == Engine::mma ? "mma" : "wgmma"));
      const GpuSelection got = gpu_select(s, pos0, T, sp, NB, ws_T, true, e);
      check_rows(got.blocks, pos0, T, sp);
      const auto [r64, peer] = reference(s, pos0, T, sp, NB);
      check_against_reference(got, r64, peer, T, sp);
    }
  }
}

TEST_CASE("select_blocks: exact ties go to the lower block index", "[select_blocks][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 6151;
  INFO("seed " << seed);
  // Every 64-token block holds the same keys, so every unforced block pools the same windows and all of them tie
  // exactly (the same fp32 operations on the same numbers): the chosen ones must be the lowest-numbered.
  const int64_t L = 9000, NB = (L + sp.block - 1) / sp.block, pos0 = 8190, T = 9;
  std::vector<ref::Mat> K = make_keys(sp.block, sp, seed);
  for (ref::Mat& k : K) k = k.replicate((L + sp.block - 1) / sp.block, 1).topRows(L).eval();
  const Seq s = make_seq(K, pos0, T, sp, seed);
  const GpuSelection got = gpu_select(s, 0, T, sp, NB, T);
  check_rows(got.blocks, pos0, T, sp);
  int64_t wrong_rows = 0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < sp.groups; ++g) {
      const int64_t qb = (pos0 + t) / sp.block;
      std::vector<int32_t> want;  // block 0, then the lowest unforced blocks, then the local window
      for (int64_t b = 0; b <= qb && int64_t(want.size()) < sp.k_sel; ++b) {
        const bool forced = b < sp.init_blocks || b >= qb - sp.local_blocks;
        const int64_t unforced_before = int64_t(want.size()) - sp.init_blocks;
        if (forced || unforced_before < sp.k_sel - (sp.init_blocks + sp.local_blocks + 1)) want.push_back(int32_t(b));
      }
      want.resize(size_t(sp.k_sel), -1);
      wrong_rows += !std::equal(want.begin(), want.end(), got.blocks.begin() + (t * sp.groups + g) * sp.k_sel);
    }
  CHECK(wrong_rows == 0);
  // and the bf16 peer, whose scores tie exactly too, agrees slot for slot
  const ref::Selection peer = ref::select_blocks(s.q, pos0, s.K1, s.K2, sp, NB, false, ref::peer());
  CHECK(peer.blocks == got.blocks);
}

TEST_CASE("select_blocks: a workspace of a few queries or no score output gives the same blocks bit for bit",
          "[select_blocks][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 6201;
  const int64_t L = 8400, NB = (L + sp.block - 1) / sp.block;
  const Seq s = make_seq(L, 0, L, sp, seed);
  // queries that choose among candidates, and early ones that take every causal block
  for (auto [pos0, T] : {std::pair<int64_t, int64_t>{8100, 300}, {0, 150}}) {
    INFO("seed " << seed << ", queries " << pos0 << " .. " << pos0 + T - 1);
    const GpuSelection one = gpu_select(s, pos0, T, sp, NB, T);
    const GpuSelection many = gpu_select(s, pos0, T, sp, NB, 7);   // sub-chunks of ~7 queries
    const GpuSelection pairs = gpu_select(s, pos0, T, sp, NB, 2);  // sub-chunks of decode's size: prefill's grids still
    const GpuSelection bare = gpu_select(s, pos0, T, sp, NB, 7, false);
    CHECK(one.blocks == many.blocks);
    CHECK(one.blocks == pairs.blocks);
    CHECK(one.blocks == bare.blocks);
    int64_t differ = 0, differ_pairs = 0;
    for (size_t i = 0; i < one.scores.size(); ++i) {
      differ += one.scores[i] != many.scores[i];
      differ_pairs += one.scores[i] != pairs.scores[i];
    }
    CHECK(differ == 0);
    CHECK(differ_pairs == 0);
  }
}

TEST_CASE("select_blocks: at 64K keys the planted blocks win and the reference agrees", "[select_blocks][gpu][large]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 6301;
  const int64_t L = 65536, NB = L / sp.block, T = 5, pos0 = L - T;
  INFO("seed " << seed);
  std::vector<ref::Mat> K = make_keys(L, sp, seed);
  const ref::Mat q = test::bf16_round(test::randn(T, sp.heads * sp.hd, seed + 300));
  // Plant 62 blocks (as many as the scores choose) for group 1 only: their keys lean towards the group's mean query
  // direction, so every query should pick exactly them besides the forced blocks. (Windows straddling a planted
  // block's edge get half the lean, so its neighbours score lower than it.)
  const int g = 1, hpg = sp.heads / sp.groups;
  ref::RowVec dir = ref::RowVec::Zero(sp.hd);
  for (int h = 0; h < hpg; ++h) dir += q.row(0).segment((g * hpg + h) * sp.hd, sp.hd);
  dir /= dir.norm();
  std::mt19937_64 rng(seed);
  const int64_t qb_min = pos0 / sp.block;
  std::set<int32_t> planted;
  while (planted.size() < 62) planted.insert(int32_t(1 + rng() % uint64_t(qb_min - sp.local_blocks - 1)));
  for (int32_t b : planted)
    for (int64_t j = int64_t(b) * sp.block; j < int64_t(b + 1) * sp.block; ++j)
      K[size_t(g)].row(j) = test::bf16_round(K[size_t(g)].row(j) + 3.0 * std::sqrt(double(sp.hd)) * dir);
  Seq s = make_seq(K, pos0, T, sp, seed);
  s.q = q;
  const GpuSelection got = gpu_select(s, 0, T, sp, NB, 2);  // a workspace for 2 queries: 3 sub-chunks
  check_rows(got.blocks, pos0, T, sp);
  const auto [r64, peer] = reference(s, 0, T, sp, NB);
  check_against_reference(got, r64, peer, T, sp);
  for (int64_t t = 0; t < T; ++t) {
    const int32_t* row = got.blocks.data() + (t * sp.groups + g) * sp.k_sel;
    const std::set<int32_t> chosen(row, row + sp.k_sel);
    int64_t missed = 0;
    for (int32_t b : planted) missed += chosen.count(b) == 0;
    CHECK(missed == 0);
  }
}

TEST_CASE("select_blocks: a 16384-query chunk matches the reference on sampled rows", "[select_blocks][gpu][large]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 6401;
  const int64_t pos0 = 4096, T = 16384, L = pos0 + T, NB = L / sp.block;
  const Seq s = make_seq(L, pos0, T, sp, seed);
  const GpuSelection got = gpu_select(s, 0, T, sp, NB, T);
  check_rows(got.blocks, pos0, T, sp);
  const int64_t G = sp.groups, K = sp.k_sel;
  for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, 40}, {2030, 2070}, {4090, 4100}, {T - 33, T}}) {
    INFO("seed " << seed << ", rows " << r0 << " .. " << r1 - 1 << " (positions from " << pos0 + r0 << ")");
    const int64_t n = r1 - r0;
    GpuSelection part;
    part.blocks.assign(got.blocks.begin() + r0 * G * K, got.blocks.begin() + r1 * G * K);
    part.scores.assign(got.scores.begin() + r0 * G * NB, got.scores.begin() + r1 * G * NB);
    const auto [r64, peer] = reference(s, r0, n, sp, NB);
    check_against_reference(part, r64, peer, n, sp);
  }
}

TEST_CASE("select_blocks: a workspace too small for one query is an error", "[select_blocks][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  gpu::Buffer<bf16_t> buf(size_t(1) << 20);
  gpu::Buffer<int32_t> blocks(size_t(2 * sp.k_sel));
  gpu::Buffer<uint8_t> ws(512);
  gpu::SparseCache c;
  c.K1 = c.K2 = buf.get(), c.cap1 = c.cap2 = 1024;
  const gpu::SelectArgs a = gpu::select_args(sp, {buf.get(), int64_t(sp.heads) * sp.hd, 1, 9000}, c, blocks.get(),
                                             nullptr, 0, {ws.get(), ws.size()});
  CHECK_THROWS_AS(gpu::select_blocks(a, nullptr), salasim::Error);
}
