// `salasim op` on the reference and on the peer (scenarios/op_backends.hpp): the reference call of the op's
// definition (ops/op.hpp), at float64 or at the peer's roundings.
#include "model/error.hpp"
#include "reference/tensor.hpp"
#include "scenarios/op_backends.hpp"

namespace salasim {

namespace {

TapMap run(const op::OpInputs& x, const ref::Num& num) {
  TapMap r = x.spec->reference(x, num);
  const std::vector<op::OutputSpec>& outs = x.spec->outputs;
  for (size_t i = 0; i < outs.size(); ++i) {
    const auto it = r.find(outs[i].tap);
    if (it == r.end()) internal_fail("op {}: the reference call left out output {}", x.spec->name, outs[i].tap);
    it->second.order = int64_t(i);
  }
  if (r.size() != outs.size()) internal_fail("op {}: the reference call made {} outputs", x.spec->name, r.size());
  return r;
}

}  // namespace

TapMap run_op_reference(const op::OpInputs& x, bool peer) {
  return peer ? run(op::as_gpu_stores(x), ref::peer()) : run(x, ref::f64());
}

}  // namespace salasim
