// What `salasim explain` knows about each op of reference/ops.hpp beyond the forward flow: its equation in steps
// (with the config's numbers), which latency-model entries are its cost, and where its GPU code is. Everything
// else on an op card (uses, shapes, parameters, taps, file:line, tests) is derived from the flow, the inventory,
// the tolerance table and the source tree.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace salasim::reports {

struct EqStep {
  std::string text;   // plain text
  std::string latex;  // LaTeX (no surrounding $)
};

struct OpInfo {
  std::string name;   // the section of reference/ops.hpp and the file reference/<name>.cpp
  std::string title;  // one line
  std::vector<EqStep> equation;
  // Latency-model entries (reports/op_costs.hpp) that are wholly this op's cost; the op's elementwise terms
  // (sala_elementwise_terms with this op name) are added to them.
  std::vector<std::string> latency_ops;
  std::string gpu_file;                    // "gpu/gla.cu"
  std::vector<std::string> gpu_functions;  // host functions defined there
  std::vector<std::string> gpu_pieces;     // or statements there (the logits GEMM lives in the runner)
  std::string params_note;                 // for ops without weights: what fixes their constants
};

// One entry per section of reference/ops.hpp, in its order; `context` fills in context-dependent counts.
std::vector<OpInfo> op_catalog(const ModelConfig& c, int64_t context);
const std::vector<std::string>& op_names();  // the catalog's names, in the same order

// The composite cards besides the ops.
inline const std::vector<std::string>& composite_cards() {
  static const std::vector<std::string> names{"lightning-layer", "sparse-layer", "model"};
  return names;
}

}  // namespace salasim::reports
