// Records taps of one run into a TapMap: rows of a tap recorded by successive prefill pieces are appended,
// so a prompt fed in pieces produces the same taps as one call.
#pragma once
#include <string>

#include "model/taps.hpp"
#include "reference/tensor.hpp"

namespace salasim::ref {

struct TapRecorder {
  TapFilter filter;
  TapMap* out = nullptr;
  std::string phase = "prefill";

  std::string full(const std::string& rel) const { return "/" + phase + "/" + rel; }
  bool wants(const std::string& rel) const { return out && filter.match(full(rel)); }
  // m: [rows, ...]; shape gives the trailing dims (empty: [rows, m.cols()]). Appends rows when the tap exists.
  void put(const std::string& rel, const Mat& m, std::vector<int64_t> trailing = {});
  void put_ints(const std::string& rel, const std::vector<int32_t>& v, std::vector<int64_t> shape);  // appends
  void put_doubles(const std::string& rel, const std::vector<double>& v, std::vector<int64_t> shape);  // appends
  void replace(const std::string& rel, Tap t);  // state-like taps: the latest value wins
};

}  // namespace salasim::ref
