// Tap recording with row appends across prefill pieces.
#include "model/tap_recorder.hpp"

#include <algorithm>

#include "model/error.hpp"

namespace salasim {

namespace {
void append(TapMap& map, const std::string& name, std::vector<int64_t> shape, const double* data, bool integer) {
  const int64_t n = shape_numel(shape);
  auto it = map.find(name);
  if (it == map.end()) {
    Tap t;
    t.shape = std::move(shape);
    t.data.assign(data, data + n);
    t.integer = integer;
    t.order = int64_t(map.size());
    map.emplace(name, std::move(t));
    return;
  }
  Tap& t = it->second;
  if (!std::equal(shape.begin() + 1, shape.end(), t.shape.begin() + 1, t.shape.end()))
    internal_fail("tap '{}' appended with different trailing dims", name);
  t.shape[0] += shape[0];
  t.data.insert(t.data.end(), data, data + n);
}
}  // namespace

void TapRecorder::put_doubles(const std::string& rel, const double* v, std::vector<int64_t> shape) {
  if (!wants(rel)) return;
  append(*out, full(rel), std::move(shape), v, false);
}

void TapRecorder::put_doubles(const std::string& rel, const std::vector<double>& v, std::vector<int64_t> shape) {
  put_doubles(rel, v.data(), std::move(shape));
}

void TapRecorder::put_ints(const std::string& rel, const std::vector<int32_t>& v, std::vector<int64_t> shape) {
  if (!wants(rel)) return;
  std::vector<double> d(v.begin(), v.end());
  append(*out, full(rel), std::move(shape), d.data(), true);
}

void TapRecorder::replace(const std::string& rel, Tap t) {
  if (!wants(rel)) return;
  auto it = out->find(full(rel));
  t.order = it == out->end() ? int64_t(out->size()) : it->second.order;
  (*out)[full(rel)] = std::move(t);
}

}  // namespace salasim
