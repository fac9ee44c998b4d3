// Tap recording with row appends across prefill pieces.
#include "model/tap_recorder.hpp"

#include <algorithm>

#include "model/error.hpp"

namespace salasim {

void TapMapSink::append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer) {
  const int64_t n = shape_numel(shape);
  auto it = map->find(name);
  if (it == map->end()) {
    Tap t;
    t.shape = shape;
    t.data.assign(data, data + n);
    t.integer = integer;
    t.order = int64_t(map->size());
    map->emplace(name, std::move(t));
    return;
  }
  Tap& t = it->second;
  if (!std::equal(shape.begin() + 1, shape.end(), t.shape.begin() + 1, t.shape.end()))
    internal_fail("tap '{}' appended with different trailing dims", name);
  t.shape[0] += shape[0];
  t.data.insert(t.data.end(), data, data + n);
}

void TapMapSink::replace(const std::string& name, Tap t) {
  auto it = map->find(name);
  t.order = it == map->end() ? int64_t(map->size()) : it->second.order;
  (*map)[name] = std::move(t);
}

void TapRecorder::put_doubles(const std::string& rel, const double* v, std::vector<int64_t> shape) {
  if (!wants(rel)) return;
  if (sink) return sink->append(full(rel), shape, v, false);
  TapMapSink(out).append(full(rel), shape, v, false);
}

void TapRecorder::put_doubles(const std::string& rel, const std::vector<double>& v, std::vector<int64_t> shape) {
  put_doubles(rel, v.data(), std::move(shape));
}

void TapRecorder::put_ints(const std::string& rel, const std::vector<int32_t>& v, std::vector<int64_t> shape) {
  if (!wants(rel)) return;
  std::vector<double> d(v.begin(), v.end());
  if (sink) return sink->append(full(rel), shape, d.data(), true);
  TapMapSink(out).append(full(rel), shape, d.data(), true);
}

void TapRecorder::replace(const std::string& rel, Tap t) {
  if (!wants(rel)) return;
  if (sink) return sink->replace(full(rel), std::move(t));
  TapMapSink(out).replace(full(rel), std::move(t));
}

}  // namespace salasim
