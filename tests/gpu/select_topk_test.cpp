// select_blocks' top-k step alone (gpu::detail::topk_for_test) against the rule written plainly here: the forced
// blocks, then the highest keys among the others (equal keys to the lower block index), ascending, -1 padding; and
// the score output. Sizes the full op reaches only through millions of keys: 40K blocks, exact ties, odd row
// strides and unaligned rows, k_sel above and below the forced blocks, decode (T <= 4) and prefill (T = 300) grids.
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu/select_topk.hpp"
#include "model/error.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

namespace {

enum class Keys {
  spread,     // any non-negative bf16, +inf included: 0 .. 0x7f80
  clustered,  // as real pooled scores: a few high bytes (exponents), any low byte
  equal,      // every key the same: the lowest unforced blocks win
  few,        // four values: long runs of ties across threads
};

struct TopkCase {
  const char* what;
  int64_t pos0, T;
  int init_blocks, local_blocks, k_sel;
  Keys keys;
  int64_t nbs_extra;  // row stride = the last query's blocks rounded up to 8 (as select_layout's) + this (odd: rows
                      // not 16-byte aligned)
  int misalign;       // keys start this many 16-bit elements past a 16-byte boundary
  bool scores;
};

constexpr int G = 2, kBlock = 64;

uint16_t draw_key(Keys kind, std::mt19937_64& rng) {
  switch (kind) {
    case Keys::spread: return uint16_t(rng() % 0x7f81);
    case Keys::clustered: return uint16_t(((0x3b + rng() % 6) << 8) | (rng() % 256));
    case Keys::equal: return 0x3f80;
    case Keys::few: {
      const uint16_t v[4] = {0, 0x3f80, 0x3f81, 0x4000};
      return v[rng() % 4];
    }
  }
  return 0;
}

// The rule for one query row: keys[b] for blocks 0 .. qb.
std::vector<int32_t> rule_row(const uint16_t* keys, int64_t qb, const TopkCase& c) {
  std::vector<int32_t> chosen, cand;
  for (int64_t b = 0; b <= qb; ++b) (b < c.init_blocks || b >= qb - c.local_blocks ? chosen : cand).push_back(int32_t(b));
  const size_t take = std::min(cand.size(), size_t(std::max<int64_t>(0, c.k_sel - int64_t(chosen.size()))));
  std::partial_sort(cand.begin(), cand.begin() + int64_t(take), cand.end(),
                    [&](int32_t a, int32_t b) { return keys[a] != keys[b] ? keys[a] > keys[b] : a < b; });
  chosen.insert(chosen.end(), cand.begin(), cand.begin() + int64_t(take));
  std::sort(chosen.begin(), chosen.end());
  chosen.resize(size_t(c.k_sel), -1);  // more forced blocks than k_sel: the lowest k_sel of them
  return chosen;
}

std::string join(const std::vector<int32_t>& v) {
  std::string s;
  for (int32_t x : v) s += std::to_string(x) + " ";
  return s + "...";
}

// split: the split top-k (per 1024-block segment, then among the segments' choices) where select_blocks takes it,
// never, or wherever it can run
using Split = gpu::detail::TopkArgs::Split;
void check_case(const TopkCase& c, uint64_t seed, Split split = Split::automatic) {
  INFO(c.what << " (seed " << seed << ", pos0 " << c.pos0 << ", T " << c.T << ", k_sel " << c.k_sel << ", split "
              << int(split) << ")");
  const int64_t nb_last = (c.pos0 + c.T - 1) / kBlock + 1, nbs = (nb_last + 7) / 8 * 8 + c.nbs_extra;
  const int64_t n_blocks = nb_last + 5, rows = c.T * G;
  std::mt19937_64 rng(seed);
  // the keys past a query's block are the largest there are: a kernel that reads them chooses them
  std::vector<uint16_t> keys(size_t(c.misalign + rows * nbs), 0xffff);
  for (int64_t t = 0; t < c.T; ++t)
    for (int64_t g = 0; g < G; ++g) {
      uint16_t* row = keys.data() + c.misalign + (t * G + g) * nbs;
      for (int64_t b = 0; b <= (c.pos0 + t) / kBlock; ++b) row[b] = draw_key(c.keys, rng);
    }
  const gpu::Buffer<uint16_t> kd = gpu::to_device(keys, "pooled keys");
  gpu::Buffer<int32_t> blocks(size_t(rows * c.k_sel), "block ids");
  gpu::Buffer<float> scores(size_t(rows * n_blocks), "scores");
  gpu::fill_bytes(blocks.get(), 0xff, blocks.size() * 4);
  gpu::fill_bytes(scores.get(), 0xff, scores.size() * 4);
  gpu::detail::TopkArgs a;
  a.keys = kd.get() + c.misalign;
  a.nbs = nbs;
  a.T = c.T;
  a.pos0 = c.pos0;
  a.G = G;
  a.block = kBlock;
  a.init_blocks = c.init_blocks;
  a.local_blocks = c.local_blocks;
  a.k_sel = c.k_sel;
  a.blocks = blocks.get();
  a.scores = c.scores ? scores.get() : nullptr;
  a.n_blocks = n_blocks;
  a.split = split;
  gpu::detail::topk_for_test(a, nullptr);
  gpu::synchronize();
  const std::vector<int32_t> got = blocks.download();
  const std::vector<float> got_scores = scores.download();

  int64_t wrong_rows = 0, wrong_scores = 0, first = -1;
  std::vector<int32_t> first_want, first_got;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t qb = (c.pos0 + r / G) / kBlock;
    const uint16_t* row = keys.data() + c.misalign + r * nbs;
    const std::vector<int32_t> want = rule_row(row, qb, c);
    if (!std::equal(want.begin(), want.end(), got.begin() + r * c.k_sel)) {
      if (wrong_rows++ == 0) {
        first = r;
        first_want.assign(want.begin(), want.begin() + std::min<int64_t>(c.k_sel, 12));
        first_got.assign(got.begin() + r * c.k_sel, got.begin() + r * c.k_sel + std::min<int64_t>(c.k_sel, 12));
      }
    }
    if (!c.scores) continue;
    for (int64_t b = 0; b < n_blocks; ++b) {
      const bool forced = b < c.init_blocks || (b >= qb - c.local_blocks && b <= qb);
      float want_s = -std::numeric_limits<float>::infinity();
      if (b <= qb) {
        const uint32_t bits = uint32_t(row[b]) << 16;
        std::memcpy(&want_s, &bits, 4);
        if (forced) want_s = std::numeric_limits<float>::infinity();
      }
      wrong_scores += std::memcmp(&want_s, &got_scores[size_t(r * n_blocks + b)], 4) != 0;
    }
  }
  INFO("first wrong row " << first << " (query " << first / G << ", group " << first % G << ")");
  INFO("  want " << join(first_want));
  INFO("  got  " << join(first_got));
  CHECK(wrong_rows == 0);
  CHECK(wrong_scores == 0);
}

}  // namespace

