// sparse_attn and dense_attn on the GPU against the float64 reference. The GPU gets the reference's selection
// (teacher forcing), so these tests isolate the attention from block selection.
#include <algorithm>
#include <array>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "gpu/sparse_attn.hpp"
#include "gpu/tensor_map.hpp"
#include "model/error.hpp"
#include "tests/gpu/sparse_support.hpp"

using namespace salasim;
using gpu::bf16_t;

namespace {

// Keys, values and queries of one sequence, bf16-valued, shared by the GPU and the reference.
struct Seq {
  int64_t L = 0;
  std::vector<ref::Mat> K, V;
  ref::Mat q;  // [L, H*hd]: row p is the query at position p
};

Seq make_seq(int64_t L, const ref::SelectParams& sp, uint64_t seed) {
  Seq s;
  s.L = L;
  s.K = test::rand_heads(sp.groups, L, sp.hd, seed, 2.0);  // logits of std ~2: peaked softmax rows
  s.V = test::rand_heads(sp.groups, L, sp.hd, seed + 1, 1.0);
  s.q = test::bf16_round(test::randn(L, sp.heads * sp.hd, seed + 2));
  return s;
}

// The GPU's attention output for queries pos0 .. pos0+T-1 (rows of s.q) over a cache holding keys 0 .. pos0+T-1
// (rows past that are NaN). blocks: [T, G, k_sel] or empty (dense). q and out are embedded in wider rows (ldq, ldo
// > H*hd) whose extra columns are NaN, so a kernel reading or writing outside its columns shows.
// engine: the prefill kernel (AttnArgs::Engine); stats: AttnArgs::tile_stats, downloaded when not null; wg_takers,
// wg_pipeline: AttnArgs'.
ref::Mat gpu_attn(const Seq& s, int64_t pos0, int64_t T, const ref::SelectParams& sp,
                  const std::vector<int32_t>& blocks, gpu::AttnArgs::Engine engine = gpu::AttnArgs::Engine::automatic,
                  std::vector<unsigned long long>* stats = nullptr, int wg_takers = 0, bool wg_pipeline = true) {
  const int64_t HD = int64_t(sp.heads) * sp.hd, ldq = HD + 264, ldo = HD + 72, cap = pos0 + T + 37;
  const gpu::Buffer<bf16_t> Kd = test::upload_heads(s.K, pos0 + T, cap), Vd = test::upload_heads(s.V, pos0 + T, cap);
  std::vector<bf16_t> qv(size_t(T * ldq), test::kBf16NaN);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < HD; ++i) qv[size_t(t * ldq + i)] = bf16_from_float(float(s.q(pos0 + t, i)));
  const gpu::Buffer<bf16_t> qd = gpu::to_device(qv, "queries");
  gpu::Buffer<bf16_t> out(size_t(T * ldo), "attention out");
  test::poison(out);
  gpu::Buffer<int32_t> bd;
  if (!blocks.empty()) bd = gpu::to_device(blocks, "selection");
  gpu::Buffer<uint8_t> ws(std::max<size_t>(1, gpu::sparse_attn_workspace_bytes(T, sp.groups, sp.k_sel, pos0 + T)),
                          "split partials");
  gpu::SparseCache c;
  c.K = Kd.get(), c.V = Vd.get(), c.cap = cap;
  gpu::AttnArgs a = gpu::attn_args(sp, {qd.get(), ldq, T, pos0}, c, blocks.empty() ? nullptr : bd.get(), out.get(), ldo,
                                   {ws.get(), ws.size()});
  a.engine = engine;
  a.wg_takers = wg_takers;
  a.wg_pipeline = wg_pipeline;
  gpu::Buffer<unsigned long long> st(kAttnTileStats, "tile counters");
  gpu::fill_bytes(st.get(), 0, kAttnTileStatsBytes);
  if (stats) a.tile_stats = st.get();
  if (blocks.empty()) gpu::dense_attn(a, nullptr);
  else gpu::sparse_attn(a, nullptr);
  gpu::synchronize();
  if (stats) *stats = st.download();
  const ref::Mat all = test::download_bf16(out, T, ldo);
  int64_t outside = 0;  // the padding columns of out stay poisoned
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = HD; i < ldo; ++i) outside += !std::isnan(all(t, i));
  CHECK(outside == 0);
  return all.leftCols(HD);
}

