// The memory model of a run (reports/memory_model.hpp, workspace.hpp): the comparator's facts by hand, growth
// with context, the peak as the sum of its parts, and where each model runs out of memory.
#include <algorithm>

#include "model/memory.hpp"
#include "model/runner_plan.hpp"
#include "reports/hardware.hpp"
#include "reports/memory_model.hpp"
#include "reports/sweep.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::reports;

TEST_CASE("memory model: the comparator's KV cache is 147,456 B/token", "[memory_model]") {
  const Model q = load_model("scenarios/models/qwen3-8b.json");
  CHECK(model_kv_bytes_per_token(q) == 36 * 2 * 8 * 128 * 2);
  CHECK(model_kv_bytes_per_token(q) == 147456);
  const MemoryBreakdown b = memory_breakdown(q, WeightFormat::Bf16, 65536, WorkspaceParams{});
  CHECK(b.kv_bytes == 147456LL * 65536);
  CHECK(b.compressed_key_bytes == 0);
  CHECK(b.gla_state_bytes == 0);
}

TEST_CASE("memory model: the comparator's bf16 weights match a hand count", "[memory_model]") {
  const Model q = load_model("scenarios/models/qwen3-8b.json");
  // embed + lm_head (untied) + 36 x (q, o 4096^2; k, v 1024 x 4096; MLP 3 x 4096 x 12288; 2 norms; q/k norm) + norm
  const int64_t layer = 2LL * 4096 * 4096 + 2LL * 1024 * 4096 + 3LL * 4096 * 12288 + 2 * 4096 + 2 * 128;
  const int64_t params = 2LL * 151936 * 4096 + 36 * layer + 4096;
  CHECK(params == 8190735360LL);  // Qwen3-8B's published 8.2B
  CHECK(model_weight_bytes(q, WeightFormat::Bf16) == 2 * params);
}

TEST_CASE("memory model: the released config's bf16 peak is weights + caches + workspace", "[memory_model]") {
  const Model s = load_model("scenarios/models/minicpm-sala-9b.json");
  const int64_t L = 1 << 20;
  const MemoryBreakdown b = memory_breakdown(s, WeightFormat::Bf16, L, WorkspaceParams{});
  CHECK(b.weight_bytes == 18954407936LL);
  CHECK(b.kv_bytes == 8192LL * L);
  CHECK(b.compressed_key_bytes == compressed_key_bytes(s.sala, L));
  CHECK(b.gla_state_bytes == int64_t(48) << 20);
  CHECK(b.workspace_bytes == workspace_peak(b.workspace_terms));
  CHECK(b.peak() == b.weight_bytes + b.kv_bytes + b.compressed_key_bytes + b.gla_state_bytes + b.workspace_bytes);
  // docs/performance.md's goals: <= 30 GiB at 1M, <= 38 GiB at 2048K.
  CHECK(b.peak() <= int64_t(30) << 30);
  CHECK(memory_breakdown(s, WeightFormat::Bf16, 2 * L, WorkspaceParams{}).peak() <= int64_t(38) << 30);
}

TEST_CASE("memory model: peak grows with context, caches linearly", "[memory_model]") {
  for (const char* cfg : {"scenarios/models/minicpm-sala-9b.json", "scenarios/models/qwen3-8b.json"}) {
    INFO(cfg);
    const Model m = load_model(cfg);
    int64_t last_peak = 0;
    for (int64_t L = 4096; L <= 2097152; L *= 2) {
      const MemoryBreakdown b = memory_breakdown(m, WeightFormat::Bf16, L, WorkspaceParams{});
      const MemoryBreakdown b2 = memory_breakdown(m, WeightFormat::Bf16, 2 * L, WorkspaceParams{});
      INFO(L);
      CHECK(b.peak() > last_peak);
      CHECK(b2.kv_bytes == 2 * b.kv_bytes);
      CHECK(b2.weight_bytes == b.weight_bytes);
      CHECK(b2.gla_state_bytes == b.gla_state_bytes);
      last_peak = b.peak();
    }
  }
}

TEST_CASE("workspace: the peak is the shared rows plus the largest phase", "[workspace]") {
  const std::vector<WorkspaceTerm> t = {{"a", "", "all", 10, ""}, {"b", "", "mlp", 5, ""}, {"c", "", "mlp", 6, ""},
                                        {"d", "", "sparse", 7, ""}, {"e", "", "all", 1, ""}};
  CHECK(workspace_peak(t) == 10 + 1 + 11);
}

