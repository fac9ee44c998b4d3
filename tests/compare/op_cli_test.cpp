// salasim op, run as a user runs it: on random inputs each op's output is the library call it wraps, bit for bit
// (reference and peer); bad input files exit 2 naming the file, the dataset or attribute, and the expectation.
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "compare/hdf5_io.hpp"
#include "compare/op_table.hpp"
#include "model/bf16.hpp"
#include "reference/ops.hpp"
#include "tests/compare/op_files.hpp"
#include "tests/compare/run_cli.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"
#include "tests/support/random.hpp"

using namespace salasim;
using namespace salasim::test;
using ref::Mat;

namespace {

std::string file(const std::string& name) { return op_file("op_cli", name); }

Tap tap(const Mat& m, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {m.rows(), m.cols()};
  return Tap{shape, {m.data(), m.data() + m.size()}};
}
Tap stacked(const std::vector<Mat>& ms, std::vector<int64_t> shape) { return tap(stack(ms), std::move(shape)); }

// Bit for bit: the same shape, kind and every element identical (infinities included).
void same(const TapMap& got, const std::string& name, const Tap& want) {
  INFO(name);
  REQUIRE(got.count(name) == 1);
  const Tap& g = got.at(name);
  CHECK(g.shape == want.shape);
  CHECK(g.integer == want.integer);
  REQUIRE(g.data.size() == want.data.size());
  size_t differ = 0;
  for (size_t i = 0; i < g.data.size(); ++i) differ += g.data[i] != want.data[i];
  CHECK(differ == 0);
}

Mat bf(const Mat& m) {
  return m.unaryExpr([](double x) { return round_bf16(x); });
}

// The sparse layer's inputs: queries at pos0.., a key/value cache, compressed keys (kernel 32/16 and 128/64).
struct SparseCase {
  int H = 4, G = 2, hd = 16;
  int64_t T = 70, pos0 = 600;
  Mat q;
  std::vector<Mat> K, V, K1, K2;
  ref::SelectParams sp;
  explicit SparseCase(uint64_t seed) {
    q = randn(T, H * hd, seed);
    for (int g = 0; g < G; ++g) {
      K.push_back(randn(pos0 + T, hd, seed + 10 + g));
      V.push_back(randn(pos0 + T, hd, seed + 20 + g));
      K1.push_back(ref::compress_k(K.back(), pos0 + T, 32, 16, ref::f64()));
      K2.push_back(ref::compress_k(K.back(), pos0 + T, 128, 64, ref::f64()));
    }
    sp.heads = H, sp.groups = G, sp.hd = hd, sp.tau = 0.25, sp.init_blocks = 1, sp.local_blocks = 2, sp.k_sel = 5;
  }
  void select_attrs(OpInputFile& f) const {
    f.whole("pos0", pos0).num("tau", sp.tau).whole("local_blocks", sp.local_blocks).whole("k_sel", sp.k_sel);
  }
  std::vector<hsize_t> heads(const std::vector<Mat>& m) const {
    return {hsize_t(m.size()), hsize_t(m[0].rows()), hsize_t(hd)};
  }
};

}  // namespace

TEST_CASE("op: rmsnorm, gate, mlp, residual, logits, linear and embed equal the library calls bit for bit",
          "[op_cli]") {
  const int64_t T = 9;
  const Mat x = randn(T, 40, 1), w = randn(1, 40, 2), z = randn(T, 40, 3, 2.0), W = randn(23, 40, 4, 0.2);
  OpInputFile(file("rmsnorm.h5")).mat("x", x).mat("w", w, {40}, true).num("eps", 1e-6);
  const Mat w32 = w.unaryExpr([](double v) { return round_fp32(v); });  // w went through a float32 dataset
  same(op_outputs("rmsnorm", file("rmsnorm.h5")), "/op/input_norm/out",
       tap(ref::rmsnorm(x, w32.row(0).transpose(), 1e-6, ref::f64())));
  OpInputFile(file("gate.h5")).mat("x", x).mat("z", z);
  same(op_outputs("gate", file("gate.h5")), "/op/lightning/gate/out", tap(ref::gate(x, z, ref::f64())));
  OpInputFile(file("mlp.h5")).mat("g", z).mat("u", x);
  same(op_outputs("mlp", file("mlp.h5")), "/op/mlp/act", tap(ref::mlp_act(z, x, ref::f64())));
  OpInputFile(file("residual.h5")).mat("h", x).mat("branch", z).num("scale", 0.2474873734);
  Mat h = x;
  ref::residual(h, z, 0.2474873734, ref::f64());
  same(op_outputs("residual", file("residual.h5")), "/op/residual/h", tap(h));
  OpInputFile(file("logits.h5")).mat("h", x).mat("w", W).num("divisor", 16);
  same(op_outputs("logits", file("logits.h5")), "/op/final/logits", tap(ref::logits(x, W, 16, ref::f64())));
  OpInputFile(file("linear.h5")).mat("x", x).mat("w", W);
  same(op_outputs("linear", file("linear.h5")), "/op/mlp/out", tap(ref::linear(x, W, ref::f64())));
  const std::vector<int32_t> ids = {3, 0, 22, 3, 17};  // rows of W as the embedding
  OpInputFile(file("embed.h5")).mat("E", W).ints("tokens", {3, 0, 22, 3, 17}, {5}).num("scale", 12);
  same(op_outputs("embed", file("embed.h5")), "/op/embed/out", tap(ref::embed(W, ids, 12, ref::f64())));
}

