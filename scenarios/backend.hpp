// What `salasim verify` runs beside the float64 reference: a backend runs a scenario and hands back its taps.
// Two exist: the peer (the reference in bf16-emulating mode, on the CPU; it checks the harness and the
// reference's self-consistency) and the GPU path (make_gpu_backend, compiled only with CUDA).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/taps.hpp"
#include "reference/weights.hpp"
#include "scenarios/run_reference.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/spot_check.hpp"

namespace salasim {

struct BackendRun {
  TapMap taps;
  std::vector<PhaseTime> times;
  std::string device;  // "CPU", "NVIDIA H200", ...
};

struct Backend {
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "peer (bf16-emulating reference)", "gpu (NVIDIA H200 ...)"
  // Runs the scenario (prefill in the scenario's pieces, then its decode tokens), recording taps that match
  // `filter`; when `forced` is non-null, sparse attention uses those selections (teacher forcing: the
  // "/<phase>/layer_NN/sparse/select/blocks" taps of the reference, rows by position within the phase) while the
  // backend still computes and records its own selection under that name.
  virtual BackendRun run(const Scenario& s, const TapFilter& filter, const TapMap* forced) = 0;
  // Long-context spot checks (spot_check.hpp): runs the scenario's prefill and hands over, for each layer of
  // `req`, what the reference needs to recompute `req.positions`. A backend that cannot throws salasim::Error.
  virtual std::vector<SpotInput> spot_inputs(const Scenario& s, const SpotRequest& req);
};

// "<backend> on <device>" for messages, or the backend's name alone when it names its device already
// ("gpu (NVIDIA H200 ...)"; the peer's name does not: "peer (bf16-emulating reference) on CPU").
std::string backend_label(const std::string& backend, const std::string& device);

// Helpers every backend shares.
// The scenario's prefill pieces as cut positions [0, ..., n], with `extra` cuts added (a spot window's start).
std::vector<int64_t> prefill_cuts(const Scenario& s, std::vector<int64_t> extra = {});
// A layer's spot hand-over from its prefill taps (patterns of spot_tap_patterns), recorded from row `first_row`
// of the prompt on: everything but the sparse layer's raw K/V caches and the Lightning layer's GLA states, which
// live in the backend's own cache and are the backend's to fill. `who` names the backend in errors.
SpotInput spot_input_from_taps(const ModelConfig& c, const TapMap& taps, const SpotRequest& req, int layer,
                               int64_t prompt_len, int64_t first_row, const std::string& who);

// The bf16-emulating reference (ref::peer()). `weights`: the scenario's weights already loaded, shared with the
// float64 reference (nullptr: run() loads them).
std::unique_ptr<Backend> make_peer_backend(std::shared_ptr<const ref::RefWeights> weights = nullptr);

// The CUDA path, or nullptr with `why` saying plainly why not ("this build has no CUDA path", "no CUDA device:
// ..."). The CPU build links scenarios/gpu_backend_stub.cpp; a CUDA build links the real one instead.
std::unique_ptr<Backend> make_gpu_backend(std::string* why);

}  // namespace salasim
