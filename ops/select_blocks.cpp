// select_blocks: InfLLM-v2 stage 1, block scores from the compressed keys, max-pool, forced blocks and top-k
// (docs/spec.md §4.3-4.4), its one definition (ops/op.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "model/error.hpp"
#include "model/windows.hpp"
#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

SparseRules select_rules(const OpInputs& x) {
  SparseRules r;
  r.heads = int(x.dim("H")), r.groups = int(x.dim("G")), r.hd = int(x.dim("hd")), r.tau = x.f("tau");
  r.kernel = int(x.i("kernel")), r.stride = int(x.i("stride")), r.block = int(x.i("block"));
  r.init_blocks = int(x.i("init_blocks")), r.local_blocks = int(x.i("local_blocks")), r.k_sel = int(x.i("k_sel"));
  return r;
}

Work cost::select_blocks(int64_t start, int64_t end, int64_t H, int64_t G, int64_t hd, int64_t kernel, int64_t stride,
                         int64_t block) {
  const int64_t T = end - start;
  const double s1 = sum_visible_windows(start, end, kernel, stride);
  const double s2 = sum_visible_windows(start, end, 4 * kernel, 4 * stride);
  const double blocks = sum_causal_blocks(start, end, block);
  const double tiles = double((T + block - 1) / block);
  const double entries = double(n_windows(end, kernel, stride) + n_windows(end, 4 * kernel, 4 * stride));
  const double bytes = double(G) * s1 * 2 * 2 + double(G) * blocks * 2 * 2 + tiles * entries * double(G) * hd * 2 +
                       double(T) * H * hd * 2;
  return {double(H) * 2 * hd * (s1 + s2), bytes, double(H) * (s1 + s2)};
}

