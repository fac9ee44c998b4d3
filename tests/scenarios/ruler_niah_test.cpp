// The NIAH generator, RULER's scoring, and the tokenizer, on a SentencePiece model the test trains itself.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "scenarios/ruler/niah.hpp"
#include "scenarios/ruler/sample_io.hpp"
#include "scenarios/ruler/score.hpp"
#include "tests/scenarios/ruler_support.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::ruler;

namespace {

GenSources sources() { return {&test::ruler_tokenizer(), &test::ruler_words(), &test::ruler_essay()}; }

int64_t count(const std::string& s, const std::string& what) {
  int64_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("ruler tokenizer: a trained model fits the tiny vocab, round-trips and maps spans", "[ruler]") {
  const Tokenizer& t = test::ruler_tokenizer();
  CHECK(t.vocab_size() <= 1024);
  CHECK(t.bos_id() == 1);
  CHECK(t.eos_id() == 2);
  const int32_t im_end = t.id_of("<|im_end|>");
  CHECK(im_end >= 0);
  CHECK(t.stop_ids() == std::vector<int32_t>{2, im_end});
  const std::string text = "One of the special magic numbers for fresh-apple is: 7341802.\nThe grass is green. <|im_end|>";
  const Encoded e = t.encode_with_spans(text);
  CHECK(t.decode(e.ids) == text);
  CHECK(std::count(e.ids.begin(), e.ids.end(), im_end) == 1);
  REQUIRE(e.spans.size() == e.ids.size());
  for (size_t i = 0; i < e.spans.size(); ++i) {
    CHECK(e.spans[i].first <= e.spans[i].second);
    CHECK(e.spans[i].second <= text.size());
  }
}

TEST_CASE("ruler tokenizer: Hugging Face added tokens beside the model are matched whole", "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_added_tokens");
  std::filesystem::copy_file(test::ruler_tokenizer_path(), dir + "/tokenizer.model");
  std::ofstream(dir + "/tokenizer_config.json")
      << R"({"added_tokens_decoder": {"1000": {"content": "<|tool_call|>", "special": true}}, "add_bos_token": true})";
  const Tokenizer t = Tokenizer::load(dir);
  CHECK(t.vocab_size() == 1001);
  CHECK(t.id_of("<|tool_call|>") == 1000);
  const std::string text = "call<|tool_call|> now";
  const Encoded e = t.encode_with_spans(text);
  CHECK(std::count(e.ids.begin(), e.ids.end(), 1000) == 1);
  CHECK(t.decode(e.ids) == text);
  for (size_t i = 0; i < e.ids.size(); ++i)
    if (e.ids[i] == 1000) CHECK(text.substr(e.spans[i].first, e.spans[i].second - e.spans[i].first) == "<|tool_call|>");
  int64_t unknown = 0;
  CHECK(t.decode({1001, 1500}, &unknown).empty());
  CHECK(unknown == 2);
  CHECK(test::error_of([&] { t.decode({1001}); }).find("cannot decode id 1001") != std::string::npos);
  std::ofstream(dir + "/tokenizer_config.json") << R"({"added_tokens_decoder": {"x": {"content": "<|a|>"}}})";
  CHECK(test::error_of([&] { Tokenizer::load(dir); }).find("tokenizer_config.json: field 'added_tokens_decoder' has key 'x'") != std::string::npos);
}

TEST_CASE("ruler tokenizer: a missing or malformed model is an error naming the file", "[ruler]") {
  const std::string dir = test::scratch_dir("ruler_bad_tokenizer");
  CHECK(test::error_of([&] { Tokenizer::load(dir); }).find(dir + "/tokenizer.model: no SentencePiece tokenizer") != std::string::npos);
  std::ofstream(dir + "/tokenizer.model") << "not a model";
  CHECK(test::error_of([&] { Tokenizer::load(dir); }).find("tokenizer.model: not a SentencePiece model") != std::string::npos);
}

TEST_CASE("ruler niah: every task puts its needles where recorded and fits the budget to within 1%", "[ruler]") {
  for (const Task& task : niah_tasks())
    for (int64_t L : {int64_t(4096), int64_t(8192)}) {
      INFO(task.name << " at " << L);
      GenOptions o;
      const Sample s = generate_sample(task, L, 3, o, sources());
      const std::string text = s.input + s.answer_prefix;
      const Encoded e = test::ruler_tokenizer().encode_with_spans(text);
      // the length rule: tokens + 128 <= L, and no more than 1% short of it
      CHECK(s.length == int64_t(e.ids.size()) + 128);
      CHECK(s.length <= L);
      // one unit is the granularity: a uuid needle of multikey_3 is ~80 tokens of this small-vocab tokenizer, 2% of 4K
      if (task.name != "niah_multikey_3" || L >= 8192) CHECK(double(s.length) >= 0.99 * double(L));
      else CHECK(s.length > L - 100);
      // every answer is in the text, in a needle sentence, and the recorded token span holds exactly that needle
      REQUIRE(s.needle_token_spans.size() == s.outputs.size());
      REQUIRE(s.depths.size() == s.outputs.size());
      for (size_t i = 0; i < s.outputs.size(); ++i) {
        const auto [b, en] = s.needle_token_spans[i];
        REQUIRE(b >= 0);
        REQUIRE(en > b);
        const std::vector<int32_t> ids(e.ids.begin() + b, e.ids.begin() + en);
        const std::string needle = test::ruler_tokenizer().decode(ids);
        CHECK(needle.find("One of the special magic") != std::string::npos);
        CHECK(needle.find("is: " + s.outputs[i] + ".") != std::string::npos);
        CHECK(s.depths[i] >= 0);
        CHECK(s.depths[i] <= 100);
      }
      // needle counts: max(k, q) x v needles, or a haystack of them
      const int64_t needles = count(s.input, "One of the special magic");
      if (task.haystack == Haystack::Needle) CHECK(needles == s.haystack_units + 1);
      else CHECK(needles == int64_t(std::max(task.keys, task.queries)) * task.values);
      const int64_t answers = int64_t(task.queries) * task.values;
      CHECK(int64_t(s.outputs.size()) == answers);
      const std::string type = task.value == Kind::Uuids ? "uuid" : "number";
      for (const std::string& out : s.outputs) CHECK(count(s.input, "is: " + out + ".") == 1);
      if (task.value == Kind::Uuids)
        for (const std::string& out : s.outputs) CHECK((out.size() == 36 && out[14] == '4'));
      else
        for (const std::string& out : s.outputs) CHECK((out.size() == 7 && out[0] != '0'));
      if (task.haystack == Haystack::Noise) CHECK(count(s.input, "The grass is green.") == s.haystack_units);
    }
}

TEST_CASE("ruler niah: singular and plural templates as RULER renders them", "[ruler]") {
  GenOptions o;
  const Sample one = generate_sample(task_named("niah_single_1"), 4096, 0, o, sources());
  const size_t k0 = one.answer_prefix.find(" for ") + 5;
  const std::string key = one.answer_prefix.substr(k0, one.answer_prefix.find(" mentioned") - k0);
  CHECK(one.input.rfind("A special magic number is hidden within the following text. Make sure to memorize it. I will "
                        "quiz you about the number afterwards.\n", 0) == 0);
  const std::string question = "\nWhat is the special magic number for " + key + " mentioned in the provided text?";
  CHECK(one.input.substr(one.input.size() - question.size()) == question);
  CHECK(one.answer_prefix == " The special magic number for " + key + " mentioned in the provided text is");
  CHECK(one.input.find("One of the special magic numbers for " + key + " is: ") != std::string::npos);  // needles stay plural
  const Sample uu = generate_sample(task_named("niah_single_3"), 4096, 0, o, sources());
  CHECK(uu.input.rfind("A special magic uuid is hidden", 0) == 0);
  CHECK(uu.input.find("One of the special magic uuids for ") != std::string::npos);
  const Sample mv = generate_sample(task_named("niah_multivalue"), 4096, 0, o, sources());
  CHECK(mv.input.rfind("Some special magic numbers are hidden within the following text.", 0) == 0);
  CHECK(mv.input.find("\nWhat are all the special magic numbers for ") != std::string::npos);
  CHECK(mv.answer_prefix.substr(mv.answer_prefix.size() - 35) == " mentioned in the provided text are");
  const Sample mq = generate_sample(task_named("niah_multiquery"), 4096, 0, o, sources());
  const size_t q0 = mq.answer_prefix.find(" for ") + 5;
  const std::string q = mq.answer_prefix.substr(q0, mq.answer_prefix.find(" mentioned") - q0);
  CHECK(count(q, ", ") == 3);
  CHECK(q.find(", and ") != std::string::npos);
  CHECK(mq.outputs.size() == 4);
  o.template_name = "chatml";
  const Sample chat = generate_sample(task_named("niah_single_1"), 4096, 0, o, sources());
  CHECK(chat.input.rfind("<|im_start|>user\nA special magic number", 0) == 0);
  const std::string tail = "text?<|im_end|>\n<|im_start|>assistant\n";
  CHECK(chat.input.substr(chat.input.size() - tail.size()) == tail);
  CHECK(chat.answer_prefix.rfind(" The special magic number for ", 0) == 0);
}

TEST_CASE("ruler niah: seeds reproduce samples and depths come from RULER's grid", "[ruler]") {
  const std::vector<int> grid = {0,  3,  5,  8,  10, 13, 15, 18, 21, 23, 26, 28, 31, 33, 36, 38, 41, 44, 46, 49,
                                 51, 54, 56, 59, 62, 64, 67, 69, 72, 74, 77, 79, 82, 85, 87, 90, 92, 95, 97, 100};
  CHECK(depth_grid() == grid);
  GenOptions o;
  const Task& t = task_named("niah_multikey_1");
  const Sample a = generate_sample(t, 4096, 5, o, sources()), b = generate_sample(t, 4096, 5, o, sources());
  CHECK(sample_json(a).dump() == sample_json(b).dump());
  o.seed = 43;
  const Sample c = generate_sample(t, 4096, 5, o, sources());
  CHECK(c.outputs != a.outputs);
  CHECK(generate_sample(t, 4096, 6, GenOptions{}, sources()).outputs != a.outputs);
  for (double d : a.depths) CHECK(std::find(grid.begin(), grid.end(), int(d)) != grid.end());
  CHECK(test::error_of([&] { generate_sample(t, 200, 0, GenOptions{}, sources()); }).find("without haystack is already") != std::string::npos);
  CHECK(test::error_of([] { parse_tasks("niah_single_1,niah_single_9"); }).find("unknown task 'niah_single_9'") != std::string::npos);
}

TEST_CASE("ruler score: string_match_all, cleaning and nulls against hand-checked cases", "[ruler]") {
  CHECK(clean_prediction("  7341802.\x01 tail \t\n") == "7341802.\n tail");
  CHECK(clean_prediction("\x02\n  \x03") == "");
  CHECK(string_match_all("The number is 7341802.", {"7341802"}) == 1.0);
  CHECK(string_match_all("the UUID is ABCDEF01-1234", {"abcdef01-1234"}) == 1.0);  // case-insensitive
  CHECK(string_match_all("1234567 and 7654321", {"1234567", "1111111", "7654321", "2222222"}) == 0.5);
  CHECK(string_match_all("", {"1234567"}) == 0.0);
  CHECK(string_match_all("123456", {"1234567"}) == 0.0);  // a part is not a match
  // hand-computed: mean(1, 0.5, 0, 0.25) = 0.4375 -> 43.75; one empty prediction
  const TaskScore s = task_score({1.0, 0.5, 0.0, 0.25}, {"a", "b", "", "c"});
  CHECK(s.score == 43.75);
  CHECK(s.n == 4);
  CHECK(s.nulls == 1);
  CHECK(task_score({1.0, 0.0, 0.0}, {"a", "b", "c"}).score == 33.33);
}
