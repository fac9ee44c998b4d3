// Generated inputs for `salasim op NAME --random` and `salasim op --sweep` (docs/op.md#generated-inputs), in the
// spirit of ggml's test-backend-ops: each op's definition (ops/<name>.cpp) carries a generator that draws its
// datasets and attributes at chosen sizes, with values of the magnitudes the model gives the op (unit-RMS rows after
// a norm, natural-log decays < 0, causal block sets, ...), and the cases the sweep runs. What a generator makes goes
// through the same checks as a user's input file (op::make_op_inputs), so a generator cannot hand an op what `--in`
// would refuse.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ops/inputs.hpp"
#include "ops/io.hpp"

namespace salasim::op {

// One size a generator takes: a dimension symbol of the op's datasets ("T", "hd") or an integer attribute ("pos0").
struct CaseKey {
  std::string name;
  int64_t fallback = 0;  // the size when --shape leaves it out
  int64_t lo = 1, hi = 1;
  std::string doc;
};

// The sizes of one case, every key of the op's generator set. The op's cost (ops/cost.hpp) reads the same sizes.
using CaseSizes = std::map<std::string, int64_t>;

// One case being drawn: its sizes, the value stream and the file it fills.
struct Draw {
  const CaseSizes& c;
  uint64_t state;
  int64_t max_values;
  std::string label;
  InputFile f;
  int64_t values = 0;

  int64_t operator[](const std::string& key) const { return c.at(key); }
  // splitmix64: a fixed stream on every machine and standard library (std::normal_distribution is not).
  uint64_t next();
  double uniform() { return (double(next() >> 11) + 0.5) * 0x1p-53; }  // in (0, 1)
  double normal();
  // A dataset of `shape`, zeros, for the generator to fill; refused past max_values values in all.
  std::vector<double>& tensor(const std::string& name, std::vector<int64_t> shape, bool integer = false);
  // Normal values of mean `mean` and standard deviation `scale`.
  void normal(const std::string& name, std::vector<int64_t> shape, double scale, double mean = 0);
  void number(const std::string& name, double v, bool integer = false);
  void text(const std::string& name, const std::string& v) { f.attrs[name].text = v; }
};

struct Generator {
  std::vector<CaseKey> keys;
  std::vector<std::string> sweep;  // --shape texts
  std::function<void(Draw&)> make;
};

// ---- the keys and draws ops share ----
constexpr int64_t kMaxSize = int64_t(1) << 24;  // one size: far past any dimension of the model
CaseKey key(std::string name, int64_t fallback, int64_t lo, int64_t hi, std::string doc);
CaseKey rows(int64_t fallback);
CaseKey width(const char* name, int64_t fallback, const char* doc);
CaseKey head_dim(int64_t fallback = 128);
CaseKey pos0(int64_t fallback);
CaseKey attn_heads();
CaseKey kv_heads();
// Queries [T, H*hd] at pos0 .. pos0+T-1, keys and values [G, pos0+T, hd], pos0 and tau.
void attention(Draw& d);
// A causal block set per (row, kv head): the query's own block and block 0 (the forced ones in the model), then
// distinct earlier blocks drawn at random, ascending, -1 in the slots left over.
void block_sets(Draw& d, int64_t T, int64_t G, int64_t K, int64_t pos0, int64_t block);

struct OpSpec;

// The keys of `s`'s generator, in the order --help and the case labels show them.
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

// How the drawn float values are kept. GpuStores (the default): each float input rounded as the CUDA path stores it
// (bf16, round to nearest even; fp32 where InputSpec::fp32 says so), so the reference, the peer, the CUDA path and a
// user's kernel all compute on the same values and the peer's allowance holds no input rounding: a kernel's own
// error has nowhere to hide (an off-by-one decay that unrounded inputs let through at some shapes fails at every
// one). Float64: the values as drawn.
enum class Drawn { GpuStores, Float64 };

// The inputs of one case as an input file holds them (datasets with data, attributes), drawn from `seed`: the same
// op, sizes and seed give the same values on every machine (a splitmix64 stream, Box-Muller normals). Refused with
// a salasim::Error when the case would need more than `max_values` input values.
InputFile random_file(const OpSpec& s, const CaseSizes& c, uint64_t seed, Drawn how = Drawn::GpuStores,
                      int64_t max_values = int64_t(1) << 28);
// The same, checked as a file is (op::make_op_inputs), labelled "random NAME [T=..] seed S" in messages.
OpInputs random_inputs(const OpSpec& s, const CaseSizes& c, uint64_t seed, Drawn how = Drawn::GpuStores);
std::string case_label(const OpSpec& s, const CaseSizes& c, uint64_t seed);

// The generator's part of `salasim op NAME --help`: keys with defaults and ranges, the sweep's cases.
std::string random_help(const OpSpec& s);

}  // namespace salasim::op
