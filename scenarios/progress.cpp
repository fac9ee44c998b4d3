// The cost model and the progress line.
#include "scenarios/progress.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "scenarios/backend.hpp"

namespace salasim {

namespace {

constexpr auto kTick = std::chrono::seconds(1);       // a terminal's line is redrawn this often
constexpr auto kLinePeriod = std::chrono::seconds(10);  // a log (not a terminal) gets a line this often

// Keys query p reads in attention: every key up to p (dense), or its selected blocks (sparse: the causal blocks up to
// K_sel of them, each read whole).
double keys_read(const ModelConfig& c, int64_t p, bool sparse) {
  if (!sparse) return double(p + 1);
  const int64_t b = c.sparse.block_size;
  return double(std::min<int64_t>(p / b + 1, c.sparse.k_sel()) * b);
}

}  // namespace

double layer_work(const ModelConfig& c, int layer, int64_t pos0, int64_t rows, bool sparse) {
  const double D = c.hidden_size, T = double(rows);
  double w = 3 * D * c.intermediate_size * T;  // MLP
  if (c.layers.at(size_t(layer)) == Mixer::Lightning) {
    const double L = double(c.lightning_nh) * c.lightning_head_dim, hd = c.lightning_head_dim;
    w += 5 * D * L * T;                                            // q, k, v, z, o projections
    w += T * c.lightning_nh * (2 * 64 * hd + 2 * hd * hd);         // GLA: intra-chunk products and the state
    return w;
  }
  const double H = c.num_attention_heads, hd = c.head_dim, Q = H * hd, KV = double(c.num_key_value_heads) * hd;
  w += D * (2 * Q + 2 * KV) * T + Q * D * T;  // q, g, k, v, o projections
  for (int64_t p = pos0; p < pos0 + rows; ++p) {
    w += 2 * H * hd * keys_read(c, p, sparse);  // scores and the weighted sum of values
    if (sparse)  // block scores against the compressed keys K1 and K2
      w += H * hd * double(p / c.sparse.kernel_stride + p / c.sparse.k2_stride());
  }
  return w;
}

double scenario_work(const Scenario& s) {
  const ModelConfig& c = s.cfg;
  const int64_t n = int64_t(s.prompt.size());
  const bool sparse = n >= c.sparse.dense_len;
  double w = 0;
  const std::vector<int64_t> cuts = prefill_cuts(s);
  for (size_t i = 0; i + 1 < cuts.size(); ++i)
    for (int l = 0; l < c.num_hidden_layers; ++l) w += layer_work(c, l, cuts[i], cuts[i + 1] - cuts[i], sparse);
  for (size_t k = 0; k < s.decode_tokens.size(); ++k) {
    const int64_t p = n + int64_t(k);
    for (int l = 0; l < c.num_hidden_layers; ++l) w += layer_work(c, l, p, 1, p + 1 >= c.sparse.dense_len);
  }
  return w;
}

Progress::Progress(const Scenario& s, std::vector<std::string> runs, std::FILE* out, bool tty)
    : s_(s), runs_(std::move(runs)), where_(runs_.size(), "starting"), work_done_(runs_.size(), 0.0),
      cuts_(prefill_cuts(s)), run_work_(std::max(1.0, scenario_work(s))), out_(out), tty_(tty) {
  t0_ = stage_t0_ = clock::now();
  last_print_ = t0_ - kLinePeriod;  // a log gets the first event's line at once
  // A terminal's line is redrawn every second (the elapsed time moves); a log gets a line every kLinePeriod even
  // while one layer takes long.
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, kTick, [this] { return stop_; })) print_locked(tty_);
  });
}

Progress::~Progress() { done(); }

void Progress::layer_done(int run, const std::string& phase, int64_t pos0, int64_t rows, int layer) {
  std::lock_guard<std::mutex> lock(mu_);
  const ModelConfig& c = s_.cfg;
  const int layers = c.num_hidden_layers;
  if (phase == "prefill") {
    const auto it = std::find(cuts_.begin(), cuts_.end(), pos0);
    const int64_t piece = it - cuts_.begin() + 1, pieces = int64_t(cuts_.size()) - 1;
    where_[size_t(run)] = fmt::format("prefill piece {}/{} layer {}/{}", piece, pieces, layer + 1, layers);
    work_done_[size_t(run)] += layer_work(c, layer, pos0, rows, int64_t(s_.prompt.size()) >= c.sparse.dense_len);
  } else {
    const int64_t step = pos0 - int64_t(s_.prompt.size()) + 1;
    where_[size_t(run)] = fmt::format("decode step {}/{} layer {}/{}", step, s_.decode_tokens.size(), layer + 1, layers);
    work_done_[size_t(run)] += layer_work(c, layer, pos0, rows, pos0 + 1 >= c.sparse.dense_len);
  }
  print_locked(false);
}

void Progress::stage(const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  stage_ = what;
  stage_t0_ = clock::now();
  print_locked(true);
}

void Progress::done() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    if (tty_)
      fmt::print(out_, "\r\033[K");  // the report starts on a clean line
    else
      print_locked(true);  // a log gets where things ended
    stop_ = true;
    std::fflush(out_);
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

std::string Progress::line_locked() const {
  const double elapsed = std::chrono::duration<double>(clock::now() - t0_).count();
  std::string line = fmt::format("[{:4.0f} s] ", elapsed);
  if (!stage_.empty())
    return line + fmt::format("{} ({:.0f} s)", stage_, std::chrono::duration<double>(clock::now() - stage_t0_).count());
  for (size_t i = 0; i < runs_.size(); ++i) line += fmt::format("{}{}: {}", i ? " | " : "", runs_[i], where_[i]);
  double done = 0;
  for (double w : work_done_) done += w;
  const double f = std::min(1.0, done / (run_work_ * double(runs_.size())));
  if (f >= 0.01)
    line += fmt::format(" | {:.0f}% done, about {:.0f} s left", 100 * f, elapsed * (1 - f) / f);
  else
    line += " | estimating the time left";
  return line;
}

void Progress::print_locked(bool force) {
  if (stop_) return;
  const auto now = clock::now();
  if (!tty_ && !force && now - last_print_ < kLinePeriod) return;
  if (tty_ && !force && now - last_print_ < std::chrono::milliseconds(100)) return;
  last_print_ = now;
  if (tty_)
    fmt::print(out_, "\r{}\033[K", line_locked());
  else
    fmt::print(out_, "{}\n", line_locked());
  std::fflush(out_);
}

}  // namespace salasim
