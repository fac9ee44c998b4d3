// Choosing taps and rows of a run before it starts (`salasim run --dump-taps FILE --taps PATTERN --rows LIST`):
// the list of every tap a run records, computed from the config alone (no GPU, no weights), so that tap patterns that
// match nothing, row lists past the prompt and selections that would not fit in host memory are refused before the
// run; and the row list itself.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/taps.hpp"

namespace salasim {

// ---- row lists ----
// Rows of the prefill's per-token taps, i.e. prompt positions. Comma-separated items:
//   N        one row; a negative N counts from the end (-1 = the last prompt token)
//   A:B      rows A .. B-1 (A default 0, B default the prompt length; negatives count from the end)
//   A:B:S    every S-th row of A:B (S >= 1)
// "all" (or no --rows) keeps every row. Out-of-range rows, empty ranges and malformed items are errors, so a typo
// never silently selects something else.
struct RowItem {
  bool range = false;
  int64_t index = 0;                        // a single row (range = false)
  bool has_start = false, has_stop = false;  // A:B[:S]
  int64_t start = 0, stop = 0, step = 1;
  std::string text;  // the item as written, for messages
};
struct RowList {
  bool all = true;
  std::vector<RowItem> items;
  std::string text;  // as given
  // The absolute rows of a prompt of `n` tokens, ascending, each once; an Error naming the item when one does not fit.
  std::vector<int64_t> resolve(int64_t n) const;
};
// An Error naming `option` and the item for a malformed list.
RowList parse_row_list(const std::string& text, const std::string& option = "--rows");

// ---- the tap list of a run ----
struct TapSpec {
  std::string name;            // "/prefill/layer_03/lightning/gla/out"
  std::vector<int64_t> shape;  // its final shape
  bool integer = false;
  bool per_token() const { return !whole_sequence_tap(name); }  // shape[0] = tokens of its phase
};
// Every tap a run of `prompt` tokens then `decode_steps` decode steps records, in recording order, with its final
// shape: what reference/model.cpp and gpu/runner.cpp record (tests/model/tap_select_test.cpp checks it against a
// reference run). `scores`: the sparse layers' pooled block scores are recorded (select/scores).
std::vector<TapSpec> tap_catalog(const ModelConfig& c, int64_t prompt, int decode_steps, bool scores);

// Splits "a,b , c" into {"a", "b", "c"}; an empty item is an Error naming `option`.
std::vector<std::string> split_patterns(const std::string& text, const std::string& option = "--taps");
// An Error naming every pattern that matches no tap of `catalog`, with a few of the names it could have matched.
void check_patterns(const std::vector<std::string>& patterns, const std::vector<TapSpec>& catalog,
                    const std::string& option = "--taps");

// ---- what a selection holds ----
struct SelectedTap {
  std::string name;
  std::vector<int64_t> shape;  // as written: per-token prefill taps cut to the chosen rows
  double file_bytes = 0;       // float64 / int64 in the dump
};
struct DumpBudget {
  std::vector<SelectedTap> taps;  // recording order
  double file_bytes = 0;          // the dump's size on disk (8 bytes a value)
  double held_bytes = 0;          // host memory the recorder holds at once (state taps of one phase, kept until the
                                  // phase ends), plus the largest single download (below)
  double download_bytes = 0;      // the largest tap a forward call hands over whole: one chunk of rows, as the
                                  // device's bytes and as float64, before the rows are chosen
  std::string largest_download;   // its name
};
// What dumping `patterns` (TapFilter syntax) with prefill rows `rows` of `catalog` holds, for a run whose prefill
// calls handle `chunk` tokens at most. Per-token taps of decode steps (one row each) are kept whole.
DumpBudget dump_budget(const std::vector<TapSpec>& catalog, const TapFilter& filter, int64_t prompt,
                       const std::vector<int64_t>& rows, int64_t chunk);

// ---- host memory ----
// MemAvailable of /proc/meminfo in bytes, or -1 when it cannot be read. The environment variable
// SALASIM_TEST_MEMINFO names another file to read instead (the tests' hook for a small machine).
int64_t mem_available_bytes();
// Parses a meminfo text's "MemAvailable:  N kB" line; -1 when there is none.
int64_t parse_mem_available(const std::string& meminfo);
// Refuses (an Error, exit 2) when `need` bytes exceed 90% of MemAvailable (the rest is the process itself and the
// libraries); `what` says what needs them and `detail` lists the parts (a line each). Nothing is checked when
// MemAvailable cannot be read.
void check_host_memory(double need, const std::string& what, const std::string& detail);

}  // namespace salasim
