// salasim op --backend gpu, run as a user runs it: every op of the op table on bf16-representable random inputs of the
// released shapes, gated against `--backend reference` with `--backend peer`'s allowance by the op's own tolerance
// rows (compare/tolerance.cpp), as `salasim diff REF GPU --peer PEER` gates them.
#include <unistd.h>

#include <fmt/format.h>

#include "compare/hdf5_io.hpp"
#include "compare/op_table.hpp"
#include "compare/report.hpp"
#include "reference/ops.hpp"
#include "tests/compare/op_files.hpp"
#include "tests/compare/run_cli.hpp"
#include "tests/gpu/gpu_support.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/random.hpp"

using namespace salasim;
using namespace salasim::test;
using ref::Mat;

namespace {

std::string file(const std::string& name) { return op_file("op_cli_gpu", name); }

// The op through the three backends; the GPU's outputs gated by their tolerance rows.
void gated(const std::string& op, const std::string& in) {
  const TapMap r = op_outputs(op, in), p = op_outputs(op, in, "peer"), g = op_outputs(op, in, "gpu");
  const CompareReport rep = compare_taps(r, &p, g);
  INFO(op << "\n" << format_report(rep));
  CHECK(rep.rows.size() == op::find_op(op).outputs.size());
  CHECK(rep.pass());
}

std::vector<hsize_t> heads(const std::vector<Mat>& m) {
  return {hsize_t(m.size()), hsize_t(m[0].rows()), hsize_t(m[0].cols())};
}

}  // namespace

TEST_CASE("op: --backend gpu of every op passes its tolerance rows against the reference", "[op_cli][gpu]") {
  const int hd = 128, G = 2, H = 16 * G;  // the shapes the kernels are built for
  {
    const Mat x = bf16_round(randn(7, 1000, 1, 1.7)), w = bf16_round(randn(1, 1000, 2));
    OpInputFile(file("rmsnorm.h5")).mat("x", x).mat("w", w, {1000}).num("eps", 1e-6);
    gated("rmsnorm", file("rmsnorm.h5"));
    const Mat z = bf16_round(randn(7, 1000, 3, 2.0));
    OpInputFile(file("gate.h5")).mat("x", x).mat("z", z);
    gated("gate", file("gate.h5"));
    OpInputFile(file("mlp.h5")).mat("g", z).mat("u", x);
    gated("mlp", file("mlp.h5"));
    OpInputFile(file("residual.h5")).mat("h", x).mat("branch", z).num("scale", 0.2474873734);
    gated("residual", file("residual.h5"));
    const Mat W = bf16_round(randn(300, 1000, 4, 0.03));
    OpInputFile(file("logits.h5")).mat("h", x).mat("w", W).num("divisor", 16);
    gated("logits", file("logits.h5"));
    OpInputFile(file("linear.h5")).mat("x", x).mat("w", W);
    gated("linear", file("linear.h5"));
    OpInputFile(file("embed.h5")).mat("E", W).ints("tokens", {3, 0, 299, 3, 17}, {5}).num("scale", 12);
    gated("embed", file("embed.h5"));
  }
  {
    OpInputFile(file("rope.h5"))
        .mat("x", bf16_round(randn(63, 3 * hd, 5)))
        .whole("head_dim", hd)
        .whole("pos0", 8190)
        .num("theta", 1e4);
    gated("rope", file("rope.h5"));
  }
  for (int64_t T : {int64_t(100), int64_t(10)}) {  // chunked and recurrent
    const int Hl = 3;
    const Mat q = bf16_round(randn(T, Hl * hd, 6, 0.3)), k = bf16_round(randn(T, Hl * hd, 7, 0.3)),
              v = bf16_round(randn(T, Hl * hd, 8));
    const std::vector<Mat> S0 = {randn(hd, hd, 9, 0.1), randn(hd, hd, 10, 0.1), randn(hd, hd, 11, 0.1)};
    OpInputFile(file("gla.h5"))
        .mat("q", q)
        .mat("k", k)
        .mat("v", v)
        .mat("gamma", Mat(Eigen::RowVector3d(-0.02, -0.2, -1.0)), {3})
        .mat("state", stack(S0), {3, hd, hd})
        .num("tau", 1.0 / std::sqrt(double(hd)));
    INFO("T = " << T);
    gated("gla", file("gla.h5"));
  }
  {
    const int64_t T = 80, pos0 = 2000, L = pos0 + T;
    std::vector<Mat> K, V, K1, K2;
    for (int g = 0; g < G; ++g) {
      K.push_back(bf16_round(randn(L, hd, 12 + uint64_t(g))));
      V.push_back(bf16_round(randn(L, hd, 14 + uint64_t(g))));
      K1.push_back(ref::compress_k(K.back(), L, 32, 16, ref::peer()));  // bf16 compressed keys, as the cache holds
      K2.push_back(ref::compress_k(K.back(), L, 128, 64, ref::peer()));
    }
    OpInputFile(file("compress_k.h5")).mat("k", stack(K), heads(K)).whole("kernel", 32).whole("stride", 16);
    gated("compress_k", file("compress_k.h5"));
    const Mat q = bf16_round(randn(T, H * hd, 16));
    const double tau = 1.0 / std::sqrt(double(hd));
    OpInputFile(file("select.h5"))
        .mat("q", q)
        .mat("k1", stack(K1), heads(K1))
        .mat("k2", stack(K2), heads(K2))
        .whole("pos0", pos0)
        .num("tau", tau)
        .whole("local_blocks", 4)
        .whole("k_sel", 16);
    gated("select_blocks", file("select.h5"));
    ref::SelectParams sp;
    sp.heads = H, sp.groups = G, sp.hd = hd, sp.tau = tau, sp.local_blocks = 4, sp.k_sel = 16;
    const ref::Selection sel = ref::select_blocks(q, pos0, K1, K2, sp, (L + 63) / 64, false, ref::f64());
    OpInputFile(file("sparse.h5"))
        .mat("q", q)
        .mat("k", stack(K), heads(K))
        .mat("v", stack(V), heads(V))
        .ints("blocks", std::vector<int64_t>(sel.blocks.begin(), sel.blocks.end()), {hsize_t(T), hsize_t(G), 16})
        .whole("pos0", pos0)
        .num("tau", tau);
    gated("sparse_attn", file("sparse.h5"));
    OpInputFile(file("dense.h5"))
        .mat("q", q)
        .mat("k", stack(K), heads(K))
        .mat("v", stack(V), heads(V))
        .whole("pos0", pos0)
        .num("tau", tau);
    gated("dense_attn", file("dense.h5"));
  }
}

TEST_CASE("op: --backend gpu refuses shapes its kernels are not built for, exit 2 naming the size", "[op_cli][gpu]") {
  OpInputFile(file("rope64.h5")).mat("x", randn(4, 128, 20)).whole("head_dim", 64).whole("pos0", 0).num("theta", 1e4);
  const CliResult r = run_salasim(
      fmt::format("op rope --in {} --out {} --backend gpu --force", file("rope64.h5"), file("rope64.out.h5")));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("head_dim 128; attribute 'head_dim' is 64") != std::string::npos);
}
