// Fuzz target: RULER data lines (scenarios/ruler/sample_io.hpp read_samples), the JSON lines `salasim ruler run`
// reads before it tokenizes or allocates anything. The first byte picks the read options (bit 0: --task given,
// bit 1: --length given, bit 2: a run's max_length of 4096); the rest is the file. Whatever is accepted must
// hold what the reader promises: lengths within their bounds, non-empty answers, depths in [0, 100].
#include <cmath>
#include <cstdlib>
#include <string>

#include "fuzz/support.hpp"
#include "scenarios/ruler/sample_io.hpp"

using namespace salasim;

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz: read_samples accepted a line with %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  ruler::ReadOptions o;
  if (data[0] & 1) o.task = "niah_single_1";
  if (data[0] & 2) o.length = 4096;
  if (data[0] & 4) o.max_length = 4096;
  const std::string path = fuzz::write_scratch("data.jsonl", data + 1, size - 1);
  fuzz::expect_clean([&] {
    for (const ruler::DataLine& d : ruler::read_samples(path, o)) {
      const ruler::Sample& s = d.sample;
      if (s.length < 1 || s.length > s.max_seq_length || s.max_seq_length > o.max_length)
        broken("a length out of range");
      if (s.outputs.empty()) broken("no outputs");
      for (const std::string& v : s.outputs)
        if (v.empty()) broken("an empty output");
      for (double x : s.depths)
        if (!(x >= 0 && x <= 100)) broken("a depth outside [0, 100]");
      if (d.line < 1) broken("a line number below 1");
    }
  });
  return 0;
}
