// The Backend interface's defaults.
#include "scenarios/backend.hpp"

#include "model/error.hpp"

namespace salasim {

std::vector<SpotInput> Backend::spot_inputs(const Scenario&, const SpotRequest&) {
  fail("backend '{}' cannot hand over spot-check inputs", name());
}

}  // namespace salasim
