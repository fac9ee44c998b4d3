// NIAH data files: JSON lines in RULER's fields (index, input, outputs, length, answer_prefix) plus ours (task,
// max_seq_length, needle_token_spans, depths, ...). RULER's own validation.jsonl (prepare.py) reads as is.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenarios/ruler/niah.hpp"

namespace salasim::ruler {

nlohmann::json sample_json(const Sample& s);

struct DataLine {
  Sample sample;
  int64_t line = 0;  // 1-based line in the file
};
struct ReadOptions {
  std::string task;        // for RULER files (no 'task' field): this name; else the file's folder name when it is a task
  int64_t length = 0;      // for RULER files (no 'max_seq_length'): this target; else the power of two >= length
};
// Every line of a data file; throws naming the file, the line and the field for a bad line (nothing is run then).
std::vector<DataLine> read_samples(const std::string& path, const ReadOptions& o = {});

// The smallest power of two >= n: the target length RULER's files were made for (they fill it to within ~1%).
int64_t length_label(int64_t n);

}  // namespace salasim::ruler
