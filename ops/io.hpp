// What `salasim op` reads and writes for one op (docs/op.md): its input datasets with symbolic shapes and dtypes, its
// attributes and its outputs, as each op's definition (ops/<name>.cpp) declares them, and the checks they drive. One
// declaration feeds `salasim op --help`, the docs' table, every check of an input file and of generated inputs, so
// none of them can disagree.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/limits.hpp"
#include "ops/inputs.hpp"

namespace salasim::op {

enum class DType { Float, Int };

// A dimension is a symbol ("T") or a product of two ("H*hd"); symbols bind to the first size that names them.
struct InputSpec {
  std::string name;               // dataset at the root of the input file
  std::vector<std::string> dims;  // {"T", "H*hd"}
  DType dtype = DType::Float;
  std::string doc;
  bool optional = false;  // absent: the op's documented default (doc says which)
  bool fp32 = false;      // the CUDA path holds it in fp32 (else bf16): how --backend gpu and peer round it
};

enum class AttrKind { Int, Float, Choice };
struct AttrSpec {
  std::string name;  // attribute of the root group
  AttrKind kind = AttrKind::Float;
  std::string doc;
  std::string fallback;              // "" = required; else the value used when absent, as text
  std::vector<std::string> choices;  // Choice: the strings allowed
  int64_t lo = 0, hi = 0;            // Int: the range allowed
  // Float: the range allowed, the model's own for the quantity (model/limits.hpp); --help shows it
  FloatRange range{-1.7976931348623157e308, 1.7976931348623157e308, false, "any finite number"};
  std::string binds;  // Int: the dimension symbol it sets ("hd"), or ""
};

struct OutputSpec {
  std::string
      tap;  // dataset path in the output tap dump: "/op/" + a tap kind the registry declares (its tolerance row)
  std::vector<std::string> dims;
  DType dtype = DType::Float;
  std::string doc;
  bool fp32 = false;  // the CUDA path writes it in fp32 (else bf16): the element type of the C ABI's output tensor
};

// An output's name where a user implementation names it (a Python callable's result, the C ABI's field): the last
// part of its tap path, "out" for /op/lightning/gla/out, "state" for /op/lightning/gla/state.
std::string output_name(const OutputSpec& o);

struct OpSpec;
struct OpInputs;

// The checked inputs of one op.
struct OpInputs {
  const OpSpec* spec = nullptr;
  std::string file;
  std::map<std::string, InputDataset> tensors;  // by input name (absent optional inputs left out)
  std::map<std::string, double> numbers;        // Int and Float attributes, defaults filled in
  std::map<std::string, std::string> choices;   // Choice attributes, defaults filled in
  std::map<std::string, int64_t> dims;          // symbol -> size, inputs' and derived
  bool has(const std::string& input) const { return tensors.count(input) > 0; }
  const InputDataset& tensor(const std::string& input) const;
  int64_t i(const std::string& attr) const;
  double f(const std::string& attr) const;
  const std::string& choice(const std::string& attr) const;
  int64_t dim(const std::string& symbol) const;
};

// ---- declaring an op's datasets and attributes (ops/<name>.cpp) ----
constexpr int64_t kMaxPos = int64_t(1) << 31;  // positions: far past any context (4 x 524,288 with extrapolation)
constexpr int64_t kMaxInt = 0x7fffffff;
inline const char* const kPos0Doc = "absolute position of the first row (queries at pos0 .. pos0+T-1)";

InputSpec in(std::string name, std::vector<std::string> dims, std::string doc, DType t = DType::Float);
// A float attribute in `range`: the model's range for the quantity it stands for (its config field or the scale
// derived from one), so the op refuses what the model could never be given.
AttrSpec num(std::string name, std::string doc, const FloatRange& range);
AttrSpec whole(std::string name, int64_t lo, int64_t hi, std::string doc, std::string fallback = "");
AttrSpec choice(std::string name, std::string doc, std::vector<std::string> choices);  // the first is the default
OutputSpec out(std::string tap, std::vector<std::string> dims, std::string doc, DType t = DType::Float);

// ---- the checks ----
// The header checks of an input file (compare/op_table.hpp read_op_inputs calls them before any data is read):
// attributes, datasets' presence, dtype, rank and shape, sizes agreeing between datasets, names the op does not
// take; and whether the inputs and outputs fit this machine's memory.
void check_headers(OpInputs& x, const InputFile& f);
void check_input_sizes(const std::string& path, const InputFile& f);
// The checks that follow: every value finite, the op's own rules (Io::check), the outputs' size.
OpInputs finish_inputs(OpInputs x, InputFile& f);
// The same checks on inputs made in memory (ops/random.hpp): `f` as read_input_file returns it, data filled in;
// `label` names them in messages as a path would.
OpInputs make_op_inputs(const OpSpec& s, InputFile f, const std::string& label);

// Rules several ops share: H a multiple of G (query head h reads kv head h / (H/G)); a cache of L >= pos0 + T keys.
void check_heads_per_group(const OpInputs& x);
void check_cache(const OpInputs& x);

// The inputs as the CUDA path stores them: every float tensor rounded to bf16 (model/bf16.hpp round_bf16: nearest,
// ties to even, straight from float64), or to fp32 where InputSpec::fp32 says so. What the peer computes on, and
// what --backend gpu uploads.
OpInputs as_gpu_stores(const OpInputs& x);

// `x` as an input file holds it (op::make_op_inputs takes it back): every input present and every attribute, defaults
// filled in; what `--save-inputs` writes and what a user's implementation reads.
InputFile input_file(const OpInputs& x);

// "[T, H*hd]"
std::string format_dims(const std::vector<std::string>& dims);
// Help text: one op's table (inputs, attributes, outputs, notes), and every op's.
std::string op_help(const OpSpec& s);
std::string all_ops_help();

}  // namespace salasim::op
