// Every case of the op table (bench/op_cases.hpp) at a small context against the float64 reference and its bf16
// peer, gated by the op's tolerance row: the cases the benchmark suite times are checked by the same code.
#include <string>

#include "bench/op_cases.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

TEST_CASE("op cases: every op of the table matches the reference at a small context", "[op_cases][gpu]") {
  for (const std::string& op : bench::op_names()) {
    // gla: an odd length across many chunks and segments; sparse ops: past dense_len and 6144, so blocks are chosen
    const bool sparse = op.rfind("sparse_attn", 0) == 0 || op.rfind("select_blocks", 0) == 0 || op == "compress_k";
    const int64_t context = bench::base_op(op) == "gla" ? 4161 : sparse ? 9000 : 300;
    bench::OpCase c = bench::make_case(op, context, 11);
    const bench::CheckResult r = c.check();
    INFO(c.id() << "\n" << r.report);
    CHECK(r.pass);
  }
}
