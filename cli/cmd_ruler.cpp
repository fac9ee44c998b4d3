// `salasim ruler generate|run|report|train-tokenizer`: RULER needle-in-a-haystack runs (docs/ruler-runs.md).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "model/config.hpp"
#include "model/error.hpp"
#include "model/inventory.hpp"
#include "model/tokenizer.hpp"
#include "model/weights.hpp"
#include "reports/context.hpp"
#include "scenarios/ruler/generator.hpp"
#include "scenarios/ruler/niah.hpp"
#include "scenarios/ruler/report.hpp"
#include "scenarios/ruler/run.hpp"
#include "scenarios/ruler/sample_io.hpp"

namespace salasim::cli {

namespace fs = std::filesystem;
using namespace salasim::ruler;

namespace {

// ---- generate ----
struct GenArgs {
  std::string task = "all", length = "4K", tokenizer, template_name = "base", haystack = kDefaultEssay, words, out;
  int64_t samples = 10, tokens_to_generate = 128;
  uint64_t seed = 42;
};

int generate(const GenArgs& a) {
  const std::vector<Task> tasks = parse_tasks(a.task);
  const std::vector<int64_t> lengths = reports::parse_contexts(a.length, "--length");
  apply_template(a.template_name, "");  // validates the name
  const Tokenizer tok = Tokenizer::load(a.tokenizer);
  const WordLists words = load_word_lists(a.words);
  bool essay_needed = false;
  for (const Task& t : tasks) essay_needed = essay_needed || t.haystack == Haystack::Essay;
  Essay essay;
  if (essay_needed) essay = load_essay(a.haystack);
  if (fs::exists(a.out)) fail("{}: exists; choose another --out (nothing was overwritten)", a.out);
  const std::string tmp = a.out + ".partial";
  std::ofstream out(tmp, std::ios::binary);
  if (!out) fail("{}: cannot write", tmp);
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
        out << sample_json(s).dump() << "\n";
        ++n;
      }
      fmt::print(stderr, "  {} at {}: {} samples ({:.1f} s so far)\n", t.name, reports::context_label(L), a.samples,
                 std::chrono::duration<double>(clock::now() - t0).count());
    }
  out.close();
  if (!out) fail("{}: write failed", tmp);
  fs::rename(tmp, a.out);
  fmt::print("wrote {} samples ({} tasks x {} lengths x {}) to {}\n", n, tasks.size(), lengths.size(), a.samples, a.out);
  fmt::print("tokenizer {}; key words from {}; essay haystack {}\n", tok.path(), words.source,
             essay_needed ? essay.source : "(not used by these tasks)");
  return 0;
}

// ---- run ----
struct RunArgs {
  std::string checkpoint, config, tokenizer, data, out, backend = "gpu", shard, gpus, task, length;
  std::vector<std::string> also_done;
  uint64_t synthetic_seed = 0;
  bool synthetic = false, resume = false, quiet = false;
  int64_t max_new = 128, chunk = 16384;
  std::string command_line;
};

// The worker command line of `--gpus`: this one without --gpus, with --shard K/N.
std::vector<std::string> worker_args(int argc_like, char** argv, int k, int n, const std::string& out, bool resume) {
  std::vector<std::string> v;
  for (int i = 0; i < argc_like; ++i) {
    const std::string s = argv[i];
    if (s == "--gpus") {
      ++i;
      continue;
    }
    if (s.rfind("--gpus=", 0) == 0) continue;
    v.push_back(s);
  }
  v.push_back(fmt::format("--shard={}/{}", k, n));
  if (resume) v.push_back("--also-done=" + out);
  return v;
}

int g_argc = 0;
char** g_argv = nullptr;