namespace {

// Enough compressed keys for the last query, and a score width that covers its blocks; sets NB and k_sel.
void check(OpInputs& x) {
  check_heads_per_group(x);
  const int64_t len = x.i("pos0") + x.dim("T"), k = x.i("kernel"), s = x.i("stride");
  for (const auto& [name, need] :
       {std::pair<std::string, int64_t>{"k1", n_windows(len, k, s)}, {"k2", n_windows(len, 4 * k, 4 * s)}})
    if (x.tensor(name).shape[1] < need)
      fail("{}: dataset '{}' holds {} windows per kv head; queries up to position {} need {} (kernel {}, stride {}{})",
           x.file, name, x.tensor(name).shape[1], len - 1, need, name == "k1" ? k : 4 * k, name == "k1" ? s : 4 * s,
           name == "k1" ? "" : ": 4 x the K1 rule");
  const int64_t causal = (len + x.i("block") - 1) / x.i("block");
  int64_t nb = x.i("n_blocks");
  if (nb == 0) nb = causal;
  if (nb < causal)
    fail(
        "{}: attribute 'n_blocks' is {}; the queries see {} blocks (ceil((pos0 + T) / block)), so it must be at least "
        "that, or 0",
        x.file, nb, causal);
  x.dims["NB"] = nb;
  x.dims["k_sel"] = x.i("k_sel");
}

TapMap reference(const OpInputs& x, const ref::Num& n) {
  const ref::Selection s = ref::select_blocks(mat(x.tensor("q")), x.i("pos0"), heads(x.tensor("k1")),
                                              heads(x.tensor("k2")), select_rules(x), x.dim("NB"), true, n);
  return {{"/op/sparse/select/blocks",
           Tap{{s.T, s.G, s.K}, std::vector<double>(s.blocks.begin(), s.blocks.end()), true}},
          {"/op/sparse/select/scores", Tap{{s.T, s.G, s.NB}, s.scores}}};
}

// The max-pool over the K1 windows [stride c, stride c + kernel) that overlap block b, [B b, B b + B), as the
// reference takes them: c from floor((B b - kernel) / stride) + 1 to floor((B b + B - 1) / stride); with B and kernel
// multiples of the stride, c from m b - kernel/stride + 1 to m b + m - 1, m = B / stride (4b-1 .. 4b+3 in the model).
EqStep pool_step(const SparseConfig& s) {
  const int64_t B = s.block_size, k = s.kernel_size, st = s.kernel_stride;
  auto affine = [](int64_t m, int64_t add) {
    const std::string mb = m == 1 ? "b" : fmt::format("{}b", m);
    return add == 0 ? mb : add > 0 ? fmt::format("{}+{}", mb, add) : fmt::format("{}-{}", mb, -add);
  };
  if (B % st == 0 && k % st == 0) {
    const int64_t m = B / st;
    const std::string lo = affine(m, 1 - k / st), hi = affine(m, m - 1);
    return {fmt::format("S_g(b) = max over c in {{{}, ..., {}}} of s_g(p, c)   (every K1 window overlapping block b)",
                        lo, hi),
            fmt::format("S_g(b) = \\max_{{{}\\le c\\le {}}} s_g(p,c)", lo, hi)};
  }
  return {fmt::format("S_g(b) = max over c with floor(({}b - {})/{}) < c <= floor(({}b + {})/{}) of s_g(p, c)   (every "
                      "K1 window overlapping block b)",
                      B, k, st, B, B - 1, st),
          fmt::format("S_g(b) = \\max_{{\\lfloor ({}b-{})/{}\\rfloor < c \\le \\lfloor ({}b+{})/{}\\rfloor}} s_g(p,c)",
                      B, k, st, B, B - 1, st)};
}

std::vector<EqStep> equation(const ModelConfig& c, int64_t context) {
  const SparseConfig& s = c.sparse;
  const int64_t p = context, qb = p / s.block_size, causal = qb + 1;
  // Forced: the local blocks [lo, qb] and the initial blocks below lo.
  const int64_t lo = std::max<int64_t>(0, qb - s.local_blocks());
  const int64_t forced = qb - lo + 1 + std::min<int64_t>(s.init_blocks, lo);
  const int64_t chosen = std::min<int64_t>(s.k_sel(), causal) - forced;
  return {
      {fmt::format("LSE2_h(p) = log sum over e with {}e+{} <= p of exp(tau q_h.K2_e)", s.k2_stride(),
                   s.k2_kernel() - 1),
       fmt::format("\\mathrm{{LSE2}}_h(p) = \\log\\!\\sum_{{{}e+{}\\le p}} e^{{\\tau q_h\\cdot K2_e}}", s.k2_stride(),
                   s.k2_kernel() - 1)},
      {fmt::format("s_g(p, c) = sum over the {} heads h of group g of exp(tau q_h.K1_c - LSE2_h(p)), for {}c+{} <= p",
                   c.group_size(), s.kernel_stride, s.kernel_size - 1),
       "s_g(p,c) = \\sum_{h\\in g} e^{\\tau q_h\\cdot K1_c - \\mathrm{LSE2}_h(p)}"},
      pool_step(s),
      {fmt::format("forced: b < {} or qb-{} <= b <= qb (+inf); future b > qb (-inf); qb = p / {}", s.init_blocks,
                   s.local_blocks(), s.block_size),
       fmt::format("S_g(b) = +\\infty \\text{{ for }} b<{} \\text{{ or }} q_b-{}\\le b\\le q_b", s.init_blocks,
                   s.local_blocks())},
      {fmt::format("Sel_g(p) = the {} highest S_g(b), ties to the lower block: min({}, qb+1) blocks", s.k_sel(),
                   s.k_sel()),
       fmt::format("\\mathrm{{Sel}}_g(p) = \\operatorname{{top}}_{{{}}}\\, S_g(b)", s.k_sel())},
      {fmt::format("at p = {}: qb = {}, {} causal blocks, {} forced, {} chosen by score", p, qb, causal, forced,
                   std::max<int64_t>(chosen, 0)),
       fmt::format("p = {}:\\ q_b = {}", p, qb)}};
}

void draw(Draw& d) {
  const int64_t T = d["T"], H = d["H"], G = d["G"], hd = d["hd"], len = d["pos0"] + T;
  const int64_t kernel = d["kernel"], stride = d["stride"];
  d.normal("q", {T, H * hd}, 1.0);
  // compressed keys are means of unit-RMS keys: smaller, K2 (4x the window) more so
  d.normal("k1", {G, n_windows(len, kernel, stride), hd}, 0.3);
  d.normal("k2", {G, n_windows(len, 4 * kernel, 4 * stride), hd}, 0.15);
  for (const char* a : {"pos0", "k_sel", "init_blocks", "local_blocks", "kernel", "stride", "block"})
    d.number(a, double(d[a]), true);
  d.number("tau", 1 / std::sqrt(double(hd)));
}

}  // namespace