// Rows [r0, r1) of a selection, as the reference's Selection of those queries.
ref::Selection slice(const ref::Selection& sel, int64_t r0, int64_t r1) {
  ref::Selection s = sel;
  s.T = r1 - r0;
  s.blocks.assign(sel.blocks.begin() + r0 * sel.G * sel.K, sel.blocks.begin() + r1 * sel.G * sel.K);
  s.scores.clear();
  return s;
}

// A random valid selection: the forced blocks, then random other causal blocks (up to k_sel in all, fewer in some
// rows), ascending, -1 padded.
ref::Selection random_selection(int64_t pos0, int64_t T, const ref::SelectParams& sp, uint64_t seed) {
  ref::Selection sel;
  sel.T = T;
  sel.G = sp.groups;
  sel.K = sp.k_sel;
  sel.blocks.assign(size_t(T * sel.G * sel.K), -1);
  std::mt19937_64 rng(seed);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t g = 0; g < sel.G; ++g) {
      const int64_t qb = (pos0 + t) / sp.block;
      std::set<int32_t> s;
      for (int64_t b = 0; b <= qb; ++b)
        if (b < sp.init_blocks || b >= qb - sp.local_blocks) s.insert(int32_t(b));
      const int64_t want = std::min<int64_t>(sp.k_sel - int64_t(rng() % 8), qb + 1);
      while (int64_t(s.size()) < want) s.insert(int32_t(rng() % uint64_t(qb + 1)));
      int64_t i = 0;
      for (int32_t b : s) sel.blocks[size_t((t * sel.G + g) * sel.K + i++)] = b;
    }
  return sel;
}

// The selection neighbours share: every query of a 64-position block takes its block's first query's picks (of sel,
// a selection of the queries pos0 .. pos0 + sel.T - 1).
ref::Selection shared_by_block(const ref::Selection& sel, int64_t pos0, const ref::SelectParams& sp) {
  ref::Selection shared = sel;
  for (int64_t t = 0; t < sel.T; ++t) {
    const int64_t first = std::max<int64_t>(0, (pos0 + t) / sp.block * sp.block - pos0);
    std::copy_n(sel.blocks.begin() + first * sp.groups * sp.k_sel, sp.groups * sp.k_sel,
                shared.blocks.begin() + t * sp.groups * sp.k_sel);
  }
  return shared;
}

}  // namespace

TEST_CASE("sparse_attn: matches the float64 reference on the reference's selection", "[sparse_attn][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 5201;
  const Seq s = make_seq(9029, sp, seed);
  const std::vector<ref::Mat> K1 = test::compress_heads(s.K, s.L, sp.kernel, sp.stride);
  const std::vector<ref::Mat> K2 = test::compress_heads(s.K, s.L, 4 * sp.kernel, 4 * sp.stride);
  // (pos0, T): a prefill from 0, chunks across 6144 (sparse starts to differ from dense) and 8192, a decode step
  for (auto [pos0, T] : {std::pair<int64_t, int64_t>{0, 70}, {6100, 63}, {8100, 257}, {s.L - 1, 1}}) {
    INFO("seed " << seed << ", queries " << pos0 << " .. " << pos0 + T - 1);
    const ref::Mat qs = s.q.middleRows(pos0, T);
    const ref::Selection sel =
        ref::select_blocks(qs, pos0, K1, K2, sp, (pos0 + T + sp.block - 1) / sp.block, false, ref::f64());
    const ref::Mat got = gpu_attn(s, pos0, T, sp, sel.blocks);
    test::check_gate("sparse/attn/out", ref::sparse_attn(qs, pos0, s.K, s.V, sel, sp.block, sp.tau, ref::f64()),
                     ref::sparse_attn(qs, pos0, s.K, s.V, sel, sp.block, sp.tau, ref::peer()), got);
  }
}

