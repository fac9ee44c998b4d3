// Code located in the source tree at run time, so that the file:line printed by `salasim explain` and the
// architecture page never rots. Everything is found by a name the code itself defines or the op registry holds,
// never by text copied out of a statement: a function by its definition (or declaration), a kernel by
// `__global__`, a test by its [tag] or by the calls in its body, a step of the forward flow by the tap it records (a
// name goldens and dumps hold on disk) and the call of its op's reference function before it.
#pragma once
#include <string>
#include <vector>

namespace salasim::reports {

struct SourceLine {
  std::string file;   // relative to the source tree: "reference/gla.cpp"
  int line = 0;       // 1-based; 0 when not found
  std::string name;   // what was looked for: a function or a kernel
  std::string text;   // the statement, continuation lines joined with '\n' (trimmed); "" when not found
  std::string error;  // why it was not found ("no line of ... records tap ...", "no such file")
  bool found() const { return line > 0; }
  std::string where() const;  // "reference/gla.cpp:27", or "reference/gla.cpp:?" when not found
};

// The file's lines (read once per process), or empty when the source tree does not hold it.
const std::vector<std::string>& source_file(const std::string& rel);
// The comment the file starts with (every file says what it is for in its first lines), joined into one line.
std::string source_purpose(const std::string& rel);

// Definitions of `name(`, one per overload: a line that starts with a type (at any indent: free functions, kernels,
// Class::method, methods defined in their class) and names `name(` after it, whose statement reaches '{' before ';'.
std::vector<SourceLine> find_definitions(const std::string& rel, const std::string& name);
// The first declaration of `name(` at column 0 that ends in ';' (reference/ops.hpp's), or not found.
SourceLine find_declaration(const std::string& rel, const std::string& name);
// The statement of `rel` that computes a tensor the model records under one of `taps` (tap kinds, model/taps.hpp):
// from a line recording one of them (its kind, or the tail after its first parts, as a string literal: "proj/q"),
// the nearest line above it, within the same function, that calls one of `functions` (whole words). The first tap
// with such a call wins; the statement runs up to its end as statement text does (at most 4 lines).
SourceLine find_step(const std::string& rel, const std::vector<std::string>& taps,
                     const std::vector<std::string>& functions);
// Every __global__ function of the file; `name` holds the kernel's name.
std::vector<SourceLine> find_kernels(const std::string& rel);

struct TestRef {
  std::string file;  // "tests/reference/gla_test.cpp"
  int line = 0;
  std::string name;     // "gla: recurrent, chunked and closed form agree over decays and odd lengths"
  bool tagged = false;  // carries the [tag]; else it calls one of the functions in its body
};
// The TEST_CASEs under tests/ tagged [tag] or calling one of `functions` (`name(` as a whole word) in their body.
std::vector<TestRef> find_tests(const std::string& tag, const std::vector<std::string>& functions);

// The sections of reference/ops.hpp: "// ---- <op>.cpp: <summary> ----" and the functions declared under it (the
// registry's test reads them to check every op's reference_functions; nothing prints from them).
struct OpsSection {
  std::string op;       // "gla"
  std::string summary;  // "simple GLA with a constant per-head decay, inclusive of the current token (§3 step 6)"
  int line = 0;
  std::vector<std::string> functions;  // declared there, in order, once each
};
std::vector<OpsSection> reference_ops_sections();

}  // namespace salasim::reports