TEST_CASE("op: rope and gla (chunked, recurrent, with and without a state) equal the library calls bit for bit",
          "[op_cli]") {
  const int H = 3, hd = 8;
  const Mat x = randn(11, H * hd, 5);
  for (const std::string angles : {"fp32", "exact"}) {
    OpInputFile(file("rope.h5"))
        .mat("x", x)
        .whole("head_dim", hd)
        .whole("pos0", 100000)
        .num("theta", 1e4)
        .text("angles", angles);
    Mat want = x;
    ref::rope(want, 100000,
              ref::rope_table(hd, 1e4, angles == "exact" ? ref::RopeAngles::Exact : ref::RopeAngles::Fp32), ref::f64());
    INFO(angles);
    same(op_outputs("rope", file("rope.h5")), "/op/lightning/qk_rope/q", tap(want));
  }

  const int64_t T = 70;  // >= 64: the chunked form, as the model dispatches
  const Mat q = randn(T, H * hd, 6), k = randn(T, H * hd, 7), v = randn(T, H * hd, 8);
  const Mat gamma = Mat(Eigen::RowVector3d(-0.05, -0.3, -1.2));
  std::vector<Mat> S0 = {randn(hd, hd, 9), randn(hd, hd, 10), randn(hd, hd, 11)};
  const std::vector<double> g(gamma.data(), gamma.data() + 3);
  OpInputFile(file("gla.h5"))
      .mat("q", q)
      .mat("k", k)
      .mat("v", v)
      .mat("gamma", gamma, {3})
      .mat("state", stack(S0), {3, hd, hd})
      .num("tau", 0.35);
  std::vector<Mat> S = S0;
  const Mat o = ref::gla_chunked(q, k, v, g, 0.35, S, ref::f64());
  const TapMap got = op_outputs("gla", file("gla.h5"));
  same(got, "/op/lightning/gla/out", tap(o));
  same(got, "/op/lightning/gla/state", stacked(S, {3, hd, hd}));

  // 5 rows, no state (zeros), the recurrent form asked for by name
  OpInputFile(file("gla_rec.h5"))
      .mat("q", q.topRows(5))
      .mat("k", k.topRows(5))
      .mat("v", v.topRows(5))
      .mat("gamma", gamma, {3})
      .num("tau", 0.35)
      .text("form", "recurrent");
  std::vector<Mat> Z(3, Mat::Zero(hd, hd));
  const Mat o5 = ref::gla_recurrent(q.topRows(5), k.topRows(5), v.topRows(5), g, 0.35, Z, ref::f64());
  const TapMap got5 = op_outputs("gla", file("gla_rec.h5"));
  same(got5, "/op/lightning/gla/out", tap(o5));
  same(got5, "/op/lightning/gla/state", stacked(Z, {3, hd, hd}));
}

