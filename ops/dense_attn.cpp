// dense_attn: causal GQA softmax attention over every key j <= p, the sparse layers' attention below dense_len
// (docs/spec.md §4.1), its one definition (ops/op.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::dense_attn(int64_t start, int64_t end, int64_t H, int64_t G, int64_t hd) {
  constexpr int64_t kQueryTile = 128;  // flash attention's: the queries of a tile share their K/V loads
  const int64_t T = end - start;
  const double keys = sum_causal_keys(start, end);
  const double kv_bytes = double(G) * 2 * hd * 2 * keys / double(std::min(kQueryTile, T));
  return {double(H) * 4 * hd * keys, kv_bytes + double(T) * H * hd * 2 * 2, double(H) * keys};
}

namespace {

TapMap reference(const OpInputs& x, const ref::Num& n) {
  const ref::Mat o = ref::dense_attn(mat(x.tensor("q")), x.i("pos0"), heads(x.tensor("k")), heads(x.tensor("v")),
                                     int(x.dim("hd")), x.f("tau"), n);
  return {{"/op/sparse/attn/out", tap(o, {x.dim("T"), o.cols()})}};
}

std::vector<EqStep> equation(const ModelConfig& c, int64_t) {
  return {{fmt::format("out_h(p) = sum over j <= p of softmax_j(tau q_h.K_(g,j)) V_(g,j), g = h / {}, tau = 1/sqrt({})",
                       c.group_size(), c.head_dim),
           "o_h(p) = \\sum_{j\\le p} \\operatorname{softmax}_j(\\tau\\, q_h\\cdot K_{g,j})\\, V_{g,j}"},
          {fmt::format("used while the keys after the call number fewer than dense_len = {}", c.sparse.dense_len),
           fmt::format("L_{{kv}} < {}", c.sparse.dense_len)}};
}

}  // namespace

OpSpec dense_attn_op() {
  OpSpec s;
  s.name = "dense_attn";
  s.section = "§4.1";
  s.summary = "causal GQA softmax attention over every key j <= p";
  s.library = "ref::dense_attn";
  s.reference_functions = {"dense_attn"};
  s.inputs = {in("q", {"T", "H*hd"}, "queries at positions pos0 .."), in("k", {"G", "L", "hd"}, "cached keys"),
              in("v", {"G", "L", "hd"}, "cached values")};
  s.attrs = {whole("pos0", 0, kMaxPos, kPos0Doc), num("tau", "softmax scale (head_dim^-0.5)", kHeadScale)};
  s.outputs = {out("/op/sparse/attn/out", {"T", "H*hd"}, "attention output")};
  s.notes = {"L >= pos0 + T"};
  s.check = [](OpInputs& x) {
    check_heads_per_group(x);
    check_cache(x);
  };
  s.reference = reference;
  s.random = {{rows(16), kv_heads(), attn_heads(), head_dim(), pos0(500)},
              {"T=1,G=1,H=16,hd=128,pos0=4000", "T=64,G=2,H=32,hd=128,pos0=1000", "T=7,G=1,H=3,hd=64,pos0=50"},
              attention};
  s.taps = {};  // its output is sparse_attn's tap kind, sparse/attn/out: the same tensor of the same layers
  s.card = {"causal GQA softmax attention over every cached key (sparse layers below dense_len)",
            equation,
            "no parameters",
            "gpu/dense_attn.cu",
            {"dense_attn"}};
  s.cost = [](const CaseSizes& c) {
    const int64_t p = c.at("pos0");
    return cost::dense_attn(p, p + c.at("T"), c.at("H"), c.at("G"), c.at("hd"));
  };
  return s;
}

}  // namespace salasim::op
