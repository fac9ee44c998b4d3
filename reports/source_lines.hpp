// Code located in the source tree at run time, so that the file:line printed by `salasim explain` and the
// architecture page never rots: a definition is found by its name, a statement by a piece of its text that occurs
// once in its file, a kernel by `__global__`, a test by its [tag] or by the calls in its body.
#pragma once
#include <string>
#include <vector>

namespace salasim::reports {

struct SourceLine {
  std::string file;   // relative to the source tree: "reference/gla.cpp"
  int line = 0;       // 1-based; 0 when not found
  std::string name;   // what was looked for: a function, a kernel or the statement piece
  std::string text;   // the statement, continuation lines joined with '\n' (trimmed); "" when not found
  std::string error;  // why it was not found ("no line contains ...", "... occurs on lines 3 and 9", "no such file")
  bool found() const { return line > 0; }
  std::string where() const;  // "reference/gla.cpp:27", or "reference/gla.cpp:?" when not found
};

// The file's lines (read once per process), or empty when the source tree does not hold it.
const std::vector<std::string>& source_file(const std::string& rel);
// The comment the file starts with (every file says what it is for in its first lines), joined into one line.
std::string source_purpose(const std::string& rel);

// The one line of `rel` that contains `piece` (an error when none or several do), with the statement's
// continuation lines up to the one ending in ';', '{' or '}' (at most 4 lines).
SourceLine find_statement(const std::string& rel, const std::string& piece);
// Definitions of `name(` that start at column 0 (free functions, kernels, Class::method), one per overload.
std::vector<SourceLine> find_definitions(const std::string& rel, const std::string& name);
// Every __global__ function of the file; `name` holds the kernel's name.
std::vector<SourceLine> find_kernels(const std::string& rel);

struct TestRef {
  std::string file;  // "tests/reference/gla_test.cpp"
  int line = 0;
  std::string name;  // "gla: recurrent, chunked and closed form agree over decays and odd lengths"
  bool tagged = false;  // carries the [tag]; else it calls one of the functions in its body
};
// The TEST_CASEs under tests/ tagged [tag] or calling one of `functions` (`name(` as a whole word) in their body.
std::vector<TestRef> find_tests(const std::string& tag, const std::vector<std::string>& functions);

// The sections of reference/ops.hpp: "// ---- <op>.cpp: <summary> ----" and the functions declared under it.
struct OpsSection {
  std::string op;       // "gla"
  std::string summary;  // "simple GLA with a constant per-head decay, inclusive of the current token (§3 step 6)"
  int line = 0;
  std::vector<std::string> functions;  // declared there, in order, once each
};
std::vector<OpsSection> reference_ops_sections();

}  // namespace salasim::reports
