#!/usr/bin/env python3
"""The official Hugging Face modeling code as a whole-model peer: loads a checkpoint written by
`salasim synth-checkpoint` into `modeling_minicpm_sala.py` (float32), runs the same prompt through it and through
`salasim ref --dump-taps` (float64), and compares the hidden state after every decoder layer, the final norm and the
last row's logits, in float32. A wiring difference (embedding scale, residual scale, norm/gate order, logits divisor)
shows as a layer whose error jumps by orders of magnitude; float32 rounding alone stays far below --max-rel.

  python3 tools/peers/hf_whole_model.py --salasim build/salasim --modeling-dir DIR --checkpoint CKPT --tokens 256

DIR holds the official modeling_minicpm_sala.py (and configuration_minicpm_sala.py: without it a stand-in config
class of this script's own carries config.json's fields, and the output says so). Third-party files are copied into
a temporary package, never into the repository. Prompts must stay below the config's dense_len (8192): there the
sparse layers attend densely in HF and in salasim alike, so infllmv2's CUDA extension is not needed.
"""
import argparse
import glob
import json
import os
import shutil
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

# The stand-in for configuration_minicpm_sala.py when DIR lacks it: every config.json field becomes an attribute,
# which is all the modeling code reads from its config.
STAND_IN_CONFIG = '''"""Written by salasim's tools/peers/hf_whole_model.py: a stand-in for the official configuration file."""
from transformers import PretrainedConfig


class MiniCPMSALAConfig(PretrainedConfig):
    model_type = "minicpm_sala"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
'''


def compat_shims(torch):
    """Supplies, only where this transformers lacks them, the names the modeling file imports that transformers 5
    removed; returns what was supplied (printed with the results)."""
    import transformers
    import transformers.pytorch_utils as pu
    import transformers.utils as tu
    import transformers.utils.import_utils as iu

    done = []
    try:
        import transformers.modeling_attn_mask_utils  # noqa: F401
    except ImportError:
        m = types.ModuleType("transformers.modeling_attn_mask_utils")

        def causal_4d(attention_mask, input_shape, inputs_embeds, past_key_values_length, sliding_window=None):
            # Additive mask [B, 1, T, past+T]: 0 where key j <= past + i and (if given) the key is not padding.
            B, T = input_shape
            L = past_key_values_length + T
            keep = torch.arange(L, device=inputs_embeds.device)[None, :] <= (past_key_values_length + torch.arange(T, device=inputs_embeds.device))[:, None]
            keep = keep[None, None].expand(B, 1, T, L)
            if attention_mask is not None:
                keep = keep & attention_mask[:, None, None, :L].bool()
            neg = torch.finfo(inputs_embeds.dtype).min
            return torch.zeros(keep.shape, dtype=inputs_embeds.dtype, device=inputs_embeds.device).masked_fill(~keep, neg)

        def causal_4d_sdpa(attention_mask, input_shape, inputs_embeds, past_key_values_length, sliding_window=None):
            # None lets SDPA apply its own causal mask (what transformers 4 did without padding on a fresh prompt).
            if attention_mask is None and past_key_values_length == 0:
                return None
            return causal_4d(attention_mask, input_shape, inputs_embeds, past_key_values_length)

        m._prepare_4d_causal_attention_mask = causal_4d
        m._prepare_4d_causal_attention_mask_for_sdpa = causal_4d_sdpa
        sys.modules[m.__name__] = m
        transformers.modeling_attn_mask_utils = m
        done.append("transformers.modeling_attn_mask_utils (causal masks)")
    if not hasattr(iu, "is_torch_fx_available"):
        iu.is_torch_fx_available = lambda: False
        done.append("import_utils.is_torch_fx_available")
    if not hasattr(pu, "ALL_LAYERNORM_LAYERS"):
        pu.ALL_LAYERNORM_LAYERS = [torch.nn.LayerNorm]
        done.append("pytorch_utils.ALL_LAYERNORM_LAYERS")
    if not hasattr(pu, "is_torch_greater_or_equal_than_1_13"):
        pu.is_torch_greater_or_equal_than_1_13 = True
        done.append("pytorch_utils.is_torch_greater_or_equal_than_1_13")
    if not hasattr(tu, "is_flash_attn_greater_or_equal_2_10"):
        tu.is_flash_attn_greater_or_equal_2_10 = lambda: True
        done.append("utils.is_flash_attn_greater_or_equal_2_10")
    return done


