// Scratch files for the fuzz targets whose parsers read files.
#include "fuzz/support.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace salasim::fuzz {

namespace {
struct Scratch {
  std::string dir;
  Scratch() {
    const char* tmp = std::getenv("TMPDIR");
    dir = (std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / ("salasim-fuzz-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};
}  // namespace

const std::string& scratch_dir() {
  static const Scratch s;
  return s.dir;
}

std::string write_scratch(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  return path;
}

}  // namespace salasim::fuzz
