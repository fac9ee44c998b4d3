// The streaming comparison: producers queue their rows, one worker pairs them by row index and folds them into
// each tap's accumulators, then drops them.
#include "compare/stream_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>

#include "model/cpu_time.hpp"
#include "model/error.hpp"

namespace salasim {

namespace {

constexpr const char* kScores = "select/scores";
constexpr const char* kBlocks = "select/blocks";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// ".../select/scores" <-> ".../select/blocks"
std::string sibling(const std::string& name, const char* from, const char* to) {
  return name.substr(0, name.size() - std::string(from).size()) + to;
}

int64_t per_row(const std::vector<int64_t>& shape) { return shape_numel(shape, 1); }

}  // namespace

TapHeaders tap_headers(const TapMap& taps) {
  TapHeaders out;
  for (const auto& [name, t] : taps) out[name] = TapHeader{t.shape, t.integer, t.order};
  return out;
}

// Rows of one append, shared where two streams read them (the reference's block scores: their own tap, and the
// tie band of the selection beside them).
struct StreamCompare::Chunk {
  std::shared_ptr<const std::vector<double>> data;
  int64_t rows = 0, per = 0, off = 0;  // off: rows already folded
  int64_t bytes() const { return int64_t(data->size() * sizeof(double)); }
  const double* at() const { return data->data() + off * per; }
};

struct StreamCompare::Event {
  Side side = Reference;
  std::string name;
  int64_t order = 0;
  bool replace = false;
  bool integer = false;
  std::vector<int64_t> shape;                    // append: this append's rows and trailing dims
  std::shared_ptr<const std::vector<double>> data;
  Tap whole;                                     // replace
  int64_t bytes = 0;
};

struct StreamCompare::Stream {
  const ToleranceRow* tol = nullptr;
  bool seen[2] = {false, false}, replaced[2] = {false, false}, integer[2] = {false, false};
  int64_t order[2] = {0, 0};
  std::vector<int64_t> shape[2];  // appended taps: the rows so far and the trailing dims
  Tap whole[2];                   // replaced taps: the latest value
  std::deque<Chunk> pending[2];   // rows one side has produced and the pairing has not used up
  std::deque<Chunk> scores;       // selection taps: the reference's scores rows not yet used
  bool scores_seen = false;
  bool skip = false;              // the sides cannot be paired row by row: judged from shapes and types alone
  int64_t paired = 0;             // rows folded
  MetricsAccumulator acc;
  std::unique_ptr<SelectionAccumulator> sel;
};

class StreamCompare::SideSink : public TapSink {
 public:
  SideSink(StreamCompare* owner, Side side) : owner_(owner), side_(side) {}
  void append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer) override {
    Event e = event(name, integer);
    const int64_t n = shape_numel(shape);
    e.shape = shape;
    e.data = std::make_shared<const std::vector<double>>(data, data + n);
    e.bytes = n * int64_t(sizeof(double));
    owner_->push(std::move(e));
  }
  void replace(const std::string& name, Tap t) override {
    Event e = event(name, t.integer);
    e.replace = true;
    e.whole = std::move(t);
    owner_->push(std::move(e));
  }

 private:
  // Tap::order as a TapMap gives it: the order in which names first arrive on this side.
  Event event(const std::string& name, bool integer) {
    Event e;
    e.side = side_;
    e.name = name;
    e.integer = integer;
    auto [it, fresh] = orders_.emplace(name, int64_t(orders_.size()));
    e.order = it->second;
    return e;
  }
  StreamCompare* owner_;
  Side side_;
  std::map<std::string, int64_t> orders_;
};

StreamCompare::StreamCompare(KeepTaps keep, int64_t budget_bytes, const ToleranceTable& table)
    : keep_(std::move(keep)), budget_(budget_bytes), table_(table) {
  sorted_rows_ = keep_.rows;
  std::sort(sorted_rows_.begin(), sorted_rows_.end());
  sorted_rows_.erase(std::unique(sorted_rows_.begin(), sorted_rows_.end()), sorted_rows_.end());
  sinks_[Reference] = std::make_unique<SideSink>(this, Reference);
  sinks_[Peer] = std::make_unique<SideSink>(this, Peer);
  worker_ = std::thread([this] { work(); });
}

