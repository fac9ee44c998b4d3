#!/usr/bin/env python3
"""Test records for `salasim model compare` / `salasim report --measured`, written into a scratch folder laid out as
reports/measured/ (never into reports/measured/ itself: these numbers are made up):
  OUT/h200/run_64K.json, run_256K.json             MiniCPM-SALA, fields as `salasim run --json-out` writes them
  OUT/h200/qwen3-8b/run_64K.json, run_128K.json     Qwen3-8B, by bench/qwen3_hf.py's own make_record/write_record
So a change to the script's record that the reader (reports/measured.cpp) would refuse fails this test.
Usage: qwen3_records.py SOURCE_DIR OUT"""
import importlib.util
import json
import os
import sys

source, out = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("qwen3_hf", os.path.join(source, "bench", "qwen3_hf.py"))
qwen3_hf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(qwen3_hf)  # torch and transformers are imported inside main() only

sala_dir = os.path.join(out, "h200")
qwen_dir = os.path.join(sala_dir, "qwen3-8b")
os.makedirs(qwen_dir, exist_ok=True)
for context, ttft, peak in ((65536, 2.5, 23138729984), (262144, 10.0, 25000000000)):
    label = qwen3_hf.label(context)
    with open(os.path.join(sala_dir, f"run_{label}.json"), "w") as f:
        json.dump({"date": "2026-12-05", "gpu": "test GPU", "command": "salasim run (test record)",
                   "config": "scenarios/models/minicpm-sala-9b.json", "context": context, "decode_tokens": 0,
                   "ttft_s": ttft, "peak_vram_bytes": peak, "planner_peak_bytes": peak - 600000000,
                   "revision": "test"}, f)
for context, ttft, peak in ((65536, 4.0, 30000000000), (131072, 11.0, 45000000000)):
    rec = qwen3_hf.make_record(context=context, times=[ttft, ttft + 0.2], peak=peak, allocated=peak - 10**9,
                               finite=True, gpu="test GPU", command="python3 bench/qwen3_hf.py (test record)",
                               config="scenarios/models/qwen3-8b.json",
                               revision="salasim 0.1.0 (git abc1234-dirty: built from uncommitted changes)",
                               source="test record, not a measurement")
    qwen3_hf.write_record(os.path.join(qwen_dir, f"run_{qwen3_hf.label(context)}.json"), rec)
print(f"qwen3_records: 2 + 2 test records under {out}")