int run_gpus(const RunArgs& a) {
  std::vector<std::string> ids;
  if (a.gpus == "all") {
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
      for (const std::string& e : reports::split_list(v)) ids.push_back(e);
    } else {
      std::string why;
      const int n = visible_gpus(&why);
      if (n == 0) fail("--gpus all: no GPU ({})", why);
      for (int i = 0; i < n; ++i) ids.push_back(std::to_string(i));
    }
  } else {
    int n = 0;
    try {
      n = std::stoi(a.gpus);
    } catch (const std::exception&) {
      fail("--gpus '{}': expected all or a count", a.gpus);
    }
    if (n < 1) fail("--gpus {}: expected at least 1", n);
    for (int i = 0; i < n; ++i) ids.push_back(std::to_string(i));
  }
  if (!a.shard.empty()) fail("--gpus and --shard together: --gpus makes the shards itself");
  const int N = int(ids.size());
  if (fs::exists(a.out) && !a.resume) fail("{}: results exist; pass --resume to continue that run, or choose another --out", a.out);
  fmt::print(stderr, "ruler run: {} workers, one per GPU ({}), results merged into {}\n", N, fmt::join(ids, ","), a.out);
  std::vector<pid_t> pids;
  for (int k = 0; k < N; ++k) {
    const std::vector<std::string> args = worker_args(g_argc, g_argv, k, N, a.out, a.resume);
    const pid_t pid = fork();
    if (pid < 0) fail("--gpus: fork failed");
    if (pid == 0) {
      setenv("CUDA_VISIBLE_DEVICES", ids[size_t(k)].c_str(), 1);
      std::vector<char*> cargs;
      for (const std::string& s : args) cargs.push_back(const_cast<char*>(s.c_str()));
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      std::_Exit(127);
    }
    pids.push_back(pid);
  }
  int worst = 0;
  for (int k = 0; k < N; ++k) {
    int st = 0;
    waitpid(pids[size_t(k)], &st, 0);
    const int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 3;
    if (rc != 0) fmt::print(stderr, "ruler run: worker {} (GPU {}) exited with {}\n", k, ids[size_t(k)], rc);
    worst = std::max(worst, rc);
  }
  if (worst != 0) {
    fmt::print(stderr, "ruler run: shard files kept for --resume; nothing merged\n");
    return worst;
  }
  if (N == 1) {  // the one worker wrote --out itself
    fmt::print("one GPU: results in {}\n", a.out);
    return 0;
  }
  // merge by concatenation, shard by shard, then drop the shard files
  std::ofstream out(a.out, std::ios::binary | std::ios::app);
  int64_t lines = 0;
  for (int k = 0; k < N; ++k) {
    const std::string p = shard_path(a.out, Shard{k, N, "--gpus"});
    std::ifstream in(p, std::ios::binary);
    if (!in) continue;
    std::string line;
    while (std::getline(in, line))
      if (!line.empty()) out << line << "\n", ++lines;
  }
  out.close();
  if (!out) fail("{}: write failed while merging shards (shard files kept)", a.out);
  for (int k = 0; k < N; ++k) fs::remove(shard_path(a.out, Shard{k, N, "--gpus"}));
  fmt::print("merged {} results from {} shards into {}\n", lines, N, a.out);
  return 0;
}

