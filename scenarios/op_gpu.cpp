// `salasim op --backend gpu` (scenarios/op_backends.hpp): the op on the CUDA path, with the kernels' calls as the
// runner (gpu/runner.cpp) makes them. Built only with SALASIM_HAVE_CUDA (scenarios/op_gpu_stub.cpp elsewhere).
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>

#include "scenarios/op_backends.hpp"
#include "gpu/common.hpp"
#include "gpu/compress_k.hpp"
#include "gpu/gla.hpp"
#include "gpu/linear.hpp"
#include "gpu/ops.hpp"
#include "gpu/select_blocks.hpp"
#include "gpu/sparse_args.hpp"
#include "model/bf16.hpp"
#include "model/error.hpp"
#include "reference/ops.hpp"
#include "scenarios/no_gpu.hpp"

namespace salasim {

namespace {

using gpu::bf16_t;
using gpu::Buffer;

// Values already rounded by op::as_gpu_stores, so each converts to bf16 exactly.
Buffer<bf16_t> up(const std::vector<double>& v, const char* what) {
  std::vector<bf16_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = bf16_from_float(float(v[i]));
  return gpu::to_device(b, what);
}
Buffer<bf16_t> up(const InputDataset& d, const char* what) { return up(d.data, what); }
Buffer<float> up32(const std::vector<double>& v, const char* what) {
  return gpu::to_device(std::vector<float>(v.begin(), v.end()), what);
}
std::vector<double> down(const Buffer<bf16_t>& b) {
  gpu::synchronize();
  std::vector<double> v;
  for (bf16_t x : b.download()) v.push_back(double(float_from_bf16(x)));
  return v;
}
template <class T>
std::vector<double> down_plain(const Buffer<T>& b) {
  gpu::synchronize();
  const std::vector<T> v = b.download();
  return std::vector<double>(v.begin(), v.end());
}

// Inputs the CUDA kernels are not built for are the user's input, refused before a kernel sees them (the kernels'
// own argument checks would report a device error, exit 3).
void need(bool ok, const op::OpInputs& x, const std::string& why) {
  if (!ok) fail("{}: --backend gpu: the CUDA path's {} {}", x.file, x.spec->name, why);
}
void need_attention_shape(const op::OpInputs& x) {
  need(x.dim("hd") == 128 && x.dim("H") == 16 * x.dim("G"), x,
       fmt::format("kernels are built for hd = 128 and H = 16 G (the released model); the inputs have hd = {}, H = {}, "
                   "G = {}",
                   x.dim("hd"), x.dim("H"), x.dim("G")));
}

// One function per op: the op's inputs uploaded, its kernel (or the runner's kernels) called as the runner calls
// it, the outputs handed to `put` in the op table's order. T: rows of the ops that have them (compress_k has none).
struct Put {
  std::function<void(size_t, std::vector<int64_t>, std::vector<double>, bool)> f;
  void operator()(size_t i, std::vector<int64_t> shape, std::vector<double> data, bool integer = false) const {
    f(i, std::move(shape), std::move(data), integer);
  }
};

void gpu_embed(const op::OpInputs& x, int64_t T, const Put& put) {
  const int V = int(x.dim("V")), D = int(x.dim("D"));
  const std::vector<double>& ids = x.tensor("tokens").data;
  Buffer<bf16_t> E = up(x.tensor("E"), "embedding"), h(size_t(T * D), "h");
  const Buffer<int32_t> tokens = gpu::to_device(std::vector<int32_t>(ids.begin(), ids.end()), "tokens");
  gpu::embed(E.get(), tokens.get(), T, D, V, float(x.f("scale")), h.get(), nullptr);
  put(0, {T, D}, down(h));
}

void gpu_linear(const op::OpInputs& x, int64_t T, const Put& put) {
  const int in = int(x.dim("in")), out = int(x.dim("out"));
  Buffer<bf16_t> a = up(x.tensor("x"), "x"), W = up(x.tensor("w"), "weight"), y(size_t(T * out), "y");
  gpu::Blas blas(nullptr);
  gpu::linear(blas, a.get(), in, W.get(), T, in, out, y.get(), out);
  put(0, {T, out}, down(y));
}

void gpu_rmsnorm(const op::OpInputs& x, int64_t T, const Put& put) {
  const int n = int(x.dim("n"));
  Buffer<bf16_t> in = up(x.tensor("x"), "x"), w = up(x.tensor("w"), "w"), y(size_t(T * n), "y");
  gpu::rmsnorm(in.get(), n, w.get(), T, n, float(x.f("eps")), y.get(), n, nullptr);
  put(0, {T, n}, down(y));
}

void gpu_rope(const op::OpInputs& x, int64_t T, const Put& put) {
  const int hd = int(x.dim("hd")), H = int(x.dim("H"));
  need(hd == 128, x, fmt::format("kernel is built for head_dim 128; attribute 'head_dim' is {}", hd));
  need(x.choice("angles") == "fp32", x, "takes fp32 angles only (attribute angles = \"fp32\")");
  Buffer<bf16_t> in = up(x.tensor("x"), "x");
  const ref::RopeTable tab = ref::rope_table(hd, x.f("theta"), ref::RopeAngles::Fp32);  // the runner's fp32 table
  Buffer<float> inv = gpu::to_device(tab.inv_freq32, "rope inv_freq");
  gpu::rope(in.get(), int64_t(H) * hd, T, H, hd, nullptr, 0.0f, x.i("pos0"), inv.get(), nullptr);
  put(0, {T, int64_t(H) * hd}, down(in));
}

void gpu_gla(const op::OpInputs& x, int64_t T, const Put& put) {
  const int H = int(x.dim("H")), hd = int(x.dim("hd"));
  const int64_t ld = int64_t(H) * hd;
  need(hd == 128, x, fmt::format("kernels are built for head dim 128; the inputs have hd = {}", hd));
  Buffer<bf16_t> q = up(x.tensor("q"), "q"), k = up(x.tensor("k"), "k"), v = up(x.tensor("v"), "v");
  Buffer<bf16_t> o(size_t(T * ld), "gla out");
  Buffer<float> gamma = up32(x.tensor("gamma").data, "decay");
  Buffer<float> S = x.has("state") ? up32(x.tensor("state").data, "gla state")
                                   : gpu::to_device(std::vector<float>(size_t(H) * hd * hd, 0.0f), "gla state");
  const std::string& form = x.choice("form");
  if (form == "recurrent" || (form == "auto" && T < 64)) {  // the runner's dispatch: n < 64 new tokens
    gpu::gla_recurrent(q.get(), k.get(), v.get(), ld, T, H, hd, gamma.get(), float(x.f("tau")), S.get(), o.get(), ld,
                       nullptr);
  } else {
    Buffer<uint8_t> ws(gpu::gla_workspace_bytes(T, H, hd), "gla workspace");
    gpu::gla_chunked(q.get(), k.get(), v.get(), ld, T, H, hd, gamma.get(), float(x.f("tau")), S.get(), o.get(), ld,
                     ws.get(), nullptr);
    gpu::synchronize();
  }
  put(0, {T, ld}, down(o));
  put(1, {H, hd, hd}, down_plain(S));
}

void gpu_compress_k(const op::OpInputs& x, int64_t /*T: compress_k has no rows*/, const Put& put) {
  const int G = int(x.dim("G")), hd = int(x.dim("hd"));
  const int64_t L = x.dim("L");
  Buffer<bf16_t> K = up(x.tensor("k"), "keys");
  for (int which = 0; which < 2; ++which) {
    const int f = which ? 4 : 1;
    const int64_t n = x.dim(which ? "N2" : "N1");
    Buffer<bf16_t> ck(size_t(G * n * hd), "compressed keys");
    gpu::compress_k(K.get(), L, G, hd, 0, L, f * int(x.i("kernel")), f * int(x.i("stride")), ck.get(), n, nullptr);
    put(size_t(which), {G, n, hd}, down(ck));
  }
}

void gpu_select_blocks(const op::OpInputs& x, int64_t T, const Put& put) {
  need_attention_shape(x);
  need(x.i("kernel") == 32 && x.i("stride") == 16 && x.i("block") == 64, x,
       fmt::format("kernels are built for the released rules (kernel 32, stride 16, block 64); the attributes say "
                   "kernel {}, stride {}, block {}",
                   x.i("kernel"), x.i("stride"), x.i("block")));
  const int G = int(x.dim("G")), Ks = int(x.i("k_sel"));
  const int64_t NB = x.dim("NB"), pos0 = x.i("pos0");
  const InputDataset &k1 = x.tensor("k1"), &k2 = x.tensor("k2");
  Buffer<bf16_t> q = up(x.tensor("q"), "q"), dk1 = up(k1, "k1"), dk2 = up(k2, "k2");
  Buffer<int32_t> blocks(size_t(T * G * Ks), "selected blocks");
  Buffer<float> scores(size_t(T * G * NB), "block scores");
  const SparseRules r = op::select_rules(x);
  gpu::SparseCache c;
  c.K1 = dk1.get(), c.cap1 = k1.shape[1], c.K2 = dk2.get(), c.cap2 = k2.shape[1];
  Buffer<uint8_t> ws(gpu::select_blocks_workspace(T, pos0 + T, r.heads, G, r.kernel, r.stride), "select workspace");
  const gpu::SelectArgs a = gpu::select_args(r, {q.get(), x.dim("H") * x.dim("hd"), T, pos0}, c, blocks.get(),
                                             scores.get(), NB, {ws.get(), ws.size()});
  gpu::select_blocks(a, nullptr);
  put(0, {T, G, Ks}, down_plain(blocks), true);
  put(1, {T, G, NB}, down_plain(scores));
}

void gpu_attention(const op::OpInputs& x, int64_t T, const Put& put) {
  need_attention_shape(x);
  const bool sparse = x.spec->name == "sparse_attn";
  if (sparse) {
    need(x.i("block") == 64, x,
         fmt::format("kernel is built for 64-token blocks; attribute 'block' is {}", x.i("block")));
    need(x.dim("K") <= 128, x,
         fmt::format("kernel takes at most 128 blocks per query; dataset 'blocks' has {}", x.dim("K")));
  }
  const int G = int(x.dim("G")), Ks = sparse ? int(x.dim("K")) : 96;
  const int64_t L = x.dim("L"), HD = x.dim("H") * x.dim("hd");
  Buffer<bf16_t> q = up(x.tensor("q"), "q"), K = up(x.tensor("k"), "keys"), V = up(x.tensor("v"), "values");
  Buffer<bf16_t> out(size_t(T * HD), "attention out");
  Buffer<int32_t> blocks;
  if (sparse) {
    const std::vector<double>& b = x.tensor("blocks").data;
    blocks = gpu::to_device(std::vector<int32_t>(b.begin(), b.end()), "selected blocks");
  }
  Buffer<uint8_t> ws(std::max<size_t>(1, gpu::sparse_attn_workspace_bytes(T, G, Ks, L)), "attention split partials");
  SparseRules r;
  r.heads = int(x.dim("H")), r.groups = G, r.hd = int(x.dim("hd")), r.tau = x.f("tau"), r.block = 64, r.k_sel = Ks;
  gpu::SparseCache c;
  c.K = K.get(), c.V = V.get(), c.cap = L;
  const gpu::AttnArgs a = gpu::attn_args(r, {q.get(), HD, T, x.i("pos0")}, c, sparse ? blocks.get() : nullptr,
                                         out.get(), HD, {ws.get(), ws.size()});
  if (sparse) gpu::sparse_attn(a, nullptr);
  else gpu::dense_attn(a, nullptr);
  put(0, {T, HD}, down(out));
}

void gpu_gate(const op::OpInputs& x, int64_t T, const Put& put) {
  const int n = int(x.dim("n"));
  Buffer<bf16_t> in = up(x.tensor("x"), "x"), z = up(x.tensor("z"), "z"), y(size_t(T * n), "y");
  gpu::gate(in.get(), n, z.get(), n, T, n, y.get(), n, nullptr);
  put(0, {T, n}, down(y));
}

void gpu_mlp(const op::OpInputs& x, int64_t T, const Put& put) {
  const int I = int(x.dim("I"));
  const std::vector<double>&g = x.tensor("g").data, &u = x.tensor("u").data;
  std::vector<double> gu;  // [T, 2I]: g | u side by side, as the fused gate_up projection leaves them
  gu.reserve(size_t(2 * T * I));
  for (int64_t t = 0; t < T; ++t) {
    gu.insert(gu.end(), g.begin() + t * I, g.begin() + (t + 1) * I);
    gu.insert(gu.end(), u.begin() + t * I, u.begin() + (t + 1) * I);
  }
  Buffer<bf16_t> dgu = up(gu, "gate|up"), act(size_t(T * I), "act");
  gpu::mlp_act(dgu.get(), T, I, act.get(), nullptr);
  put(0, {T, I}, down(act));
}

void gpu_residual(const op::OpInputs& x, int64_t T, const Put& put) {
  const int D = int(x.dim("D"));
  Buffer<bf16_t> h = up(x.tensor("h"), "h"), b = up(x.tensor("branch"), "branch");
  gpu::residual(h.get(), b.get(), T, D, float(x.f("scale")), nullptr, 0.0f, nullptr, nullptr);
  put(0, {T, D}, down(h));
}

void gpu_logits(const op::OpInputs& x, int64_t T, const Put& put) {
  const int D = int(x.dim("D")), V = int(x.dim("V"));
  Buffer<bf16_t> h = up(x.tensor("h"), "h"), W = up(x.tensor("w"), "lm_head"), y(size_t(T * V), "logits");
  gpu::Blas blas(nullptr);
  // as the runner: 1/divisor folded into the GEMM's alpha (exact for the model's power-of-two divisor)
  gpu::linear(blas, h.get(), D, W.get(), T, D, V, y.get(), V, float(1.0 / x.f("divisor")));
  put(0, {T, V}, down(y));
}

using GpuOp = void (*)(const op::OpInputs&, int64_t, const Put&);
const std::map<std::string, GpuOp>& gpu_ops() {
  static const std::map<std::string, GpuOp> ops = {
      {"embed", gpu_embed},
      {"linear", gpu_linear},
      {"rmsnorm", gpu_rmsnorm},
      {"rope", gpu_rope},
      {"gla", gpu_gla},
      {"compress_k", gpu_compress_k},
      {"select_blocks", gpu_select_blocks},
      {"sparse_attn", gpu_attention},
      {"dense_attn", gpu_attention},
      {"gate", gpu_gate},
      {"mlp", gpu_mlp},
      {"residual", gpu_residual},
      {"logits", gpu_logits},
  };
  return ops;
}

}  // namespace

std::vector<std::string> gpu_op_names() {
  std::vector<std::string> n;
  for (const auto& [name, f] : gpu_ops()) n.push_back(name);
  return n;
}

void check_gpu() {
  std::string why;
  if (!gpu::available(&why)) fail("salasim op --backend gpu needs a GPU: {}", plain_no_gpu_reason(why));
}

TapMap run_op_gpu(const op::OpInputs& x0, std::string* device) {
  check_gpu();
  *device = gpu::device_name();
  for (const auto& [sym, v] : x0.dims) need(v <= INT_MAX, x0, fmt::format("takes sizes below 2^31; {} = {}", sym, v));
  const op::OpInputs x = op::as_gpu_stores(x0);
  const std::string& name = x.spec->name;
  const std::vector<op::OutputSpec>& outs = x.spec->outputs;
  TapMap r;
  const Put put{[&](size_t i, std::vector<int64_t> shape, std::vector<double> data, bool integer) {
    r[outs[i].tap] = Tap{std::move(shape), std::move(data), integer, int64_t(i)};
  }};
  const auto it = gpu_ops().find(name);
  if (it == gpu_ops().end()) internal_fail("op {} is in the op table but has no CUDA call", name);
  it->second(x, x.dims.count("T") ? x.dim("T") : 0, put);
  return r;
}

}  // namespace salasim
