// The reference's tap recorder: the shared TapRecorder plus Eigen matrices.
#pragma once
#include <string>

#include "model/tap_recorder.hpp"
#include "reference/tensor.hpp"

namespace salasim::ref {

struct TapRecorder : salasim::TapRecorder {
  TapRecorder(TapFilter f, TapMap* o, std::string ph = "prefill") : salasim::TapRecorder{std::move(f), o, std::move(ph)} {}
  TapRecorder(TapFilter f, TapSink* s, std::string ph = "prefill")
      : salasim::TapRecorder{std::move(f), nullptr, std::move(ph), s} {}
  // m: [rows, ...]; trailing gives the dims after rows (empty: [rows, m.cols()]). Appends rows when the tap exists.
  void put(const std::string& rel, const Mat& m, std::vector<int64_t> trailing = {}) {
    if (!wants(rel)) return;
    std::vector<int64_t> shape{m.rows()};
    if (trailing.empty()) trailing = {m.cols()};
    shape.insert(shape.end(), trailing.begin(), trailing.end());
    put_doubles(rel, m.data(), shape);
  }
};

}  // namespace salasim::ref
