// Records taps of one run into a TapMap (shared by the reference and the GPU runner): rows of a tap recorded by
// successive prefill pieces are appended, so a prompt fed in pieces produces the same taps as one call.
#pragma once
#include <string>
#include <vector>

#include "model/taps.hpp"

namespace salasim {

struct TapRecorder {
  TapFilter filter;
  TapMap* out = nullptr;
  std::string phase = "prefill";

  std::string full(const std::string& rel) const { return "/" + phase + "/" + rel; }
  bool wants(const std::string& rel) const { return out && filter.match(full(rel)); }
  // data: shape[0] rows of the trailing dims; appended to the tap's rows when it exists.
  void put_doubles(const std::string& rel, const std::vector<double>& v, std::vector<int64_t> shape);
  void put_doubles(const std::string& rel, const double* v, std::vector<int64_t> shape);
  void put_ints(const std::string& rel, const std::vector<int32_t>& v, std::vector<int64_t> shape);
  void replace(const std::string& rel, Tap t);  // state-like taps: the latest value wins
};

}  // namespace salasim
