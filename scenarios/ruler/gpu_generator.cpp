// The CUDA generator: one Runner planned for the longest sample, reset between samples.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "gpu/runner.hpp"
#include "model/error.hpp"
#include "scenarios/ruler/generator.hpp"

namespace salasim::ruler {

namespace {
struct GpuGenerator : Generator {
  std::unique_ptr<gpu::Runner> r;
  std::string name;
  std::string describe() const override { return name; }
  Generation generate(const std::vector<int32_t>& prompt, const GenerateOptions& o) override {
    r->reset();
    return r->generate(prompt, o);
  }
};
}  // namespace

std::unique_ptr<Generator> make_gpu_generator(const ModelConfig& c, const WeightSource& w, const GeneratorOptions& o,
                                              std::string* why) {
  if (!gpu::available(why)) return nullptr;
  gpu::RunnerOptions ro;
  ro.max_context = o.max_context;
  ro.chunk = o.chunk;
  ro.selection = o.selection;
  ro.selection_scores = o.selection && o.scores;
  auto g = std::make_unique<GpuGenerator>();
  g->r = std::make_unique<gpu::Runner>(c, w, ro);
  g->name = fmt::format("gpu ({})", gpu::device_name());
  return g;
}

int visible_gpus(std::string* why) {
  if (!gpu::available(why)) return 0;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    *why = "cudaGetDeviceCount failed";
    return 0;
  }
  return n;
}

}  // namespace salasim::ruler
