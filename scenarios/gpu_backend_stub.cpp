// make_gpu_backend for builds without the CUDA path: there is no GPU backend, and it says so.
#include "scenarios/backend.hpp"

namespace salasim {

std::unique_ptr<Backend> make_gpu_backend(std::string* why) {
  if (why) *why = "this build has no CUDA path";
  return nullptr;
}

}  // namespace salasim
