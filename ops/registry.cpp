// The list of ops (ops/op.hpp): the one place an op is added to it, in reference/ops.hpp order.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "ops/op.hpp"

namespace salasim::op {

// One function per definition, each in ops/<name>.cpp.
OpSpec embed_op();
OpSpec linear_op();
OpSpec rmsnorm_op();
OpSpec rope_op();
OpSpec gla_op();
OpSpec compress_k_op();
OpSpec select_blocks_op();
OpSpec sparse_attn_op();
OpSpec dense_attn_op();
OpSpec gate_op();
OpSpec mlp_op();
OpSpec residual_op();
OpSpec logits_op();

const std::vector<OpSpec>& registry() {
  static const std::vector<OpSpec> r = {embed_op(),      linear_op(),     rmsnorm_op(),       rope_op(),
                                        gla_op(),        compress_k_op(), select_blocks_op(), sparse_attn_op(),
                                        dense_attn_op(), gate_op(),       mlp_op(),           residual_op(),
                                        logits_op()};
  return r;
}

std::string eq_num(double v) { return fmt::format("{:.10g}", v); }

std::string op_names() {
  std::vector<std::string> n;
  for (const OpSpec& s : registry()) n.push_back(s.name);
  return fmt::format("{}", fmt::join(n, ", "));
}

const OpSpec& find_op(const std::string& name) {
  for (const OpSpec& s : registry())
    if (s.name == name) return s;
  fail("unknown op '{}'; known: {} (salasim op --help lists their inputs)", excerpt(name), op_names());
}

const TapDef* find_tap(const std::string& kind, const OpSpec** owner) {
  for (const OpSpec& s : registry())
    for (const TapDef& t : s.taps)
      if (t.kind == kind) {
        if (owner) *owner = &s;
        return &t;
      }
  return nullptr;
}

}  // namespace salasim::op
