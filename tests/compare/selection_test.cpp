// Selection comparison: exact sets, ties inside the table's band, everything else out of band and located.
#include <cmath>
#include <limits>

#include "compare/selection.hpp"
#include "compare/tolerance.hpp"
#include "model/error.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const std::string kName = "/prefill/layer_00/sparse/select/blocks";

double band() { return tolerance_row(tolerance_table(), "sparse/select/blocks").tie_band; }

Tap blocks(std::vector<double> ids) {  // one (query, group) row: [1, 1, K]
  const int64_t k = int64_t(ids.size());
  return Tap{{1, 1, k}, std::move(ids), true, 0};
}

// [1, 1, 8]: blocks 0 and 6 forced (+inf), 7 in the future (-inf); block 3 sits half a band under block 2.
Tap scores() {
  const double boundary = 2.0;
  return Tap{{1, 1, 8}, {kInf, 5.0, boundary, boundary * (1 - band() / 2), 1.0, 0.5, kInf, -kInf}, false, 0};
}

// The reference's top 4 of scores(): {0, 1, 2, 6}; its boundary (lowest non-forced selected score) is block 2's.
const Tap kRef = blocks({0, 1, 2, 6});

}  // namespace

TEST_CASE("selection: equal sets pass, whatever the slot order and padding", "[selection]") {
  const Tap sc = scores();
  SelectionReport r = compare_selection(kName, kRef, kRef, &sc, band());
  CHECK(r.pass());
  CHECK(r.rows == 1);
  CHECK(r.rows_differing == 0);
  const Tap ref5 = Tap{{1, 1, 5}, {0, 1, 2, 6, -1}, true, 0};
  const Tap be5 = Tap{{1, 1, 5}, {6, -1, 2, 1, 0}, true, 0};
  r = compare_selection(kName, ref5, be5, nullptr, band());
  CHECK(r.pass());
  CHECK(r.rows_differing == 0);
}

TEST_CASE("selection: a swap inside the tie band passes", "[selection]") {
  const Tap sc = scores();
  const SelectionReport r = compare_selection(kName, kRef, blocks({0, 1, 3, 6}), &sc, band());
  CHECK(r.pass());
  CHECK(r.rows_differing == 1);
  CHECK(r.in_band == 2);  // block 2 (the boundary itself) missing, block 3 (half a band below) extra
  CHECK(r.out_of_band == 0);
}

TEST_CASE("selection: a swap outside the tie band fails and is located", "[selection]") {
  const Tap sc = scores();
  const SelectionReport r = compare_selection(kName, kRef, blocks({0, 1, 4, 6}), &sc, band());
  CHECK_FALSE(r.pass());
  CHECK(r.in_band == 1);  // block 2 missing is at the boundary
  CHECK(r.out_of_band == 1);
  REQUIRE(r.first_out_of_band);
  const SelectionMismatch& m = *r.first_out_of_band;
  CHECK(m.query == 0);
  CHECK(m.group == 0);
  CHECK(m.block == 4);
  CHECK_FALSE(m.in_reference);
  CHECK(m.score == sc.data[4]);
  CHECK(m.boundary == sc.data[2]);
}

TEST_CASE("selection: a missing forced block or a future block is never a tie", "[selection]") {
  const Tap sc = scores();
  SelectionReport r = compare_selection(kName, kRef, blocks({3, 1, 2, 6}), &sc, band());  // block 0 (+inf) dropped
  CHECK_FALSE(r.pass());
  REQUIRE(r.first_out_of_band);
  CHECK(r.first_out_of_band->block == 0);
  CHECK(r.first_out_of_band->in_reference);
  r = compare_selection(kName, kRef, blocks({0, 1, 7, 6}), &sc, band());  // block 7 (-inf) taken
  CHECK_FALSE(r.pass());
}

TEST_CASE("selection: invalid backend ids fail; without scores every mismatch does", "[selection]") {
  const Tap sc = scores();
  CHECK_FALSE(compare_selection(kName, kRef, blocks({0, 1, 2, 8}), &sc, band()).pass());  // 8 >= NB
  CHECK_FALSE(compare_selection(kName, kRef, blocks({0, 1, 2, 2.5}), &sc, band()).pass());
  CHECK_FALSE(compare_selection(kName, kRef, blocks({0, 1, 2, std::nan("")}), &sc, band()).pass());
  const SelectionReport r = compare_selection(kName, kRef, blocks({0, 1, 3, 6}), nullptr, band());
  CHECK_FALSE(r.have_scores);
  CHECK(r.out_of_band == 2);
}

TEST_CASE("selection: inconsistent shapes and invalid reference ids are errors naming the tap", "[selection]") {
  const Tap sc = scores();
  CHECK_THROWS_AS(compare_selection(kName, kRef, blocks({0, 1, 2}), &sc, band()), Error);
  const Tap wrong_scores{{2, 1, 8}, std::vector<double>(16, 1.0), false, 0};
  CHECK_THROWS_AS(compare_selection(kName, kRef, kRef, &wrong_scores, band()), Error);
  try {
    compare_selection(kName, blocks({0, 1, 2, 9}), kRef, &sc, band());
    CHECK(false);
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(kName) != std::string::npos);
  }
}

TEST_CASE("selection: rows are (query, group) pairs, each with its own boundary", "[selection]") {
  // [2, 2, 4] blocks over [2, 2, 6] scores: row (1, 1) swaps out of band, every other row is equal.
  Tap sc{{2, 2, 6}, {}, false, 0};
  for (int row = 0; row < 4; ++row)
    for (double v : {kInf, 4.0, 3.0, 2.0, 1.0, 0.1}) sc.data.push_back(v + row);
  Tap ref{{2, 2, 4}, {}, true, 0};
  for (int row = 0; row < 4; ++row)
    for (double v : {0, 1, 2, 3}) ref.data.push_back(v);
  Tap be = ref;
  be.data[3 * 4 + 1] = 5;  // row (1, 1): block 1 (well above the boundary) replaced by block 5
  const SelectionReport r = compare_selection(kName, ref, be, &sc, band());
  CHECK(r.rows == 4);
  CHECK(r.rows_differing == 1);
  CHECK(r.out_of_band == 2);
  REQUIRE(r.first_out_of_band);
  CHECK(r.first_out_of_band->query == 1);
  CHECK(r.first_out_of_band->group == 1);
  CHECK(r.first_out_of_band->block == 1);
  CHECK(r.first_out_of_band->boundary == sc.data[3 * 6 + 3]);
}