TEST_CASE("workspace: the SALA rows are the CUDA runner's own buffers", "[workspace]") {
  const Model s = load_model("scenarios/models/minicpm-sala-9b.json");
  for (int64_t L : {int64_t(4096), int64_t(65536), int64_t(2097152)}) {
    int64_t sum = 0, sel = -1;
    for (const WorkspaceTerm& w : sala_prefill_workspace(s.sala, WorkspaceParams{}, L)) {
      sum += w.bytes;
      if (w.name == "selection workspace") sel = w.bytes;
    }
    INFO("L = " << L);
    CHECK(sum == int64_t(runner_workspace(s.sala, 16384, L, false).total()));
    CHECK(sel == int64_t(select_workspace_bytes(std::min<int64_t>(16384, L), L, 32, 2, 32, 16)));
  }
  // the selection workspace grows with the keys up to its 256 MiB budget (plus alignment), then holds fewer queries
  auto sel = [&](int64_t L) { return select_workspace_bytes(16384, L, 32, 2, 32, 16); };
  CHECK(sel(16384) < sel(65536));
  CHECK(sel(65536) <= kSelectBudget + 6 * 256);
  CHECK(sel(2097152) <= kSelectBudget + 6 * 256);
  // The chunk shrinks to the prompt: a 4K prompt's MLP buffers are [4096, 2 x 16384] bf16.
  for (const WorkspaceTerm& w : sala_prefill_workspace(s.sala, WorkspaceParams{}, 4096))
    if (w.name == "mlp gate|up") CHECK(w.bytes == 4096LL * 2 * 16384 * 2);
}

TEST_CASE("select_layout: sections in order and 256-byte aligned, the split top-k's candidates for <= 4 queries", "[workspace]") {
  // 2M keys: 32768 blocks (32 segments of 1024), 32767 K2 windows (64 splits of 512, or 256 of 128 for <= 2 rows);
  // H = 32, G = 2
  const int64_t n2 = 32767, nb = 32768;
  for (const int64_t rows : {int64_t(1), int64_t(2), int64_t(3), int64_t(4), int64_t(300)}) {
    const SelectLayout L = select_layout(rows, n2, nb, 32, 2);
    INFO("rows " << rows);
    const int64_t nsplit = rows <= 2 ? 256 : 64;
    CHECK(L.nsplit == nsplit);
    CHECK(L.nseg == 32);
    CHECK(L.part == 0);
    CHECK(L.lse >= L.part + size_t(rows * 32 * nsplit) * 8);
    CHECK(L.pooled >= L.lse + size_t(rows * 32) * 4);
    CHECK(L.cand_ids >= L.pooled + size_t(rows * 2 * L.nbs) * 2);
    const size_t n_cand = size_t(std::min<int64_t>(rows, kTopkSplitRows) * 2 * 32) * kTopkCandMax;
    CHECK(L.cand_keys >= L.cand_ids + n_cand * 4);
    CHECK(L.total >= L.cand_keys + n_cand * 2);
    // a workspace sized for `rows` queries also holds a call of 1 or 2 (their finer partials)
    const size_t ws = select_workspace_bytes(rows, 2097152, 32, 2, 32, 16);
    CHECK(ws >= select_layout(1, n2, nb, 32, 2).total);
    CHECK(ws >= select_layout(std::min<int64_t>(rows, 2), n2, nb, 32, 2).total);
    for (const size_t off : {L.lse, L.pooled, L.cand_ids, L.cand_keys, L.total}) CHECK(off % 256 == 0);
  }
  // the candidates stop growing past 4 queries: a prefill sub-chunk pays for 4 queries' candidates, not its own
  const SelectLayout a = select_layout(4, n2, nb, 32, 2), b = select_layout(300, n2, nb, 32, 2);
  CHECK(a.total - a.cand_ids == b.total - b.cand_ids);
}

TEST_CASE("memory model: out of memory where the paper reports it on the RTX 5090", "[memory_model]") {
  // docs/ruler.md Part B: Qwen3-8B bf16 runs at 64K and is OOM from 128K; GPTQ runs at 128K and is OOM at 256K.
  const HwProfile hw = load_hw("rtx5090");
  const Model q = load_model("scenarios/models/qwen3-8b.json");
  auto ok = [&](WeightFormat f, int64_t L) { return fits(memory_breakdown(q, f, L, WorkspaceParams{}), hw); };
  CHECK(ok(WeightFormat::Bf16, 65536));
  CHECK_FALSE(ok(WeightFormat::Bf16, 131072));
  CHECK(ok(WeightFormat::W4A16, 131072));
  CHECK_FALSE(ok(WeightFormat::W4A16, 262144));
  // MiniCPM-SALA bf16 runs to 1024K on the 32 GB card.
  const Model s = load_model("scenarios/models/minicpm-sala-9b.json");
  CHECK(fits(memory_breakdown(s, WeightFormat::Bf16, 1048576, WorkspaceParams{}), hw));
}