int run(const RunArgs& a) {
  if (!a.gpus.empty()) return run_gpus(a);
  if (a.backend != "gpu" && a.backend != "reference") fail("--backend '{}': expected gpu or reference", a.backend);
  if (a.checkpoint.empty() == !a.synthetic)
    fail("name the model with --checkpoint DIR, or with --config PATH --synthetic-seed S --tokenizer PATH (not both)");
  ModelConfig cfg;
  WeightSource w;
  std::string tok_path = a.tokenizer;
  if (!a.checkpoint.empty()) {
    if (!a.config.empty()) fail("--config with --checkpoint: the checkpoint's config.json is the config");
    const fs::path cj = fs::path(a.checkpoint) / "config.json";
    if (!fs::exists(cj)) fail("{}: no config.json (expected a Hugging Face checkpoint folder)", a.checkpoint);
    cfg = load_config(cj.string());
    if (tok_path.empty()) tok_path = a.checkpoint;
  } else {
    if (a.config.empty() || tok_path.empty()) fail("--synthetic-seed needs --config PATH and --tokenizer PATH");
    cfg = load_config(data_path(a.config));
  }
  const Tokenizer tok = Tokenizer::load(tok_path);
  ReadOptions ro;
  ro.task = a.task;
  if (!a.length.empty()) ro.length = reports::parse_context(a.length, "--length");
  const std::vector<DataLine> data = read_samples(a.data, ro);
  RunOptions o;
  o.data = a.data;
  o.out = a.out;
  o.max_new = a.max_new;
  o.resume = a.resume;
  o.shard = resolve_shard(a.shard);
  o.also_done = a.also_done;
  o.quiet = a.quiet;
  if (!a.checkpoint.empty()) w = checkpoint_weights(a.checkpoint, tensor_inventory(cfg));
  else w = synthetic_weights(a.synthetic_seed);
  auto make = [&](int64_t max_context) -> std::unique_ptr<Generator> {
    GeneratorOptions go;
    go.max_context = max_context;
    go.chunk = a.chunk;
    if (a.backend == "reference") return make_reference_generator(cfg, w, go);
    std::string why;
    auto g = make_gpu_generator(cfg, w, go, &why);
    if (!g) fail("--backend gpu: {} (the float64 reference runs short lengths on tiny configs: --backend reference)", why);
    return g;
  };
  const RunSummary s = run_samples(o, cfg, tok, data, make);
  fmt::print("ruler run: {} samples in this shard, {} already done, {} run now{} -> {}\n", s.total, s.skipped, s.ran,
             s.redone_torn ? " (a torn last line was redone)" : "", s.out);
  return 0;
}

// ---- report ----
struct ReportArgs {
  std::vector<std::string> results;
  std::string out, paper = "reports/paper/minicpm-sala-ruler.json";
};

int report(const ReportArgs& a) {
  ReportOptions o;
  o.results = a.results;
  o.out_dir = a.out;
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
};

int train(const TrainArgs& a) {
  const WordLists words = load_word_lists(a.words);
  Essay essay;
  const bool with_essay = !a.haystack.empty() && a.haystack != "none";
  if (with_essay) essay = load_essay(a.haystack);
  const fs::path out(a.out);
  if (!out.parent_path().empty()) fs::create_directories(out.parent_path());
  const std::string text_file = a.out + ".train.txt";
  {
    std::ofstream t(text_file, std::ios::binary);
    t << tokenizer_training_text(words, with_essay ? &essay : nullptr, a.seed);
    if (!t) fail("{}: cannot write the training text", text_file);
  }
  train_tokenizer(text_file, a.out, a.vocab);
  fs::remove(text_file);
  const Tokenizer tok = Tokenizer::load(a.out);
  fmt::print("trained a {}-piece BPE SentencePiece model into {} (bos {}, eos {}, <|im_end|> {})\n", tok.vocab_size(), a.out,
             tok.bos_id(), tok.eos_id(), tok.id_of("<|im_end|>"));
  return 0;
}

}  // namespace