def gla_shims(mod, torch, device):
    """fla-core >= 0.6 rejects the `head_first=False` the modeling file passes to chunk_simple_gla; on a CPU the
    Triton kernels cannot run, so fla's own naive recurrence (pure torch) stands in for both GLA entry points."""
    done = []
    chunk = mod.chunk_simple_gla

    def chunk_without_head_first(*args, head_first=False, **kwargs):
        if head_first:
            raise ValueError("hf_whole_model.py: head_first=True is not supported by this fla")
        return chunk(*args, **kwargs)

    mod.chunk_simple_gla = chunk_without_head_first
    done.append("chunk_simple_gla without head_first (fla-core >= 0.6 removed it)")
    if device == "cpu":
        from fla.ops.simple_gla.naive import naive_recurrent_simple_gla

        def naive(q, k, v, g_gamma=None, scale=None, initial_state=None, output_final_state=True, cu_seqlens=None, **_):
            if cu_seqlens is not None:
                raise ValueError("hf_whole_model.py: the CPU GLA stand-in takes one unpadded sequence")
            g = g_gamma.to(q.dtype).view(1, 1, -1).expand(q.shape[0], q.shape[1], -1).contiguous()
            return naive_recurrent_simple_gla(q, k, v, g, scale=scale, initial_state=initial_state,
                                              output_final_state=output_final_state)

        mod.chunk_simple_gla = naive
        mod.fused_recurrent_simple_gla = naive
        done.append("CPU: fla's naive_recurrent_simple_gla for chunk/fused_recurrent (Triton needs CUDA)")
    return done


def load_hf(a, torch, cfg, tmp):
    """Imports DIR's modeling code as a package in tmp; returns (model, notes)."""
    notes = []
    pkg = os.path.join(tmp, "salasim_hf_peer")
    os.makedirs(pkg)
    open(os.path.join(pkg, "__init__.py"), "w").close()
    for f in glob.glob(os.path.join(a.modeling_dir, "*.py")):
        shutil.copy(f, pkg)
    if not os.path.exists(os.path.join(pkg, "modeling_minicpm_sala.py")):
        peerlib.fail(f"--modeling-dir {a.modeling_dir}: no modeling_minicpm_sala.py there")
    if not os.path.exists(os.path.join(pkg, "configuration_minicpm_sala.py")):
        with open(os.path.join(pkg, "configuration_minicpm_sala.py"), "w") as f:
            f.write(STAND_IN_CONFIG)
        notes.append("configuration_minicpm_sala.py: not in --modeling-dir; a stand-in config class carries config.json's fields")
    for var in ("MINICPM_SALA_FORCE_ALL_LIGHTNING", "INFINI_DEBUG_LOG", "INFINI_DEBUG_ATTN_DUMP"):
        if os.environ.pop(var, None) is not None:
            notes.append(f"unset {var} (a debug switch some copies of the modeling file read)")
    notes += [f"shim: {s}" for s in compat_shims(torch)]
    sys.path.insert(0, tmp)
    import importlib

    conf_mod = importlib.import_module("salasim_hf_peer.configuration_minicpm_sala")
    mod = importlib.import_module("salasim_hf_peer.modeling_minicpm_sala")
    notes += [f"shim: {s}" for s in gla_shims(mod, torch, a.device)]
    config = conf_mod.MiniCPMSALAConfig(**cfg)
    config._attn_implementation = "sdpa"  # dense SDPA for the sparse layers: exact below dense_len
    with torch.device(a.device):
        model = mod.MiniCPMSALAForCausalLM(config)
    model = model.to(device=a.device, dtype=torch.float32).eval()
    return model, notes


def load_checkpoint(model, ckpt, torch):
    """Every safetensors shard of ckpt into the model (as float32); missing or unexpected names are an error."""
    from safetensors.torch import load_file

    shards = sorted(glob.glob(os.path.join(ckpt, "*.safetensors")))
    if not shards:
        peerlib.fail(f"--checkpoint {ckpt}: no *.safetensors files (write one: salasim synth-checkpoint --out {ckpt})")
    sd = {}
    for s in shards:
        sd.update(load_file(s))
    missing, unexpected = model.load_state_dict(sd, strict=False)
    if missing or unexpected:
        peerlib.fail(f"{ckpt} does not fit the modeling code: missing {list(missing)[:8]}, "
                 f"unexpected {list(unexpected)[:8]} (shapes and names: docs/spec.md section 12)")
    return len(sd)


