// The model behind `salasim ruler run`: greedy generation of one fresh sequence per call, on the CUDA runner
// (Runner::generate, chunked prefill) or the float64 reference (ref::generate, short lengths on tiny configs).
#pragma once
#include <memory>
#include <string>

#include "model/config.hpp"
#include "model/generate.hpp"
#include "model/weights.hpp"

namespace salasim::ruler {

struct Generator {
  virtual ~Generator() = default;
  virtual std::string describe() const = 0;  // "gpu (NVIDIA H200 ...)", "reference (float64, CPU)"
  virtual Generation generate(const std::vector<int32_t>& prompt, const GenerateOptions& o) = 0;
};

struct GeneratorOptions {
  int64_t max_context = 0;   // prompt + generated tokens the longest sample needs
  int64_t chunk = 16384;     // GPU prefill chunk
  bool selection = true;     // keep the last token's selections (needle-block recall)
  bool scores = true;        // ... with pooled scores (ranks)
};

// Bytes the float64 reference holds for a sequence of `len` tokens (weights, caches, the activations of one
// whole-prompt call): its memory plan.
int64_t reference_bytes(const ModelConfig& c, int64_t len);
std::unique_ptr<Generator> make_reference_generator(const ModelConfig& c, const WeightSource& w, const GeneratorOptions& o);
// nullptr + why when this build or machine has no GPU path; throws the memory plan when it does not fit.
std::unique_ptr<Generator> make_gpu_generator(const ModelConfig& c, const WeightSource& w, const GeneratorOptions& o,
                                              std::string* why);

// CUDA devices this process may use (CUDA_VISIBLE_DEVICES applied); 0 + why without a GPU path.
int visible_gpus(std::string* why);

}  // namespace salasim::ruler
