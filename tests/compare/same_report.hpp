// Checks that two comparisons agree number for number (bit for bit): a tap compared as it is produced against the
// same tap compared whole.
#pragma once
#include <cstring>

#include "compare/report.hpp"
#include "tests/support/catch.hpp"

namespace salasim::test {

inline bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

inline void check_same_metrics(const TensorMetrics& a, const TensorMetrics& b) {
  CHECK(a.numel == b.numel);
  CHECK(a.compared == b.compared);
  CHECK(same(a.max_abs, b.max_abs));
  CHECK(a.worst == b.worst);
  CHECK(a.worst_at == b.worst_at);
  CHECK(same(a.ref_at, b.ref_at));
  CHECK(same(a.other_at, b.other_at));
  CHECK(same(a.rel_rms, b.rel_rms));
  CHECK(same(a.nmse, b.nmse));
  CHECK(same(a.cosine, b.cosine));
  CHECK(same(a.ref_rms, b.ref_rms));
  CHECK(same(a.max_err, b.max_err));
  CHECK(a.worst_err == b.worst_err);
  CHECK(a.worst_err_at == b.worst_err_at);
  CHECK(same(a.ref_at_err, b.ref_at_err));
  CHECK(same(a.other_at_err, b.other_at_err));
  CHECK(a.ref_nonfinite == b.ref_nonfinite);
  CHECK(a.other_nonfinite == b.other_nonfinite);
  CHECK(a.matched_inf == b.matched_inf);
  CHECK(a.unmatched_nonfinite == b.unmatched_nonfinite);
  CHECK(a.first_unmatched == b.first_unmatched);
  CHECK(a.first_unmatched_at == b.first_unmatched_at);
  CHECK(a.ref_all_zero == b.ref_all_zero);
  CHECK(a.other_all_zero == b.other_all_zero);
}

inline void check_same_reports(const CompareReport& a, const CompareReport& b) {
  CHECK(a.passed == b.passed);
  CHECK(a.failed == b.failed);
  CHECK(a.only_in_reference == b.only_in_reference);
  CHECK(a.only_in_backend == b.only_in_backend);
  REQUIRE(a.rows.size() == b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const TapResult &x = a.rows[i], &y = b.rows[i];
    INFO(x.name);
    CHECK(x.name == y.name);
    CHECK(x.order == y.order);
    CHECK(x.pass == y.pass);
    CHECK(x.why == y.why);
    REQUIRE(x.metrics.has_value() == y.metrics.has_value());
    if (x.metrics) check_same_metrics(*x.metrics, *y.metrics);
    REQUIRE(x.peer_metrics.has_value() == y.peer_metrics.has_value());
    if (x.peer_metrics) check_same_metrics(*x.peer_metrics, *y.peer_metrics);
    CHECK(same(x.rel_rms.ratio, y.rel_rms.ratio));
    CHECK(same(x.max_err.ratio, y.max_err.ratio));
    REQUIRE(x.selection.has_value() == y.selection.has_value());
    if (x.selection) {
      CHECK(x.selection->rows == y.selection->rows);
      CHECK(x.selection->rows_differing == y.selection->rows_differing);
      CHECK(x.selection->in_band == y.selection->in_band);
      CHECK(x.selection->out_of_band == y.selection->out_of_band);
    }
  }
}

}  // namespace salasim::test
