#!/usr/bin/env python3
"""Qwen3-8B's time to first token and peak GPU memory through Hugging Face transformers with torch SDPA, the
dense-attention baseline the MiniCPM-SALA paper compares against (docs/models-and-reports.md#minicpm-sala-beside-qwen3-8b-measured).

The model is built from a config.json (scenarios/models/qwen3-8b.json) with synthetic weights: transformers' own
initialisation (normal, std = initializer_range) on the GPU, in bf16, seeded. A prompt of N seeded random token ids
is prefilled in one forward pass (use_cache=True, logits of the last position only, as generation's first step
computes them) and the first token is taken by argmax; TTFT is that, timed on the host after a synchronisation,
the prompt already on the GPU. Peak memory is what the device has in use right after the prefill (total - free, the
CUDA context and the caching allocator's reservation included: the measure `salasim run` records), with the
allocator emptied between lengths.

One record per length, in the schema of reports/measured/<hw>/ (reports/measured.hpp), written to
OUT_DIR/run_<length>.json:

  python3 bench/qwen3_hf.py --config scenarios/models/qwen3-8b.json --contexts 16K,64K,128K,256K \
      --out-dir reports/measured/h200/qwen3-8b --revision "$(build/salasim --version | head -1)"

`salasim model compare` and `salasim report` read them from reports/measured/<hw>/qwen3-8b/ beside the
MiniCPM-SALA records of `salasim run` in reports/measured/<hw>/. A length that runs out of GPU memory writes no
record (the report then says "not measured" there).
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time


def parse_lengths(text):
    out = []
    for part in filter(None, text.split(",")):
        unit = {"K": 1 << 10, "M": 1 << 20}.get(part[-1].upper(), 1)
        digits = part[:-1] if unit > 1 else part
        if not digits.isdigit() or int(digits) == 0:
            sys.exit(f"qwen3_hf.py: --contexts: '{part}' is not a length (expected e.g. 16K, 1M or 4096)")
        out.append(int(digits) * unit)
    return out


def label(n):
    """The file-name spelling of reports/measured/: 64K, 1M, 2048K (as tests/docs/check_measured.py labels)."""
    if n % (1 << 20) == 0 and n < (2 << 20):
        return f"{n >> 20}M"
    return f"{n >> 10}K" if n % (1 << 10) == 0 else str(n)


def revision_of(text):
    """The revision as `salasim run` records it ("64ee668-dirty"): --revision may be that, or the first line of
    `salasim --version` ("salasim 0.1.0 (git 64ee668-dirty: built from uncommitted changes)")."""
    m = re.search(r"\(git ([^):\s]+)", text)
    return m.group(1) if m else text.strip()


def driver_version():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, check=True).stdout.split("\n")[0].strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def build_model(torch, transformers, config_path, seed):
    with open(config_path) as f:
        raw = json.load(f)
    if raw.get("model_type") != "qwen3":
        sys.exit(f"qwen3_hf.py: {config_path}: field 'model_type' is {raw.get('model_type')!r}, expected 'qwen3'")
    cfg = transformers.Qwen3Config(**{k: v for k, v in raw.items() if k not in ("architectures", "transformers_version")})
    cfg._attn_implementation = "sdpa"
    torch.manual_seed(seed)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            model = transformers.Qwen3ForCausalLM(cfg)
    finally:
        torch.set_default_dtype(prev)
    model = model.to(dtype=torch.bfloat16).eval()
    params = sum(p.numel() for p in model.parameters())
    return model, cfg, params


def make_record(context, times, peak, allocated, finite, gpu, command, config, revision, source):
    """One length's record in the schema of reports/measured.hpp (what `salasim run --json-out` writes, read by
    reports/measured.cpp): the fields the reader requires (date, gpu, command, config, context, decode_tokens,
    ttft_s, peak_vram_bytes, planner_peak_bytes) and the optional ones it shows (driver, revision, source); the
    rest (rounds, torch's own peak, finite logits) are kept for a person and ignored by the reader."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),  # UTC, as salasim run dates them
        "gpu": gpu,
        "driver": driver_version(),
        "command": command,
        "config": config,
        "context": context,
        "decode_tokens": 0,  # a prefill only: no decode_ms_per_token
        "ttft_s": statistics.median(times),
        "ttft_rounds_s": times,
        "peak_vram_bytes": int(peak),
        "torch_peak_allocated_bytes": int(allocated),
        "planner_peak_bytes": 0,  # no planner here; the reader takes 0 as none
        "logits_finite": finite,
        "revision": revision_of(revision),
        "source": source,
    }


