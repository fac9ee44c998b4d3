// Shared by the fuzz targets: scratch files for parsers that read files, and the rule for exceptions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/error.hpp"

namespace salasim::fuzz {

// A scratch folder of this process under $TMPDIR (or /tmp), created on first use, removed at exit.
const std::string& scratch_dir();
// Writes `size` bytes to scratch_dir()/name and returns its path.
std::string write_scratch(const std::string& name, const uint8_t* data, size_t size);

// The fuzzer's bytes, read one at a time by the targets that build an input from them (0 once they run out).
struct Bytes {
  const uint8_t* p;
  size_t n;
  uint8_t next() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  bool more() const { return n > 0; }
};

// Runs f(). salasim::Error (bad input, with a message naming what was wrong) is the expected outcome for a
// malformed input; SALASIM_FUZZ_VERBOSE=1 prints it, to see what an input trips. InternalError and DeviceError
// are bugs, and any other exception escaped the input checks: both abort, so libFuzzer keeps the input as a crash.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const InternalError& e) {
    std::fprintf(stderr, "fuzz: internal error: %s\n", e.what());
    std::abort();
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "fuzz: device error: %s\n", e.what());
    std::abort();
  } catch (const Error& e) {
    if (std::getenv("SALASIM_FUZZ_VERBOSE")) std::fprintf(stderr, "fuzz: refused: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: an exception escaped the input checks: %s\n", e.what());
    std::abort();
  }
}

}  // namespace salasim::fuzz
