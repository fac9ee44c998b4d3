// embed: the token embedding times scale_emb (docs/spec.md §2 step 1), its one definition (ops/op.hpp).
#include <fmt/format.h>

#include "model/error.hpp"
#include "ops/op.hpp"
#include "ops/tensors.hpp"
#include "reference/ops.hpp"

namespace salasim::op {

Work cost::embed(double T, double D) { return {0, T * 4 * D, 0}; }

namespace {

void check_tokens(OpInputs& x) {
  const InputDataset& t = x.tensor("tokens");
  for (size_t i = 0; i < t.data.size(); ++i)
    if (t.data[i] < 0 || t.data[i] >= double(x.dim("V")))
      fail("{}: dataset 'tokens': element [{}] is {}; expected a token id in [0, {}) (V from dataset 'E')", x.file, i,
           t.data[i], x.dim("V"));
}

TapMap reference(const OpInputs& x, const ref::Num& n) {
  const std::vector<double>& ids = x.tensor("tokens").data;
  const ref::Mat h = ref::embed(mat(x.tensor("E")), std::vector<int32_t>(ids.begin(), ids.end()), x.f("scale"), n);
  return {{"/op/embed/out", tap(h, {x.dim("T"), x.dim("D")})}};
}

std::vector<EqStep> equation(const ModelConfig& c, int64_t) {
  return {{fmt::format("h_t = E[x_t] * {}   (E: [{}, {}], scale_emb = {})", eq_num(c.scale_emb), c.vocab_size,
                       c.hidden_size, eq_num(c.scale_emb)),
           fmt::format("h_t = E_{{x_t}} \\cdot {}", eq_num(c.scale_emb))}};
}

}  // namespace

OpSpec embed_op() {
  OpSpec s;
  s.name = "embed";
  s.section = "§2 step 1";
  s.summary = "h = E[x] * scale, a row of the embedding per token";
  s.library = "ref::embed";
  s.reference_functions = {"embed"};
  s.inputs = {in("E", {"V", "D"}, "embedding matrix"), in("tokens", {"T"}, "token ids in [0, V)", DType::Int)};
  s.attrs = {num("scale", "scale_emb (12 in the model)", kScaleEmb)};
  s.outputs = {out("/op/embed/out", {"T", "D"}, "scaled embedding rows")};
  s.check = check_tokens;
  s.reference = reference;
  s.random = {{rows(8), width("V", 1000, "vocabulary"), width("D", 256, "hidden size")},
              {"T=1,V=1000,D=4096", "T=16,V=5000,D=256"},
              [](Draw& d) {
                d.normal("E", {d["V"], d["D"]}, 0.1);  // times 12: rows of RMS about 1, as the model's stream
                for (double& t : d.tensor("tokens", {d["T"]}, true)) t = double(d.next() % uint64_t(d["V"]));
                d.number("scale", 12.0);  // scale_emb of the released config
              }};
  s.taps = {{"embed/out",
             "bf16",
             TapGate::Float,
             "E[x]*12 rounded once; the peer is nearly exact, so the floor carries the gate",
             {}}};
  s.card = {"token embedding, scaled", equation, "", "gpu/embed.cu", {"embed"}};
  s.cost = [](const CaseSizes& c) { return cost::embed(double(c.at("T")), double(c.at("D"))); };
  return s;
}

}  // namespace salasim::op
