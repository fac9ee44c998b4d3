// Lining up dumps of chosen taps and rows with whole ones, for `salasim diff`.
#include "compare/dump_align.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "compare/metrics.hpp"

namespace salasim {

namespace {

struct Side {
  const TapDump* dump;
  const char* label;
  bool chosen() const { return dump->info.extra.count(kTapSelectionAttr) > 0; }
  const Tap* tap(const std::string& n) const {
    const auto it = dump->taps.find(n);
    return it == dump->taps.end() ? nullptr : &it->second;
  }
  const std::vector<int64_t>* rows(const std::string& n) const {
    const auto it = dump->rows.find(n);
    return it == dump->rows.end() ? nullptr : &it->second;
  }
};

// "0, 5, 9 and 3 more"
std::string few(const std::vector<int64_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < 6; ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  if (v.size() > 6) out += fmt::format(" and {} more", v.size() - 6);
  return out;
}

Tap cut(const Tap& t, const std::vector<int64_t>& have, const std::vector<int64_t>& keep) {
  const int64_t per = t.shape[0] > 0 ? t.numel() / t.shape[0] : 0;
  Tap out = t;
  out.shape[0] = int64_t(keep.size());
  out.data.clear();
  out.data.reserve(size_t(per) * keep.size());
  size_t j = 0;
  for (int64_t r : keep) {
    while (have[j] != r) ++j;  // keep is a subset of have, both ascending
    out.data.insert(out.data.end(), t.data.begin() + int64_t(j) * per, t.data.begin() + int64_t(j + 1) * per);
  }
  return out;
}

}  // namespace

AlignedDumps align_dumps(const TapDump& ref, const TapDump* peer, const TapDump& backend) {
  std::vector<Side> sides = {{&ref, "A"}, {&backend, "B"}};
  if (peer) sides.push_back({peer, "peer"});
  AlignedDumps out;
  if (peer) out.peer.emplace();
  TapMap* maps[] = {&out.ref, &out.backend, peer ? &*out.peer : nullptr};
  std::set<std::string> names;
  for (const Side& s : sides)
    for (const auto& [n, t] : s.dump->taps) names.insert(n);
  for (const std::string& n : names) {
    if (std::any_of(sides.begin(), sides.end(), [&](const Side& s) { return s.chosen() && !s.tap(n); })) {
      ++out.skipped;
      continue;
    }
    // The rows every side holds, when a side holds chosen rows of this tap.
    const bool some_rows = std::any_of(sides.begin(), sides.end(), [&](const Side& s) { return s.rows(n) != nullptr; });
    std::vector<std::vector<int64_t>> have(sides.size());
    std::vector<int64_t> common;
    bool first = true, aligned = some_rows;
    for (size_t i = 0; i < sides.size() && some_rows; ++i) {
      const Tap* t = sides[i].tap(n);
      if (!t || t->shape.empty()) {
        aligned = false;  // missing: compare_taps reports it
        break;
      }
      if (const auto* r = sides[i].rows(n)) {
        have[i] = *r;
      } else {
        have[i].resize(size_t(t->shape[0]));
        for (int64_t k = 0; k < t->shape[0]; ++k) have[i][size_t(k)] = k;
      }
      if (first) {
        common = have[i];
        first = false;
        continue;
      }
      std::vector<int64_t> both;
      std::set_intersection(common.begin(), common.end(), have[i].begin(), have[i].end(), std::back_inserter(both));
      common = std::move(both);
    }
    if (aligned) {
      // Chosen rows must all be there when the other side is whole (a chosen row past a whole tap's end means
      // another prompt); two sides of chosen rows must share at least one.
      for (size_t i = 0; i < sides.size() && aligned; ++i) {
        const bool whole_here = sides[i].rows(n) == nullptr;
        for (size_t j = 0; j < sides.size() && aligned; ++j) {
          if (i == j || !sides[j].rows(n) || !whole_here) continue;
          std::vector<int64_t> lacking;
          std::set_difference(have[j].begin(), have[j].end(), have[i].begin(), have[i].end(), std::back_inserter(lacking));
          if (!lacking.empty()) {
            out.notes.push_back(fmt::format("{}: {} holds rows {} that {} (all {} rows) lacks: not the same prompt?", n,
                                            sides[j].label, few(lacking), sides[i].label, have[i].size()));
            aligned = false;
          }
        }
      }
      if (aligned && common.empty()) {
        out.notes.push_back(fmt::format("{}: the chosen rows of the dumps do not meet ({} holds {}; {} holds {})", n,
                                        sides[0].label, few(have[0]), sides[1].label, few(have[1])));
        aligned = false;
      }
    }
    if (aligned) ++out.cut;
    for (size_t i = 0; i < sides.size(); ++i) {
      const Tap* t = sides[i].tap(n);
      if (!t) continue;
      (*maps[i])[n] = aligned && have[i].size() != common.size() ? cut(*t, have[i], common) : *t;
    }
  }
  return out;
}

}  // namespace salasim
