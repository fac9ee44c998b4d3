// A user's implementation as the backend of `salasim op` (scenarios/op_user.hpp): the C ABI header in the tree is the
// one salasim fills (text and layout), the example library and program pass with their math right and fail with a
// bug, the implementation's skips, failures and crashes are reported as such, and a bad spec stops the run (exit 2).
#include <fmt/format.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/error.hpp"
#include "salasim/op_abi.h"
#include "scenarios/op_abi.hpp"
#include "scenarios/op_junit.hpp"
#include "scenarios/op_user.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const abi::Field& field(const abi::Layout& l, const std::string& group, const std::string& name) {
  for (const abi::Field& f : l.fields)
    if (f.group == group && f.name == name) return f;
  FAIL("no field " << group << "." << name);
  throw;
}

SweepOptions options(const std::string& backend) {
  SweepOptions o;
  o.backend = backend;
  return o;
}

std::vector<OpCaseResult> sweep(const std::string& backend, const std::vector<std::string>& ops) {
  SweepOptions o = options(backend);
  o.ops = ops;
  return run_op_sweep(o, nullptr);
}

int count(const std::vector<OpCaseResult>& rs, CaseVerdict v) {
  int n = 0;
  for (const OpCaseResult& r : rs) n += r.verdict == v;
  return n;
}

const std::string kExamples = SALASIM_EXAMPLES_DIR;

}  // namespace

TEST_CASE("op_abi: include/salasim/op_abi.h is the header salasim generates from the registry") {
  const std::string path = std::string(SALASIM_SOURCE_DIR) + "/include/salasim/op_abi.h";
  INFO("regenerate it: build/salasim op --abi-header > include/salasim/op_abi.h");
  CHECK(read_text(path) == abi::header());
}

TEST_CASE("op_abi: the argument structs salasim fills have the compiled header's layout") {
  const abi::Layout gla = abi::layout(op::find_op("gla"));
  CHECK(gla.size == sizeof(salasim_gla_args));
  CHECK(field(gla, "in", "q").offset == offsetof(salasim_gla_args, in.q));
  CHECK(field(gla, "in", "state").offset == offsetof(salasim_gla_args, in.state));
  CHECK(field(gla, "attr", "tau").offset == offsetof(salasim_gla_args, attr.tau));
  CHECK(field(gla, "attr", "form").offset == offsetof(salasim_gla_args, attr.form));
  CHECK(field(gla, "size", "hd").offset == offsetof(salasim_gla_args, size.hd));
  CHECK(field(gla, "out", "state").offset == offsetof(salasim_gla_args, out.state));
  CHECK(field(gla, "out", "state").dtype == SALASIM_F32);
  CHECK(field(gla, "out", "out").dtype == SALASIM_BF16);
  const abi::Layout sel = abi::layout(op::find_op("select_blocks"));
  CHECK(sel.size == sizeof(salasim_select_blocks_args));
  CHECK(field(sel, "attr", "n_blocks").offset == offsetof(salasim_select_blocks_args, attr.n_blocks));
  CHECK(field(sel, "size", "NB").offset == offsetof(salasim_select_blocks_args, size.NB));
  CHECK(field(sel, "out", "blocks").offset == offsetof(salasim_select_blocks_args, out.blocks));
  CHECK(field(sel, "out", "blocks").dtype == SALASIM_I32);
  CHECK(field(sel, "out", "scores").offset == offsetof(salasim_select_blocks_args, out.scores));
  // every op: one struct per op, its size what the layout says
  const std::map<std::string, size_t> sizes = {{"embed", sizeof(salasim_embed_args)},
                                               {"linear", sizeof(salasim_linear_args)},
                                               {"rmsnorm", sizeof(salasim_rmsnorm_args)},
                                               {"rope", sizeof(salasim_rope_args)},
                                               {"gla", sizeof(salasim_gla_args)},
                                               {"compress_k", sizeof(salasim_compress_k_args)},
                                               {"select_blocks", sizeof(salasim_select_blocks_args)},
                                               {"sparse_attn", sizeof(salasim_sparse_attn_args)},
                                               {"dense_attn", sizeof(salasim_dense_attn_args)},
                                               {"gate", sizeof(salasim_gate_args)},
                                               {"mlp", sizeof(salasim_mlp_args)},
                                               {"residual", sizeof(salasim_residual_args)},
                                               {"logits", sizeof(salasim_logits_args)}};
  CHECK(sizes.size() == op::registry().size());
  for (const op::OpSpec& s : op::registry()) {
    INFO(s.name);
    REQUIRE(sizes.count(s.name));
    CHECK(abi::layout(s).size == sizes.at(s.name));
  }
}