TEST_CASE("op: compress_k, select_blocks, sparse_attn and dense_attn equal the library calls bit for bit", "[op_cli]") {
  const SparseCase c(21);
  const int64_t L = c.pos0 + c.T;
  OpInputFile(file("compress_k.h5")).mat("k", stack(c.K), c.heads(c.K)).whole("kernel", 32).whole("stride", 16);
  const TapMap ck = op_outputs("compress_k", file("compress_k.h5"));
  same(ck, "/op/sparse/compress_k/k1", stacked(c.K1, {c.G, int64_t(c.K1[0].rows()), c.hd}));
  same(ck, "/op/sparse/compress_k/k2", stacked(c.K2, {c.G, int64_t(c.K2[0].rows()), c.hd}));

  {
    OpInputFile f(file("select.h5"));
    f.mat("q", c.q).mat("k1", stack(c.K1), c.heads(c.K1)).mat("k2", stack(c.K2), c.heads(c.K2));
    c.select_attrs(f);
  }  // closed before salasim reads it
  const int64_t NB = (L + 63) / 64;
  const ref::Selection sel = ref::select_blocks(c.q, c.pos0, c.K1, c.K2, c.sp, NB, true, ref::f64());
  const TapMap got = op_outputs("select_blocks", file("select.h5"));
  same(got, "/op/sparse/select/blocks",
       Tap{{c.T, c.G, c.sp.k_sel}, std::vector<double>(sel.blocks.begin(), sel.blocks.end()), true});
  same(got, "/op/sparse/select/scores", Tap{{c.T, c.G, NB}, sel.scores});

  std::vector<int64_t> blocks(sel.blocks.begin(), sel.blocks.end());
  OpInputFile(file("sparse.h5"))
      .mat("q", c.q)
      .mat("k", stack(c.K), c.heads(c.K))
      .mat("v", stack(c.V), c.heads(c.V))
      .ints("blocks", blocks, {hsize_t(c.T), hsize_t(c.G), hsize_t(c.sp.k_sel)})
      .whole("pos0", c.pos0)
      .num("tau", 0.25);
  same(op_outputs("sparse_attn", file("sparse.h5")), "/op/sparse/attn/out",
       tap(ref::sparse_attn(c.q, c.pos0, c.K, c.V, sel, 64, 0.25, ref::f64())));
  OpInputFile(file("dense.h5"))
      .mat("q", c.q)
      .mat("k", stack(c.K), c.heads(c.K))
      .mat("v", stack(c.V), c.heads(c.V))
      .whole("pos0", c.pos0)
      .num("tau", 0.25);
  same(op_outputs("dense_attn", file("dense.h5")), "/op/sparse/attn/out",
       tap(ref::dense_attn(c.q, c.pos0, c.K, c.V, c.hd, 0.25, ref::f64())));
}

TEST_CASE("op: --backend peer is the bf16 peer on the inputs rounded as the CUDA path stores them", "[op_cli]") {
  const int H = 2, hd = 8;
  const int64_t T = 66;
  const Mat q = randn(T, H * hd, 31), k = randn(T, H * hd, 32), v = randn(T, H * hd, 33);
  const Mat gamma = Mat(Eigen::RowVector2d(-0.1, -0.7));
  const std::vector<Mat> S0 = {randn(hd, hd, 34), randn(hd, hd, 35)};
  OpInputFile(file("gla_peer.h5"))
      .mat("q", q)
      .mat("k", k)
      .mat("v", v)
      .mat("gamma", gamma, {2})
      .mat("state", stack(S0), {2, hd, hd})
      .num("tau", 0.35);
  auto f32 = [](const Mat& m) { return Mat(m.unaryExpr([](double x) { return round_fp32(x); })); };
  std::vector<Mat> S = {f32(S0[0]), f32(S0[1])};
  const std::vector<double> g = {round_fp32(-0.1), round_fp32(-0.7)};
  const Mat o = ref::gla_chunked(bf(q), bf(k), bf(v), g, 0.35, S, ref::peer());
  const TapMap got = op_outputs("gla", file("gla_peer.h5"), "peer");
  same(got, "/op/lightning/gla/out", tap(o));
  same(got, "/op/lightning/gla/state", stacked(S, {2, hd, hd}));

  const SparseCase c(41);
  {
    OpInputFile f(file("select_peer.h5"));
    f.mat("q", c.q).mat("k1", stack(c.K1), c.heads(c.K1)).mat("k2", stack(c.K2), c.heads(c.K2));
    c.select_attrs(f);
  }
  std::vector<Mat> K1, K2;
  for (const Mat& m : c.K1) K1.push_back(bf(m));
  for (const Mat& m : c.K2) K2.push_back(bf(m));
  const int64_t NB = (c.pos0 + c.T + 63) / 64;
  const ref::Selection sel = ref::select_blocks(bf(c.q), c.pos0, K1, K2, c.sp, NB, true, ref::peer());
  const TapMap gs = op_outputs("select_blocks", file("select_peer.h5"), "peer");
  same(gs, "/op/sparse/select/blocks",
       Tap{{c.T, c.G, c.sp.k_sel}, std::vector<double>(sel.blocks.begin(), sel.blocks.end()), true});
  same(gs, "/op/sparse/select/scores", Tap{{c.T, c.G, NB}, sel.scores});
}