TEST_CASE("sparse_attn: random selections over a 16384-query chunk match the reference on sampled rows",
          "[sparse_attn][gpu][large]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 5301;
  const int64_t pos0 = 1000, T = 16384;
  const Seq s = make_seq(pos0 + T, sp, seed);
  const ref::Selection sel = random_selection(pos0, T, sp, seed + 9);
  const ref::Mat got = gpu_attn(s, pos0, T, sp, sel.blocks);
  for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, 40}, {5120, 5190}, {7180, 7200}, {T - 45, T}}) {
    INFO("seed " << seed << ", chunk from " << pos0 << ", rows " << r0 << " .. " << r1 - 1);
    const ref::Mat qs = s.q.middleRows(pos0 + r0, r1 - r0);
    const ref::Selection part = slice(sel, r0, r1);
    test::check_gate("sparse/attn/out", ref::sparse_attn(qs, pos0 + r0, s.K, s.V, part, sp.block, sp.tau, ref::f64()),
                     ref::sparse_attn(qs, pos0 + r0, s.K, s.V, part, sp.block, sp.tau, ref::peer()),
                     got.middleRows(r0, r1 - r0));
  }
}

// Decode calls (T <= 4) take the split path: each CTA's 4 warps attend to different keys of its blocks, and their
// partial O are summed. That sum once went through shared-memory atomicAdd, whose order varies from run to run, so
// the fp32 partials, and now and then one bf16 output, differed between identical calls (seen as one element of a
// re-recorded golden, 1 ulp). The same call repeated must give the same bits, sparse and dense.
TEST_CASE("sparse_attn: decode-sized calls give the same bits on every run", "[sparse_attn][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  const Seq s = make_seq(12000, sp, 811);
  for (auto [pos0, T, dense] :
       {std::tuple<int64_t, int64_t, bool>{s.L - 4, 4, false}, {s.L - 1, 1, false}, {5000, 3, true}}) {
    INFO("queries " << pos0 << " .. " << pos0 + T - 1 << (dense ? ", dense" : ", sparse"));
    const std::vector<int32_t> blocks = dense ? std::vector<int32_t>{} : random_selection(pos0, T, sp, 97).blocks;
    const ref::Mat first = gpu_attn(s, pos0, T, sp, blocks);
    int64_t runs_differing = 0;
    for (int run = 0; run < 24; ++run)
      runs_differing += (gpu_attn(s, pos0, T, sp, blocks).array() != first.array()).any();
    CHECK(runs_differing == 0);
  }
}

TEST_CASE("dense_attn: matches the float64 reference over every causal key", "[dense_attn][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 5401;
  const Seq s = make_seq(8192, sp, seed);
  // a prefill from 0, a chunk in the middle, the last dense decode step (p = 8191)
  for (auto [pos0, T] : {std::pair<int64_t, int64_t>{0, 300}, {5000, 63}, {8191, 1}}) {
    INFO("seed " << seed << ", queries " << pos0 << " .. " << pos0 + T - 1);
    const ref::Mat qs = s.q.middleRows(pos0, T);
    test::check_gate("sparse/attn/out", ref::dense_attn(qs, pos0, s.K, s.V, sp.hd, sp.tau, ref::f64()),
                     ref::dense_attn(qs, pos0, s.K, s.V, sp.hd, sp.tau, ref::peer()), gpu_attn(s, pos0, T, sp, {}));
  }
}

// A decode-sized dense call past 64 splits (8192 keys: 2 blocks a split) takes the combine kernel's chunk loop more
// than once (64 splits a chunk, a running max carried between chunks), which the model's dense decode never reaches.
TEST_CASE("dense_attn: decode-sized calls over more than 64 splits match the reference", "[dense_attn][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 5451;
  const Seq s = make_seq(17000, sp, seed);
  for (auto [pos0, T] : {std::pair<int64_t, int64_t>{8300, 2}, {16996, 4}}) {
    INFO("seed " << seed << ", queries " << pos0 << " .. " << pos0 + T - 1);
    const ref::Mat qs = s.q.middleRows(pos0, T);
    test::check_gate("sparse/attn/out", ref::dense_attn(qs, pos0, s.K, s.V, sp.hd, sp.tau, ref::f64()),
                     ref::dense_attn(qs, pos0, s.K, s.V, sp.hd, sp.tau, ref::peer()), gpu_attn(s, pos0, T, sp, {}));
  }
}

TEST_CASE("dense_attn: a 16384-query chunk from position 0 matches the reference on sampled rows",
          "[dense_attn][gpu][large]") {
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 5501;
  const int64_t T = 16384;
  const Seq s = make_seq(T, sp, seed);
  const ref::Mat got = gpu_attn(s, 0, T, sp, {});
  for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, 33}, {8150, 8200}, {T - 20, T}}) {
    INFO("seed " << seed << ", rows " << r0 << " .. " << r1 - 1);
    const ref::Mat qs = s.q.middleRows(r0, r1 - r0);
    test::check_gate("sparse/attn/out", ref::dense_attn(qs, r0, s.K, s.V, sp.hd, sp.tau, ref::f64()),
                     ref::dense_attn(qs, r0, s.K, s.V, sp.hd, sp.tau, ref::peer()), got.middleRows(r0, r1 - r0));
  }
}

