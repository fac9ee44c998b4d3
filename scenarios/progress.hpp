// Progress of verify's long runs on stderr: which phase each run is in (prefill piece and layer, decode step), the
// time elapsed and an estimate of the time left. A cost model of the scenario gives each layer of each prefill piece
// and decode step its share of a run's work (projections, attention over the keys each query reads, GLA), so a
// finished layer becomes a fraction of the job whatever the prompt length.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scenarios/scenario.hpp"

namespace salasim {

// Work of one layer of one forward call over `rows` tokens at positions pos0.. of a call that is `sparse` (in
// multiply-adds, roughly: only ratios matter).
double layer_work(const ModelConfig& c, int layer, int64_t pos0, int64_t rows, bool sparse);
// Work of one run of the scenario: every layer of its prefill pieces and decode steps.
double scenario_work(const Scenario& s);

class Progress {
 public:
  // runs: the runs that report layers ("reference", "peer"); out: the stream (stderr); tty: redraw one line in
  // place every second, else print a line every 10 s and when a stage starts.
  Progress(const Scenario& s, std::vector<std::string> runs, std::FILE* out, bool tty);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Run `run` finished `layer` of a call over `rows` tokens of `phase` ("prefill", "decode_0003") from position pos0.
  void layer_done(int run, const std::string& phase, int64_t pos0, int64_t rows, int layer);
  // A stage without layers ("comparing the taps", "backend gpu (...)"): shown with its own elapsed time.
  void stage(const std::string& what);
  // Ends the line (a TTY's line is cleared, so the report starts on a clean screen).
  void done();

 private:
  std::string line_locked() const;
  void print_locked(bool force);

  const Scenario& s_;
  std::vector<std::string> runs_;
  std::vector<std::string> where_;
  std::vector<double> work_done_;
  std::vector<int64_t> cuts_;
  double run_work_ = 1;
  std::FILE* out_;
  bool tty_;
  std::string stage_;
  using clock = std::chrono::steady_clock;
  clock::time_point t0_, stage_t0_, last_print_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace salasim