TEST_CASE("op: bad inputs exit 2 naming the file, the dataset or attribute, and the expectation", "[op_cli]") {
  const Mat x = randn(4, 6, 51);
  auto refused = [](const std::string& args, const std::vector<std::string>& says) {
    const CliResult r = run_salasim(args);
    INFO("salasim " << args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    for (const std::string& s : says) CHECK(r.output.find(s) != std::string::npos);
  };
  const std::string out = file("bad.out.h5");
  auto op = [&](const std::string& name, const std::string& in) {
    return fmt::format("op {} --in {} --out {} --force", name, in, out);
  };
  std::filesystem::remove(out);

  OpInputFile(file("wrong_name.h5")).mat("x", x).mat("weight", x.row(0), {6}).num("eps", 1e-6);
  refused(op("rmsnorm", file("wrong_name.h5")), {"wrong_name.h5: dataset 'w' is missing", "w [n] (float"});
  OpInputFile(file("extra_name.h5")).mat("x", x).mat("w", x.row(0), {6}).num("eps", 1e-6).num("epsilon", 1e-5);
  refused(op("rmsnorm", file("extra_name.h5")),
          {"extra_name.h5: attribute 'epsilon' at the root: not an input of rmsnorm", "attributes: eps"});
  OpInputFile(file("wrong_shape.h5")).mat("x", x).mat("w", randn(1, 7, 52), {7}).num("eps", 1e-6);
  refused(op("rmsnorm", file("wrong_shape.h5")),
          {"wrong_shape.h5: dataset 'w': expected shape [n] = [6], found [7]", "n = 6 (from dataset 'x' dim 1)"});
  OpInputFile(file("wrong_rank.h5")).mat("x", x).mat("w", x.row(0), {1, 6}).num("eps", 1e-6);
  refused(op("rmsnorm", file("wrong_rank.h5")), {"dataset 'w': expected rank 1 [n], found rank 2 [1, 6]"});
  OpInputFile(file("wrong_dtype.h5"))
      .ints("x", std::vector<int64_t>(24, 1), {4, 6})
      .mat("w", x.row(0), {6})
      .num("eps", 1e-6);
  refused(op("rmsnorm", file("wrong_dtype.h5")), {"wrong_dtype.h5: dataset 'x': expected dtype float", "found int64"});
  OpInputFile(file("no_attr.h5")).mat("x", x).mat("w", x.row(0), {6});
  refused(op("rmsnorm", file("no_attr.h5")), {"no_attr.h5: attribute 'eps' is missing from the root group", "float"});
  OpInputFile(file("str_attr.h5")).mat("x", x).mat("w", x.row(0), {6}).text("eps", "tiny");
  refused(op("rmsnorm", file("str_attr.h5")), {"attribute 'eps' is a string ('tiny')"});
  refused(op("frobnicate", file("no_attr.h5")),
          {"unknown subcommand 'frobnicate' of salasim op", "rmsnorm, rope, gla"});

  // sizes that disagree between inputs: k has one row fewer than q
  const Mat q = randn(5, 8, 53);
  OpInputFile(file("gla_rows.h5"))
      .mat("q", q)
      .mat("k", q.topRows(4))
      .mat("v", q)
      .mat("gamma", Mat(Eigen::RowVector2d(-0.1, -0.2)), {2})
      .num("tau", 1);
  refused(op("gla", file("gla_rows.h5")), {"dataset 'k': expected shape [T, H*hd] = [5, 8], found [4, 8]", "T = 5"});
  OpInputFile(file("gla_heads.h5"))
      .mat("q", randn(5, 9, 54))
      .mat("k", q)
      .mat("v", q)
      .mat("gamma", Mat(Eigen::RowVector2d(-0.1, -0.2)), {2})
      .num("tau", 1);
  refused(op("gla", file("gla_heads.h5")), {"dataset 'q'", "not a multiple of H = 2 (from dataset 'gamma' dim 0)"});
  Mat nan = q;
  nan(2, 3) = std::nan("");
  OpInputFile(file("gla_nan.h5"))
      .mat("q", nan)
      .mat("k", q)
      .mat("v", q)
      .mat("gamma", Mat(Eigen::RowVector2d(-0.1, -0.2)), {2})
      .num("tau", 1);
  refused(op("gla", file("gla_nan.h5")), {"dataset 'q': element [2, 3] is nan", "must be finite"});

  // a block id past the query's own block, and one listed twice
  const SparseCase c(55);
  std::vector<int64_t> blocks(size_t(c.T * c.G * 2), -1);
  blocks[0] = 20;  // query 0 is at position 600, block 9
  OpInputFile(file("blocks.h5"))
      .mat("q", c.q)
      .mat("k", stack(c.K), c.heads(c.K))
      .mat("v", stack(c.V), c.heads(c.V))
      .ints("blocks", blocks, {hsize_t(c.T), hsize_t(c.G), 2})
      .whole("pos0", c.pos0)
      .num("tau", 0.25);
  refused(op("sparse_attn", file("blocks.h5")), {"dataset 'blocks': [0, 0, 0] is 20", "in [0, 9]"});
  blocks[0] = 3, blocks[1] = 3;
  OpInputFile(file("blocks2.h5"))
      .mat("q", c.q)
      .mat("k", stack(c.K), c.heads(c.K))
      .mat("v", stack(c.V), c.heads(c.V))
      .ints("blocks", blocks, {hsize_t(c.T), hsize_t(c.G), 2})
      .whole("pos0", c.pos0)
      .num("tau", 0.25);
  refused(op("sparse_attn", file("blocks2.h5")), {"row [0, 0] lists block 3 twice"});
  OpInputFile(file("short_cache.h5"))
      .mat("q", c.q)
      .mat("k", stack(c.K), c.heads(c.K))
      .mat("v", stack(c.V), c.heads(c.V))
      .whole("pos0", c.pos0 + 1)
      .num("tau", 0.25);
  refused(op("dense_attn", file("short_cache.h5")), {"hold 670 cached positions", "L >= 671"});

  // not HDF5; missing; an existing output kept without --force
  std::ofstream(file("text.h5")) << "not hdf5\n";
  refused(op("gate", file("text.h5")), {"text.h5: not an HDF5 file"});
  refused(op("gate", file("missing.h5")), {"missing.h5: no such file"});
  OpInputFile(file("gate_ok.h5")).mat("x", x).mat("z", x);
  std::ofstream(out) << "keep me\n";
  refused(fmt::format("op gate --in {} --out {}", file("gate_ok.h5"), out),
          {"exists already; it is kept (pass --force to replace it)"});
  std::ifstream kept(out);
  std::string line;
  std::getline(kept, line);
  CHECK(line == "keep me");
#ifndef SALASIM_HAVE_CUDA
  {  // built without CUDA: the CUDA path is missing; built with it on a machine without a GPU: no device
    const CliResult r = run_salasim(op("gate", file("gate_ok.h5")) + " --backend gpu");
    INFO(r.output);
    const bool has_gpu = r.exit_code == 0;
    if (!has_gpu) {
      CHECK(r.exit_code == 2);
      CHECK((r.output.find("--backend gpu needs the CUDA path") != std::string::npos ||
             r.output.find("--backend gpu needs a GPU") != std::string::npos));
    }
  }
#endif
}

TEST_CASE("op: --help and docs/op.md show each op's table as the op table holds it", "[op_cli]") {
  std::ifstream f(source_path("docs/op.md"));
  const std::string doc((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  REQUIRE(!doc.empty());
  for (const op::OpSpec& s : op::registry()) {
    INFO(s.name);
    CHECK(doc.find(op::op_help(s)) != std::string::npos);
    const CliResult r = run_salasim("op " + s.name + " --help");
    CHECK(r.exit_code == 0);
    CHECK(r.output.find(op::op_help(s)) != std::string::npos);
  }
  const CliResult all = run_salasim("op --help");
  CHECK(all.output.find(op::all_ops_help()) != std::string::npos);
  // the sweep shown in "Generated inputs" is what the command prints now
  const CliResult sweep = run_salasim("op --sweep --ops gla,select_blocks");
  CHECK(sweep.exit_code == 0);
  CHECK(doc.find("$ ./build/salasim op --sweep --ops gla,select_blocks\n" + sweep.output + "```") != std::string::npos);
}
