// What the GPU path compiles, as the build reports it: the project files its translation units include
// (transitively, from the compiler's dependency files) and their code-generation flags (from compile_commands.json).
// The list is kept in gpu/golden_inputs.txt so that a build without CUDA hashes the same inputs as the build that
// recorded the goldens (source_hash.hpp); `salasim golden inputs` compares that file with a CUDA build and rewrites
// it, and a ctest of CUDA builds fails while the two differ.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace salasim {

struct GpuInputs {
  std::vector<std::string> cuda_flags;  // nvcc's flags for the .cu files, normalized (normalize_flags)
  std::vector<std::string> cxx_flags;   // the host compiler's flags for gpu/'s .cpp files, normalized
  std::vector<std::string> files;       // project files, relative to the source root, '/'-separated, sorted
};

// The manifest's path in a source tree.
inline constexpr const char* kGpuInputsFile = "gpu/golden_inputs.txt";

// The file format: '#' comment lines, then "cuda-flags <flag> ...", "cxx-flags <flag> ...", and one "file <path>"
// per file. A line of another kind, a repeated flags line, a duplicate or unsorted path, a path that is absolute or
// leaves the tree is a salasim::Error naming the file and the line.
GpuInputs read_gpu_inputs(const std::string& path);
std::string format_gpu_inputs(const GpuInputs& in);  // the file's text, its header comment included

// The inputs of the GPU library's translation units in a configured and built tree: every compile_commands.json
// entry whose object lies under `target_dir` (CMakeFiles/salasim_gpu.dir/), its depfile (<object>.d, relative to
// the entry's directory) read for the files under source_root that are not under build_dir. A Ninja build keeps no
// depfiles (Ninja folds them into its log): there the dependencies are what `ninja -t deps` reports. Every
// translation unit of one language must have the same normalized flags. A build whose GPU library was not compiled
// (no entries, or an entry without its depfile or Ninja record) is a salasim::Error saying so.
GpuInputs gpu_inputs_of_build(const std::string& build_dir, const std::string& source_root,
                              const std::string& target_dir = "CMakeFiles/salasim_gpu.dir/");

// The flags of one compile command with what does not change the generated code removed: the compiler itself, the
// source and object, include paths and response files (-I, -isystem, --options-file), dependency-file options
// (-MD, -MT, -MF), path-valued definitions of the tree (-DSALASIM_SOURCE_DIR=...), warnings (-W..., --Werror...,
// their -Xcompiler forms) and the host CPU's tuning (-march=, -mtune=: gpu/'s .cpp files are ISO C++ without
// fast-math, so the tuning cannot change their results). What stays (optimisation, definitions, architectures,
// language standard, fast-math and the like) is kept in order.
std::vector<std::string> normalize_flags(const std::vector<std::string>& argv, const std::string& source_file);

// A shell-quoted command line (compile_commands.json's "command") split into its arguments.
std::vector<std::string> split_command(const std::string& command);

// `ninja -t deps` output parsed: per object (as Ninja names it, relative to the build directory) the dependencies it
// recorded, in order. Records Ninja marks STALE (the object changed since) are left out.
std::map<std::string, std::vector<std::string>> ninja_deps(const std::string& text);

// The dependencies a Make-style depfile lists ("obj: a.h b.h \\\n c.h"), in order, escaped spaces undone.
std::vector<std::string> depfile_paths(const std::string& text);

// One line per difference between the manifest and the build ("the build compiles gpu/x.cuh, which the manifest
// does not list"), empty when they agree.
std::vector<std::string> diff_gpu_inputs(const GpuInputs& manifest, const GpuInputs& build);

}  // namespace salasim
