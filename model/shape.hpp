// Element counts of row-major shapes: the one helper behind every tensor type's numel() (taps, the inventory,
// safetensors tensors, spot-check tensors) and the tests' tensor builders.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace salasim {

// The product of shape[first_dim..]: every element for first_dim = 0 (1 for a scalar's empty shape), the elements
// of one leading-dim row for first_dim = 1. Callers validate the dims; this only multiplies.
inline int64_t shape_numel(const std::vector<int64_t>& shape, size_t first_dim = 0) {
  int64_t n = 1;
  for (size_t i = first_dim; i < shape.size(); ++i) n *= shape[i];
  return n;
}

}  // namespace salasim