def run_hf(model, tokens, torch, device):
    """Hidden states after the embedding, every decoder layer and the final norm ([T, D] each), and the last row's
    logits ([1, V]), all float32 numpy."""
    got = {}
    hooks = [model.model.layers[0].register_forward_pre_hook(
        lambda m, args, kwargs=None: got.__setitem__("/prefill/embed/out", args[0][0].detach()))]
    for i, layer in enumerate(model.model.layers):
        hooks.append(layer.register_forward_hook(
            lambda m, args, out, i=i: got.__setitem__(f"/prefill/layer_{i:02d}/residual/h", (out[0] if isinstance(out, tuple) else out)[0].detach())))
    hooks.append(model.model.norm.register_forward_hook(lambda m, args, out: got.__setitem__("/prefill/final/norm", out[0].detach())))
    with torch.no_grad():
        ids = torch.tensor([tokens], dtype=torch.long, device=device)
        out = model(input_ids=ids, use_cache=False, return_dict=True)
    for h in hooks:
        h.remove()
    got["/prefill/final/logits"] = out.logits[0, -1:].detach()
    return {k: v.float().cpu().numpy() for k, v in got.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--salasim", required=True, help="the salasim binary (build/salasim), for `salasim ref --dump-taps`")
    ap.add_argument("--modeling-dir", required=True, help="folder with the official modeling_minicpm_sala.py")
    ap.add_argument("--checkpoint", required=True, help="folder written by `salasim synth-checkpoint` (or any checkpoint of the model)")
    ap.add_argument("--tokens", type=int, default=256, help="prompt length (random token ids)")
    ap.add_argument("--seed", type=int, default=7, help="seed of the random prompt")
    ap.add_argument("--device", default=None, help="cuda or cpu (default: cuda when torch sees one)")
    ap.add_argument("--dump", help="keep salasim's tap dump here (default: a temporary file)")
    ap.add_argument("--max-rel", type=float, default=1e-3,
                    help="verdict threshold on every row's rel-RMS (float32 vs float64 rounding is far below it; a "
                         "wiring difference, a missing scale or swapped order, is 1e-2 or more)")
    a = ap.parse_args()
    h5py, np = peerlib.need("h5py", "numpy")
    torch, transformers, _, _, _ = peerlib.need("torch", "transformers", "safetensors", "fla", "einops",
                                             why="the HF modeling code runs on torch, with fla for the Lightning layers")
    a.device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cfg_path = os.path.join(a.checkpoint, "config.json")
    try:
        with open(cfg_path) as f:
            cfg = json.load(f)
    except (OSError, ValueError) as e:
        peerlib.fail(f"--checkpoint {a.checkpoint}: cannot read config.json ({e})")
    dense_len = int((cfg.get("sparse_config") or {}).get("dense_len", 8192))
    if not 1 <= a.tokens < dense_len:
        peerlib.fail(f"--tokens {a.tokens}: must be in [1, {dense_len}) (dense_len): past it HF's sparse "
                 "layers need infllmv2's CUDA extension, which this peer does not use")
    if cfg.get("rope_scaling") is None:  # RoPE tables are built for max_position_embeddings rows; only T are read
        cfg["max_position_embeddings"] = max(a.tokens, 16)
    rng = np.random.default_rng(a.seed)
    tokens = rng.integers(0, int(cfg["vocab_size"]), size=a.tokens).tolist()

    with tempfile.TemporaryDirectory() as tmp:
        scen = os.path.join(tmp, "hf-peer.json")
        dump = a.dump or os.path.join(tmp, "ref.h5")
        with open(scen, "w") as f:
            json.dump({"name": "hf-peer", "description": "hf_whole_model.py's prompt", "model": os.path.abspath(cfg_path),
                       "weights": {"checkpoint": os.path.abspath(a.checkpoint)}, "prompt": {"tokens": tokens},
                       "decode_steps": 0}, f)
        try:
            layers = [f"layer_{i:02d}/residual/h" for i in range(int(cfg["num_hidden_layers"]))]
            peerlib.run_salasim(a.salasim, ["ref", "--scenario", scen, "--taps", "embed/out", *layers, "final/",
                                            "--dump-taps", dump], "salasim ref")
        except peerlib.SalasimError as e:
            peerlib.fail(f"{e}", 3)
        model, notes = load_hf(a, torch, cfg, tmp)
        n = load_checkpoint(model, a.checkpoint, torch)
        hf = run_hf(model, tokens, torch, a.device)
        ref = peerlib.read_taps(dump, list(hf))

    mixers = cfg.get("mixer_types", [])
    table = peerlib.Table(f"HF modeling_minicpm_sala.py (float32, {a.device}) vs salasim ref (float64), both as float32: "
                          f"{a.tokens} tokens, seed {a.seed}",
                          ("tap", "mixer", "rel-RMS", "max abs", "shape"))
    worst = 0.0
    for name in ["/prefill/embed/out"] + [f"/prefill/layer_{i:02d}/residual/h" for i in range(len(model.model.layers))] \
            + ["/prefill/final/norm", "/prefill/final/logits"]:
        e = peerlib.errors(hf[name].astype(np.float32), ref[name].astype(np.float32))
        layer = name.split("/")[2]
        mixer = mixers[int(layer[6:])] if layer.startswith("layer_") and int(layer[6:]) < len(mixers) else ""
        table.add_text(name, mixer, f"{e['rel_rms']:.2e}", f"{e['max_abs']:.2e}", "x".join(map(str, ref[name].shape)))
        worst = max(worst, e["rel_rms"])
    print(table.render())
    print(f"\ncheckpoint {a.checkpoint}: {n} tensors; modeling code from {a.modeling_dir}")
    print(f"prompt {a.tokens} tokens < dense_len {dense_len}: the sparse layers attend densely in HF (SDPA) and in "
          "salasim; infllmv2's CUDA extension is not used")
    for s in notes:
        print(f"note: {s}")
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    ok = worst <= a.max_rel
    print(f"verdict: {'PASS' if ok else 'FAIL'}: worst rel-RMS {worst:.2e} {'<=' if ok else '>'} {a.max_rel:g}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