TEST_CASE("op_user: the example library passes gla and select_blocks on every case, and fails with its bugs") {
  const std::vector<OpCaseResult> good = sweep("lib:" + kExamples + "/libops.so", {"gla", "select_blocks"});
  for (const OpCaseResult& r : good) {
    INFO(r.op << " " << r.sizes << ": " << r.why);
    CHECK(r.verdict == CaseVerdict::Ok);
    CHECK(r.skipped_outputs.empty());
  }
  const std::vector<OpCaseResult> bad = sweep("lib:" + kExamples + "/libops_with_bugs.so", {"gla", "select_blocks"});
  for (const OpCaseResult& r : bad) {
    INFO(r.op << " " << r.sizes);
    CHECK(r.verdict == CaseVerdict::Fail);  // every shape: the inputs are bf16-exact, the allowance is the kernel's own
  }
  // an op the library does not define is a skip that says so
  const std::vector<OpCaseResult> other = sweep("lib:" + kExamples + "/libops.so", {"rmsnorm"});
  REQUIRE(!other.empty());
  CHECK(other[0].verdict == CaseVerdict::Skip);
  CHECK(other[0].why.find("defines no salasim_op_rmsnorm") != std::string::npos);
  CHECK_THROWS_AS(require_some_case_ran(other, options("lib:" + kExamples + "/libops.so")), Error);
}

TEST_CASE("op_user: the example program passes, its left-out scores are skipped, and fails with its bugs") {
  const std::vector<OpCaseResult> good = sweep("exec:" + kExamples + "/op_program", {"gla", "select_blocks"});
  CHECK(count(good, CaseVerdict::Ok) == int(good.size()));
  for (const OpCaseResult& r : good)
    if (r.op == "select_blocks") CHECK(r.skipped_outputs == std::vector<std::string>{"/op/sparse/select/scores"});
  const std::vector<OpCaseResult> bad = sweep("exec:" + kExamples + "/op_program --decay-off-by-one", {"gla"});
  CHECK(count(bad, CaseVerdict::Fail) == int(bad.size()));
  const std::vector<OpCaseResult> other = sweep("exec:" + kExamples + "/op_program", {"mlp"});
  CHECK(other[0].verdict == CaseVerdict::Skip);
  CHECK(other[0].why.find("op_program implements gla and select_blocks, not mlp") != std::string::npos);
}