void add_ruler(CLI::App& app, Run& run_out, int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
  CLI::App* r = app.add_subcommand("ruler", "RULER needle-in-a-haystack: generate data, run it, report (docs/ruler-runs.md)");
  r->require_subcommand(1);

  auto g = std::make_shared<GenArgs>();
  CLI::App* c = r->add_subcommand("generate", "Write NIAH samples (RULER's JSONL fields + ours)");
  c->add_option("--task", g->task, "all, or a comma list of niah_single_1 ... niah_multiquery")->capture_default_str();
  c->add_option("--length", g->length, "target lengths, e.g. 4K,64K,1M,2048K")->capture_default_str();
  c->add_option("--samples", g->samples, "samples per task and length")->capture_default_str()->check(CLI::Range(int64_t(1), int64_t(1) << 30));
  c->add_option("--seed", g->seed, "seed (RULER's default: 42)")->capture_default_str();
  c->add_option("--tokenizer", g->tokenizer, "tokenizer.model of the evaluated model (or its folder)")->required();
  c->add_option("--template", g->template_name, "base | chatml (MiniCPM's)")->capture_default_str();
  c->add_option("--haystack-text", g->haystack, "long English text for the essay haystack")->capture_default_str();
  c->add_option("--words", g->words, "folder with adjectivelist.txt and nounlist.txt (default: the wonderwords package)");
  c->add_option("--tokens-to-generate", g->tokens_to_generate, "generation budget in the length rule")->capture_default_str()->check(CLI::Range(int64_t(0), int64_t(1) << 20));
  c->add_option("--out", g->out, "data.jsonl to write")->required();
  c->callback([g, &run_out] { run_out = [g] { return generate(*g); }; });

  auto ra = std::make_shared<RunArgs>();
  c = r->add_subcommand("run", "Run NIAH samples: prefill, greedy decode, score, needle-block recall");
  c->add_option("--checkpoint", ra->checkpoint, "Hugging Face folder: config.json + safetensors + tokenizer.model");
  c->add_option("--config", ra->config, "config.json (with --synthetic-seed: weights generated in place)");
  auto* seed = c->add_option("--synthetic-seed", ra->synthetic_seed, "synthetic weights of this seed instead of a checkpoint");
  c->add_option("--tokenizer", ra->tokenizer, "tokenizer.model (default: the checkpoint's)");
  c->add_option("--data", ra->data, "data.jsonl (salasim's, or RULER's validation.jsonl)")->required();
  c->add_option("--out", ra->out, "results.jsonl (appended one line per sample)")->required();
  c->add_option("--max-new-tokens", ra->max_new, "greedy decode limit")->capture_default_str()->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  c->add_option("--backend", ra->backend, "gpu (the CUDA path) | reference (float64 CPU, short lengths)")->capture_default_str();
  c->add_option("--chunk", ra->chunk, "GPU prefill chunk (multiple of 64)")->capture_default_str();
  c->add_flag("--resume", ra->resume, "skip samples already in --out (a torn last line is redone)");
  c->add_option("--shard", ra->shard, "K/N: run every N-th sample from the K-th (default: MPI or Slurm rank, else 0/1)");
  c->add_option("--gpus", ra->gpus, "all | N: one worker process per GPU, results merged into --out");
  c->add_option("--task", ra->task, "task of a RULER file without a 'task' field (default: its folder's name)");
  c->add_option("--length", ra->length, "target length of a RULER file (default: the power of two >= its 'length')");
  c->add_option("--also-done", ra->also_done, "results files whose samples count as done (used by --gpus --resume)")->group("");
  c->add_flag("--quiet", ra->quiet, "no progress on stderr");
  c->callback([ra, seed, &run_out] {
    ra->synthetic = seed->count() > 0;
    run_out = [ra] { return run(*ra); };
  });

  auto rp = std::make_shared<ReportArgs>();
  c = r->add_subcommand("report", "Tables, heatmap and recall plot from results files (shards concatenate)");
  c->add_option("results", rp->results, "results*.jsonl")->required();
  c->add_option("--out", rp->out, "folder for report.md and the plots");
  c->add_option("--paper", rp->paper, "the paper's RULER numbers (\"\" for none)")->capture_default_str();
  c->callback([rp, &run_out] { run_out = [rp] { return report(*rp); }; });

  auto tr = std::make_shared<TrainArgs>();
  c = r->add_subcommand("train-tokenizer", "Train a small SentencePiece model on RULER-like text (tests, synthetic runs)");
  c->add_option("--out", tr->out, "tokenizer.model to write")->required();
  c->add_option("--vocab", tr->vocab, "pieces (<= the model's vocab_size)")->capture_default_str()->check(CLI::Range(300, 1 << 20));
  c->add_option("--words", tr->words, "folder with adjectivelist.txt and nounlist.txt (default: the wonderwords package)");
  c->add_option("--haystack-text", tr->haystack, "essay text to include (none: without)")->capture_default_str();
  c->add_option("--seed", tr->seed, "seed of the generated training text")->capture_default_str();
  c->callback([tr, &run_out] { run_out = [tr] { return train(*tr); }; });
}

}  // namespace salasim::cli
