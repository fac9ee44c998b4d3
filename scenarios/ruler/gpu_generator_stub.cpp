// make_gpu_generator in a build without the CUDA path.
#include "scenarios/ruler/generator.hpp"

namespace salasim::ruler {

std::unique_ptr<Generator> make_gpu_generator(const ModelConfig&, const WeightSource&, const GeneratorOptions&,
                                              std::string* why) {
  *why = "this build has no CUDA path (configure with nvcc on PATH, SALASIM_CUDA=ON)";
  return nullptr;
}

int visible_gpus(std::string* why) {
  *why = "this build has no CUDA path";
  return 0;
}

}  // namespace salasim::ruler
