// compress_k: the mean-pooled compressed keys K1 (kernel/stride) and K2 (4 x both) of each kv head (docs/spec.md
// §4.2), its one definition (ops/op.hpp).
#include <fmt/format.h>

#include "model/memory.hpp"
#include "model/windows.hpp"
#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::compress_k(double T, double kv_width) { return {0, T * 4 * kv_width, 0}; }

namespace {

TapMap reference(const OpInputs& x, const ref::Num& n) {
  const std::vector<ref::Mat> k = heads(x.tensor("k"));
  const int64_t L = x.dim("L"), kernel = x.i("kernel"), stride = x.i("stride");
  TapMap r;
  for (int which = 0; which < 2; ++which) {
    const int64_t f = which ? 4 : 1;
    std::vector<ref::Mat> ck;
    for (const ref::Mat& kg : k) ck.push_back(ref::compress_k(kg, L, int(f * kernel), int(f * stride), n));
    r[which ? "/op/sparse/compress_k/k2" : "/op/sparse/compress_k/k1"] =
        stacked(ck, {x.dim("G"), x.dim(which ? "N2" : "N1"), x.dim("hd")});
  }
  return r;
}

std::vector<EqStep> equation(const ModelConfig& c, int64_t context) {
  const SparseConfig& s = c.sparse;
  return {{fmt::format("K1_c = mean(K[{}c .. {}c+{}]), n1(L) = floor((L - {})/{}) + 1", s.kernel_stride,
                       s.kernel_stride, s.kernel_size - 1, s.kernel_size, s.kernel_stride),
           fmt::format("K1_c = \\tfrac{{1}}{{{}}}\\textstyle\\sum_{{j<{}}} K_{{{}c+j}}", s.kernel_size, s.kernel_size,
                       s.kernel_stride)},
          {fmt::format("K2_e = mean(K[{}e .. {}e+{}]), n2(L) = floor((L - {})/{}) + 1", s.k2_stride(), s.k2_stride(),
                       s.k2_kernel() - 1, s.k2_kernel(), s.k2_stride()),
           fmt::format("K2_e = \\tfrac{{1}}{{{}}}\\textstyle\\sum_{{j<{}}} K_{{{}e+j}}", s.k2_kernel(), s.k2_kernel(),
                       s.k2_stride())},
          {fmt::format("at L = {}: n1 = {}, n2 = {} entries per kv head and sparse layer", context,
                       k1_entries(c, context), k2_entries(c, context)),
           fmt::format("n_1({}) = {},\\ n_2({}) = {}", context, k1_entries(c, context), context,
                       k2_entries(c, context))}};
}

}  // namespace

OpSpec compress_k_op() {
  OpSpec s;
  s.name = "compress_k";
  s.section = "§4.2";
  s.summary = "mean-pooled compressed keys K1 (kernel/stride) and K2 (4 x both)";
  s.library = "ref::compress_k per kv head";
  s.reference_functions = {"compress_k", "compress_k_append"};
  s.inputs = {in("k", {"G", "L", "hd"}, "raw keys of positions 0 .. L-1, per kv head")};
  s.attrs = {whole("kernel", 1, 65536, "K1 window (32 in the model)"), whole("stride", 1, 65536, "K1 stride (16)")};
  s.outputs = {out("/op/sparse/compress_k/k1", {"G", "N1", "hd"},
                   "window c = mean of keys [stride c, stride c + kernel)"),
               out("/op/sparse/compress_k/k2", {"G", "N2", "hd"}, "the same with 4 x kernel, 4 x stride")};
  s.notes = {"N1 = floor((L - kernel) / stride) + 1 complete windows (0 when L < kernel); N2 likewise with 4 x both"};
  s.check = [](OpInputs& x) {
    const int64_t L = x.dim("L"), k = x.i("kernel"), st = x.i("stride");
    x.dims["N1"] = n_windows(L, k, st);
    x.dims["N2"] = n_windows(L, 4 * k, 4 * st);
  };
  s.reference = reference;
  s.random = {{kv_heads(), key("L", 300, 1, kMaxSize, "keys per kv head"), head_dim(),
               key("kernel", 32, 1, 65536, "K1 window"), key("stride", 16, 1, 65536, "K1 stride")},
              {"G=2,L=31,hd=128", "G=2,L=300,hd=128", "G=1,L=1000,hd=64,kernel=8,stride=4"},
              [](Draw& d) {
                d.normal("k", {d["G"], d["L"], d["hd"]}, 1.0);
                d.number("kernel", double(d["kernel"]), true);
                d.number("stride", double(d["stride"]), true);
              }};
  s.taps = {{"sparse/compress_k/k1",
             "bf16",
             TapGate::Float,
             "mean of 32 bf16 keys (stride 16), fp32 accumulation, bf16 out (docs/spec.md §4.2)",
             {"sparse/proj/k"}},
            {"sparse/compress_k/k2",
             "bf16",
             TapGate::Float,
             "mean of 128 bf16 keys (stride 64), fp32 accumulation, bf16 out (docs/spec.md §4.2)",
             {"sparse/proj/k"}}};
  s.card = {"mean-pooled compressed keys K1 and K2 of each kv head",
            equation,
            "no parameters: kernel sizes and strides are config constants",
            "gpu/compress_k.cu",
            {"compress_k"}};
  s.cost = [](const CaseSizes& c) { return cost::compress_k(double(c.at("L")), double(c.at("G") * c.at("hd"))); };
  return s;
}

}  // namespace salasim::op
