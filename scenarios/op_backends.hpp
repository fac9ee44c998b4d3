// The backends of `salasim op` and of its generated-input sweep (scenarios/op_sweep.hpp): the float64 reference,
// its bf16-emulating peer, and the CUDA path. Each returns the op's outputs as taps named as the op table says
// (compare/op_table.hpp).
#pragma once
#include <string>
#include <vector>

#include "ops/op.hpp"
#include "model/taps.hpp"

namespace salasim {

// The reference op of reference/ops.hpp on the inputs as given (peer = false), or the same code as verify's peer
// runs it (ref::peer(): bf16 roundings where the GPU stores bf16, fp32 where it keeps fp32) on the inputs rounded as
// the CUDA path stores them (op::as_gpu_stores).
TapMap run_op_reference(const op::OpInputs& x, bool peer);

// The op on the CUDA path (scenarios/op_gpu.cpp): inputs converted to bf16 (fp32 where the path keeps fp32) as
// op::as_gpu_stores does, outputs the float64 of the bf16 (or fp32) results. A build without the CUDA path
// (scenarios/op_gpu_stub.cpp), no GPU at run time, or inputs the kernels are not built for: a salasim::Error
// (exit 2) saying so. `device` gets the GPU's name.
TapMap run_op_gpu(const op::OpInputs& x, std::string* device);
// The ops the CUDA backend runs, by name (none without the CUDA path): every op of the registry, a test checks.
std::vector<std::string> gpu_op_names();
// The same refusal alone (no CUDA path or no GPU usable here: exit 2, as `salasim run`), for a check before the
// inputs are read.
void check_gpu();

}  // namespace salasim
