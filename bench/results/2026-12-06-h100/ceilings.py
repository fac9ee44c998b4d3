# The card's ceilings, measured: bf16 GEMM 8192^3 (fp32 accumulate) on random data, device-to-device copy (read+write).
import json, sys, torch
torch.manual_seed(0)
dev = torch.device("cuda")
p = torch.cuda.get_device_properties(0)
def med(f, n):
    ts = []
    for _ in range(3): f()
    torch.cuda.synchronize()
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) / 1e3)
    ts.sort(); return ts[len(ts) // 2]
N = 8192
x = torch.randn(N, N, device=dev, dtype=torch.bfloat16); y = torch.randn(N, N, device=dev, dtype=torch.bfloat16)
t_gemm = med(lambda: x @ y, 20)
src = torch.randn(1 << 30, device=dev, dtype=torch.float32); dst = torch.empty_like(src)  # 4 GiB each
t_copy = med(lambda: dst.copy_(src), 10)
free, total = torch.cuda.mem_get_info()
out = {"gpu": p.name, "sms": p.multi_processor_count, "memory_total_bytes": total, "memory_free_bytes": free,
       "gemm_8192_bf16_s": t_gemm, "gemm_tflops": 2 * N**3 / t_gemm / 1e12,
       "copy_bytes_read_plus_write": 2 * src.numel() * 4, "copy_s": t_copy,
       "copy_tb_per_s": 2 * src.numel() * 4 / t_copy / 1e12, "torch": torch.__version__}
json.dump(out, open(sys.argv[1], "w"), indent=1); print(out)
