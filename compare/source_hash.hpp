// The golden hash: what the GPU path compiles, reduced to what changes its code. Recorded in each golden and
// recomputed by `salasim golden check`, so a change to the GPU path whose numerics were not re-verified on a GPU
// shows as a mismatch in CI, and a change that cannot alter them (comments, layout) does not.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compare/gpu_inputs.hpp"

namespace salasim {

struct SourceHash {
  std::string hex;                 // "tok64:0123456789abcdef"
  std::vector<std::string> files;  // per input "<path>=<16 hex digits>", then "cuda-flags=..." and "cxx-flags=..."
};

// FNV-1a 64 over the inputs' meaning: for each file of `in` (paths relative to `root`, in the manifest's sorted
// order) its path, a NUL, the byte count of its token sequence (source_tokens.hpp), a NUL, that sequence; then the
// same framing for "cuda-flags" and "cxx-flags" with the flags joined by spaces. A comment or whitespace edit leaves
// it unchanged; any change to a token, a renamed, added or removed file, or another flag changes it. The framing
// uses paths relative to the tree, so the hash does not depend on where the checkout lives. A listed file that is
// missing or unreadable is a salasim::Error naming it.
SourceHash hash_inputs(const std::string& root, const GpuInputs& in);

// This source tree's hash (SALASIM_SOURCE_DIR and its gpu/golden_inputs.txt).
SourceHash gpu_source_hash();
// "the 42 files and the flags of gpu/golden_inputs.txt": what gpu_source_hash covers, for messages.
std::string gpu_sources_label();

// The inputs whose entry differs between two SourceHash::files lists (a path in one only, or with another digest),
// by name; empty when the lists are the same.
std::vector<std::string> changed_inputs(const std::vector<std::string>& recorded, const std::vector<std::string>& now);

}  // namespace salasim
