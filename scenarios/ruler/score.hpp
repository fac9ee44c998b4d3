// RULER's NIAH scoring (scripts/eval/evaluate.py, synthetic/constants.py): the prediction cleaned (strip, every
// control character [\x00-\x1f] replaced by a newline, strip again), then string_match_all: the fraction of the
// reference strings found as case-insensitive substrings of it. A task's score is the mean x 100, rounded to 2
// decimals; "nulls" counts empty cleaned predictions.
#pragma once
#include <string>
#include <vector>

namespace salasim::ruler {

std::string clean_prediction(const std::string& raw);
// Per sample, in [0, 1]. ASCII case folding: RULER's answers (digits, hex, lower-case words) are ASCII.
double string_match_all(const std::string& prediction, const std::vector<std::string>& references);

struct TaskScore {
  double score = 0;  // mean x 100, rounded to 2 decimals
  int64_t n = 0, nulls = 0;
};
TaskScore task_score(const std::vector<double>& per_sample, const std::vector<std::string>& cleaned_predictions);

}  // namespace salasim::ruler
