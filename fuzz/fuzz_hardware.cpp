// Fuzz target: a hardware profile (reports/hardware.hpp load_hw, the reports/hw/*.json format). A profile that
// loads must give the latency model finite, positive predictions for the released model and the dense comparator
// (its ranges are what keeps a 1e308 or a 1e-300 ceiling from turning into inf or 0 seconds).
#include <cmath>
#include <cstdlib>
#include <string>

#include "fuzz/support.hpp"
#include "reports/hardware.hpp"
#include "reports/latency.hpp"
#include "reports/model_spec.hpp"

using namespace salasim;
using namespace salasim::reports;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Model sala = load_model("scenarios/models/minicpm-sala-9b.json");
  static const Model dense = load_model("scenarios/models/qwen3-8b.json");
  const std::string path = fuzz::write_scratch("hw.json", data, size);
  fuzz::expect_clean([&] {
    const HwProfile hw = load_hw(path);
    for (const Model* m : {&sala, &dense}) {
      const LatencyPrediction p = predict_latency(*m, WeightFormat::Bf16, hw, hw.efficiency, 65536, 16, 16384);
      if (!(std::isfinite(p.ttft_s) && p.ttft_s > 0 && std::isfinite(p.e2e_s) && std::isfinite(p.decode_ms))) {
        std::fprintf(stderr, "fuzz: profile %s loads, but predicts TTFT %g s, decode %g ms\n", path.c_str(), p.ttft_s,
                     p.decode_ms);
        std::abort();
      }
    }
  });
  return 0;
}
