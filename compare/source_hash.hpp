// A stable hash of the GPU path's sources (gpu/ and the host-device headers it compiles), recorded in each golden and recomputed by `salasim golden check`: a kernel
// change whose numerics were not re-verified on a GPU shows as a hash mismatch in CI.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace salasim {

struct SourceHash {
  std::string hex;                  // "fnv1a64:0123456789abcdef"
  std::vector<std::string> files;   // the hashed files, "gpu/<path>", sorted
};

// FNV-1a 64 over the regular files of `dir` and its subfolders whose names end in .cu, .cuh, .hpp, .h or .cpp, plus
// CMakeLists.txt (compile flags such as fast-math change numerics too), sorted by path: for each file, its path as
// "<label>/<path below dir>", a NUL, its byte count in decimal, a NUL, its bytes. The name and length framing makes
// a renamed or split file change the hash. A missing folder is a salasim::Error naming it; an existing folder with
// no matching file hashes the empty list. `label` is the folder's name in the framing ("gpu"), so the hash does
// not depend on where the checkout lives.
//
// `shared`: single files hashed after the folder's, each framed by its name as given, relative to `shared_root`
// (e.g. "model/synth.hpp" under the source tree); a missing one is a salasim::Error naming it.
SourceHash hash_sources(const std::string& dir, const std::string& label = "gpu", const std::string& shared_root = "",
                        const std::vector<std::string>& shared = {});

// The host-device headers outside gpu/ whose code the kernels compile: the bf16 rounding, the synthetic weight
// generator and the compressed-key window count. A change to them changes the GPU's numbers as surely as a kernel
// change does.
inline const std::vector<std::string> kGpuSharedSources = {"model/bf16.hpp", "model/synth.hpp", "model/windows.hpp"};

// The hash of this build's source tree's GPU numerics: its gpu/ folder (SALASIM_SOURCE_DIR/gpu) and
// kGpuSharedSources.
SourceHash gpu_source_hash();
// "gpu/, model/bf16.hpp, model/synth.hpp, model/windows.hpp": what gpu_source_hash covers, for messages.
std::string gpu_sources_label();

}  // namespace salasim
