// The op registry (docs/design.md "Adding an op"): one definition per op of MiniCPM-SALA, each in ops/<name>.cpp,
// listed once in ops/registry.cpp. Every list of ops derives from it: `salasim op` (datasets, checks, reference call,
// generated cases), the tolerance table and the failure dumps (each op's tap kinds, compare/tolerance.cpp and
// compare/failure_inputs.cpp), the latency model's and the benchmarks' work (ops/cost.hpp), `salasim explain`'s
// cards, and, keyed by the same names, the CUDA backend of `salasim op` (scenarios/op_gpu.cpp) and the benchmark
// cases (bench/op_cases.cpp). tests/ops/registry_test.cpp checks that every definition is complete and that every
// list names the same ops.
//
// An op's name is its name everywhere: reference/<name>.cpp and its section of reference/ops.hpp, gpu/<name>.cu,
// the tests' [name] tag, `salasim op NAME`, `salasim explain NAME`, the benchmarks' NAME[.variant] and the latency
// model's NAME[.site]. Tap paths are the one exception, on purpose: they name the model's site (`lightning/proj/q`,
// `sparse/select/blocks`, model/taps.hpp), a format goldens and dumps hold on disk; each op declares the kinds it
// produces.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/sparse_rules.hpp"
#include "model/taps.hpp"
#include "ops/cost.hpp"
#include "ops/io.hpp"
#include "ops/random.hpp"
namespace salasim::ref {
struct Num;  // reference/tensor.hpp: the precision a reference call computes at
}

namespace salasim::op {

// How the tolerance table gates a tap kind (compare/tolerance.cpp holds the policy's numbers and their reasons).
enum class TapGate {
  Float,     // err(backend, ref64) <= mult err(peer, ref64) + floor, for rel-RMS and for max-err
  FloatInf,  // the same on the finite elements; +-inf must stand where the reference has the same infinity
  Selection  // integer block ids: sets compared exactly, swaps allowed only inside the tie band
};

// A tap kind the model records after this op: a tap name without its phase and layer (model/taps.hpp).
struct TapDef {
  std::string kind;    // "lightning/gla/out"
  std::string stored;  // the precision the GPU path keeps it in: "bf16", "fp32", "int32"
  TapGate gate = TapGate::Float;
  std::string reason;  // why the row's numbers fit this tensor (`salasim tolerances` prints it)
  // What a failure dump holds beside a failing tap (compare/failure_inputs.cpp): the kinds of the same layer the op
  // read; "<prev>" is the layer's input stream (the previous layer's residual/h, or embed/out), "<last>" the last
  // layer's residual/h. A layer's input_norm/out is always added.
  std::vector<std::string> inputs;
};

// A config's number as equations print it: "{:.10g}".
std::string eq_num(double v);

struct EqStep {
  std::string text;   // plain text
  std::string latex;  // LaTeX (no surrounding $)
};

// What `salasim explain NAME` tells beyond what the forward flow, the inventory, the latency model and the tolerance
// table give: the equation with the config's numbers, and where the GPU code is.
struct Card {
  std::string title;  // one line
  std::function<std::vector<EqStep>(const ModelConfig& c, int64_t context)> equation;
  std::string params_note;                 // for ops without weights: what fixes their constants
  std::string gpu_file;                    // "gpu/gla.cu"
  std::vector<std::string> gpu_functions;  // host functions defined there, by name
};

struct OpSpec {
  std::string name;
  std::string section;  // of docs/spec.md: "§3 step 6"
  std::string summary;  // one line, for `salasim op --help`
  std::string library;  // the reference call `salasim op` makes, as --help says it: "ref::gla_chunked (C = 64) / ..."
  // Declared under the op's section of reference/ops.hpp and defined in reference/<name>.cpp.
  std::vector<std::string> reference_functions;

  // ---- `salasim op` (ops/io.hpp) ----
  std::vector<InputSpec> inputs;
  std::vector<AttrSpec> attrs;
  std::vector<OutputSpec> outputs;
  std::vector<std::string> notes;  // derived sizes, rules, what the GPU path supports
  // Checks beyond shapes (block ids in range, enough compressed keys, ...) and sets the derived sizes the outputs
  // name (N1, NB, ...); throws salasim::Error naming the file and the dataset or attribute.
  std::function<void(OpInputs&)> check;
  // The reference call on checked inputs, at the precision `num` sets (ref::f64() or the bf16 peer): the outputs
  // under their OutputSpec::tap names.
  TapMap (*reference)(const OpInputs& x, const ref::Num& num) = nullptr;
  Generator random;  // generated inputs and the sweep's cases (ops/random.hpp)

  std::vector<TapDef> taps;  // the tap kinds this op produces in the model
  Card card;
  // The work of one call of the sizes a generator case names (CaseSizes): the op's cost formula (ops/cost.hpp)
  // read through the generator's keys.
  Work (*cost)(const CaseSizes& s) = nullptr;
};

// Every op, in reference/ops.hpp order: embed, linear, rmsnorm, rope, gla, compress_k, select_blocks, sparse_attn,
// dense_attn, gate, mlp, residual, logits.
const std::vector<OpSpec>& registry();
// The op called `name`, or a salasim::Error naming it and listing the ops.
const OpSpec& find_op(const std::string& name);
std::string op_names();  // "embed, linear, rmsnorm, ..."

// select_blocks' attributes as the rules the reference and the GPU path take (ops/select_blocks.cpp).
SparseRules select_rules(const OpInputs& x);

// The op that declares tap kind `kind` and its TapDef; nullptr when no op does.
const TapDef* find_tap(const std::string& kind, const OpSpec** owner = nullptr);

}  // namespace salasim::op