StreamCompare::~StreamCompare() {
  abort();
  if (worker_.joinable()) worker_.join();  // only here and in finish(), i.e. on the owning thread
}

TapSink& StreamCompare::sink(Side side) { return *sinks_[side]; }

void StreamCompare::push(Event e) {
  std::unique_lock<std::mutex> lock(mu_);
  // Only the side that runs ahead waits: its rows wait for the other side's, which pair with them at once.
  // A layer's selection taps never wait. The reference records block ids, then their scores; block rows of both
  // sides pair only once those scores have come (the tie band reads them), so a side holding block rows or scores
  // can be waiting on the other side's next selection rows while that side waits for room: a cycle. Their rows
  // are small beside the activations (ids [T, G, K], scores [T, G, NB] of one piece).
  auto room = [&] {
    return stopped() || held_side_[e.side] == 0 || held_side_[e.side] + e.bytes <= budget_ ||
           ends_with(e.name, kScores) || ends_with(e.name, kBlocks);
  };
  if (!room()) {
    const auto t0 = std::chrono::steady_clock::now();
    cv_.wait(lock, room);
    wait_s_[e.side] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (stopped()) fail("the tap comparison stopped (the other run or the comparison failed)");
  held_side_[e.side] += e.bytes;
  held_ += e.bytes;
  peak_held_ = std::max(peak_held_, held_);
  queue_.push_back(std::move(e));
  cv_.notify_all();
}

std::exception_ptr StreamCompare::comparison_error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

// Only signals: both producers may call it at once from their failing threads, and two joins of one std::thread
// race (the second one throws inside a catch handler, i.e. std::terminate). The owner joins, in ~StreamCompare.
void StreamCompare::abort() {
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = true;
  done_ = true;
  cv_.notify_all();
}

void StreamCompare::work() {
  for (;;) {
    std::vector<Event> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopped() || done_ || !queue_.empty(); });
      if (stopped() || queue_.empty()) return;  // stopped, or done with nothing left
      batch.swap(queue_);
    }
    const double t0 = thread_cpu_seconds();
    freed_[0] = freed_[1] = 0;
    try {
      for (Event& e : batch) take(e);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      cv_.notify_all();
      return;
    }
    out_.busy_s += thread_cpu_seconds() - t0;
    std::lock_guard<std::mutex> lock(mu_);
    for (int s = 0; s < 2; ++s) {
      held_side_[s] -= freed_[s];
      held_ -= freed_[s];
    }
    cv_.notify_all();
  }
}

void StreamCompare::take(Event& e) {
  std::unique_ptr<Stream>& slot = streams_[e.name];
  if (!slot) {
    slot = std::make_unique<Stream>();
    slot->tol = &tolerance_row(table_, tap_kind(e.name));  // throws: a new tap kind needs a row
  }
  Stream& st = *slot;
  const int s = e.side;
  if (!st.seen[s]) {
    st.seen[s] = true;
    st.order[s] = e.order;
    st.integer[s] = e.integer;
  }
  const bool kept = keep_.names.count(e.name) > 0;
  TapMap& kept_map = s == Reference ? out_.ref_kept : out_.peer_kept;
  if (e.replace) {
    st.replaced[s] = true;
    e.whole.order = e.order;
    if (kept) kept_map[e.name] = e.whole;
    st.whole[s] = std::move(e.whole);
    return;
  }

  const int64_t row0 = st.shape[s].empty() ? 0 : st.shape[s][0];
  if (st.shape[s].empty()) {
    st.shape[s] = e.shape;
  } else {
    if (!std::equal(e.shape.begin() + 1, e.shape.end(), st.shape[s].begin() + 1, st.shape[s].end()))
      fail("internal: tap '{}' appended with different trailing dims", e.name);
    st.shape[s][0] += e.shape[0];
  }
  const int64_t per = per_row(e.shape);
  if (kept) {  // the rows a golden keeps (all rows outside the prefill, or when no rows are named)
    Tap& k = kept_map[e.name];
    if (k.shape.empty()) {
      k.shape = e.shape;
      k.shape[0] = 0;
      k.integer = e.integer;
      k.order = e.order;
    }
    const bool cut = !keep_.rows.empty() && tap_phase(e.name) == "prefill";
    for (int64_t i = 0; i < e.shape[0]; ++i) {
      if (cut && !std::binary_search(sorted_rows_.begin(), sorted_rows_.end(), row0 + i)) continue;
      k.data.insert(k.data.end(), e.data->begin() + i * per, e.data->begin() + (i + 1) * per);
      ++k.shape[0];
    }
  }
  st.pending[s].push_back(Chunk{e.data, e.shape[0], per, 0});
  if (s == Reference && ends_with(e.name, kScores)) {  // the tie band of the selection beside it reads them too
    std::unique_ptr<Stream>& blocks = streams_[sibling(e.name, kScores, kBlocks)];
    if (!blocks) {
      blocks = std::make_unique<Stream>();
      blocks->tol = &tolerance_row(table_, tap_kind(sibling(e.name, kScores, kBlocks)));
    }
    blocks->scores_seen = true;
    blocks->scores.push_back(Chunk{e.data, e.shape[0], per, 0});
    pair_rows(sibling(e.name, kScores, kBlocks), *blocks);
  }
  pair_rows(e.name, st);
}

