// Generated inputs for `salasim op NAME --random` and `salasim op --sweep` (docs/op.md#generated-inputs), in the
// spirit of ggml's test-backend-ops: for each op of the op table (compare/op_table.hpp) a generator that draws its
// datasets and attributes at chosen sizes, with values of the magnitudes the model gives the op (unit-RMS rows
// after a norm, natural-log decays < 0, causal block sets, ...), and the cases the sweep runs. What a generator
// makes goes through the same checks as a user's input file (op::make_op_inputs), so a generator cannot hand an op
// what `--in` would refuse.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compare/h5_inputs.hpp"
#include "compare/op_table.hpp"

namespace salasim::op {

// One size a generator takes: a dimension symbol of the op table ("T", "hd") or an integer attribute ("pos0").
struct CaseKey {
  std::string name;
  int64_t fallback = 0;  // the size when --shape leaves it out
  int64_t lo = 1, hi = 1;
  std::string doc;
};

// The sizes of one case, every key of the op's generator set.
using CaseSizes = std::map<std::string, int64_t>;

// The keys of `s`'s generator, in the order --help and the case labels show them. Every op of the table has a
// generator (a test checks it); an op without one is an internal error.
const std::vector<CaseKey>& case_keys(const OpSpec& s);

// "T=64,hd=128" (or "" for the defaults) as sizes: keys not named take their defaults. An unknown key, a value that
// is not a whole number, or one out of its range: a salasim::Error naming `what` (--shape), the key and the keys
// the op takes.
CaseSizes parse_case(const OpSpec& s, const std::string& text, const std::string& what = "--shape");
// Every key, in case_keys order: "T=64,H=2,hd=128".
std::string format_case(const OpSpec& s, const CaseSizes& c);

// The cases `salasim op --sweep` runs for `s`: a decode row, a prefill chunk (one across a block boundary), edge sizes
// (no compressed window yet, fewer blocks than slots), sizes off the kernels' fast paths, and
// sizes the CUDA path is not built for (there the gpu backend reports a skip with the reason).
std::vector<CaseSizes> sweep_cases(const OpSpec& s);

// The inputs of one case as an input file holds them (datasets with data, attributes), drawn from `seed`: the same
// op, sizes and seed give the same values on every machine (a splitmix64 stream, Box-Muller normals). Refused with
// a salasim::Error when the case would need more than `max_values` input values.
InputFile random_file(const OpSpec& s, const CaseSizes& c, uint64_t seed, int64_t max_values = int64_t(1) << 28);
// The same, checked as a file is (op::make_op_inputs), labelled "random NAME [T=..] seed S" in messages.
OpInputs random_inputs(const OpSpec& s, const CaseSizes& c, uint64_t seed);
std::string case_label(const OpSpec& s, const CaseSizes& c, uint64_t seed);

// The generator's part of `salasim op NAME --help`: keys with defaults and ranges, the sweep's cases.
std::string random_help(const OpSpec& s);

}  // namespace salasim::op
