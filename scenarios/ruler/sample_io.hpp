// NIAH data files: JSON lines in RULER's fields (index, input, outputs, length, answer_prefix) plus ours (task,
// max_seq_length, needle_token_spans, depths, ...). RULER's own validation.jsonl (prepare.py) reads as is.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/limits.hpp"
#include "scenarios/ruler/niah.hpp"

namespace salasim::ruler {

// Bounds on a data line's numbers (docs/input-limits.md, "RULER files"). A length (or max_seq_length) is at most
// what any run may extrapolate to (kExtrapolationFactor x kMaxPositions); a run checks it against its own
// config too (ReadOptions::max_length). Indices are below 2^31 (`generate --samples` stops at 2^30).
constexpr int64_t kMaxSampleLength = kMaxPositions * kExtrapolationFactor;
constexpr int64_t kMaxSampleIndex = INT32_MAX;
// A token covers at most this many bytes of text: a SentencePiece piece is one word piece (pieces do not cross
// whitespace), and MiniCPM's longest pieces are runs of a repeated character; generated samples average about 4
// bytes per token with the test tokenizer. A line whose input + answer_prefix is longer than length x this bound
// cannot fit its declared length, and is refused before it is tokenized: tokenizing costs ~1 us and ~100 bytes
// of memory per byte, so a 50 MB line declaring 231 tokens costs about 88 s and 5.5 GB unless refused first.
constexpr int64_t kMaxBytesPerToken = 64;
// The longest data line read: a 2048K-token sample is about 9 MB; a 4x-extrapolated 8M-token one ~36 MB.
constexpr int64_t kMaxDataLineBytes = int64_t(64) << 20;
// At most this many answers per sample (RULER's tasks have 1-4): each is searched for in the prompt and the
// prediction.
constexpr int64_t kMaxOutputs = 64;

nlohmann::json sample_json(const Sample& s);

struct DataLine {
  Sample sample;
  int64_t line = 0;  // 1-based line in the file
};
struct ReadOptions {
  std::string task;    // for RULER files (no 'task' field): this name; else the file's folder name when it is a task
  int64_t length = 0;  // for RULER files (no 'max_seq_length'): this target; else the power of two >= length
  int64_t max_length = kMaxSampleLength;  // 'length' and 'max_seq_length' at most this (the run's max_positions)
  std::string option = "--data";          // names the file in messages about the file as a whole
};
// Every line of a data file; throws naming the file, the line and the field for a bad line (nothing is run then).
// The file must be a regular file; each line is at most kMaxDataLineBytes, parsed with parse_json_text (the shared
// JSON limits), its integers range-checked, and its text at most length x kMaxBytesPerToken bytes.
std::vector<DataLine> read_samples(const std::string& path, const ReadOptions& o = {});

// The 'depths' field of a data line or a results line: at most kMaxOutputs needle depths, each a number in [0, 100]
// (percent of the haystack); throws naming `where` and the field otherwise.
std::vector<double> parse_depths(const nlohmann::json& d, const std::string& where);

// The smallest power of two >= n: the target length RULER's files were made for (they fill it to within ~1%).
int64_t length_label(int64_t n);

}  // namespace salasim::ruler
