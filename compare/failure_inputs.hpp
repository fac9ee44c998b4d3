// What goes beside a failing tap in a failure dump: the tensors its op read, so a kernel engineer can rerun the op
// on exactly those inputs. Derived from the model's data flow (docs/spec.md §2-§4) and tap names alone.
#pragma once
#include <string>
#include <vector>

#include "compare/hdf5_io.hpp"
#include "model/taps.hpp"

namespace salasim {

// The taps op `name` reads, as full tap names of the same phase: "/prefill/layer_01/lightning/gla/out" ->
// qk_rope/q, qk_rope/k, proj/v of that layer. Always includes the layer's input (input_norm/out) for layer taps.
// Names that no run records (layer -1's residual) are left out; the list may be empty (embed/out).
std::vector<std::string> op_input_taps(const std::string& name);

// Fills each entry's inputs from the maps: "reference.<kind with / as .>" from `ref` and "backend.<...>" from
// `backend` for every input tap present there, e.g. "reference.lightning.qk_rope.q". (Dataset names in a failure
// dump may not contain '/'.)
void add_failure_inputs(std::vector<FailureEntry>& entries, const TapMap& ref, const TapMap& backend);

}  // namespace salasim
