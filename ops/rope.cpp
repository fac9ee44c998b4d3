// rope: rotate-half RoPE on every dim of the Lightning q and k (docs/spec.md §2.1), its one definition (ops/op.hpp).
#include <fmt/format.h>

#include "model/error.hpp"
#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::rope(double T, double width) { return {0, T * 4 * width, 0}; }

namespace {

TapMap reference(const OpInputs& x, const ref::Num& n) {
  ref::Mat m = mat(x.tensor("x"));
  const auto mode = x.choice("angles") == "exact" ? ref::RopeAngles::Exact : ref::RopeAngles::Fp32;
  ref::rope(m, x.i("pos0"), ref::rope_table(int(x.dim("hd")), x.f("theta"), mode), n);
  return {{"/op/lightning/qk_rope/q", tap(m, {x.dim("T"), m.cols()})}};
}

std::vector<EqStep> equation(const ModelConfig& c, int64_t) {
  const int d = c.lightning_head_dim, half = d / 2;
  return {{fmt::format("inv_freq_i = {}^(-2i/{}), i = 0..{} (fp32)", eq_num(c.rope_theta), d, half - 1),
           fmt::format("\\omega_i = {}^{{-2i/{}}},\\ i < {}", eq_num(c.rope_theta), d, half)},
          {"angle_(p,i) = fp32(p * inv_freq_i)", "\\phi_{p,i} = \\mathrm{fp32}(p\\,\\omega_i)"},
          {fmt::format("x = [x1 | x2] (dims 0..{} | {}..{}): out = [x1 cos - x2 sin | x2 cos + x1 sin]", half - 1, half,
                       d - 1),
           "\\mathrm{out} = [\\,x_1\\cos\\phi - x_2\\sin\\phi \\;|\\; x_2\\cos\\phi + x_1\\sin\\phi\\,]"}};
}

}  // namespace

OpSpec rope_op() {
  OpSpec s;
  s.name = "rope";
  s.section = "§2.1";
  s.summary = "rotate-half RoPE on all head dims, in place";
  s.library = "ref::rope (table: ref::rope_table)";
  s.reference_functions = {"rope_table", "rope"};
  s.inputs = {in("x", {"T", "H*hd"}, "q or k rows, H heads of hd")};
  s.attrs = {whole("head_dim", 2, 4096, "hd, even"), whole("pos0", 0, kMaxPos, kPos0Doc),
             num("theta", "RoPE base (rope_theta)", kRopeTheta),
             choice("angles", "angle table: fp32 (the model's) or exact (float64)", {"fp32", "exact"})};
  s.attrs[0].binds = "hd";  // H follows from x's width
  s.outputs = {out("/op/lightning/qk_rope/q", {"T", "H*hd"}, "rotated rows")};
  s.notes =
      {"angles: angle = fp32(float(p) * inv_freq[i]) with fp32 inv_freq, as HF and the GPU build them; attribute "
       "angles = \"exact\" takes float64 angles instead (reference and peer only)",
       "the model's per-head q/k norm before RoPE is op rmsnorm (per row of hd) or part of the GPU's fused kernel; "
       "here RoPE alone"};
  s.check = [](OpInputs& x) {
    if (x.dim("hd") % 2)
      fail("{}: attribute 'head_dim' is {}; RoPE pairs dims, so it must be even", x.file, x.dim("hd"));
  };
  s.reference = reference;
  s.random = {{rows(8), key("H", 2, 1, 4096, "heads"), head_dim(), pos0(1000)},
              {"T=1,H=2,hd=128,pos0=0", "T=64,H=4,hd=128,pos0=1000000", "T=9,H=3,hd=64,pos0=77"},
              [](Draw& d) {
                d.normal("x", {d["T"], d["H"] * d["hd"]}, 1.0);
                d.number("head_dim", double(d["hd"]), true);
                d.number("pos0", double(d["pos0"]), true);
                d.number("theta", 10000.0);  // rope_theta of the released config
                d.text("angles", "fp32");
              }};
  s.taps = {{"lightning/qk_rope/q",
             "bf16",
             TapGate::Float,
             "per-head q-norm then RoPE in fp32 with fp32 angles (docs/spec.md §2.1), bf16 out",
             {"lightning/proj/q"}},
            {"lightning/qk_rope/k",
             "bf16",
             TapGate::Float,
             "per-head k-norm then RoPE in fp32 with fp32 angles (docs/spec.md §2.1), bf16 out",
             {"lightning/proj/k"}}};
  s.card = {"rotary position embedding, rotate-half, on every dim of the Lightning q and k",
            equation,
            "no parameters: theta is a config constant",
            "gpu/rope.cu",
            {"rope"}};
  s.cost = [](const CaseSizes& c) { return cost::rope(double(c.at("T")), double(c.at("H") * c.at("hd"))); };
  return s;
}

}  // namespace salasim::op
