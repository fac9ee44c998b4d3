// The golden hash over the GPU path's inputs (see source_hash.hpp).
#include "compare/source_hash.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "compare/source_tokens.hpp"
#include "model/error.hpp"

namespace fs = std::filesystem;

namespace salasim {

namespace {

constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

uint64_t fnv(uint64_t h, const std::string& bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

// name, NUL, size, NUL, bytes: a renamed file or moved boundary changes the hash.
uint64_t framed(uint64_t h, const std::string& name, const std::string& bytes) {
  h = fnv(h, name);
  h = fnv(h, fmt::format("{}{}{}", '\0', bytes.size(), '\0'));
  return fnv(h, bytes);
}

}  // namespace

SourceHash hash_inputs(const std::string& root, const GpuInputs& in) {
  SourceHash out;
  uint64_t h = kFnvBasis;
  auto add = [&](const std::string& name, const std::string& tokens) {
    h = framed(h, name, tokens);
    out.files.push_back(fmt::format("{}={:016x}", name, framed(kFnvBasis, name, tokens)));
  };
  for (const std::string& f : in.files) {
    const fs::path p = fs::path(root) / f;
    std::ifstream file(p, std::ios::binary);
    if (!fs::is_regular_file(p) || !file)
      fail("{}: cannot read it: {} lists it as an input of the GPU path (regenerate that list with `salasim golden "
           "inputs --write` if the file was moved)",
           p.string(), kGpuInputsFile);
    std::ostringstream ss;
    ss << file.rdbuf();
    add(f, source_tokens(ss.str()));
  }
  add("cuda-flags", fmt::format("{}", fmt::join(in.cuda_flags, " ")));
  add("cxx-flags", fmt::format("{}", fmt::join(in.cxx_flags, " ")));
  out.hex = fmt::format("tok64:{:016x}", h);
  return out;
}

SourceHash gpu_source_hash() {
  const std::string root = SALASIM_SOURCE_DIR;
  return hash_inputs(root, read_gpu_inputs(root + "/" + kGpuInputsFile));
}

std::string gpu_sources_label() {
  const std::string root = SALASIM_SOURCE_DIR;
  try {
    const GpuInputs in = read_gpu_inputs(root + "/" + kGpuInputsFile);
    return fmt::format("the {} files and the flags of {}", in.files.size(), kGpuInputsFile);
  } catch (const Error&) {
    return fmt::format("the files and flags of {}", kGpuInputsFile);
  }
}

std::vector<std::string> changed_inputs(const std::vector<std::string>& recorded, const std::vector<std::string>& now) {
  auto digests = [](const std::vector<std::string>& v) {
    std::map<std::string, std::string> m;
    for (const std::string& e : v) {
      const size_t eq = e.rfind('=');
      m[e.substr(0, eq)] = eq == std::string::npos ? "" : e.substr(eq + 1);
    }
    return m;
  };
  const auto a = digests(recorded), b = digests(now);
  std::vector<std::string> out;
  for (const auto& [name, d] : a) {
    const auto it = b.find(name);
    if (it == b.end()) out.push_back(name + " (gone)");
    else if (it->second != d) out.push_back(name);
  }
  for (const auto& [name, d] : b)
    if (!a.count(name)) out.push_back(name + " (new)");
  return out;
}

}  // namespace salasim