// The prefill's two kernels (the ring of the tensor copy engine, 8 queries a CTA, on Hopper; the cp.async tile
// kernel, 4 queries, anywhere) run the same arithmetic over the same blocks in the same order when the ring takes
// every block on its warps' own mma.sync (AttnArgs::wg_takers = 5): their outputs must be the same bits, on
// selections neighbours hardly share, on selections they share, with a chunk whose length is no multiple of either
// tile and a cache whose written part ends inside a block (the rows past it are NaN), and dense. (With its automatic
// wg_takers the ring takes shared blocks on wgmma, whose sums may round otherwise: the reference tests above gate it.)
TEST_CASE("sparse_attn: the ring and tile kernels give the same bits", "[sparse_attn][dense_attn][gpu][large]") {
  if (!gpu::wgmma_available()) {  // (Catch2 v2 has no SKIP)
    WARN("not run: the ring kernel needs an sm_90a build on a compute capability 9.0 GPU");
    return;
  }
  const ref::SelectParams sp = test::real_select_params();
  const Seq s = make_seq(12347, sp, 6101);
  using E = gpu::AttnArgs::Engine;
  const int64_t pos0 = 9000, T = s.L - pos0;  // 3347 queries: 418 tiles of 8 and 3 left over; the last block half full
  const ref::Selection random = random_selection(pos0, T, sp, 6102);
  const ref::Selection shared = shared_by_block(random, pos0, sp);
  for (const ref::Selection* sel : std::array<const ref::Selection*, 2>{&random, &shared}) {
    INFO((sel == &random ? "random" : "shared") << " selections");
    const ref::Mat ring = gpu_attn(s, pos0, T, sp, sel->blocks, E::tma, nullptr, 5),
                   tile = gpu_attn(s, pos0, T, sp, sel->blocks, E::cp_async);
    CHECK((ring.array() == tile.array()).all());
  }
  INFO("dense, a chunk from position 0");
  const ref::Mat ring = gpu_attn(s, 0, 2003, sp, {}, E::tma, nullptr, 5),
                 tile = gpu_attn(s, 0, 2003, sp, {}, E::cp_async);
  CHECK((ring.array() == tile.array()).all());
  CHECK_FALSE(ring.hasNaN());
  // unions shorter than the ring, of exactly its 6 stages and of one more (CTAs of a dense chunk from 0 attend to
  // 1..qb_last+1 blocks), a sparse chunk of 5 queries, and queries that picked nothing (every entry -1: no block
  // is loaded; neither kernel defines those rows beyond giving the same bits)
  for (int64_t T2 : {int64_t(5), int64_t(384), int64_t(448)}) {
    INFO("dense from 0, " << T2 << " queries");
    const ref::Mat r2 = gpu_attn(s, 0, T2, sp, {}, E::tma, nullptr, 5), t2 = gpu_attn(s, 0, T2, sp, {}, E::cp_async);
    CHECK((r2.array() == t2.array()).all());
  }
  const size_t row = size_t(sp.groups) * sp.k_sel;
  const std::vector<int32_t> five(random.blocks.begin(), random.blocks.begin() + 5 * row), none(5 * row, -1);
  for (const std::vector<int32_t>* b : {&five, &none}) {
    INFO((b == &five ? "5 sparse queries" : "5 queries that picked no block"));
    const ref::Mat r2 = gpu_attn(s, pos0, 5, sp, *b, E::tma, nullptr, 5),
                   t2 = gpu_attn(s, pos0, 5, sp, *b, E::cp_async);
    CHECK((r2.array() == t2.array() || (r2.array().isNaN() && t2.array().isNaN())).all());
  }
}