def write_record(path, rec):
    """The record whole or not at all: a temporary beside it, renamed onto `path`."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rec, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def prefill(torch, model, ids):
    """TTFT of one prompt: the forward pass over it and the argmax of the last position's logits."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model(input_ids=ids, use_cache=True, logits_to_keep=1)
        tok = int(out.logits[0, -1].float().argmax().item())  # .item() waits for the GPU
    dt = time.perf_counter() - t0
    finite = bool(torch.isfinite(out.logits).all().item())
    free, total = torch.cuda.mem_get_info()
    del out
    return dt, tok, finite, total - free


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="scenarios/models/qwen3-8b.json")
    ap.add_argument("--contexts", default="16K,64K,128K,256K")
    ap.add_argument("--rounds", type=int, default=2, help="timed prefills per length (the median is recorded)")
    ap.add_argument("--warmup", default="4K", help="prompt length of the untimed warm-up prefill")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--revision", default="", help="the salasim revision of the call (salasim --version)")
    ap.add_argument("--force", action="store_true", help="replace records already in --out-dir")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("qwen3_hf.py: --rounds must be at least 1")
    contexts = parse_lengths(a.contexts)
    os.makedirs(a.out_dir, exist_ok=True)
    targets = {n: os.path.join(a.out_dir, f"run_{label(n)}.json") for n in contexts}
    if not a.force:
        for path in targets.values():
            if os.path.exists(path):
                sys.exit(f"qwen3_hf.py: {path} exists (pass --force to replace it)")

    import torch
    import transformers
    if not torch.cuda.is_available():
        sys.exit("qwen3_hf.py: torch sees no CUDA GPU")
    t0 = time.perf_counter()
    model, cfg, params = build_model(torch, transformers, a.config, a.seed)
    print(f"Qwen3ForCausalLM from {a.config}: {params:,} parameters, bf16, synthetic (seed {a.seed}), "
          f"attention {cfg._attn_implementation}, built in {time.perf_counter() - t0:.1f} s; torch {torch.__version__}, "
          f"transformers {transformers.__version__}, {torch.cuda.get_device_name()}", flush=True)
    gen = torch.Generator(device="cuda").manual_seed(a.seed)

    def prompt(n):
        return torch.randint(0, cfg.vocab_size, (1, n), device="cuda", generator=gen)

    prefill(torch, model, prompt(parse_lengths(a.warmup)[0]))
    props = torch.cuda.get_device_properties(0)
    gpu = f"{props.name} (sm_{props.major}{props.minor}, {props.multi_processor_count} SMs, " \
          f"{props.total_memory / 2**30:.1f} GiB)"
    command = "python3 bench/qwen3_hf.py " + " ".join(sys.argv[1:])
    for n in contexts:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        ids = prompt(n)
        times, peak, finite = [], 0, True
        for r in range(a.rounds):
            try:
                dt, tok, fin, used = prefill(torch, model, ids)
            except torch.cuda.OutOfMemoryError:
                break  # no record: the report says "not measured" at this length
            times.append(dt)
            peak = max(peak, used)
            finite = finite and fin
            print(f"  {label(n)} round {r + 1}: TTFT {dt:.3f} s, first token {tok}, device in use {used / 2**30:.2f} GiB",
                  flush=True)
        if len(times) < a.rounds:
            print(f"qwen3-8b {label(n)}: out of GPU memory in round {len(times) + 1}; no record written", flush=True)
            del ids
            continue
        rec = make_record(context=n, times=times, peak=peak, allocated=int(torch.cuda.max_memory_allocated()),
                          finite=finite, gpu=gpu, command=command, config=a.config, revision=a.revision,
                          source=f"Hugging Face transformers {transformers.__version__} Qwen3ForCausalLM, attention "
                                 f"sdpa (torch {torch.__version__}), bf16 synthetic weights (seed {a.seed}), one "
                                 f"forward pass over the prompt, median of {a.rounds}")
        write_record(targets[n], rec)
        print(f"qwen3-8b {label(n)}: TTFT {rec['ttft_s']:.3f} s (median of {a.rounds}), peak {peak / 2**30:.2f} GiB "
              f"-> {targets[n]}", flush=True)


if __name__ == "__main__":
    main()
