#!/usr/bin/env python3
"""The lent card's ceilings, measured with torch and CUDA events (medians after 3 warm-ups): a bf16 GEMM 8192^3 with
fp32 accumulate on random data (20 timings), a device-to-device copy of 4 GiB counted as read + write (10 timings),
and the memory cudaMemGetInfo reports. The record is what reports/hw/<card>.json's ceilings quote and
bench/RESULTS.md shows:

  python3 bench/ceilings.py reports/measured/h100/ceilings/ceilings.json
"""
import json
import sys
import time

import torch


def median_s(f, n):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def main():
    if len(sys.argv) != 2:
        print("usage: ceilings.py OUT.json", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("ceilings.py: no CUDA device for torch", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    dev = torch.device("cuda")
    p = torch.cuda.get_device_properties(0)
    n = 8192
    x = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    y = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
    t_gemm = median_s(lambda: x @ y, 20)
    src = torch.randn(1 << 30, device=dev, dtype=torch.float32)  # 4 GiB, and as much again for the copy
    dst = torch.empty_like(src)
    t_copy = median_s(lambda: dst.copy_(src), 10)
    free, total = torch.cuda.mem_get_info()
    out = {"gpu": p.name, "sms": p.multi_processor_count, "memory_total_bytes": total, "memory_free_bytes": free,
           "gemm_8192_bf16_s": t_gemm, "gemm_tflops": 2 * n**3 / t_gemm / 1e12,
           "copy_bytes_read_plus_write": 2 * src.numel() * 4, "copy_s": t_copy,
           "copy_tb_per_s": 2 * src.numel() * 4 / t_copy / 1e12, "torch": torch.__version__,
           "date": time.strftime("%Y-%m-%d"), "command": "python3 bench/ceilings.py " + sys.argv[1]}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
