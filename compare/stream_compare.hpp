// Comparing taps as two runs produce them, instead of holding every tap of both: the float64 reference on one side,
// the peer on the other, where the peer is also the backend under test (verify's peer mode: the report equals
// compare_taps(ref, &peer, peer)). Each side records into its own TapSink (model/tap_recorder.hpp), from its own
// thread; a worker thread pairs the rows both sides have produced, folds them into the tap's metrics
// (MetricsAccumulator, SelectionAccumulator) and drops them. A side that runs ahead waits once the rows held for the
// other side pass a budget, so memory stays bounded whatever the run's length. Taps named in KeepTaps are kept
// (rows cut as a golden cuts them) for checks that need the tensors themselves; of every other tap only its name,
// shape and order remain (TapHeader: a golden's check needs the whole tap set the run made).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compare/report.hpp"
#include "model/tap_recorder.hpp"

namespace salasim {

// Taps a streaming comparison keeps beside its verdicts; every other tap is dropped once compared.
struct KeepTaps {
  std::set<std::string> names;  // full tap names
  std::vector<int64_t> rows;    // rows kept of the prefill's appended (per-token) taps, in this order; empty: all
  std::string what = "kept";    // who asked, for errors ("golden": "golden: tap ... has 9000 rows, row 9001 ...")
};

// A tap without its data: what a run made of it (its final shape, its type and its Tap::order).
struct TapHeader {
  std::vector<int64_t> shape;
  bool integer = false;
  int64_t order = 0;
};
using TapHeaders = std::map<std::string, TapHeader>;
TapHeaders tap_headers(const TapMap& taps);

struct StreamResult {
  CompareReport report;  // as compare_taps(reference, &peer, peer)
  TapMap ref_kept, peer_kept;
  TapHeaders ref_seen, peer_seen;  // every tap each run recorded, kept or not: the tap set it made (a golden's check)
  double busy_s = 0;     // CPU time the worker spent comparing (mostly while the runs ran)
  int64_t peak_held_bytes = 0;  // the most tap data held at once, waiting for the other side or the worker
  double wait_s[2] = {0, 0};    // time each side waited for room (it ran ahead of the other by the budget)
  std::string kept_error;       // why the kept taps lack rows asked for (then they are incomplete), or ""
};

// Tap data a side may hold before it waits for the other: a few of the widest taps of a prefill piece (the tiny
// model's [4608, 4096] float64 projections are 151 MB each), so the faster run rarely has to wait.
constexpr int64_t kStreamBudgetBytes = int64_t(1) << 30;

class StreamCompare {
 public:
  enum Side { Reference = 0, Peer = 1 };
  // budget_bytes: tap data one side may have waiting before it pauses.
  explicit StreamCompare(KeepTaps keep = {}, int64_t budget_bytes = kStreamBudgetBytes,
                         const ToleranceTable& table = tolerance_table());
  ~StreamCompare();
  StreamCompare(const StreamCompare&) = delete;
  StreamCompare& operator=(const StreamCompare&) = delete;

  TapSink& sink(Side side);
  // Stops the worker once both sides are done, judges every tap and hands back the report and the kept taps.
  // Rethrows the first error of the comparison (an unknown tap kind, an invalid reference block id, ...).
  StreamResult finish();
  // After a producer failed: stops everything, so the other side stops waiting and unwinds. Any thread, any number
  // of times; the worker is joined by the destructor.
  void abort();
  // The comparison's own error (an unknown tap kind, ...), if it failed: after it, both producers fail with a plain
  // "stopped", so this is the one to report.
  std::exception_ptr comparison_error();

 private:
  struct Chunk;
  struct Stream;
  struct Event;
  class SideSink;

  void push(Event e);                   // from a producer: queue, waiting while over budget
  void work();                          // the worker thread's loop
  void take(Event& e);                  // on the worker: one event into its tap's stream
  void pair_rows(const std::string& name, Stream& st);  // on the worker: fold the rows both sides have
  TapResult judge(const std::string& name, Stream& st);
  void finish_kept();

  KeepTaps keep_;
  std::vector<int64_t> sorted_rows_;  // keep_.rows ascending, each once
  int64_t budget_;
  const ToleranceTable& table_;
  std::unique_ptr<SideSink> sinks_[2];

  std::mutex mu_;
  std::condition_variable cv_;  // producers wait on room, the worker on events
  std::vector<Event> queue_;
  int64_t held_ = 0, peak_held_ = 0, held_side_[2] = {0, 0};
  double wait_s_[2] = {0, 0};
  bool done_ = false, aborted_ = false;
  std::exception_ptr error_;  // the worker's
  bool stopped() const { return error_ || aborted_; }
  std::thread worker_;

  // worker-only state
  std::map<std::string, std::unique_ptr<Stream>> streams_;
  StreamResult out_;
  int64_t freed_[2] = {0, 0};  // bytes the current batch let go of, per side
  bool scores_ended_ = false;  // no reference scores can come any more (finish)
};

}  // namespace salasim
