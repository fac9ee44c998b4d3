// The RULER run loop: resume after a kill (a torn last line redone), RULER-format input, bad input, and an end-to-end
// run of the float64 reference on the tiny model at two lengths with the needle-block recall.
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "model/config.hpp"
#include "scenarios/ruler/recall.hpp"
#include "scenarios/ruler/run.hpp"
#include "scenarios/ruler/sample_io.hpp"
#include "tests/scenarios/ruler_support.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::ruler;
namespace fs = std::filesystem;

namespace {

// Answers with a fixed text; counts its calls (what was actually run).
struct EchoGenerator : Generator {
  std::string text;
  const Tokenizer* tok;
  int* calls;
  std::string describe() const override { return "echo (test)"; }
  Generation generate(const std::vector<int32_t>& prompt, const GenerateOptions& o) override {
    ++*calls;
    Generation g;
    g.tokens = tok->encode(text);
    g.tokens.push_back(o.stop.front());
    g.hit_stop = true;
    g.token_s.assign(g.tokens.size(), 1e-3);
    StepSelection s;  // a selection that holds block 0 only, for every layer of the tiny model
    LayerSelection l;
    l.layer = 0;
    l.pos = int64_t(prompt.size()) - 1;
    l.groups = 1;
    l.k_sel = 1;
    l.blocks = {0};
    s.layers = {l};
    s.pos = l.pos;
    g.selections = {s};
    return g;
  }
};

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> v;
  std::string l;
  while (std::getline(in, l)) v.push_back(l);
  return v;
}

std::string write_data(const std::string& dir, const std::string& task, int64_t L, int n) {
  const std::string path = dir + "/data.jsonl";
  std::ofstream out(path);
  GenSources src{&test::ruler_tokenizer(), &test::ruler_words(), &test::ruler_essay()};
  for (int i = 0; i < n; ++i)
    out << sample_json(generate_sample(task_named(task), L, i, GenOptions{}, src)).dump() << "\n";
  return path;
}

}  // namespace

TEST_CASE("ruler run: a killed run resumes, redoing a torn last line and keeping what was written", "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_resume");
  const std::string data = write_data(dir, "niah_single_1", 2048, 4);
  const ModelConfig cfg = load_config(test::tiny_config());
  const Tokenizer& tok = test::ruler_tokenizer();
  const auto rows = read_samples(data);
  int calls = 0;
  auto make = [&](int64_t) -> std::unique_ptr<Generator> {
    auto g = std::make_unique<EchoGenerator>();
    g->text = " " + rows[0].sample.outputs[0] + ".";
    g->tok = &tok;
    g->calls = &calls;
    return g;
  };
  RunOptions o;
  o.data = data;
  o.out = dir + "/results.jsonl";
  o.quiet = true;
  RunSummary s = run_samples(o, cfg, tok, rows, make);
  CHECK(s.ran == 4);
  CHECK(calls == 4);
  std::vector<std::string> l = lines_of(o.out);
  REQUIRE(l.size() == 4);
  const nlohmann::json first = nlohmann::json::parse(l[0]);
  CHECK(first["score"] == 1.0);  // the echo answers sample 0 exactly
  CHECK(first["id"] == "niah_single_1/2048/0");
  CHECK(first["prediction"] == rows[0].sample.outputs[0] + ".");
  CHECK(nlohmann::json::parse(l[1])["score"] == 0.0);
  // a kill while writing line 3: lines 3-4 gone, half of line 3 left behind
  {
    std::ofstream out(o.out, std::ios::trunc);
    out << l[0] << "\n" << l[1] << "\n" << l[2].substr(0, l[2].size() / 2);
  }
  CHECK(test::error_of([&] { run_samples(o, cfg, tok, rows, make); }).find("results exist; pass --resume") !=
        std::string::npos);
  o.resume = true;
  calls = 0;
  s = run_samples(o, cfg, tok, rows, make);
  CHECK(s.skipped == 2);
  CHECK(s.redone_torn == 1);
  CHECK(s.ran == 2);
  CHECK(calls == 2);
  l = lines_of(o.out);
  REQUIRE(l.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(nlohmann::json::parse(l[i])["id"] == "niah_single_1/2048/" + std::to_string(i));
  calls = 0;
  s = run_samples(o, cfg, tok, rows, make);  // all done: nothing runs, nothing changes
  CHECK(calls == 0);
  CHECK(lines_of(o.out).size() == 4);
  // shards: every N-th sample, into a file of their own
  o.resume = false;
  o.shard = resolve_shard("1/2");
  calls = 0;
  s = run_samples(o, cfg, tok, rows, make);
  CHECK(s.out == dir + "/results.shard-1-of-2.jsonl");
  CHECK(calls == 2);
  CHECK(nlohmann::json::parse(lines_of(s.out)[0])["id"] == "niah_single_1/2048/1");
  CHECK(test::error_of([] { resolve_shard("2/2"); }).find("expected 0 <= K < N") != std::string::npos);
}