TEST_CASE("select_blocks: the top-k step of 40K blocks in a decode step is the rule's, exactly", "[select_blocks][gpu]") {
  const int64_t at40k = 40000 * kBlock;
  const TopkCase cases[] = {
    // 4 queries across a block edge (40000 and 40001 blocks): 1024 threads of 40 keys
    {"decode, 4 queries, clustered keys", at40k - 2, 4, 1, 32, 96, Keys::clustered, 0, 0, true},
    {"decode, 1 query, spread keys, unaligned odd rows", at40k + 17, 1, 1, 32, 96, Keys::spread, 3, 1, true},
    {"decode, 16384 blocks, k_sel 2048", 16384 * kBlock - 1, 1, 1, 32, 2048, Keys::clustered, 0, 0, false},
    {"decode, every key equal", 20000 * kBlock + 5, 4, 1, 32, 96, Keys::equal, 0, 0, false},
    {"decode, four key values, no forced blocks", 12345 * kBlock, 3, 0, 0, 7, Keys::few, 1, 2, false},
    // without scores and k_sel <= 128 the split top-k can run (forced here, the one-CTA kernel beside it)
    {"decode, 4 queries, clustered keys, no scores", at40k - 2, 4, 1, 32, 96, Keys::clustered, 0, 0, false},
    {"decode, 1 query, spread keys, unaligned odd rows, no scores", at40k + 17, 1, 1, 32, 96, Keys::spread, 3, 1, false},
    {"decode, 4097 blocks (two segments, the second of 1), k_sel 128", 4096 * kBlock, 2, 1, 32, 128, Keys::clustered, 0, 0, false},
    {"decode, forced blocks above k_sel", 5000 * kBlock, 4, 1, 200, 96, Keys::spread, 0, 0, false},
    {"decode, no init block, the local window across a segment edge", 8200 * kBlock + 3, 2, 0, 40, 96, Keys::few, 1, 1, false},
    // 21504 then 21505 blocks: the last query sees one segment more than the others (22 against 21)
    {"decode, 4 queries, the last one a segment more", 21503 * kBlock + 62, 4, 1, 32, 96, Keys::clustered, 0, 0, false},
    {"decode, 1100 init blocks: whole segments forced, none taken", 9000 * kBlock, 2, 1100, 32, 96, Keys::spread, 0, 0, false},
    {"decode, init and local ranges overlapping: every block forced", 300 * kBlock + 9, 2, 200, 150, 128, Keys::few, 0, 0, false},
  };
  uint64_t seed = 7101;
  for (const TopkCase& c : cases)
    for (const Split split : {Split::always, Split::never}) check_case(c, seed++, split);
}