// The ring's warpgroup path (attend_block_wg): with every block a warpgroup's queries attend to on wgmma
// (wg_takers = 1: the rows of the queries that did not pick a block masked, their state carried through untouched),
// with the automatic threshold and with 3, on selections neighbours hardly share and on shared ones, and dense from 0
// (the causal diagonal inside the warpgroup's 4 queries), sampled rows against the float64 reference; a chunk of 3347
// queries leaves the last CTA 3 queries: its first warpgroup 3 active warps and an idle one, its second none.
TEST_CASE("sparse_attn: blocks the ring takes on wgmma match the reference", "[sparse_attn][dense_attn][gpu][large]") {
  if (!gpu::wgmma_available()) {
    WARN("not run: the ring kernel needs an sm_90a build on a compute capability 9.0 GPU");
    return;
  }
  const ref::SelectParams sp = test::real_select_params();
  const uint64_t seed = 6401;
  const Seq s = make_seq(12347, sp, seed);
  using E = gpu::AttnArgs::Engine;
  const int64_t pos0 = 9000, T = s.L - pos0;
  const ref::Selection random = random_selection(pos0, T, sp, seed + 1);
  const ref::Selection shared = shared_by_block(random, pos0, sp);
  const std::vector<std::pair<int64_t, int64_t>> rows = {{0, 12}, {1533, 1545}, {T - 11, T}};
  for (int wg : {1, 0, 3})
    for (const ref::Selection* sel : std::array<const ref::Selection*, 2>{&random, &shared}) {
      const ref::Mat got = gpu_attn(s, pos0, T, sp, sel->blocks, E::tma, nullptr, wg);
      for (auto [r0, r1] : rows) {
        INFO("wg_takers " << wg << (sel == &random ? ", random" : ", shared") << " selections, rows " << r0 << " .. "
                          << r1 - 1);
        const ref::Mat qs = s.q.middleRows(pos0 + r0, r1 - r0);
        const ref::Selection part = slice(*sel, r0, r1);
        test::check_gate("sparse/attn/out",
                         ref::sparse_attn(qs, pos0 + r0, s.K, s.V, part, sp.block, sp.tau, ref::f64()),
                         ref::sparse_attn(qs, pos0 + r0, s.K, s.V, part, sp.block, sp.tau, ref::peer()),
                         got.middleRows(r0, r1 - r0));
      }
    }
  for (int wg : {1, 0}) {
    const ref::Mat got = gpu_attn(s, 0, 2003, sp, {}, E::tma, nullptr, wg);
    for (auto [r0, r1] : {std::pair<int64_t, int64_t>{0, 9}, {1001, 1010}, {1995, 2003}}) {
      INFO("dense, wg_takers " << wg << ", rows " << r0 << " .. " << r1 - 1);
      const ref::Mat qs = s.q.middleRows(r0, r1 - r0);
      test::check_gate("sparse/attn/out", ref::dense_attn(qs, r0, s.K, s.V, sp.hd, sp.tau, ref::f64()),
                       ref::dense_attn(qs, r0, s.K, s.V, sp.hd, sp.tau, ref::peer()), got.middleRows(r0, r1 - r0));
    }
  }
}

// A warpgroup of the ring whose every union block runs on wgmma (a sparse call whose 4 queries share their picks; a
// dense call) walks them pipelined, the softmax of one block beside the P V product of the one before (wg_walk);
// AttnArgs::wg_pipeline = false waits on each block's products in turn (attend_block_wg). The same arithmetic in the
// same order: the same bits on a selection neighbours share (with a last CTA of 3 queries), where a random selection,
// whose warpgroups have blocks fewer of their queries picked, takes the mixed walk either way; the tile counters are
// the same too. Dense from position 0 (unions of 1 to 32 blocks, shorter and longer than the ring of 6 stages, the
// causal diagonal inside a warpgroup, a last CTA of 3 queries): there every warpgroup's queries share their last
// block, so the walk in turn takes every block on wgmma too. (A dense warpgroup of 1 or 2 queries, or one that
// straddles a 64-key boundary, sends its last block to mma.sync in turn, to wgmma pipelined: not compared.)
TEST_CASE("sparse_attn: the pipelined warpgroup walk gives the bits of the walk in turn",
          "[sparse_attn][dense_attn][gpu][large]") {
  if (!gpu::wgmma_available()) {
    WARN("not run: the ring kernel needs an sm_90a build on a compute capability 9.0 GPU");
    return;
  }
  const ref::SelectParams sp = test::real_select_params();
  const Seq s = make_seq(12347, sp, 6501);
  using E = gpu::AttnArgs::Engine;
  for (int64_t T : {int64_t(448), int64_t(2003)}) {
    INFO("dense from 0, " << T << " queries");
    const ref::Mat piped = gpu_attn(s, 0, T, sp, {}, E::tma),
                   in_turn = gpu_attn(s, 0, T, sp, {}, E::tma, nullptr, 0, false);
    CHECK((piped.array() == in_turn.array()).all());
    CHECK_FALSE(piped.hasNaN());
  }
  const int64_t pos0 = 9000, T = s.L - pos0;
  const ref::Selection random = random_selection(pos0, T, sp, 6502);
  const ref::Selection shared = shared_by_block(random, pos0, sp);
  for (const ref::Selection* sel : std::array<const ref::Selection*, 2>{&random, &shared}) {
    INFO((sel == &random ? "random" : "shared") << " selections");
    std::vector<unsigned long long> st_piped, st_turn;
    const ref::Mat piped = gpu_attn(s, pos0, T, sp, sel->blocks, E::tma, &st_piped),
                   in_turn = gpu_attn(s, pos0, T, sp, sel->blocks, E::tma, &st_turn, 0, false);
    CHECK((piped.array() == in_turn.array()).all());
    CHECK(st_piped == st_turn);
  }
}

