// Chosen rows of chosen taps, streamed to a tap dump.
#include "compare/row_select_sink.hpp"

#include <algorithm>

#include "model/error.hpp"

namespace salasim {

RowSelectSink::RowSelectSink(TapFileSink& file, std::vector<int64_t> rows, bool all_rows)
    : file_(file), rows_(std::move(rows)), all_rows_(all_rows) {
  if (!std::is_sorted(rows_.begin(), rows_.end())) internal_fail("RowSelectSink: rows must ascend");
}

void RowSelectSink::enter_phase(const std::string& name) {
  const std::string ph = tap_phase(name);
  if (ph == phase_) return;
  flush();
  phase_ = ph;
}

void RowSelectSink::flush() {
  for (auto& [name, h] : held_)
    if (h.dirty) file_.replace(name, std::move(h.tap));
  held_.clear();
  held_bytes_ = 0;
}

void RowSelectSink::append(const std::string& name, const std::vector<int64_t>& shape, const double* data,
                           bool integer) {
  enter_phase(name);
  if (all_rows_ || phase_ != "prefill" || whole_sequence_tap(name) || shape.empty())
    return file_.append(name, shape, data, integer);
  // Rows [row0, row0 + shape[0]) of the prompt arrive: keep those in rows_.
  auto [it, first] = seen_.try_emplace(name, 0);
  const int64_t row0 = it->second, n = shape[0];
  it->second += n;
  const auto lo = std::lower_bound(rows_.begin(), rows_.end(), row0);
  const auto hi = std::lower_bound(rows_.begin(), rows_.end(), row0 + n);
  const int64_t k = int64_t(hi - lo);
  if (k == 0 && !first) return;  // nothing chosen here (the first call still creates the tap: its recording order)
  const int64_t per = n > 0 ? shape_numel(shape) / n : 0;
  std::vector<double> kept(size_t(k * per));
  for (int64_t i = 0; i < k; ++i) {
    const int64_t r = lo[i] - row0;
    std::copy(data + r * per, data + (r + 1) * per, kept.begin() + i * per);
  }
  peak_held_ = std::max(peak_held_, held_bytes_ + 8.0 * double(kept.size()));
  std::vector<int64_t> s = shape;
  s[0] = k;
  file_.append_rows(name, s, kept.data(), integer, k > 0 ? &*lo : nullptr);
}

void RowSelectSink::replace(const std::string& name, Tap t) {
  enter_phase(name);
  const double bytes = 8.0 * double(t.data.size());
  auto it = held_.find(name);
  if (it == held_.end()) {
    // Written at once (its recording order) and held: a later value of this phase replaces it in memory only, so
    // the file gets one rewrite per phase, not one per prefill call (compressed keys grow with every call, and
    // HDF5 keeps the space of a dataset it deletes).
    file_.replace(name, t);
    held_bytes_ += bytes;
    peak_held_ = std::max(peak_held_, held_bytes_);
    held_.emplace(name, Held{std::move(t), false});
    return;
  }
  peak_held_ = std::max(peak_held_, held_bytes_ + bytes);  // the new value arrives while the old one is held
  held_bytes_ += bytes - 8.0 * double(it->second.tap.data.size());
  it->second = Held{std::move(t), true};
}

int RowSelectSink::close() {
  flush();
  return file_.close();
}

}  // namespace salasim
