// Two threads, one relay of the reference's selections to the peer.
#include "scenarios/truth_pair.hpp"

#include <omp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "compare/tap_file_sink.hpp"
#include "model/cpu_time.hpp"
#include "model/error.hpp"

namespace salasim {

namespace {

bool is_selection(const std::string& name) {
  const std::string tail = "/sparse/select/blocks";
  return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

// Passes the reference's taps on to its sink, keeping a copy of its selections (a few MB: [T, G, K] ids per sparse
// layer and phase) for the peer, which waits on fetch() until the rows it attends with exist.
class SelectionRelay : public TapSink {
 public:
  explicit SelectionRelay(TapSink& next) : next_(next) {}

  void append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer) override {
    if (is_selection(name)) {
      std::lock_guard<std::mutex> lock(mu_);
      TapMapSink(&selections_).append(name, shape, data, integer);
      cv_.notify_all();
    }
    next_.append(name, shape, data, integer);  // after publishing: this may wait for the peer's taps
  }
  void replace(const std::string& name, Tap t) override { next_.replace(name, std::move(t)); }

  void fetch(const std::string& name, int64_t row0, ref::Selection& sel) {
    std::unique_lock<std::mutex> lock(mu_);
    auto ready = [&] {
      auto it = selections_.find(name);
      return closed_ || (it != selections_.end() && it->second.shape[0] >= row0 + sel.T);
    };
    if (!ready()) {
      const auto t0 = std::chrono::steady_clock::now();
      cv_.wait(lock, ready);
      waited_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    ref::use_forced_selection(selections_, name, row0, sel);  // after the reference stopped: fails naming the tap
  }
  double waited_s = 0;  // the peer's total wait in fetch()

  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

 private:
  TapSink& next_;
  std::mutex mu_;
  std::condition_variable cv_;
  TapMap selections_;
  bool closed_ = false;
};

}  // namespace

int threads_per_run() { return std::max(1, omp_get_max_threads() / 2); }

PairTimes run_ref_and_peer(const Scenario& s, const TapFilter& filter, std::shared_ptr<const ref::RefWeights> w,
                           TapSink& ref_sink, TapSink& peer_sink, const PairOptions& opt) {
  if (!w) w = ref::load_ref_weights(s.cfg, s.weights);
  SelectionRelay relay(ref_sink);
  // Each run records into its sink, or into a tee that first hands every tap to its copy (a dump file).
  std::optional<TeeSink> ref_tee, peer_tee;
  if (opt.ref_copy) ref_tee.emplace(*opt.ref_copy, relay);
  if (opt.peer_copy) peer_tee.emplace(*opt.peer_copy, peer_sink);
  TapSink& ref_in = ref_tee ? static_cast<TapSink&>(*ref_tee) : relay;
  TapSink& peer_in = peer_tee ? static_cast<TapSink&>(*peer_tee) : peer_sink;
  const int threads = threads_per_run();
  PairTimes times;
  std::exception_ptr error[2];
  std::atomic<int> failures{0};
  int order[2] = {0, 0};

  auto run = [&](bool peer) {
    omp_set_num_threads(threads);  // this thread's OpenMP regions and Eigen's GEMMs
    ref::RefOptions ro;  // float64, scores recorded
    if (peer) {
      ro.num = ref::peer();
      ro.forced_source = [&relay](const std::string& name, int64_t row0, ref::Selection& sel) {
        relay.fetch(name, row0, sel);
      };
    }
    if (opt.on_layer)
      ro.on_layer = [&opt, peer](const ref::RefModel& m, int layer, int64_t rows) { opt.on_layer(peer, m, layer, rows); };
    try {
      RefRun r = run_reference_to(s, ro, filter, peer ? peer_in : ref_in, w);
      (peer ? times.peer : times.ref) = std::move(r.times);
      (peer ? times.peer_cpu_s : times.ref_cpu_s) = thread_cpu_seconds();
    } catch (...) {
      error[peer] = std::current_exception();
      order[peer] = ++failures;
      try {  // nothing may escape a thread function (std::terminate): the run's own error is the one to report
        if (opt.on_failure) opt.on_failure();
      } catch (...) {
      }
    }
    if (!peer) relay.close();
  };
  std::thread ref_thread(run, false), peer_thread(run, true);
  ref_thread.join();
  peer_thread.join();
  times.peer_wait_s = relay.waited_s;
  if (error[0] && (!error[1] || order[0] < order[1])) std::rethrow_exception(error[0]);
  if (error[1]) std::rethrow_exception(error[1]);
  return times;
}

}  // namespace salasim
