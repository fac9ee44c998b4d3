// linear: y = x W^T, every projection of the model (no biases), its one definition (ops/op.hpp).
#include <cmath>

#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::linear(double T, double params, double io_elems, double weight_bytes) {
  return {2 * T * params, weight_bytes + T * io_elems * 2, 0};
}

namespace {

TapMap reference(const OpInputs& x, const ref::Num& n) {
  return {{"/op/mlp/out", tap(ref::linear(mat(x.tensor("x")), mat(x.tensor("w")), n), {x.dim("T"), x.dim("out")})}};
}

TapDef projection(const char* kind, const char* reason, std::vector<std::string> inputs = {}) {
  return {kind, "bf16", TapGate::Float, reason, std::move(inputs)};
}

}  // namespace

OpSpec linear_op() {
  OpSpec s;
  s.name = "linear";
  s.section = "§2, §3, §4";
  s.summary = "y = x W^T, a projection without bias";
  s.library = "ref::linear";
  s.reference_functions = {"linear"};
  s.inputs = {in("x", {"T", "in"}, "input rows"), in("w", {"out", "in"}, "weight as stored (rows are outputs)")};
  s.outputs = {out("/op/mlp/out", {"T", "out"}, "x W^T (the tap kind of the MLP's down projection)")};
  s.notes = {"every projection of the model is this op; their tap kinds share one tolerance policy"};
  s.reference = reference;
  s.random = {{rows(4), width("in", 256, "input width"), width("out", 128, "output width")},
              {"T=1,in=4096,out=1024", "T=16,in=300,out=200"},
              [](Draw& d) {
                d.normal("x", {d["T"], d["in"]}, 1.0);  // a normed row
                d.normal("w", {d["out"], d["in"]}, 1 / std::sqrt(double(d["in"])));
              }};
  s.taps = {
      projection("mlp/out", "down projection: fp32 accumulation over the MLP width (the longest sum of the model)",
                 {"mlp/act"}),
      projection("lightning/proj/q", "GEMM W_q a, fp32 accumulation over the hidden size, bf16 out"),
      projection("lightning/proj/k", "GEMM W_k a, fp32 accumulation over the hidden size, bf16 out"),
      projection("lightning/proj/v", "GEMM W_v a, fp32 accumulation over the hidden size, bf16 out"),
      projection("lightning/proj/z", "GEMM W_z a (output gate, pre-sigmoid), fp32 accumulation, bf16 out"),
      projection("lightning/o_proj/out", "GEMM W_o o, fp32 accumulation, bf16 out", {"lightning/gate/out"}),
      projection("sparse/proj/q", "GEMM W_q a, fp32 accumulation over the hidden size, bf16 out"),
      projection("sparse/proj/k", "GEMM W_k a (2 kv heads), fp32 accumulation, bf16 out"),
      projection("sparse/proj/v", "GEMM W_v a (2 kv heads), fp32 accumulation, bf16 out"),
      projection("sparse/proj/g", "GEMM W_gate a (o_gate, pre-sigmoid), fp32 accumulation, bf16 out"),
      projection("sparse/o_proj/out", "GEMM W_o attn, fp32 accumulation, bf16 out", {"sparse/gate/out"}),
  };
  s.card =
      {"y = x W^T: every projection of the model (no biases)",
       [](const ModelConfig&, int64_t) -> std::vector<EqStep> {
         return {{"y_t = W x_t   (W: [out, in] as stored; fp32 accumulation on the GPU, bf16 out)", "y_t = W x_t"}};
       },
       "",
       "gpu/linear.cpp",
       {"linear"}};
  s.cost = [](const CaseSizes& c) {
    const double in = double(c.at("in")), out = double(c.at("out"));
    return cost::linear(double(c.at("T")), in * out, in + out, 2 * in * out);
  };
  return s;
}

}  // namespace salasim::op