TEST_CASE("op_user: a program that crashes, exits non-zero or writes a wrong output fails the case, named") {
  const std::string dir = test::scratch_dir("op_user_programs");
  auto script = [&](const std::string& name, const std::string& body) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return "exec:" + path;
  };
  const OpCaseResult crash = sweep(script("crash.sh", "kill -SEGV $$"), {"gate"})[0];
  CHECK(crash.verdict == CaseVerdict::Fail);
  CHECK(crash.why.find("killed by signal 11 (Segmentation fault)") != std::string::npos);
  const OpCaseResult exits = sweep(script("exits.sh", "echo 'out of memory' >&2; exit 3"), {"gate"})[0];
  CHECK(exits.verdict == CaseVerdict::Fail);
  CHECK(exits.why.find("exited 3") != std::string::npos);
  CHECK(exits.why.find("out of memory") != std::string::npos);
  const OpCaseResult nothing = sweep(script("nothing.sh", "exit 0"), {"gate"})[0];
  CHECK(nothing.why.find("exited 0 without writing --out") != std::string::npos);
  const OpCaseResult skip = sweep(script("skip.sh", "echo 'only T < 8 here'; exit 77"), {"gate"})[0];
  CHECK(skip.verdict == CaseVerdict::Skip);
  CHECK(skip.why.find("only T < 8 here") != std::string::npos);
  // the salasim binary is a program of the protocol: its reference passes
  const std::vector<OpCaseResult> itself = sweep(fmt::format("exec:{} op gate --force", SALASIM_BIN), {"gate"});
  CHECK(count(itself, CaseVerdict::Ok) == int(itself.size()));
  // a command the shell cannot find stops the run
  CHECK(test::error_of([&] { sweep("exec:/nonexistent/program", {"gate"}); }).find("could not run the program") !=
        std::string::npos);
}

TEST_CASE("op_user: a bad spec or library is refused before any case, exit 2 with what is wrong") {
  using test::error_of;
  CHECK(error_of([] { make_backend(options("lib:/nonexistent.so")); }).find("expected lib:PATH") != std::string::npos);
  CHECK(error_of([] { make_backend(options("exec: ")); }).find("expected exec:'PROGRAM ARGS'") != std::string::npos);
  CHECK(error_of([] { make_backend(options("py:mod:not-a-name")); }).find("expected py:MODULE:FUNCTION") !=
        std::string::npos);
  const SweepOptions o = options("py:no_such_module_anywhere");
  CHECK(error_of([&] { make_backend(o); }).find("needs a Python that imports h5py, numpy, no_such_module_anywhere") !=
        std::string::npos);
  // a file that is no shared library
  CHECK(error_of([] {
          make_backend(options("lib:" + std::string(SALASIM_SOURCE_DIR) + "/README.md"));
        }).find("cannot load the library") != std::string::npos);
}

TEST_CASE("op_user: the JUnit XML holds a suite per op, a case per shape, failures with the verdict table") {
  const std::vector<OpCaseResult> rs = sweep("lib:" + kExamples + "/libops_with_bugs.so", {"gla", "rmsnorm"});
  const std::string x = junit_cases(rs, "lib:x.so", 0);
  CHECK(x.find("<testsuite name=\"gla\" tests=\"4\" failures=\"4\" errors=\"0\" skipped=\"0\"") != std::string::npos);
  CHECK(x.find("<testsuite name=\"rmsnorm\"") != std::string::npos);
  CHECK(x.find("<skipped message=\"lib:") != std::string::npos);
  CHECK(x.find("<testcase classname=\"salasim.op.gla\" name=\"T=100,H=2,hd=128,state=0\"") != std::string::npos);
  CHECK(x.find("<failure message=\"/op/lightning/gla/out: ") != std::string::npos);
  CHECK(x.find("&gt; allowed") != std::string::npos);  // the verdict table, escaped
  CHECK(x.find("<property name=\"backend\" value=\"lib:x.so\"/>") != std::string::npos);
}

TEST_CASE("op_user: docs/check-your-implementation.md shows every op's Python signature and the header's gla struct") {
  const std::string doc = test::read_file(test::source_path("docs/check-your-implementation.md"));
  std::string all;
  for (const op::OpSpec& s : op::registry()) all += py_signature(s) + "\n";
  INFO("the signatures, as the page should show them:\n" << all);
  CHECK(doc.find(all) != std::string::npos);
  // the C block the page shows is the generated header's text
  const std::string header = abi::header();
  const size_t from = header.find("/* gla: "), to = header.find("\n\n", from);
  REQUIRE(to != std::string::npos);
  CHECK(doc.find(header.substr(from, to - from)) != std::string::npos);
}
