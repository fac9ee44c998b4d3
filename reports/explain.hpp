// `salasim explain`: one card per op of the registry (ops/op.hpp) and for a Lightning layer, a sparse layer and the
// model. Every number on a card is computed: the equation from the op's definition with the config's numbers, shapes
// from the config, parameters from the tensor inventory, FLOPs, bytes and exponentials from the latency model's
// entries that carry the op's name, gates from the tolerance table, file:line from the source tree at run time.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/tolerance.hpp"
#include "reports/model_spec.hpp"
#include "ops/op.hpp"
#include "reports/source_lines.hpp"

namespace salasim::reports {

// The composite cards besides the ops.
const std::vector<std::string>& composite_cards();  // lightning-layer, sparse-layer, model
// Every name `explain` accepts: the registry's ops in its order, then the composite cards.
std::vector<std::string> explain_names();

struct UseTensor {
  std::string name;  // full checkpoint name of the first instance
  std::vector<int64_t> shape;
  int64_t params = 0;
};

// One place the card's op runs (a flow step), or one part of a composite card.
struct UseRow {
  std::string label, op, where;  // where: "lightning", "every layer", "entry", ...
  std::string layers;            // "1-8, 10-15, ..." or "-" outside the layers
  std::string in, out, text;     // shapes and the step's equation
  std::vector<UseTensor> tensors;
  int64_t each = 0, instances = 0, total = 0;
  SourceLine source;  // the reference statement (first piece)
  std::string note;
};

// FLOPs, bytes and exponentials: one decode token at position `context`, and a prefill of `context` tokens
// divided by `context`. `share` is the fraction of a latency-model entry the card counts (1/layers on a layer card).
struct Cost {
  double flops = 0, bytes = 0, exps = 0;
};
struct CostRow {
  std::string source;  // a latency-model entry, "linear.mlp", or "other.elementwise: silu(gate) * up"
  double share = 1;
  Cost decode, prefill;
};

struct TapRow {
  std::string kind;     // "lightning/gla/out"
  std::string example;  // "/prefill/layer_01/lightning/gla/out"
  std::string layers;   // where it is recorded
  ToleranceRow tolerance;
};

struct OpCard {
  std::string name, title, config, declared;  // declared: "reference/ops.hpp:41: <summary>" for an op
  int64_t context = 0, chunk = 0;
  std::vector<op::EqStep> equation;
  std::vector<UseRow> uses;
  int64_t params_each = 0, instances = 0, params_total = 0;
  std::string params_note;
  std::vector<CostRow> costs;
  CostRow cost_total;
  std::vector<TapRow> taps;
  std::vector<SourceLine> reference, gpu, kernels;
  std::vector<TestRef> tests;
  std::string gpu_purpose;  // the GPU file's first comment line
};

// Throws salasim::Error listing the known names when `name` is not one of them. `m` must be a SALA model.
OpCard explain(const Model& m, const std::string& name, int64_t context, int64_t chunk = 16384);

std::string format_card(const OpCard& card);
nlohmann::json card_json(const OpCard& card);

}  // namespace salasim::reports
