// Selection comparison: per (query, group) row, the symmetric difference of two block sets, each extra or missing
// block judged against the reference's boundary score.
#include "compare/selection.hpp"

#include <cmath>
#include <limits>
#include <set>

#include "compare/metrics.hpp"
#include "model/error.hpp"

namespace salasim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Below 2^62 too: an id from a file becomes an int64_t, and a larger double would not convert.
bool is_block_id(double v) { return std::isfinite(v) && v == std::floor(v) && v >= 0 && v < 0x1p62; }

// One (query, group) row of K block ids as a set; ids that are not valid blocks go to `invalid`.
std::set<int64_t> row_set(const double* ids, int64_t K, int64_t nb, std::vector<double>* invalid) {
  std::set<int64_t> s;
  for (int64_t k = 0; k < K; ++k) {
    const double v = ids[k];
    if (v == -1) continue;
    if (is_block_id(v) && (nb < 0 || v < double(nb)))
      s.insert(int64_t(v));
    else
      invalid->push_back(v);
  }
  return s;
}

}  // namespace

SelectionReport compare_selection(const std::string& name, const Tap& ref_blocks, const Tap& backend_blocks,
                                  const Tap* ref_scores, double band) {
  if (ref_blocks.shape.size() != 3)
    fail("tap {}: reference block ids have shape {}, expected [T, G, K]", name, format_shape(ref_blocks.shape));
  if (backend_blocks.shape != ref_blocks.shape)
    fail("tap {}: backend block ids have shape {}, expected the reference's {}", name,
         format_shape(backend_blocks.shape), format_shape(ref_blocks.shape));
  for (const Tap* t : {&ref_blocks, &backend_blocks})
    if (int64_t(t->data.size()) != t->numel())
      fail("tap {}: block ids hold {} values for shape {}", name, t->data.size(), format_shape(t->shape));
  const int64_t T = ref_blocks.shape[0], G = ref_blocks.shape[1];
  int64_t nb = -1;
  if (ref_scores) {
    const auto& s = ref_scores->shape;
    if (s.size() != 3 || s[0] != T || s[1] != G)
      fail("tap {}: reference scores have shape {}, expected [{}, {}, NB] to match the block ids", name,
           format_shape(s), T, G);
    if (int64_t(ref_scores->data.size()) != ref_scores->numel())
      fail("tap {}: reference scores hold {} values for shape {}", name, ref_scores->data.size(), format_shape(s));
    nb = s[2];
  }

  SelectionAccumulator acc(name, band, ref_scores != nullptr);
  acc.add(ref_blocks.data.data(), backend_blocks.data.data(), ref_scores ? ref_scores->data.data() : nullptr, T, G,
          ref_blocks.shape[2], nb);
  return acc.report();
}

SelectionAccumulator::SelectionAccumulator(std::string name, double band, bool with_scores) : name_(std::move(name)) {
  rep_.band = band;
  rep_.have_scores = with_scores;
}

void SelectionAccumulator::add(const double* ref_blocks, const double* backend_blocks, const double* ref_scores,
                               int64_t rows, int64_t G, int64_t K, int64_t NB) {
  const int64_t nb = rep_.have_scores ? NB : -1;
  SelectionReport& rep = rep_;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t g = 0; g < G; ++g) {
      const int64_t t = row0_ + i;
      ++rep.rows;
      std::vector<double> ref_invalid, be_invalid;
      const std::set<int64_t> r = row_set(ref_blocks + (i * G + g) * K, K, nb, &ref_invalid);
      const std::set<int64_t> b = row_set(backend_blocks + (i * G + g) * K, K, nb, &be_invalid);
      if (!ref_invalid.empty())
        fail("tap {}: the reference selects block id {} at query {}, group {}: expected -1 or an id in [0, {})", name_,
             ref_invalid[0], t, g, nb < 0 ? std::string("NB") : std::to_string(nb));
      if (r == b && be_invalid.empty()) continue;
      ++rep.rows_differing;

      auto score = [&](int64_t blk) { return nb >= 0 ? ref_scores[(i * G + g) * nb + blk] : kNaN; };
      double boundary = kNaN;
      for (int64_t blk : r) {
        const double s = score(blk);
        if (std::isfinite(s) && !(s >= boundary)) boundary = s;  // also replaces the initial NaN
      }
      auto judge = [&](int64_t blk, bool in_ref, double s) {
        const bool tie = std::isfinite(s) && std::isfinite(boundary) &&
                         std::fabs(s - boundary) <= rep.band * std::fabs(boundary);
        if (tie) {
          ++rep.in_band;
          return;
        }
        ++rep.out_of_band;
        if (!rep.first_out_of_band) rep.first_out_of_band = SelectionMismatch{t, g, blk, in_ref, s, boundary};
      };
      for (int64_t blk : r)
        if (!b.count(blk)) judge(blk, true, score(blk));
      for (int64_t blk : b)
        if (!r.count(blk)) judge(blk, false, score(blk));
      for (double v : be_invalid) judge(std::fabs(v) < 0x1p62 ? int64_t(v) : -1, false, kNaN);  // NaN compares false
    }
  row0_ += rows;
}

}  // namespace salasim
