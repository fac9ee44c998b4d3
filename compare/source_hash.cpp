// FNV-1a 64 over a folder's source files, framed by name and length (see source_hash.hpp).
#include "compare/source_hash.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "model/error.hpp"

namespace fs = std::filesystem;

namespace salasim {

namespace {

constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

void fnv(uint64_t& h, const std::string& bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= kFnvPrime;
  }
}

bool hashed_name(const fs::path& p) {
  const std::string ext = p.extension().string();
  return p.filename() == "CMakeLists.txt" || ext == ".cu" || ext == ".cuh" || ext == ".hpp" || ext == ".h" ||
         ext == ".cpp";
}

}  // namespace

SourceHash hash_sources(const std::string& dir, const std::string& label, const std::string& shared_root,
                        const std::vector<std::string>& shared) {
  if (!fs::is_directory(dir)) fail("{}: no such folder (the gpu/ sources to hash)", dir);
  std::vector<std::string> names;  // relative to dir, '/'-separated: the same on every checkout
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && hashed_name(e.path()))
      names.push_back(e.path().lexically_relative(dir).generic_string());
  std::sort(names.begin(), names.end());
  SourceHash out;
  uint64_t h = kFnvBasis;
  auto add = [&](const fs::path& p, const std::string& framed) {
    std::ifstream in(p, std::ios::binary);
    if (!in) fail("{}: cannot read it (hashing the GPU path's sources)", p.string());
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fnv(h, framed);
    fnv(h, fmt::format("{}{}{}", '\0', bytes.size(), '\0'));
    fnv(h, bytes);
    out.files.push_back(framed);
  };
  for (const std::string& n : names) add(fs::path(dir) / n, fmt::format("{}/{}", label, n));
  for (const std::string& n : shared) {
    const fs::path p = fs::path(shared_root) / n;
    if (!fs::is_regular_file(p)) fail("{}: no such file (a host-device source the GPU path compiles)", p.string());
    add(p, n);
  }
  out.hex = fmt::format("fnv1a64:{:016x}", h);
  return out;
}

SourceHash gpu_source_hash() {
  const std::string root = SALASIM_SOURCE_DIR;
  return hash_sources(root + "/gpu", "gpu", root, kGpuSharedSources);
}

std::string gpu_sources_label() { return fmt::format("gpu/, {}", fmt::join(kGpuSharedSources, ", ")); }

}  // namespace salasim