// AttnArgs::tile_stats: per tile of consecutive queries (8 for the ring, 4 for the tile kernel) the size of the union
// of their selections, per query the distinct blocks it attended to, the tiles and the queries, as the host counts
// them from the same selection.
TEST_CASE("sparse_attn: the tile counters count each tile's union and each query's blocks", "[sparse_attn][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  const Seq s = make_seq(9800, sp, 6201);
  using E = gpu::AttnArgs::Engine;
  const int64_t pos0 = 8800, T = s.L - pos0;
  ref::Selection sel = random_selection(pos0, T, sp, 6202);
  sel.blocks[size_t(5 * sp.k_sel + 3)] = sel.blocks[size_t(5 * sp.k_sel + 2)];  // a block listed twice counts once
  std::vector<std::pair<E, int>> engines = {{E::cp_async, 4}};
  if (gpu::wgmma_available()) engines.push_back({E::tma, 8});
  for (auto [engine, per_tile] : engines) {
    INFO("queries a tile: " << per_tile);
    std::vector<unsigned long long> st;
    gpu_attn(s, pos0, T, sp, sel.blocks, engine, &st);
    unsigned long long loaded = 0, attended = 0, tiles = 0;
    for (int64_t t0 = 0; t0 < T; t0 += per_tile)
      for (int g = 0; g < sp.groups; ++g) {
        std::set<int32_t> uni;
        for (int64_t t = t0; t < std::min<int64_t>(t0 + per_tile, T); ++t) {
          std::set<int32_t> mine;
          for (int k = 0; k < sp.k_sel; ++k) {
            const int32_t b = sel.blocks[size_t((t * sp.groups + g) * sp.k_sel + k)];
            if (b >= 0 && b <= (pos0 + t) / sp.block) mine.insert(b);
          }
          attended += mine.size();
          uni.insert(mine.begin(), mine.end());
        }
        loaded += uni.size();
        ++tiles;
      }
    REQUIRE(st.size() == size_t(kAttnTileStats));
    CHECK(st[0] == loaded);
    CHECK(st[1] == attended);
    CHECK(st[2] == tiles);
    CHECK(st[3] == (unsigned long long)(T * sp.groups));
  }
}

TEST_CASE("sparse_attn: a head dim other than 128 or a cache too short is an error", "[sparse_attn][gpu]") {
  const ref::SelectParams sp = test::real_select_params();
  gpu::Buffer<bf16_t> buf(size_t(64) * 4096);
  SparseRules r = sp;
  r.hd = 64;
  gpu::SparseCache c;
  c.K = c.V = buf.get(), c.cap = 14;
  gpu::AttnArgs a = gpu::attn_args(r, {buf.get(), int64_t(sp.heads) * sp.hd, 4, 10}, c, nullptr, buf.get(),
                                   int64_t(sp.heads) * sp.hd, {});
  CHECK_THROWS_AS(gpu::dense_attn(a, nullptr), salasim::Error);
  a.hd = 128;
  a.cap = 13;
  CHECK_THROWS_AS(gpu::dense_attn(a, nullptr), salasim::Error);
}
