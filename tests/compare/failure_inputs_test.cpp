// What a failure dump puts beside a failing tap: the taps its op read, of the same phase, from both sides.
#include "compare/failure_inputs.hpp"
#include "tests/support/catch.hpp"

using namespace salasim;

TEST_CASE("failure_inputs: each op names the taps it read, in its own phase", "[failure_inputs]") {
  using V = std::vector<std::string>;
  CHECK(op_input_taps("/prefill/layer_01/lightning/gla/out") ==
        V{"/prefill/layer_01/lightning/qk_rope/q", "/prefill/layer_01/lightning/qk_rope/k",
          "/prefill/layer_01/lightning/proj/v", "/prefill/layer_01/input_norm/out"});
  CHECK(op_input_taps("/decode_0002/layer_03/sparse/attn/out") ==
        V{"/decode_0002/layer_03/sparse/proj/q", "/decode_0002/layer_03/sparse/proj/k",
          "/decode_0002/layer_03/sparse/proj/v", "/decode_0002/layer_03/sparse/select/blocks",
          "/decode_0002/layer_03/input_norm/out"});
  CHECK(op_input_taps("/prefill/layer_00/input_norm/out") == V{"/prefill/embed/out"});
  CHECK(op_input_taps("/prefill/layer_02/input_norm/out") == V{"/prefill/layer_01/residual/h"});
  CHECK(op_input_taps("/prefill/final/logits") == V{"/prefill/final/norm"});
  CHECK(op_input_taps("/prefill/embed/out").empty());
}

TEST_CASE("failure_inputs: entries get the inputs present on each side, named without '/'", "[failure_inputs]") {
  const Tap t{{2, 3}, {1, 2, 3, 4, 5, 6}, false, 0};
  const TapMap ref = {{"/prefill/layer_01/residual/h", t}, {"/prefill/layer_02/residual/h", t},
                      {"/prefill/layer_02/input_norm/out", t}, {"/prefill/layer_02/mlp/act", t}};
  const TapMap backend = {{"/prefill/layer_02/mlp/act", t}};
  std::vector<FailureEntry> e(2);
  e[0].name = "/prefill/layer_02/mlp/out";
  e[1].name = "/prefill/final/norm";
  add_failure_inputs(e, ref, backend);
  CHECK(e[0].inputs.size() == 3);
  CHECK(e[0].inputs.count("reference.layer_02.mlp.act"));
  CHECK(e[0].inputs.count("backend.layer_02.mlp.act"));
  CHECK(e[0].inputs.count("reference.layer_02.input_norm.out"));
  CHECK(e[1].inputs.count("reference.layer_02.residual.h"));  // the last layer's residual feeds the final norm
}
