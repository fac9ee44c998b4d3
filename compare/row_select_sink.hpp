// A TapSink for `salasim run --dump-taps FILE --taps PATTERN --rows LIST`: the chosen taps (the recorder's filter
// chose them) go to a tap dump as the run produces them, the prefill's per-token taps cut to the chosen rows (prompt
// positions) with those rows recorded beside each (the dataset attribute `rows`). What it holds at once: the chosen
// rows of one call's slab while they are written, and the latest value of each state tap of the current phase (a
// GLA state or compressed keys is replaced by every prefill call; only its last value is written, when its phase
// ends), never a whole per-token tap.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "compare/tap_file_sink.hpp"

namespace salasim {

class RowSelectSink : public TapSink {
 public:
  // rows: ascending absolute prefill rows to keep; all_rows: keep every row (no `rows` attribute is written).
  RowSelectSink(TapFileSink& file, std::vector<int64_t> rows, bool all_rows);
  void append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer) override;
  void replace(const std::string& name, Tap t) override;
  // Writes the held state taps and closes the file; the number of taps written.
  int close();
  double peak_held_bytes() const { return peak_held_; }  // the most held at once (state taps and row copies), bytes

 private:
  void enter_phase(const std::string& name);  // a tap of another phase: the previous phase's states are final
  void flush();
  TapFileSink& file_;
  std::vector<int64_t> rows_;
  bool all_rows_;
  std::string phase_;
  std::map<std::string, int64_t> seen_;  // per-token prefill taps: rows handed over so far
  struct Held {
    Tap tap;
    bool dirty = false;  // replaced since it was written
  };
  std::map<std::string, Held> held_;  // state taps of the current phase: the latest value
  double held_bytes_ = 0, peak_held_ = 0;
};

}  // namespace salasim
