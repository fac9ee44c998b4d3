// RULER's 8 needle-in-a-haystack tasks (NVIDIA/RULER scripts/synthetic.yaml, data/synthetic/niah.py, as
// docs/ruler.md describes them): needles, haystacks, depths, templates, and the haystack sized to the longest that
// fits `tokens(input + answer_prefix) + tokens_to_generate <= max_seq_length` in the evaluated model's tokenizer.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/tokenizer.hpp"
#include "scenarios/ruler/sources.hpp"

namespace salasim::ruler {

enum class Haystack { Noise, Essay, Needle };
enum class Kind { Words, Numbers, Uuids };

struct Task {
  std::string name;
  Haystack haystack;
  Kind key, value;
  int keys, values, queries;  // k, v, q of synthetic.yaml; max(k, q) needles carry keys
};
const std::vector<Task>& niah_tasks();  // the 8, in RULER's order
const Task& task_named(const std::string& name);  // throws listing the names
// "all" or a comma list; throws naming the bad entry.
std::vector<Task> parse_tasks(const std::string& list);

// round(linspace(0, 100, 40)) with Python's half-to-even rounding: the essay depth grid.
std::vector<int> depth_grid();

// One sample, in RULER's JSONL fields plus ours.
struct Sample {
  // RULER's fields
  int64_t index = 0;
  std::string input;                 // the prompt up to the answer prefix (template applied)
  std::vector<std::string> outputs;  // the values to retrieve
  int64_t length = 0;                // tokens(input + answer_prefix) + tokens_to_generate
  std::string answer_prefix;
  // ours (absent from RULER's own files: the runner derives what it needs)
  std::string task;
  int64_t max_seq_length = 0;        // the target length the haystack was sized to
  std::vector<std::pair<int64_t, int64_t>> needle_token_spans;  // [begin, end) of each answer needle, tokens of input + answer_prefix (no BOS)
  std::vector<double> depths;        // per answer needle: percent of the haystack before it
  int64_t haystack_units = 0;        // words (essay), noise units or distractor needles
  std::string template_name;
  uint64_t seed = 0;
};

struct GenOptions {
  std::string template_name = "base";  // base | chatml
  int64_t tokens_to_generate = 128;
  uint64_t seed = 42;
};

struct GenSources {
  const Tokenizer* tokenizer = nullptr;
  const WordLists* words = nullptr;
  const Essay* essay = nullptr;  // essay tasks only
};

// Sample `index` of `task` at `max_seq_length`: reproducible from (seed, task, length, index) alone. Throws when
// even an empty haystack does not fit.
Sample generate_sample(const Task& task, int64_t max_seq_length, int64_t index, const GenOptions& o, const GenSources& s);

// The chat wrapper of a template around the task text: base adds nothing; chatml is MiniCPM's
// "<|im_start|>user\n{task}<|im_end|>\n<|im_start|>assistant\n" (the answer prefix then follows).
std::string apply_template(const std::string& template_name, const std::string& task_text);

// Token spans of the needles holding `values` in `text` (the model's input: input + answer_prefix): each span runs
// from the start of the needle sentence ("One of the special magic ...") to the end of its value; the first
// occurrence after the sentence start. Values not found get no span. Offsets per value, in order.
struct NeedleSpan {
  std::string value;
  int64_t char_begin = -1, char_end = -1;  // bytes in text
  int64_t token_begin = -1, token_end = -1;
};
std::vector<NeedleSpan> locate_needles(const std::string& text, const std::vector<std::string>& values, const Encoded& enc);

// Text to train a small test tokenizer on (one sentence per line): every task's template in both numbers, needles
// with random keys and values, the noise unit, and the essay's first sentences when one is given.
std::string tokenizer_training_text(const WordLists& words, const Essay* essay, uint64_t seed);

}  // namespace salasim::ruler
