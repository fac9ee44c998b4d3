// The RULER run loop: resume, shard, tokenize, generate, score, recall, append with fsync, progress.
#include "scenarios/ruler/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "model/error.hpp"
#include "model/limits.hpp"
#include "scenarios/ruler/recall.hpp"
#include "scenarios/ruler/score.hpp"

namespace salasim::ruler {

namespace fs = std::filesystem;

Shard resolve_shard(const std::string& option) {
  Shard s;
  auto parse = [](const std::string& k, const std::string& n, const std::string& what) {
    Shard r;
    try {
      size_t a = 0, b = 0;
      r.k = std::stoi(k, &a);
      r.n = std::stoi(n, &b);
      if (a != k.size() || b != n.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      fail("{}: '{}/{}' is not K/N with integers", what, k, n);
    }
    if (r.n < 1 || r.k < 0 || r.k >= r.n) fail("{}: shard {}/{}: expected 0 <= K < N", what, r.k, r.n);
    r.from = what;
    return r;
  };
  if (!option.empty()) {
    const size_t slash = option.find('/');
    if (slash == std::string::npos) fail("--shard '{}': expected K/N, e.g. 0/4", option);
    return parse(option.substr(0, slash), option.substr(slash + 1), "--shard");
  }
  if (const char* r = std::getenv("OMPI_COMM_WORLD_RANK"))
    if (const char* n = std::getenv("OMPI_COMM_WORLD_SIZE")) return parse(r, n, "MPI");
  if (const char* r = std::getenv("SLURM_PROCID"))
    if (const char* n = std::getenv("SLURM_NTASKS")) return parse(r, n, "Slurm");
  return s;
}

std::string shard_path(const std::string& out, const Shard& s) {
  if (s.n <= 1) return out;
  fs::path p(out);
  const std::string ext = p.extension().string();
  return (p.parent_path() / (p.stem().string() + fmt::format(".shard-{}-of-{}", s.k, s.n) + ext)).string();
}

std::string sample_id(const Sample& s) { return fmt::format("{}/{}/{}", s.task, s.max_seq_length, s.index); }

std::vector<std::string> sample_ids(const std::vector<DataLine>& data) {
  std::map<std::string, int64_t> seen;  // base id -> occurrences so far
  std::vector<std::string> out;
  out.reserve(data.size());
  for (const DataLine& d : data) {
    const std::string base = sample_id(d.sample);
    const int64_t k = ++seen[base];
    out.push_back(k == 1 ? base : fmt::format("{}.{}", base, k));
  }
  return out;
}

std::unique_ptr<ResultsFile> open_results_file(const RunOptions& o) {
  const std::string out = shard_path(o.out, o.shard);
  refuse_same_file(out, o.shard.n > 1 ? "--out (this shard's file)" : "--out", o.data, "--data");
  for (const std::string& f : o.also_done) refuse_same_file(out, "--out", f, "--also-done");
  ResultsOptions ro;
  ro.resume = o.resume;
  ro.force = o.force;
  ro.option = o.shard.n > 1 ? fmt::format("--out (shard {}/{})", o.shard.k, o.shard.n) : "--out";
  return std::make_unique<ResultsFile>(out, ro);
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string hms(double s) {
  const int64_t t = int64_t(s + 0.5);
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t / 60 % 60) : fmt::format("{}m{:02}s", t / 60, t % 60);
}

}  // namespace

RunSummary run_samples(const RunOptions& o, const ModelConfig& cfg, const Tokenizer& tok,
                       const std::vector<DataLine>& data,
                       const std::function<std::unique_ptr<Generator>(int64_t)>& make) {
  const std::unique_ptr<ResultsFile> results = open_results_file(o);
  return run_samples(o, *results, cfg, tok, data, make);
}

namespace {

// The needle-block recall of every step of `g` (the last prompt token, then each generated token fed back), and the
// mean over the sparse layers of the first step (`prompt`, -1 when every layer ran dense) and of the others
// (`decode`, -1 when none).
nlohmann::json recall_steps(const Generation& g, const std::vector<int64_t>& nblocks, int block, double* prompt,
                            double* decode) {
  nlohmann::json steps = nlohmann::json::array();
  double decode_sum = 0;
  int64_t decode_n = 0;
  *prompt = -1;
  for (size_t st = 0; st < g.selections.size(); ++st) {
    const std::vector<LayerRecall> r = selection_recall(g.selections[st], nblocks, block);
    steps.push_back(recall_json(g.selections[st].pos, r));
    double acc = 0;
    int64_t n = 0;
    for (const LayerRecall& l : r)
      if (!l.dense) acc += l.recall, ++n;
    if (n == 0) continue;
    if (st == 0) *prompt = acc / double(n);
    else decode_sum += acc / double(n), ++decode_n;
  }
  *decode = decode_n > 0 ? decode_sum / double(decode_n) : -1;
  return steps;
}

// One sample: tokenize `input + answer_prefix` (BOS first), locate the needles, generate, detokenize, score, and the
// needle-block recall of every step; returns its results line and fills `out` for the progress line.
struct SampleOutcome {
  double score = 0, prefill_s = 0, sample_s = 0;
  int64_t prompt_tokens = 0, new_tokens = 0;
  bool null = false;
};
nlohmann::json run_one(const RunOptions& o, const ModelConfig& cfg, const Tokenizer& tok, Generator& gen,
                       const DataLine& d, const std::string& id, int64_t max_context, SampleOutcome* out) {
  using clock = std::chrono::steady_clock;
  const Sample& s = d.sample;
  const auto t0 = clock::now();
  const std::string text = s.input + s.answer_prefix;
  const Encoded enc = tok.encode_with_spans(text);
  std::vector<int32_t> prompt;
  if (tok.bos_id() >= 0) prompt.push_back(tok.bos_id());
  const int64_t bos = int64_t(prompt.size());
  prompt.insert(prompt.end(), enc.ids.begin(), enc.ids.end());
  if (int64_t(prompt.size()) + o.max_new > max_context + 1)
    fail(
        "{} line {}: field 'input' is {} tokens with {} (its 'length' field says {} with 128 to generate): more than the "
        "planned context {}",
        o.data, d.line, prompt.size(), tok.path(), s.length, max_context);
  // needle spans from this tokenization (RULER's files have none), in model positions (BOS first)
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::vector<double> depths = s.depths;
  for (const NeedleSpan& n : locate_needles(text, s.outputs, enc))
    if (n.token_begin >= 0) {
      spans.emplace_back(n.token_begin + bos, n.token_end + bos);
      if (s.depths.empty())
        depths.push_back(std::round(1000.0 * double(n.token_begin) / double(enc.ids.size())) / 10.0);
    }
  const std::vector<int64_t> nblocks = needle_blocks(spans, cfg.sparse.block_size);
  GenerateOptions go;
  go.max_new = o.max_new;
  go.stop = tok.stop_ids();
  go.record_selection = true;
  go.selection_scores = true;
  double last_print = 0;
  const int64_t n_prompt = int64_t(prompt.size());
  go.on_prefill = [&](int64_t done_tok, int64_t total) {
    const double el = std::chrono::duration<double>(clock::now() - t0).count();
    if (!o.quiet && (el - last_print > 10 || done_tok == total) && total > 65536) {
      fmt::print(stderr, "  sample {}: prefill {}/{} tokens, {:.0f} tokens/s\n", id, done_tok, total,
                 double(done_tok) / std::max(el, 1e-9));
      std::fflush(stderr);
      last_print = el;
    }
    return true;
  };
  const Generation g = gen.generate(prompt, go);
  std::vector<int32_t> out_tokens = g.tokens;
  if (g.hit_stop && !out_tokens.empty()) out_tokens.pop_back();
  int64_t unknown = 0;  // ids past the tokenizer's (the model's vocabulary may be larger): no text
  const std::string raw = tok.decode(out_tokens, &unknown);
  const std::string pred = clean_prediction(raw);
  const double score = string_match_all(pred, s.outputs);
  const double sample_s = std::chrono::duration<double>(clock::now() - t0).count();
  std::vector<double> dec(g.token_s.begin() + std::min<size_t>(1, g.token_s.size()), g.token_s.end());
  double prompt_recall = -1, decode_recall = -1;
  const nlohmann::json steps = recall_steps(g, nblocks, cfg.sparse.block_size, &prompt_recall, &decode_recall);
  nlohmann::json jspans = nlohmann::json::array();
  for (auto [b, e] : spans) jspans.push_back({b, e});
  nlohmann::json j = {{"id", id},
                      {"task", s.task},
                      {"length", s.max_seq_length},
                      {"index", s.index},
                      {"data", o.data},
                      {"data_line", d.line},
                      {"backend", gen.describe()},
                      {"config", cfg.source},
                      {"weights", o.weights},
                      {"tokenizer", tok.path()},
                      {"revision", o.revision},
                      {"input_tokens", n_prompt},
                      {"outputs", s.outputs},
                      {"prediction", pred},
                      {"score", score},
                      {"null", pred.empty()},
                      {"generated_tokens", int64_t(g.tokens.size())},
                      {"hit_stop", g.hit_stop},
                      {"tokens_without_text", unknown},
                      {"logits_finite", g.logits_finite},
                      {"prefill_s", g.prefill_s},
                      {"prefill_tokens_per_s", double(n_prompt) / std::max(g.prefill_s, 1e-9)},
                      {"decode_ms_per_token", median(dec) * 1e3},
                      {"sample_s", sample_s},
                      {"depths", depths},
                      {"needle_token_spans", jspans},
                      {"needle_blocks", nblocks},
                      {"block_size", cfg.sparse.block_size},
                      {"k_sel", cfg.sparse.k_sel()}};
  if (prompt_recall >= 0) j["recall_prompt"] = prompt_recall;
  if (decode_recall >= 0) j["recall_decode"] = decode_recall;
  j["selection"] = steps;
  *out = SampleOutcome{score, g.prefill_s, sample_s, n_prompt, int64_t(g.tokens.size()), pred.empty()};
  return j;
}

}  // namespace

RunSummary run_samples(const RunOptions& o, ResultsFile& results, const ModelConfig& cfg, const Tokenizer& tok,
                       const std::vector<DataLine>& data,
                       const std::function<std::unique_ptr<Generator>(int64_t)>& make) {
  using clock = std::chrono::steady_clock;
  RunSummary sum;
  sum.out = results.path();
  if (tok.vocab_size() > cfg.vocab_size)
    fail("{}: the tokenizer produces ids up to {} but {} has vocab_size {}: they do not fit the model's vocabulary",
         tok.path(), tok.vocab_size() - 1, cfg.source, cfg.vocab_size);
  // this shard's samples and every sample's id (sample_ids: unique even where RULER's index repeats)
  const std::vector<std::string> ids = sample_ids(data);
  std::map<const DataLine*, std::string> id_of;
  std::vector<const DataLine*> mine;
  for (size_t i = 0; i < data.size(); ++i) {
    id_of[&data[i]] = ids[i];
    if (int(i % size_t(o.shard.n)) == o.shard.k) mine.push_back(&data[i]);
  }
  sum.total = int64_t(mine.size());
  std::set<std::string> done(results.done().begin(), results.done().end());
  sum.redone_torn = results.cut_torn() ? 1 : 0;
  if (o.resume)
    for (const std::string& f : o.also_done)
      for (const std::string& id : results_ids(f)) done.insert(id);
  std::vector<const DataLine*> todo;
  for (const DataLine* d : mine)
    if (!done.count(id_of.at(d))) todo.push_back(d);
  sum.skipped = sum.total - int64_t(todo.size());
  if (!o.quiet) {
    fmt::print(stderr, "ruler run: {} samples in {}{}; {} already done{}; {} to run -> {}\n", sum.total, o.data,
               o.shard.n > 1 ? fmt::format(" (shard {}/{} from {})", o.shard.k, o.shard.n, o.shard.from) : "",
               sum.skipped, sum.redone_torn ? " (a torn last line was cut off and is redone)" : "", todo.size(),
               sum.out);
    std::fflush(stderr);
  }
  if (todo.empty()) return sum;
  int64_t max_len = 0, total_tokens = 0;
  const DataLine* longest = todo.front();
  for (const DataLine* d : todo) {
    total_tokens += d->sample.length;
    if (d->sample.length > max_len) max_len = d->sample.length, longest = d;
  }
  // the planned context: prompt (length - 128 by RULER's rule, whatever the file's generation budget) + BOS + new
  // tokens
  check_positions(cfg, max_len + 1, o.max_new, true,
                  fmt::format("{} line {}: field 'length' {} (+ BOS) and --max-new-tokens {}", o.data, longest->line,
                              max_len, o.max_new));
  const int64_t max_context = max_len + 1 + o.max_new;
  std::unique_ptr<Generator> gen;
  try {
    gen = make(max_context);
  } catch (const Error& e) {
    fail("{} line {}: field 'length' is {}: {}", o.data, longest->line, longest->sample.length, e.what());
  }
  if (!o.quiet)
    fmt::print(stderr, "ruler run: backend {}, context planned for {} tokens\n", gen->describe(), max_context);
  const auto t_run = clock::now();
  int64_t tokens_done = 0;
  for (size_t i = 0; i < todo.size(); ++i) {
    const DataLine& d = *todo[i];
    const std::string& id = id_of.at(&d);
    SampleOutcome r;
    const nlohmann::json j = run_one(o, cfg, tok, *gen, d, id, max_context, &r);
    // a prediction is decoded model output: byte-fallback tokens can leave invalid UTF-8, kept as U+FFFD
    results.append(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    ++sum.ran;
    tokens_done += d.sample.length;
    if (!o.quiet) {
      const double el = std::chrono::duration<double>(clock::now() - t_run).count();
      const double eta = el / double(tokens_done) * double(total_tokens - tokens_done);
      fmt::print(
          stderr,
          "[{}/{}] {} score {:.2f}{} | prefill {} tokens {:.2f} s ({:.0f} tokens/s), {} new tokens | sample {:.1f} s | ETA {}\n",
          sum.skipped + int64_t(i) + 1, sum.total, id, r.score, r.null ? " (null)" : "", r.prompt_tokens, r.prefill_s,
          double(r.prompt_tokens) / std::max(r.prefill_s, 1e-9), r.new_tokens, r.sample_s, hms(eta));
      std::fflush(stderr);
    }
  }
  return sum;
}

}  // namespace salasim::ruler
