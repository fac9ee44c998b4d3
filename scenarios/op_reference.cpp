// `salasim op` on the reference and on the peer (scenarios/op_backends.hpp): the inputs of the op table turned into
// the arguments of the reference/ops.hpp call it wraps, and its results into taps.
#include <fmt/format.h>

#include "scenarios/op_backends.hpp"
#include "model/error.hpp"
#include "reference/ops.hpp"

namespace salasim {

namespace {

using ref::Mat;

// [rows, cols] row-major (rank 1: one row).
Mat mat(const InputDataset& d) {
  const int64_t rows = d.shape.size() == 1 ? 1 : d.shape[0], cols = d.shape.back();
  return Eigen::Map<const Mat>(d.data.data(), rows, cols);
}
// [G, L, hd] as G matrices [L, hd].
std::vector<Mat> heads(const InputDataset& d) {
  std::vector<Mat> m;
  const int64_t per = d.shape[1] * d.shape[2];
  for (int64_t g = 0; g < d.shape[0]; ++g)
    m.push_back(Eigen::Map<const Mat>(d.data.data() + g * per, d.shape[1], d.shape[2]));
  return m;
}
Tap tap(const Mat& m, std::vector<int64_t> shape) { return Tap{std::move(shape), {m.data(), m.data() + m.size()}}; }
Tap stacked(const std::vector<Mat>& ms, std::vector<int64_t> shape) {
  Tap t{std::move(shape), {}};
  for (const Mat& m : ms) t.data.insert(t.data.end(), m.data(), m.data() + m.size());
  return t;
}

TapMap run(const op::OpInputs& x, const ref::Num& num) {
  const std::string& name = x.spec->name;
  const std::vector<op::OutputSpec>& outs = x.spec->outputs;
  TapMap r;
  auto put = [&](size_t i, Tap t) {
    t.order = int64_t(i);
    r[outs[i].tap] = std::move(t);
  };
  auto T = [&] { return x.dim("T"); };
  if (name == "rmsnorm") {
    const Mat w = mat(x.tensor("w"));
    put(0, tap(ref::rmsnorm(mat(x.tensor("x")), w.row(0).transpose(), x.f("eps"), num), {T(), x.dim("n")}));
  } else if (name == "rope") {
    Mat m = mat(x.tensor("x"));
    const auto mode = x.choice("angles") == "exact" ? ref::RopeAngles::Exact : ref::RopeAngles::Fp32;
    ref::rope(m, x.i("pos0"), ref::rope_table(int(x.dim("hd")), x.f("theta"), mode), num);
    put(0, tap(m, {T(), m.cols()}));
  } else if (name == "gla") {
    const int64_t H = x.dim("H"), hd = x.dim("hd");
    const InputDataset& g = x.tensor("gamma");
    const std::vector<double> gamma(g.data.begin(), g.data.end());
    std::vector<Mat> S(size_t(H), Mat::Zero(hd, hd));
    if (x.has("state")) S = heads(x.tensor("state"));
    const Mat q = mat(x.tensor("q")), k = mat(x.tensor("k")), v = mat(x.tensor("v"));
    const std::string& form = x.choice("form");
    const bool recurrent = form == "recurrent" || (form == "auto" && T() < 64);
    const Mat o = recurrent ? ref::gla_recurrent(q, k, v, gamma, x.f("tau"), S, num)
                            : ref::gla_chunked(q, k, v, gamma, x.f("tau"), S, num);
    put(0, tap(o, {T(), H * hd}));
    put(1, stacked(S, {H, hd, hd}));
  } else if (name == "compress_k") {
    const std::vector<Mat> k = heads(x.tensor("k"));
    const int64_t L = x.dim("L"), kernel = x.i("kernel"), stride = x.i("stride");
    for (int which = 0; which < 2; ++which) {
      const int64_t f = which ? 4 : 1;
      std::vector<Mat> ck;
      for (const Mat& kg : k) ck.push_back(ref::compress_k(kg, L, int(f * kernel), int(f * stride), num));
      put(size_t(which), stacked(ck, {x.dim("G"), x.dim(which ? "N2" : "N1"), x.dim("hd")}));
    }
  } else if (name == "select_blocks") {
    ref::SelectParams sp;
    sp.heads = int(x.dim("H")), sp.groups = int(x.dim("G")), sp.hd = int(x.dim("hd"));
    sp.tau = x.f("tau");
    sp.kernel = int(x.i("kernel")), sp.stride = int(x.i("stride")), sp.block = int(x.i("block"));
    sp.init_blocks = int(x.i("init_blocks")), sp.local_blocks = int(x.i("local_blocks")), sp.k_sel = int(x.i("k_sel"));
    const ref::Selection s = ref::select_blocks(mat(x.tensor("q")), x.i("pos0"), heads(x.tensor("k1")),
                                                heads(x.tensor("k2")), sp, x.dim("NB"), true, num);
    put(0, Tap{{s.T, s.G, s.K}, std::vector<double>(s.blocks.begin(), s.blocks.end()), true});
    put(1, Tap{{s.T, s.G, s.NB}, s.scores});
  } else if (name == "sparse_attn") {
    ref::Selection sel;
    sel.T = T(), sel.G = x.dim("G"), sel.K = x.dim("K");
    const InputDataset& b = x.tensor("blocks");
    sel.blocks.assign(b.data.begin(), b.data.end());
    const Mat o = ref::sparse_attn(mat(x.tensor("q")), x.i("pos0"), heads(x.tensor("k")), heads(x.tensor("v")), sel,
                                   int(x.i("block")), x.f("tau"), num);
    put(0, tap(o, {T(), o.cols()}));
  } else if (name == "dense_attn") {
    const Mat o = ref::dense_attn(mat(x.tensor("q")), x.i("pos0"), heads(x.tensor("k")), heads(x.tensor("v")),
                                  int(x.dim("hd")), x.f("tau"), num);
    put(0, tap(o, {T(), o.cols()}));
  } else if (name == "gate") {
    put(0, tap(ref::gate(mat(x.tensor("x")), mat(x.tensor("z")), num), {T(), x.dim("n")}));
  } else if (name == "mlp_act") {
    put(0, tap(ref::mlp_act(mat(x.tensor("g")), mat(x.tensor("u")), num), {T(), x.dim("I")}));
  } else if (name == "residual") {
    Mat h = mat(x.tensor("h"));
    ref::residual(h, mat(x.tensor("branch")), x.f("scale"), num);
    put(0, tap(h, {T(), x.dim("D")}));
  } else if (name == "logits") {
    put(0, tap(ref::logits(mat(x.tensor("h")), mat(x.tensor("w")), x.f("divisor"), num), {T(), x.dim("V")}));
  } else {
    internal_fail("op {} is in the op table but has no reference call", name);
  }
  return r;
}

}  // namespace

TapMap run_op_reference(const op::OpInputs& x, bool peer) {
  return peer ? run(op::as_gpu_stores(x), ref::peer()) : run(x, ref::f64());
}

}  // namespace salasim
