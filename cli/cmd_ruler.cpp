// `salasim ruler generate|run|report|train-tokenizer`: RULER needle-in-a-haystack runs (docs/ruler-runs.md).
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "model/config.hpp"
#include "model/error.hpp"
#include "model/inventory.hpp"
#include "model/json_field.hpp"
#include "model/limits.hpp"
#include "model/machine_memory.hpp"
#include "model/output_file.hpp"
#include "model/tokenizer.hpp"
#include "model/weights.hpp"
#include "reports/context.hpp"
#include "scenarios/no_gpu.hpp"
#include "scenarios/ruler/generator.hpp"
#include "scenarios/ruler/launch.hpp"
#include "scenarios/ruler/lines.hpp"
#include "scenarios/ruler/niah.hpp"
#include "scenarios/ruler/report.hpp"
#include "scenarios/ruler/results_file.hpp"
#include "scenarios/ruler/run.hpp"
#include "scenarios/ruler/sample_io.hpp"

namespace salasim::cli {

namespace fs = std::filesystem;
using namespace salasim::ruler;

namespace {

// ---- generate ----
struct GenArgs {
  std::string task = "all", length = "4K", tokenizer, template_name = "base", haystack = kDefaultEssay, words, out,
              config;
  int64_t samples = 10, tokens_to_generate = 128;
  uint64_t seed = 42;
  bool force = false;
};

// Each --length within what a run of the data may have: max_positions with extrapolation (ruler run goes to 4x
// the trained length, as the paper does) of the config the data is for (--config, default the released model's).
void check_lengths(const std::vector<int64_t>& lengths, const GenArgs& a) {
  const ModelConfig cfg = load_config(a.config.empty() ? default_config_path() : data_path(a.config));
  const int64_t limit = max_positions(cfg, true);
  for (int64_t L : lengths) {
    if (L > limit)
      fail(
          "--length {}: past {} tokens, the longest a run of {} may have (4 x max_position_embeddings {}, with "
          "extrapolation); pass --config for another model",
          reports::context_label(L), limit, source_relative(cfg.source), cfg.max_position_embeddings);
    if (L <= a.tokens_to_generate)
      fail("--length {}: not more than --tokens-to-generate {}; a sample needs room for its prompt", L,
           a.tokens_to_generate);
  }
}

// What generating one sample of `L` tokens holds at its peak: the haystack's text and pieces (the essay's sentences
// as strings), the encoded ids and byte spans, and SentencePiece's own buffers while it encodes. Measured with
// /usr/bin/time -v on the 1000-piece test tokenizer at 1M: 395 MB peak for niah_single_1 (noise), 360 MB for
// niah_single_2 (essay), 291 MB for niah_multikey_3, about 30 MB of it the process itself: under 350 bytes per
// token, so 400 are planned, plus 64 MB for the tokenizer, the word lists and the essay.
double generate_bytes(int64_t L) { return double(L) * 400.0 + 64e6; }

// The files `ruler generate` reads: the tokenizer (a tokenizer.model, or a folder holding one and Hugging Face's
// added-token files), the essay, the word lists.
std::vector<std::pair<std::string, std::string>> generate_inputs(const std::string& tokenizer,
                                                                 const std::string& haystack,
                                                                 const std::string& words_dir) {
  std::vector<std::pair<std::string, std::string>> in;
  std::error_code ec;
  const bool dir = fs::is_directory(tokenizer, ec);
  const fs::path tok_dir = dir ? fs::path(tokenizer) : fs::path(tokenizer).parent_path();
  in.emplace_back(dir ? (tok_dir / "tokenizer.model").string() : tokenizer, "--tokenizer");
  for (const char* side : {"tokenizer_config.json", "added_tokens.json"})
    in.emplace_back((tok_dir / side).string(), "--tokenizer's");
  if (!haystack.empty()) in.emplace_back(haystack, "--haystack-text");
  if (!words_dir.empty())
    for (const char* list : {"adjectivelist.txt", "nounlist.txt"})
      in.emplace_back((fs::path(words_dir) / list).string(), "--words");
  return in;
}

void refuse_inputs(const std::string& out, const std::vector<std::pair<std::string, std::string>>& inputs) {
  for (const auto& [path, what] : inputs)
    if (fs::exists(path)) ruler::refuse_same_file(out, "--out", path, what);
}

// Writes `text` to the open temporary of --out, checked: a full disk or a file-size limit is an Error naming it.
void write_checked(int fd, const std::string& text, const OutputFile& out) {
  if (!write_all(fd, text.data(), text.size()))
    fail("--out {}: write failed: {}; nothing was written under its name", out.path(), std::strerror(errno));
}

int generate(const GenArgs& a) {
  const std::vector<Task> tasks = parse_tasks(a.task);
  const std::vector<int64_t> lengths = reports::parse_contexts(a.length, "--length");
  apply_template(a.template_name, "");  // validates the name
  check_lengths(lengths, a);
  check_fits_in_memory(generate_bytes(*std::max_element(lengths.begin(), lengths.end())),
                       fmt::format("generating a sample of --length {}",
                                   reports::context_label(*std::max_element(lengths.begin(), lengths.end()))),
                       "generate shorter lengths, or on a machine with more memory");
  // the output place before any long work; never one of the inputs, even with --force
  refuse_inputs(a.out, generate_inputs(a.tokenizer, a.haystack, a.words));
  OutputFile out(a.out, a.force, "--out");
  const Tokenizer tok = Tokenizer::load(a.tokenizer);
  const WordLists words = load_word_lists(a.words);
  refuse_inputs(a.out, generate_inputs(a.tokenizer, a.haystack, words.source));  // the lists found, if not given
  bool essay_needed = false;
  for (const Task& t : tasks) essay_needed = essay_needed || t.haystack == Haystack::Essay;
  Essay essay;
  if (essay_needed) essay = load_essay(a.haystack);
  const int fd = ::open(out.temp().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("--out {}: cannot create {}: {}", a.out, out.temp(), std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() {
      if (fd >= 0) ::close(fd);
    }
  } closer{fd};
  GenOptions go;
  go.template_name = a.template_name;
  go.tokens_to_generate = a.tokens_to_generate;
  go.seed = a.seed;
  GenSources src{&tok, &words, essay_needed ? &essay : nullptr};
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  int64_t n = 0;
  for (int64_t L : lengths)
    for (const Task& t : tasks) {
      for (int64_t i = 0; i < a.samples; ++i) {
        const Sample s = generate_sample(t, L, i, go, src);
        std::string line;
        try {
          line = sample_json(s).dump();
        } catch (const nlohmann::json::exception&) {  // a haystack or word list that is not UTF-8 text
          fail(
              "{} sample {} at {}: the text is not valid UTF-8 (is --haystack-text {} or --words a text file?); "
              "nothing was written under --out",
              t.name, i, L, a.haystack, words.source);
        }
        write_checked(fd, line + "\n", out);
        ++n;
      }
      fmt::print(stderr, "  {} at {}: {} samples ({:.1f} s so far)\n", t.name, reports::context_label(L), a.samples,
                 std::chrono::duration<double>(clock::now() - t0).count());
    }
  closer.fd = -1;
  if (::close(fd) != 0)
    fail("--out {}: close failed: {}; nothing was written under its name", a.out, std::strerror(errno));
  out.commit();
  fmt::print("wrote {} samples ({} tasks x {} lengths x {}) to {}\n", n, tasks.size(), lengths.size(), a.samples,
             a.out);
  fmt::print("tokenizer {}; key words from {}; essay haystack {}\n", tok.path(), words.source,
             essay_needed ? essay.source : "(not used by these tasks)");
  return 0;
}

// ---- run ----
struct RunArgs {
  std::string checkpoint, config, tokenizer, data, out, backend = "gpu", shard, gpus, task, length;
  std::vector<std::string> also_done;
  uint64_t synthetic_seed = 0;
  bool synthetic = false, resume = false, force = false, quiet = false;
  int64_t max_new = 128, chunk = 16384;
};

int g_argc = 0;
char** g_argv = nullptr;

int run(const RunArgs& a);

// --gpus: one worker per GPU (scenarios/ruler/launch.hpp), --out locked by this process meanwhile, then the merge.
int run_gpus(const RunArgs& a) {
  if (!a.shard.empty()) fail("--gpus and --shard together: --gpus makes the shards itself");
  const std::vector<std::string> ids = gpu_devices(a.gpus);
  const int N = int(ids.size());
  if (N == 1) {  // one worker is this process: no shard file, no merge
    ::setenv("CUDA_VISIBLE_DEVICES", ids[0].c_str(), 1);
    RunArgs one = a;
    one.gpus.clear();
    return run(one);
  }
  int64_t size = 0;
  ::close(open_regular_file(a.data, "--data " + a.data, &size));
  refuse_same_file(a.out, "--out", a.data, "--data");
  for (int k = 0; k < N; ++k)
    refuse_same_file(shard_path(a.out, Shard{k, N, "--gpus"}), fmt::format("--out (shard {}/{})", k, N), a.data,
                     "--data");
  ResultsOptions ro;
  ro.resume = a.resume;
  ro.force = a.force;
  const ResultsFile merged(a.out, ro);  // checked and locked for the whole launch; a second launch is refused
  fmt::print(stderr, "ruler run: {} workers, one per GPU ({}), results merged into {}\n", N, fmt::join(ids, ","),
             a.out);
  std::vector<std::string> argv(g_argv, g_argv + g_argc);
  std::vector<std::vector<std::string>> args;
  for (int k = 0; k < N; ++k) args.push_back(worker_args(argv, k, N, a.out, a.resume));
  const std::vector<int> codes = run_workers("/proc/self/exe", args, ids);
  int worst = 0;
  for (int k = 0; k < N; ++k) {
    if (codes[size_t(k)] != 0)
      fmt::print(stderr, "ruler run: worker {} (GPU {}) exited with {}\n", k, ids[size_t(k)], codes[size_t(k)]);
    worst = std::max(worst, codes[size_t(k)] > 3 ? 3 : codes[size_t(k)]);
  }
  if (worst != 0) {
    fmt::print(stderr, "ruler run: shard files kept for --resume; nothing merged\n");
    return worst;
  }
  const MergeSummary m = merge_shards(a.out, N);
  fmt::print("merged {} results from {} shards into {}{}{}\n", m.merged, N, a.out,
             m.kept ? fmt::format(" (after the {} already there)", m.kept) : "",
             m.already ? fmt::format("; {} were merged before and skipped", m.already) : "");
  return 0;
}

int run(const RunArgs& a) {
  // Without --resume nothing is skipped, so --also-done would be read by nobody: a run that ignored it silently
  // redid (and appended again) every sample the user meant to skip.
  if (!a.also_done.empty() && !a.resume)
    fail("--also-done {}: only --resume skips samples; pass --resume with it (nothing was run)",
         excerpt(a.also_done.front()));
  if (!a.gpus.empty()) return run_gpus(a);
  if (a.backend != "gpu" && a.backend != "reference")
    fail("--backend '{}': expected gpu or reference", excerpt(a.backend));
  if (a.checkpoint.empty() == !a.synthetic)
    fail("name the model with --checkpoint DIR, or with --config PATH --synthetic-seed S --tokenizer PATH (not both)");
  if (!a.checkpoint.empty() && !a.config.empty())
    fail("--config with --checkpoint: the checkpoint's config.json is the config");
  if (a.checkpoint.empty() && (a.config.empty() || a.tokenizer.empty()))
    fail("--synthetic-seed needs --config PATH and --tokenizer PATH");
  RunOptions o;
  o.data = a.data;
  o.out = a.out;
  o.max_new = a.max_new;
  o.resume = a.resume;
  o.force = a.force;
  o.shard = resolve_shard(a.shard);
  o.also_done = a.also_done;
  o.quiet = a.quiet;
  o.revision = git_revision();
  o.weights = a.checkpoint.empty() ? fmt::format("synthetic seed {}", a.synthetic_seed) : "checkpoint " + a.checkpoint;
  // No GPU for the GPU backend is said first, in plain words, with the way that works here (before "N to run").
  if (a.backend == "gpu") {
    std::string why;
    if (visible_gpus(&why) == 0)
      fail(
          "--backend gpu (the default): {}; on a CPU, --backend reference runs the float64 reference (tiny configs, "
          "short lengths: docs/ruler-runs.md)",
          plain_no_gpu_reason(why));
  }
  // the data file and the results file before any long work (config, tokenizer, weights, samples)
  int64_t size = 0;
  ::close(open_regular_file(a.data, "--data " + a.data, &size));
  const std::unique_ptr<ResultsFile> results = open_results_file(o);
  ModelConfig cfg;
  WeightSource w;
  std::string tok_path = a.tokenizer;
  if (!a.checkpoint.empty()) {
    const fs::path cj = fs::path(a.checkpoint) / "config.json";
    if (!fs::exists(cj)) fail("{}: no config.json (expected a Hugging Face checkpoint folder)", a.checkpoint);
    cfg = load_config(cj.string());
    if (tok_path.empty()) tok_path = a.checkpoint;
  } else {
    cfg = load_config(data_path(a.config));
  }
  const Tokenizer tok = Tokenizer::load(tok_path);
  ReadOptions ro;
  ro.task = a.task;
  if (!a.length.empty()) ro.length = reports::parse_context(a.length, "--length");
  ro.max_length = max_positions(cfg, true);
  if (ro.length > ro.max_length)
    fail(
        "--length {}: past {} tokens, the longest a run of {} may have (4 x max_position_embeddings, with extrapolation)",
        a.length, ro.max_length, source_relative(cfg.source));
  const std::vector<DataLine> data = read_samples(a.data, ro);
  if (!a.checkpoint.empty()) w = checkpoint_weights(a.checkpoint, tensor_inventory(cfg));
  else w = synthetic_weights(a.synthetic_seed);
  auto make = [&](int64_t max_context) -> std::unique_ptr<Generator> {
    GeneratorOptions go;
    go.max_context = max_context;
    go.chunk = a.chunk;
    if (a.backend == "reference") return make_reference_generator(cfg, w, go);
    std::string why;
    auto g = make_gpu_generator(cfg, w, go, &why);
    if (!g)
      fail("--backend gpu: {} (the float64 reference runs short lengths on tiny configs: --backend reference)", why);
    return g;
  };
  const RunSummary s = run_samples(o, *results, cfg, tok, data, make);
  fmt::print("ruler run: {} samples in this shard, {} already done, {} run now{} -> {}\n", s.total, s.skipped, s.ran,
             s.redone_torn ? " (a torn last line was redone)" : "", s.out);
  return 0;
}

// ---- report ----
struct ReportArgs {
  std::vector<std::string> results;
  std::string out, paper = "reports/paper/minicpm-sala-ruler.json";
  bool force = false;
};

int report(const ReportArgs& a) {
  ReportOptions o;
  o.revision = git_revision();
  o.results = a.results;
  o.out_dir = a.out;
  o.force = a.force;
  o.paper = a.paper.empty() ? "" : data_path(a.paper);
  fmt::print("{}", ruler_report(o));
  if (!a.out.empty()) fmt::print("\nreport written to {}/report.md\n", a.out);
  return 0;
}

// ---- train-tokenizer ----
struct TrainArgs {
  std::string out, words, haystack = kDefaultEssay;
  int vocab = 1000;
  uint64_t seed = 1;
  bool force = false;
};

// SentencePiece gives every character of the training text a piece of its own (character coverage 1.0), beside its
// 256 byte pieces and the 5 special ones (unk, bos, eos, <|im_start|>, <|im_end|>): a smaller --vocab, the help's
// least (300) for the default text included, failed inside the trainer with an assertion of its own.
void check_vocab_fits(const std::string& text, int vocab) {
  std::set<std::string> chars;  // UTF-8 code points
  for (size_t i = 0; i < text.size();) {
    size_t j = i + 1;
    while (j < text.size() && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80) ++j;
    chars.insert(text.substr(i, j - i));
    i = j;
  }
  const int64_t need = int64_t(chars.size()) + 256 + 5;
  if (vocab < need)
    fail(
        "--vocab {}: the training text holds {} different characters, each a piece of its own beside the 256 byte "
        "pieces and 5 special ones: pass --vocab {} or more (nothing was written)",
        vocab, chars.size(), need);
}

// Under the output policy like every output (model/output_file.hpp): --out is checked before any work and kept
// unless --force; SentencePiece's trainer writes <prefix>.model and <prefix>.vocab of its own choosing, so it works
// in a scratch folder beside --out (no `.train.txt` or `.vocab` of the user's is written over or deleted), and the
// checked model is renamed into place whole.
int train(const TrainArgs& a) {
  if (a.out.size() <= 6 || a.out.compare(a.out.size() - 6, 6, ".model") != 0)
    fail("--out {}: the tokenizer file name must end in .model (nothing was written)", excerpt(a.out));
  const bool with_essay = !a.haystack.empty() && a.haystack != "none";
  refuse_output_over_inputs(a.out, "--out", {{with_essay ? a.haystack : "", "--haystack-text"}});
  if (!fs::path(a.out).parent_path().empty()) make_output_folder(fs::path(a.out).parent_path().string(), "--out");
  OutputFile out(a.out, a.force, "--out");
  const WordLists words = load_word_lists(a.words);
  Essay essay;
  if (with_essay) essay = load_essay(a.haystack);
  const ScratchFolder work(a.out);
  const std::string text_file = (fs::path(work.path()) / "train.txt").string();
  const std::string model = (fs::path(work.path()) / "tokenizer.model").string();
  const std::string text = tokenizer_training_text(words, with_essay ? &essay : nullptr, a.seed);
  check_vocab_fits(text, a.vocab);
  write_file_atomic(text_file, text, true, "--out (its training text)");
  train_tokenizer(text_file, model, a.vocab);
  const Tokenizer tok = Tokenizer::load(model);  // what is put in place must load
  if (::rename(model.c_str(), out.temp().c_str()) != 0)
    fail("--out {}: cannot move the trained model into place: {}; nothing was written under its name", a.out,
         std::strerror(errno));
  out.commit();
  fmt::print("trained a {}-piece BPE SentencePiece model into {} (bos {}, eos {}, <|im_end|> {})\n", tok.vocab_size(),
             a.out, tok.bos_id(), tok.eos_id(), tok.id_of("<|im_end|>"));
  return 0;
}

}  // namespace

void add_ruler(CLI::App& app, Run& run_out, int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
  CLI::App* r =
      app.add_subcommand("ruler", "RULER needle-in-a-haystack: generate data, run it, report (docs/ruler-runs.md)");
  r->require_subcommand(1);

  auto g = std::make_shared<GenArgs>();
  CLI::App* c = r->add_subcommand("generate", "Write NIAH samples (RULER's JSONL fields + ours)");
  c->add_option("--task", g->task, "all, or a comma list of niah_single_1 ... niah_multiquery")->capture_default_str();
  c->add_option("--length", g->length, "target lengths, e.g. 4K,64K,1M,2048K")->capture_default_str();
  c->add_option("--samples", g->samples, "samples per task and length")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 30));
  c->add_option("--seed", g->seed, "seed (RULER's default: 42)")->capture_default_str();
  c->add_option("--tokenizer", g->tokenizer, "tokenizer.model of the evaluated model (or its folder)")->required();
  c->add_option("--template", g->template_name, "base | chatml (MiniCPM's)")->capture_default_str();
  c->add_option("--haystack-text", g->haystack, "long English text for the essay haystack")->capture_default_str();
  c->add_option("--words", g->words,
                "folder with adjectivelist.txt and nounlist.txt (default: the wonderwords package)");
  c->add_option("--tokens-to-generate", g->tokens_to_generate, "generation budget in the length rule")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(0), int64_t(1) << 20));
  c->add_option("--out", g->out, "data.jsonl to write (written whole: a temporary renamed into place)")->required();
  c->add_option(
      "--config", g->config,
      "the model the data is for: --length stops at 4 x its max_position_embeddings (default: the released model's)");
  c->add_flag("--force", g->force, "replace an existing --out");
  c->callback([g, &run_out] { run_out = [g] { return generate(*g); }; });

  auto ra = std::make_shared<RunArgs>();
  c = r->add_subcommand("run", "Run NIAH samples: prefill, greedy decode, score, needle-block recall");
  c->add_option("--checkpoint", ra->checkpoint, "Hugging Face folder: config.json + safetensors + tokenizer.model");
  c->add_option("--config", ra->config, "config.json (with --synthetic-seed: weights generated in place)");
  auto* seed =
      c->add_option("--synthetic-seed", ra->synthetic_seed, "synthetic weights of this seed instead of a checkpoint");
  c->add_option("--tokenizer", ra->tokenizer, "tokenizer.model (default: the checkpoint's)");
  c->add_option("--data", ra->data, "data.jsonl (salasim's, or RULER's validation.jsonl)")->required();
  c->add_option("--out", ra->out, "results.jsonl (appended one line per sample)")->required();
  c->add_option("--max-new-tokens", ra->max_new, "greedy decode limit")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  c->add_option("--backend", ra->backend, "gpu (the CUDA path) | reference (float64 CPU, short lengths)")
      ->capture_default_str();
  c->add_option("--chunk", ra->chunk, "GPU prefill chunk (multiple of 64)")->capture_default_str();
  c->add_flag("--resume", ra->resume,
              "continue an existing --out: skip its samples (an unterminated last line is redone)");
  c->add_flag("--force", ra->force, "replace an existing --out (a results file; anything else is refused)");
  c->add_option("--shard", ra->shard,
                "K/N: run every N-th sample from the K-th (default: MPI or Slurm rank, else 0/1)");
  c->add_option("--gpus", ra->gpus, "all | N: one worker process per GPU, results merged into --out");
  c->add_option("--task", ra->task, "task of a RULER file without a 'task' field (default: its folder's name)");
  c->add_option("--length", ra->length, "target length of a RULER file (default: the power of two >= its 'length')");
  c->add_option("--also-done", ra->also_done, "results files whose samples count as done (used by --gpus --resume)")
      ->group("");
  c->add_flag("--quiet", ra->quiet, "no progress on stderr");
  c->callback([ra, seed, &run_out] {
    ra->synthetic = seed->count() > 0;
    run_out = [ra] { return run(*ra); };
  });

  auto rp = std::make_shared<ReportArgs>();
  c = r->add_subcommand("report", "Tables, heatmap and recall plot from results files (shards concatenate)");
  c->add_option("results", rp->results, "results*.jsonl")->required();
  c->add_option("--out", rp->out, "folder for report.md and the plots (built whole, then renamed into place)");
  c->add_flag("--force", rp->force, "replace an existing --out folder");
  c->add_option("--paper", rp->paper, "the paper's RULER numbers (\"\" for none)")->capture_default_str();
  c->callback([rp, &run_out] { run_out = [rp] { return report(*rp); }; });

  auto tr = std::make_shared<TrainArgs>();
  c = r->add_subcommand("train-tokenizer",
                        "Train a small SentencePiece model on RULER-like text (tests, synthetic runs)");
  c->add_option("--out", tr->out, "tokenizer.model to write (refused when it exists, unless --force)")->required();
  c->add_flag("--force", tr->force, "replace an existing --out");
  c->add_option("--vocab", tr->vocab,
                "pieces (<= the model's vocab_size; at least its characters + 261: 339 for the default text)")
      ->capture_default_str()
      ->check(CLI::Range(300, 1 << 20));
  c->add_option("--words", tr->words,
                "folder with adjectivelist.txt and nounlist.txt (default: the wonderwords package)");
  c->add_option("--haystack-text", tr->haystack, "essay text to include (none: without)")->capture_default_str();
  c->add_option("--seed", tr->seed, "seed of the generated training text")->capture_default_str();
  c->callback([tr, &run_out] { run_out = [tr] { return train(*tr); }; });
}

}  // namespace salasim::cli