OpSpec select_blocks_op() {
  OpSpec s;
  s.name = "select_blocks";
  s.section = "§4.3-4.4";
  s.summary = "InfLLM-v2 stage-1 block scores, max-pool, forced blocks, top-k";
  s.library = "ref::select_blocks (want_scores = true)";
  s.reference_functions = {"select_blocks"};
  s.inputs = {in("q", {"T", "H*hd"}, "queries at positions pos0 .."), in("k1", {"G", "N1", "hd"}, "K1 compressed keys"),
              in("k2", {"G", "N2", "hd"}, "K2 compressed keys")};
  s.attrs = {whole("pos0", 0, kMaxPos, kPos0Doc),
             num("tau", "score scale (head_dim^-0.5 in the model)", kHeadScale),
             whole("kernel", 1, 65536, "K1 window (32)", "32"),
             whole("stride", 1, 65536, "K1 stride (16)", "16"),
             whole("block", 1, 65536, "block size (64)", "64"),
             whole("init_blocks", 0, kMaxInt, "forced first blocks (1)", "1"),
             whole("local_blocks", 0, kMaxInt, "forced blocks before the query's own (32)", "32"),
             whole("k_sel", 1, 4096, "blocks chosen per query and kv head (96)", "96"),
             whole("n_blocks", 0, kMaxInt, "width of the scores (0: ceil((pos0 + T) / block))", "0")};
  s.outputs = {out("/op/sparse/select/blocks", {"T", "G", "k_sel"}, "chosen block ids ascending, -1 in unused slots",
                   DType::Int),
               out("/op/sparse/select/scores", {"T", "G", "NB"}, "pooled scores: +inf forced, -inf future blocks")};
  s.outputs[1].fp32 = true;
  s.notes = {"k1 needs N1 >= the K1 windows of pos0 + T keys, k2 likewise; NB = n_blocks",
             "H must be a multiple of G (query head h uses kv head h / (H/G))"};
  s.check = check;
  s.reference = reference;
  s.random = {{rows(16), kv_heads(), attn_heads(), head_dim(), pos0(8000), key("k_sel", 96, 1, 4096, "blocks chosen"),
               key("init_blocks", 1, 0, 1 << 30, "forced first blocks"),
               key("local_blocks", 32, 0, 1 << 30, "forced blocks before the query's own"),
               key("kernel", 32, 1, 65536, "K1 window"), key("stride", 16, 1, 65536, "K1 stride"),
               key("block", 64, 1, 65536, "block size")},
              {"T=1,G=1,H=16,hd=128,pos0=10000", "T=16,G=2,H=32,hd=128,pos0=8000", "T=64,G=1,H=16,hd=128,pos0=6100",
               "T=8,G=1,H=4,hd=64,pos0=2000,k_sel=8,local_blocks=2"},
              draw};
  s.taps = {{"sparse/select/scores",
             "bf16",
             TapGate::FloatInf,
             "max-pooled block scores, bf16 of an fp32 16-head sum; +inf (forced) and -inf (future) must match "
             "exactly, finite scores are gated",
             {"sparse/proj/q", "sparse/compress_k/k1", "sparse/compress_k/k2"}},
            {"sparse/select/blocks",
             "int32",
             TapGate::Selection,
             "top-96 blocks per (query, kv group), compared as sets; a swap is a tie within 4 bf16 ulps (2^-5) of the "
             "boundary score: another fp32 order of the 16-head sum and bf16 q, K1 move a score by a few ulps",
             {"sparse/proj/q", "sparse/compress_k/k1", "sparse/compress_k/k2", "sparse/select/scores"}}};
  s.card = {"InfLLM-v2 stage 1: score 64-token blocks with compressed keys, keep the top blocks",
            equation,
            "no parameters: block size, window and top-k are config constants (sparse_config)",
            "gpu/select_blocks.cu",
            {"select_blocks"}};
  s.cost = [](const CaseSizes& c) {
    const int64_t p = c.at("pos0");
    return cost::select_blocks(p, p + c.at("T"), c.at("H"), c.at("G"), c.at("hd"), c.at("kernel"), c.at("stride"),
                               c.at("block"));
  };
  return s;
}

}  // namespace salasim::op