TEST_CASE("ruler data: RULER's own validation.jsonl reads as is; a bad line names file, line and field", "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_format") + "/niah_single_2";
  fs::create_directories(dir);
  const std::string path = dir + "/validation.jsonl";
  {  // the fields prepare.py writes, nothing of ours
    std::ofstream out(path);
    out << R"({"index": 0, "input": "A special magic number is hidden within the following text. Make sure to memorize it. I will quiz you about the number afterwards.\nSome text. One of the special magic numbers for tall-tree is: 4417021. More text.\nWhat is the special magic number for tall-tree mentioned in the provided text?", "outputs": ["4417021"], "length": 4011, "length_w_model_temp": 4011, "answer_prefix": " The special magic number for tall-tree mentioned in the provided text is", "token_position_answer": 42})"
        << "\n";
  }
  const auto rows = read_samples(path);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].sample.task == "niah_single_2");  // from the folder, as RULER lays its data out
  CHECK(rows[0].sample.max_seq_length == 4096);   // the power of two its length was fitted to
  CHECK(rows[0].sample.outputs == std::vector<std::string>{"4417021"});
  const std::string text = rows[0].sample.input + rows[0].sample.answer_prefix;
  const auto spans = locate_needles(text, rows[0].sample.outputs, test::ruler_tokenizer().encode_with_spans(text));
  REQUIRE(spans.size() == 1);
  CHECK(text.substr(size_t(spans[0].char_begin), size_t(spans[0].char_end - spans[0].char_begin)) ==
        "One of the special magic numbers for tall-tree is: 4417021.");
  CHECK(spans[0].token_end > spans[0].token_begin);
  ReadOptions ro;
  ro.length = 8192;
  CHECK(read_samples(path, ro)[0].sample.max_seq_length == 8192);

  const std::string bad = dir + "/bad.jsonl";
  auto err = [&](const std::string& line) {
    std::ofstream(bad) << R"({"index": 0, "input": "x", "outputs": ["1"], "length": 10, "answer_prefix": "y"})"
                       << "\n"
                       << line << "\n";
    return test::error_of([&] { read_samples(bad); });
  };
  CHECK(err(R"({"index": 1, "outputs": ["1"], "length": 10, "answer_prefix": "y"})")
            .find(bad + " line 2: field 'input' is missing") == 0);
  CHECK(err(R"({"index": 1, "input": "x", "outputs": "1", "length": 10, "answer_prefix": "y"})")
            .find(bad + " line 2: field 'outputs' is string") == 0);
  CHECK(err(R"({"index": 1, "input": "x", "outputs": ["1"], "length": "10", "answer_prefix": "y"})")
            .find(bad + " line 2: field 'length' is string") == 0);
  CHECK(err(R"({"index": 1, "input": "x", "outputs": ["1"], "length": 10, "answer_prefix": "y", "task": "niah_x"})")
            .find(bad + " line 2: field 'task': unknown task 'niah_x'") == 0);
  CHECK(err("{not json").find(bad + " line 2: not well-formed JSON") == 0);
  const std::string elsewhere = test::scratch_dir("ruler_format_notask") + "/data.jsonl";
  std::ofstream(elsewhere) << R"({"index": 0, "input": "x", "outputs": ["1"], "length": 10, "answer_prefix": "y"})"
                           << "\n";
  CHECK(test::error_of([&] { read_samples(elsewhere); }).find("line 1: field 'task' is missing") != std::string::npos);
}

