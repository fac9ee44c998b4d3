// The ops `salasim op` runs on tensors a user provides (docs/op.md): for each op of reference/ops.hpp, its input
// datasets with symbolic shapes and dtypes, its attributes and its outputs. This one table drives `salasim op --help`,
// the docs' table and every check of an input file, so the three cannot disagree.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compare/h5_inputs.hpp"
#include "model/limits.hpp"

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
  std::string tap;  // dataset path in the output tap dump: "/op/" + the model's tap kind (its tolerance row)
  std::vector<std::string> dims;
  DType dtype = DType::Float;
  std::string doc;
};

struct OpInputs;

struct OpSpec {
  std::string name;
  std::string summary;  // one line, with the spec section
  std::string library;  // the reference call it wraps
  std::vector<InputSpec> inputs;
  std::vector<AttrSpec> attrs;
  std::vector<OutputSpec> outputs;
  std::vector<std::string> notes;  // derived sizes, rules, what the GPU path supports
  // Checks beyond shapes (block ids in range, enough compressed keys, ...) and sets the derived sizes the outputs
  // name (N1, NB, ...); throws salasim::Error naming the file and the dataset or attribute.
  std::function<void(OpInputs&)> check;
};

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

const std::vector<OpSpec>& op_table();
// The spec of `name`, or an Error naming it and listing the ops.
const OpSpec& find_op(const std::string& name);
std::string op_names();  // "rmsnorm, rope, ..."

// Help text: one op's table (inputs, attributes, outputs, notes), and every op's.
std::string op_help(const OpSpec& s);
std::string all_ops_help();

// Reads and checks `path` against `s`: missing datasets or attributes, wrong rank, shape or dtype, sizes that
// disagree between inputs, non-finite values, out-of-range attributes: an Error naming the file, the dataset or
// attribute, what was expected and what was found. Shapes are checked before any data is read.
// `guarded` = false reads in this process only (compare/h5_inputs.hpp read_input_file_unguarded; the fuzz target's
// built files).
OpInputs read_op_inputs(const OpSpec& s, const std::string& path, bool guarded = true);
// The same checks on inputs made in memory (compare/op_random.hpp): `f` as read_input_file returns it, data filled
// in; `label` names them in messages as a path would.
OpInputs make_op_inputs(const OpSpec& s, InputFile f, const std::string& label);

// The inputs as the CUDA path stores them: every float tensor rounded to bf16 (model/bf16.hpp round_bf16: nearest,
// ties to even, straight from float64), or to fp32 where InputSpec::fp32 says so. What the peer computes on, and
// what --backend gpu uploads.
OpInputs as_gpu_stores(const OpInputs& x);

// "[T, H*hd]"
std::string format_dims(const std::vector<std::string>& dims);

}  // namespace salasim::op