void StreamCompare::pair_rows(const std::string& name, Stream& st) {
  const bool selection = st.tol->gate == Gate::Selection;
  while (!st.pending[0].empty() && !st.pending[1].empty()) {
    Chunk& a = st.pending[0].front();
    Chunk& b = st.pending[1].front();
    // Rows pair only when both sides agree on the trailing dims and on the type the gate needs; otherwise the
    // verdict comes from the shapes and types alone (judge_tap), as compare_taps gives it.
    if (!st.skip) {
      const bool same_rows = std::equal(st.shape[0].begin() + 1, st.shape[0].end(), st.shape[1].begin() + 1,
                                        st.shape[1].end());
      const bool typed = selection ? st.integer[0] && st.integer[1] : !st.integer[0] && !st.integer[1];
      st.skip = !same_rows || !typed || st.replaced[0] || st.replaced[1];
      if (selection && !st.skip && st.shape[0].size() != 3)
        fail("tap {}: reference block ids have shape [{}, ...], expected [T, G, K]", name, st.shape[0].size());
    }
    int64_t n = std::min(a.rows - a.off, b.rows - b.off);
    if (!st.skip && selection) {
      if (st.scores.empty()) {
        if (st.scores_seen || !scores_ended_) break;  // the reference's scores for these rows are on their way
      } else {
        n = std::min(n, st.scores.front().rows - st.scores.front().off);
      }
    }
    if (!st.skip) {
      if (!selection) {
        st.acc.add(a.at(), b.at(), n * a.per);
      } else {
        const int64_t G = st.shape[0][1], K = st.shape[0][2];
        const Chunk* sc = st.scores.empty() ? nullptr : &st.scores.front();
        if (sc && (sc->per % G != 0))
          fail("tap {}: reference scores rows hold {} values, expected G = {} groups of NB blocks", name, sc->per, G);
        if (!st.sel) st.sel = std::make_unique<SelectionAccumulator>(name, st.tol->tie_band, sc != nullptr);
        st.sel->add(a.at(), b.at(), sc ? sc->at() : nullptr, n, G, K, sc ? sc->per / G : 0);
        if (sc && (st.scores.front().off += n) == sc->rows) st.scores.pop_front();
      }
    }
    st.paired += n;
    a.off += n;
    b.off += n;
    for (int s = 0; s < 2; ++s)
      if (st.pending[s].front().off == st.pending[s].front().rows) {
        freed_[s] += st.pending[s].front().bytes();
        st.pending[s].pop_front();
      }
  }
}

