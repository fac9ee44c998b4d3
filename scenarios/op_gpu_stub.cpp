// The CUDA backend of `salasim op` in a build without the CUDA path: every call says so (exit 2) and how to get one.
#include "model/error.hpp"
#include "scenarios/op_backends.hpp"

namespace salasim {

void check_gpu() {
  fail(
      "salasim op --backend gpu needs the CUDA path, and this build has none (configure with nvcc on PATH, "
      "SALASIM_CUDA=ON); --backend reference and peer run here");
}

std::vector<std::string> gpu_op_names() { return {}; }

TapMap run_op_gpu(const op::OpInputs&, std::string*) {
  check_gpu();
  return {};
}

}  // namespace salasim