TEST_CASE("select_blocks: the top-k step keeps the forced-block and all-chosen edges", "[select_blocks][gpu]") {
  const TopkCase cases[] = {
    // more forced blocks than k_sel: no candidate taken, the lowest k_sel forced ones kept
    {"forced blocks above k_sel", 5000 * kBlock, 4, 1, 200, 96, Keys::spread, 0, 0, true},
    {"no init block, local window past block 0", 300 * kBlock + 3, 4, 0, 1000, 96, Keys::few, 1, 1, true},
    // queries from 93 to 97 blocks: every causal block chosen, then one of 64 candidates left out
    {"all chosen into choosing", 5900, 300, 1, 32, 96, Keys::spread, 0, 0, true},
    {"the first 300 queries: 1 to 5 blocks, all forced, k_sel 5", 0, 300, 1, 32, 5, Keys::few, 0, 0, false},
  };
  uint64_t seed = 7201;
  for (const TopkCase& c : cases) check_case(c, seed++);
}

TEST_CASE("select_blocks: the top-k step of a prefill grid is the rule's, exactly", "[select_blocks][gpu]") {
  const TopkCase cases[] = {
    {"300 queries at 3000 blocks, unaligned odd rows", 3000 * kBlock + 17, 300, 1, 32, 96, Keys::clustered, 5, 3, true},
    {"300 queries, four key values", 2000 * kBlock - 150, 300, 1, 32, 96, Keys::few, 0, 0, false},
    {"300 queries, every key equal, k_sel 500", 1500 * kBlock, 300, 2, 16, 500, Keys::equal, 0, 0, false},
  };
  uint64_t seed = 7301;
  for (const TopkCase& c : cases) check_case(c, seed++);
}

TEST_CASE("select_blocks: the top-k test entry refuses a row stride below the blocks", "[select_blocks][gpu]") {
  gpu::Buffer<uint16_t> keys(64);
  gpu::Buffer<int32_t> blocks(96);
  gpu::detail::TopkArgs a;
  a.keys = keys.get();
  a.nbs = 10;
  a.T = 1;
  a.pos0 = 64 * 10;  // 11 blocks
  a.blocks = blocks.get();
  CHECK_THROWS_AS(gpu::detail::topk_for_test(a, nullptr), salasim::Error);
}