TapResult StreamCompare::judge(const std::string& name, Stream& st) {
  TapFacts f;
  f.in_reference = st.seen[Reference];
  f.in_backend = f.in_peer = st.seen[Peer];
  f.order = f.in_reference ? st.order[Reference] : st.order[Peer];
  if (f.in_reference && f.in_backend) {
    if (st.replaced[Reference] != st.replaced[Peer])
      fail("internal: tap '{}' is replaced on one side and appended on the other", name);
    const bool whole = st.replaced[Reference];
    f.ref_shape = whole ? st.whole[Reference].shape : st.shape[Reference];
    f.backend_shape = f.peer_shape = whole ? st.whole[Peer].shape : st.shape[Peer];
    f.ref_integer = st.integer[Reference];
    f.backend_integer = st.integer[Peer];
    const bool same = f.ref_shape == f.backend_shape;
    if (same && st.tol->gate == Gate::Float && !f.ref_integer && !f.backend_integer) {
      f.metrics = whole ? tensor_metrics(name, st.whole[Reference], st.whole[Peer]) : st.acc.finish(f.ref_shape);
      f.peer_metrics = f.metrics;  // the peer is the backend
    } else if (same && st.tol->gate == Gate::Selection && f.ref_integer && f.backend_integer) {
      if (whole) fail("internal: selection tap '{}' recorded as a whole", name);
      const int64_t scored = st.sel ? st.sel->report().rows / std::max<int64_t>(1, f.ref_shape[1]) : 0;
      if (st.scores_seen && scored != f.ref_shape[0])
        fail("tap {}: reference scores cover {} of its {} rows, expected [{}, {}, NB] to match the block ids", name,
             scored, f.ref_shape[0], f.ref_shape[0], f.ref_shape[1]);
      if (!st.sel) st.sel = std::make_unique<SelectionAccumulator>(name, st.tol->tie_band, false);
      f.selection = st.sel->report();
    }
  }
  return judge_tap(name, *st.tol, true, f);
}

// A kept prefill tap must hold every row asked for (a golden of a longer prompt must fail, naming the tap), in the
// order asked for (rows arrive ascending and were kept so).
void StreamCompare::finish_kept() {
  if (keep_.rows.empty()) return;
  for (int s : {Reference, Peer})
    for (const auto& [name, st] : streams_) {
      if (!keep_.names.count(name) || !st->seen[s] || st->replaced[s] || tap_phase(name) != "prefill") continue;
      const int64_t rows = st->shape[s][0];
      for (int64_t r : keep_.rows)
        if (r >= rows) fail("{}: tap {} has {} rows, row {} was asked for", keep_.what, name, rows, r);
      Tap& k = (s == Reference ? out_.ref_kept : out_.peer_kept)[name];
      if (k.shape[0] == int64_t(keep_.rows.size()) && std::is_sorted(keep_.rows.begin(), keep_.rows.end())) continue;
      const int64_t per = per_row(k.shape);
      std::vector<double> data;
      for (int64_t r : keep_.rows) {
        const int64_t i = std::lower_bound(sorted_rows_.begin(), sorted_rows_.end(), r) - sorted_rows_.begin();
        data.insert(data.end(), k.data.begin() + i * per, k.data.begin() + (i + 1) * per);
      }
      k.data = std::move(data);
      k.shape[0] = int64_t(keep_.rows.size());
    }
}

StreamResult StreamCompare::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
  }
  worker_.join();
  if (error_) std::rethrow_exception(error_);
  if (aborted_) fail("internal: finish() after abort()");
  // Selections whose reference recorded no scores: compared exactly, now that no scores can come.
  scores_ended_ = true;
  for (auto& [name, st] : streams_)
    if (st->tol->gate == Gate::Selection && !st->scores_seen) pair_rows(name, *st);

  out_.report.with_peer = true;
  for (auto& [name, st] : streams_) {
    if (!st->seen[Reference] && !st->seen[Peer]) continue;  // a selection's scores arrived, the selection never did
    add_row(out_.report, judge(name, *st));
    for (int s : {Reference, Peer})
      if (st->seen[s])
        (s == Reference ? out_.ref_seen : out_.peer_seen)[name] =
            TapHeader{st->replaced[s] ? st->whole[s].shape : st->shape[s], st->integer[s], st->order[s]};
  }
  finish_report(out_.report);
  try {
    finish_kept();
  } catch (const Error& e) {
    out_.kept_error = e.what();
  }
  out_.peak_held_bytes = peak_held_;
  out_.wait_s[Reference] = wait_s_[Reference];
  out_.wait_s[Peer] = wait_s_[Peer];
  return std::move(out_);
}

}  // namespace salasim
