// Records taps of one run (shared by the reference and the GPU runner): rows of a tap recorded by successive prefill
// pieces are appended, so a prompt fed in pieces produces the same taps as one call. Where they go is a TapSink: a
// TapMap by default (every tap of the run kept), or a sink that compares them as they come and keeps almost nothing
// (verify's main job, scenarios/stream_truth.hpp), or one that writes them out.
#pragma once
#include <string>
#include <vector>

#include "model/taps.hpp"

namespace salasim {

struct TapSink {
  virtual ~TapSink() = default;
  // shape[0] rows of tap `name` (a full name, "/prefill/layer_00/mlp/out"), appended to its rows so far; the first
  // call creates the tap. data: the rows, row-major.
  virtual void append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer) = 0;
  // State-like taps (GLA state, compressed keys, last-token logits): the latest value replaces the earlier one.
  virtual void replace(const std::string& name, Tap t) = 0;
};

// The default sink: every tap into a map; Tap::order is the order in which names first arrive.
struct TapMapSink : TapSink {
  TapMap* map = nullptr;
  explicit TapMapSink(TapMap* m) : map(m) {}
  void append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer) override;
  void replace(const std::string& name, Tap t) override;
};

struct TapRecorder {
  TapFilter filter;
  TapMap* out = nullptr;  // the sink when `sink` is null
  std::string phase = "prefill";
  TapSink* sink = nullptr;

  std::string full(const std::string& rel) const { return "/" + phase + "/" + rel; }
  bool wants(const std::string& rel) const { return (out || sink) && filter.match(full(rel)); }
  // data: shape[0] rows of the trailing dims; appended to the tap's rows when it exists.
  void put_doubles(const std::string& rel, const std::vector<double>& v, std::vector<int64_t> shape);
  void put_doubles(const std::string& rel, const double* v, std::vector<int64_t> shape);
  void put_ints(const std::string& rel, const std::vector<int32_t>& v, std::vector<int64_t> shape);
  void replace(const std::string& rel, Tap t);  // state-like taps: the latest value wins
};

}  // namespace salasim