TEST_CASE("ruler recall: needle blocks against a selection, with ranks from pooled scores", "[ruler]") {
  CHECK(needle_blocks({{60, 70}, {130, 131}}, 64) == std::vector<int64_t>{0, 1, 2});
  StepSelection s;
  LayerSelection l;
  l.layer = 3;
  l.pos = 64 * 10 + 5;  // query in block 10
  l.groups = 2;
  l.k_sel = 3;
  l.n_blocks = 11;
  l.blocks = {0, 4, 10, 0, 7, 10};  // group 0 holds needle block 4; group 1 neither 4 nor 7's partner... holds 7
  const float inf = std::numeric_limits<float>::infinity();
  l.scores = {inf, 1, 2, 3, 9, 1, 1, 1, 1, 1, inf,   // group 0: block 4 is third (after the two forced blocks)
              inf, 1, 2, 3, 4, 5, 6, 8, 1, 1, inf};  // group 1: block 4 ranks 6th, block 7 3rd
  s.layers = {l};
  const std::vector<LayerRecall> r = selection_recall(s, {4, 7}, 64);
  REQUIRE(r.size() == 1);
  CHECK(r[0].layer == 3);
  CHECK(r[0].recall == 0.5);  // (g0: 4) + (g1: 7) of 2 groups x 2 blocks
  CHECK(r[0].best_rank == 3);
  l.dense = true;
  s.layers = {l};
  CHECK(selection_recall(s, {4}, 64)[0].dense);
  CHECK(recall_json(5, selection_recall(s, {4}, 64)).dump() == R"({"layers":[{"dense":true,"layer":3}],"pos":5})");
}

TEST_CASE("ruler run: the float64 reference end to end on the tiny model at two lengths", "[ruler][reference]") {
  // tiny-short: dense_len 1024, so 640 runs dense and 1200 chooses blocks (K_sel 12 of 19)
  const std::string dir = test::scratch_dir("ruler_reference");
  const ModelConfig cfg = load_config(test::source_path("scenarios/models/tiny-short.json"));
  const Tokenizer& tok = test::ruler_tokenizer();
  GenSources src{&tok, &test::ruler_words(), &test::ruler_essay()};
  const std::string data = dir + "/data.jsonl";
  {
    std::ofstream out(data);
    for (int64_t L : {int64_t(640), int64_t(1200)})
      out << sample_json(generate_sample(task_named("niah_single_2"), L, 0, GenOptions{}, src)).dump() << "\n";
  }
  RunOptions o;
  o.data = data;
  o.out = dir + "/results.jsonl";
  o.max_new = 6;
  o.quiet = true;
  const WeightSource w = synthetic_weights(1);
  const RunSummary s = run_samples(o, cfg, tok, read_samples(data), [&](int64_t ctx) {
    GeneratorOptions go;
    go.max_context = ctx;
    return make_reference_generator(cfg, w, go);
  });
  CHECK(s.ran == 2);
  const std::vector<std::string> l = lines_of(o.out);
  REQUIRE(l.size() == 2);
  for (const std::string& line : l) {
    const nlohmann::json j = nlohmann::json::parse(line);
    INFO(line.substr(0, 400));
    CHECK(j["backend"] == "reference (float64, CPU)");
    CHECK(j["logits_finite"] == true);
    CHECK(j["generated_tokens"].get<int>() >= 1);
    CHECK(j["generated_tokens"].get<int>() <= 6);
    CHECK(j["score"].get<double>() >= 0);
    CHECK(j["needle_blocks"].size() >= 1);
    const nlohmann::json& steps = j["selection"];
    CHECK(int(steps.size()) == j["generated_tokens"].get<int>());  // the last prompt token + each token fed back
    for (const auto& layer : steps[0]["layers"]) {
      if (j["length"] == 640) CHECK(layer["dense"] == true);
      else {
        CHECK(layer["recall"].get<double>() >= 0);
        CHECK(layer["rank"].get<int>() >= 1);
      }
    }
    if (j["length"] == 1200) CHECK(j.contains("recall_prompt"));
  }
}
