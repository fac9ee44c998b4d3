// sparse_attn: softmax attention over the selected 64-token blocks, causal (docs/spec.md §4.5), its one definition
// (ops/op.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "model/error.hpp"
#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::sparse_attn(int64_t start, int64_t end, int64_t H, int64_t G, int64_t hd, int64_t block, int64_t k_sel) {
  const int64_t T = end - start;
  const double keys = sum_selected_keys(start, end, block, k_sel);
  const double kv_bytes = double(G) * 2 * hd * 2 * keys / double(std::min<int64_t>(block, T));
  return {double(H) * 4 * hd * keys, kv_bytes + double(T) * H * hd * 2 * 2, double(H) * keys};
}

namespace {

// A per-(row, group) list of block ids must be a set of causal blocks: the reference attends to each listed block
// once per listing, and an id past the query's own block would index keys that do not exist yet.
void check_blocks(OpInputs& x) {
  const InputDataset& b = x.tensor("blocks");
  const int64_t T = x.dim("T"), G = x.dim("G"), K = x.dim("K"), pos0 = x.i("pos0"), block = x.i("block");
  for (int64_t t = 0; t < T; ++t) {
    const int64_t qb = (pos0 + t) / block;
    for (int64_t g = 0; g < G; ++g) {
      std::set<int64_t> seen;
      for (int64_t s = 0; s < K; ++s) {
        const double v = b.data[size_t((t * G + g) * K + s)];
        if (v == -1) continue;
        if (v < 0 || v > double(qb))
          fail(
              "{}: dataset 'blocks': [{}, {}, {}] is {}; expected -1 (an empty slot) or a causal block id in [0, {}] "
              "(query {} is at position {} = pos0 + {}, block {})",
              x.file, t, g, s, v, qb, t, pos0 + t, t, qb);
        if (!seen.insert(int64_t(v)).second)
          fail("{}: dataset 'blocks': row [{}, {}] lists block {} twice; a selection is a set", x.file, t, g, v);
      }
    }
  }
}

TapMap reference(const OpInputs& x, const ref::Num& n) {
  ref::Selection sel;
  sel.T = x.dim("T"), sel.G = x.dim("G"), sel.K = x.dim("K");
  const InputDataset& b = x.tensor("blocks");
  sel.blocks.assign(b.data.begin(), b.data.end());
  const ref::Mat o = ref::sparse_attn(mat(x.tensor("q")), x.i("pos0"), heads(x.tensor("k")), heads(x.tensor("v")), sel,
                                      int(x.i("block")), x.f("tau"), n);
  return {{"/op/sparse/attn/out", tap(o, {x.dim("T"), o.cols()})}};
}

std::vector<EqStep> equation(const ModelConfig& c, int64_t context) {
  const SparseConfig& s = c.sparse;
  const double keys = sum_selected_keys(context, context + 1, s.block_size, s.k_sel());
  return {{fmt::format("Keys(p, g) = {{j in [{}b, {}b+{}] : b in Sel_g(p), j <= p}}, at most {} x {} = {}",
                       s.block_size, s.block_size, s.block_size - 1, s.k_sel(), s.block_size, s.k_sel() * s.block_size),
           "\\mathrm{Keys}(p,g) = \\{ j \\in \\text{block } b : b\\in\\mathrm{Sel}_g(p),\\ j\\le p \\}"},
          {fmt::format("out_h(p) = sum over j in Keys of softmax_j(tau q_h.K_j) V_j, kv head g = h / {}, tau = "
                       "1/sqrt({})",
                       c.group_size(), c.head_dim),
           "o_h(p) = \\sum_{j\\in\\mathrm{Keys}} \\operatorname{softmax}_j(\\tau\\, q_h\\cdot K_j)\\, V_j"},
          {fmt::format("at p = {}: {} keys per query head", context, eq_num(keys)),
           fmt::format("|\\mathrm{{Keys}}| = {}", eq_num(keys))}};
}

}  // namespace

OpSpec sparse_attn_op() {
  OpSpec s;
  s.name = "sparse_attn";
  s.section = "§4.5";
  s.summary = "softmax attention over the selected blocks, causal";
  s.library = "ref::sparse_attn";
  s.reference_functions = {"sparse_attn"};
  s.inputs = {in("q", {"T", "H*hd"}, "queries at positions pos0 .."), in("k", {"G", "L", "hd"}, "cached keys"),
              in("v", {"G", "L", "hd"}, "cached values"),
              in("blocks", {"T", "G", "K"}, "selected block ids per query and kv head, -1 = empty slot", DType::Int)};
  s.attrs = {whole("pos0", 0, kMaxPos, kPos0Doc), num("tau", "softmax scale (head_dim^-0.5)", kHeadScale),
             whole("block", 1, 65536, "block size (64)", "64")};
  s.outputs = {out("/op/sparse/attn/out", {"T", "H*hd"}, "attention output")};
  s.notes = {
      "L >= pos0 + T; each row's ids are distinct, -1 or in [0, (pos0 + t) / block]; the query attends to keys j <= "
      "pos0 + t of its blocks"};
  s.check = [](OpInputs& x) {
    check_heads_per_group(x);
    check_cache(x);
    check_blocks(x);
  };
  s.reference = reference;
  s.random = {{rows(16), kv_heads(), attn_heads(), head_dim(), pos0(4000),
               key("K", 16, 1, 4096, "block slots per query and kv head"), key("block", 64, 1, 65536, "block size")},
              {"T=1,G=1,H=16,hd=128,pos0=10000,K=96", "T=32,G=2,H=32,hd=128,pos0=5000,K=64",
               "T=5,G=1,H=2,hd=64,pos0=300,K=4"},
              [](Draw& d) {
                attention(d);
                block_sets(d, d["T"], d["G"], d["K"], d["pos0"], d["block"]);
                d.number("block", double(d["block"]), true);
              }};
  // dense_attn writes the same tensor below dense_len, so it shares this kind (and its row)
  s.taps = {{"sparse/attn/out",
             "bf16",
             TapGate::Float,
             "softmax attention in fp32 over the reference's selection (teacher-forced), bf16 out",
             {"sparse/proj/q", "sparse/proj/k", "sparse/proj/v", "sparse/select/blocks"}}};
  s.card = {"InfLLM-v2 stage 2: softmax attention over the selected blocks' keys",
            equation,
            "no parameters",
            "gpu/sparse_attn.cu",
            {"sparse_attn"}};
  s.cost = [](const CaseSizes& c) {
    const int64_t p = c.at("pos0");
    return cost::sparse_attn(p, p + c.at("T"), c.at("H"), c.at("G"), c.at("hd"), c.at("block"), c.at("K"));
  };
  return s;
}

}  // namespace salasim::op
