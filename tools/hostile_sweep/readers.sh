#!/usr/bin/env bash
# Hostile cases of issue 35 item 3 (reader side), run against a salasim binary; prints a markdown table.
# Usage: tools/hostile_sweep/readers.sh BIN BASELINE_BIN OUT.md   (from anywhere; BASELINE_BIN: a salasim built from
# the tree before the fixes, for the "exit before" column; the same BIN twice when there is none)
set -u
BIN=$(realpath "$1"); BASE=$(realpath "$2"); OUT=$(realpath -m "$3")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
C=$ROOT/build/hostile_sweep/readers; rm -rf $C; mkdir -p $C
py() { python3 - "$@"; }
row() {  # class, case, command (run via bash -c)
  local cls=$1 name=$2 cmd=$3
  local out rc
  out=$(cd "$ROOT" && timeout 60 bash -o pipefail -c "$cmd" 2>&1 < /dev/null); rc=$?
  local first
  first=$(printf '%s\n' "$out" | grep -a -m1 -E "error|salasim:|--[a-z-]+:|wrote|total|PASS|FAIL|parameters|float in|samples|Value" || printf '%s\n' "$out" | head -1)
  first=${first:0:230}
  first=${first//|/\\|}
  local bcmd=${cmd//$BIN/$BASE} brc
  (cd "$ROOT" && timeout 10 bash -o pipefail -c "$bcmd" > /dev/null 2>&1 < /dev/null); brc=$?
  local shown=${cmd//$BIN/salasim}
  shown=${shown:0:160}
  shown=${shown//|/\\|}
  echo "| $cls | $name | \`$shown\` | $brc | $rc | ${first} |" >> $OUT
}
echo "| class | case | command / input | exit before (HEAD build) | exit now | first line of the message now |" > $OUT
echo "|---|---|---|---|---|---|" >> $OUT

# ---- A. JSON readers: repeated keys, non-regular files, size, depth, excerpts ----
TINY=scenarios/models/tiny.json
py <<PY
import json
t=json.load(open("$TINY"))
s=json.dumps(t,indent=1)
open("$C/dup-top.json","w").write(s.replace("{", '{\n "hidden_size": 4096,', 1))
open("$C/dup-nested.json","w").write(s.replace('"topk": 64', '"topk": 64, "topk": 1'))
open("$C/dup-deep.json","w").write(s.replace('"eos_token_id": [', '"x": [{"a": {"b": 1, "b": 2}}], "eos_token_id": ['))
deep=dict(t); open("$C/deep.json","w").write(json.dumps(t)[:-1] + ', "x": ' + "["*100 + "]"*100 + "}")
t2=dict(t); t2["mixer_types"]=["m"*10000]*4; open("$C/long-mixer.json","w").write(json.dumps(t2))
t3=dict(t); t3["hidden_act"]="\x1b[31m"+"a"*5000; open("$C/long-act.json","w").write(json.dumps(t3))
open("$C/bad-utf8.json","wb").write(b'{"model_type": "\xff\xfe"}')
open("$C/hw-dup.json","w").write('{"name": "a", "name": "b"}')
hw=json.load(open("reports/hw/h200.json"))
m=json.load(open("reports/measured/h200/run_64K.json"))
open("$C/m-dup.json","w").write(json.dumps(m)[:-1] + ', "ttft_s": 3}')
sc={"model": "$ROOT/$TINY", "weights": {"synthetic_seed": 1}, "prompt": {"random_seed": 7, "length": 100}}
open("$C/sc-dup.json","w").write(json.dumps(sc)[:-1] + ', "weights": {"synthetic_seed": 2}}')
sc2=dict(sc); sc2["model"]="x"*10000; open("$C/sc-longmodel.json","w").write(json.dumps(sc2))
sc3=dict(sc); sc3["name"]="n/"*3000; open("$C/sc-longname.json","w").write(json.dumps(sc3))
import struct
def st(path, header):
    h=header.encode(); open(path,"wb").write(struct.pack("<Q",len(h))+h)
import os
os.makedirs("$C/ck-dup", exist_ok=True)
st("$C/ck-dup/model.safetensors", '{"w": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}, "w": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}}')
os.makedirs("$C/ck-dtype", exist_ok=True)
st("$C/ck-dtype/model.safetensors", '{"'+"n"*10000+'": {"dtype": "'+"D"*10000+'", "shape": [0], "data_offsets": [0, 0]}}')
os.makedirs("$C/ck-meta", exist_ok=True)
st("$C/ck-meta/model.safetensors", '{"__metadata__": {"'+"k"*10000+'": 5}}')
os.makedirs("$C/ck-deep", exist_ok=True)
st("$C/ck-deep/model.safetensors", '{"__metadata__": ' + "["*200000 + "]"*200000 + '}')
PY
mkfifo $C/fifo.json; mkdir -p $C/folder.json
cp -r /dev/null $C/ 2>/dev/null
python3 -c "open('$C/big.json','w').write('{'); import os; os.truncate('$C/big.json', (64<<20)+1)"
row json "key twice at the top" "$BIN params --config $C/dup-top.json"
row json "key twice in sparse_config" "$BIN params --config $C/dup-nested.json"
row json "key twice 3 deep in an unknown field" "$BIN params --config $C/dup-deep.json"
row json "FIFO as --config" "$BIN params --config $C/fifo.json"
row json "/dev/null as --config" "$BIN params --config /dev/null"
row json "/dev/zero as --config" "$BIN params --config /dev/zero"
row json "a folder as --config" "$BIN params --config $C/folder.json"
row json "missing --config" "$BIN params --config $C/none.json"
row json "64 MiB + 1 (sparse) --config" "$BIN params --config $C/big.json"
row json "nesting 100 deep" "$BIN params --config $C/deep.json"
row json "invalid UTF-8 in a string" "$BIN params --config $C/bad-utf8.json"
row json "10 KB mixer_types entry" "$BIN params --config $C/long-mixer.json"
row json "5 KB hidden_act with an escape sequence" "$BIN params --config $C/long-act.json"
row json "FIFO as --hw" "$BIN model memory --hw $C/fifo.json --context 4K"
row json "/dev/null as --hw" "$BIN model memory --hw /dev/null --context 4K"
row json "key twice in a hardware profile" "$BIN model memory --hw $C/hw-dup.json --context 4K"
row json "5000-char --hw name" "$BIN model memory --hw $(printf 'h%.0s' {1..5000}) --context 4K"
row json "FIFO as --measured" "$BIN model latency --measured $C/fifo.json --context 64K"
row json "/dev/zero as --measured" "$BIN model latency --measured /dev/zero --context 64K"
row json "key twice in a measured run" "$BIN model latency --measured $C/m-dup.json --context 64K"
row json "FIFO as --scenario" "$BIN ref --scenario $C/fifo.json"
row json "key twice in a scenario" "$BIN ref --scenario $C/sc-dup.json"
row json "scenario model path of 10 KB" "$BIN ref --scenario $C/sc-longmodel.json"
row json "scenario name of 6 KB with '/'" "$BIN ref --scenario $C/sc-longname.json"
row json "safetensors header naming a tensor twice" "$BIN params --config $TINY --checkpoint $C/ck-dup"
row json "safetensors 10 KB name and dtype" "$BIN params --config $TINY --checkpoint $C/ck-dtype"
row json "safetensors 10 KB metadata key, number value" "$BIN params --config $TINY --checkpoint $C/ck-meta"
row json "safetensors metadata nesting 200,000 arrays" "$BIN params --config $TINY --checkpoint $C/ck-deep"
mkdir -p $C/ck-fifo; mkfifo $C/ck-fifo/model.safetensors
row json "FIFO as model.safetensors" "$BIN params --config $TINY --checkpoint $C/ck-fifo"
mkdir -p $C/ck-idx; py <<PY
import json
open("$C/ck-idx/model.safetensors.index.json","w").write('{"weight_map": {"a": "x.safetensors", "a": "y.safetensors"}}')
PY
row json "checkpoint index with a key twice" "$BIN params --config $TINY --checkpoint $C/ck-idx"

# ---- B. config floats: every field x {NaN text, 1e308, -5, 0, string, null, tiny, just outside} ----
for f in rms_norm_eps rope_theta scale_emb scale_depth initializer_range attention_dropout; do
  for v in NaN 1e308 -5 0 str null 1e-300 Infinity; do
    py <<PY
import json
j=json.load(open("$TINY"))
s=json.dumps(j)
v="$v"
lit = '"1.0"' if v == "str" else v
s=s.replace('"$f": ' + json.dumps(j["$f"]), '"$f": ' + lit)
open("$C/f-$f-$v.json","w").write(s)
PY
    row config "$f = $v" "$BIN params --config $C/f-$f-$v.json"
  done
done
for fv in "rms_norm_eps 0.11" "rope_theta 1" "rope_theta 1.5e12" "scale_emb 1.1e6" "scale_depth 0.0009" "scale_depth 100.5" "initializer_range 1.01" "attention_dropout 1.0001" "dim_model_base 512" "dim_model_base 0"; do
  set -- $fv
  py <<PY
import json
j=json.load(open("$TINY")); j["$1"]=json.loads("$2"); open("$C/g-$1-$2.json","w").write(json.dumps(j))
PY
  row config "$1 = $2 (just outside / derived)" "$BIN params --config $C/g-$1-$2.json"
done
for fv in "rms_norm_eps -5" "rope_theta 1e308" "initializer_range 2" "attention_dropout -1"; do
  set -- $fv
  py <<PY
import json
j=json.load(open("scenarios/models/qwen3-8b.json")); j["$1"]=json.loads("$2"); open("$C/q-$1-$2.json","w").write(json.dumps(j))
PY
  row config "dense comparator $1 = $2" "$BIN model memory --config $C/q-$1-$2.json --context 4K"
done
row config "the released config" "$BIN params --config scenarios/models/minicpm-sala-9b.json"
row config "the dense comparator" "$BIN model memory --config scenarios/models/qwen3-8b.json --context 4K"

# ---- C. salasim op: every float attribute outside its --help range, gla's decays ----
/usr/bin/python3 - <<PY
import h5py, numpy as np
C="$C"
def f(name, datasets, attrs):
    with h5py.File(f"{C}/{name}.h5", "w") as h:
        for k, v in datasets.items(): h[k] = v
        for k, v in attrs.items(): h.attrs[k] = v
x = np.full((2, 8), 0.5); r = np.ones(8)
base = {
 "rmsnorm": ({"x": x, "w": r}, {}),
 "rope": ({"x": x}, {"head_dim": 4, "pos0": 0}),
 "gla": ({"q": x, "k": x, "v": x, "gamma": np.array([-0.1, -0.2])}, {}),
 "select_blocks": ({"q": np.full((1, 8), 0.1), "k1": np.zeros((2, 1, 4)), "k2": np.zeros((2, 1, 4))}, {"pos0": 0, "kernel": 1, "stride": 1, "block": 1, "local_blocks": 0, "k_sel": 1}),
 "sparse_attn": ({"q": np.full((1, 8), 0.1), "k": np.zeros((2, 1, 4)), "v": np.zeros((2, 1, 4)), "blocks": np.zeros((1, 2, 1), dtype=np.int64)}, {"pos0": 0, "block": 1}),
 "dense_attn": ({"q": x, "k": np.full((2, 2, 4), 0.25), "v": np.full((2, 2, 4), 0.5)}, {"pos0": 0}),
 "residual": ({"h": x, "branch": x}, {}),
 "logits": ({"h": x, "w": np.full((3, 8), 0.1)}, {}),
}
attr = {"rmsnorm": "eps", "rope": "theta", "gla": "tau", "select_blocks": "tau", "sparse_attn": "tau", "dense_attn": "tau", "residual": "scale", "logits": "divisor"}
good = {"eps": 1e-6, "theta": 1e4, "tau": 0.5, "scale": 0.25, "divisor": 16.0}
bad = {"eps": [1e308, 1e-300, 0.2, -1.0], "theta": [1.0, 0.5, 1e300, -1e4], "tau": [-1.0, 0.0, 1e308, 1.5],
       "scale": [-1.0, 0.0, 1e308, 101.0], "divisor": [0.5, 0.0, 1e300, -16.0]}
lines = []
for op, (ds, at) in base.items():
    a = attr[op]
    f(f"op-{op}-good", ds, {**at, a: good[a]})
    lines.append(f"{op} {a} good op-{op}-good")
    for i, v in enumerate(bad[a]):
        f(f"op-{op}-{i}", ds, {**at, a: v})
        lines.append(f"{op} {a} {v} op-{op}-{i}")
q = np.full((100, 8), 0.5)
for name, g in [("gla-pos", [0.7, -0.1]), ("gla-zero", [0.0, -0.1]), ("gla-neg0", [-0.0, -0.1]), ("gla-huge-neg", [-1e300, -0.1])]:
    f(name, {"q": q, "k": q, "v": q, "gamma": np.array(g)}, {"tau": 0.5})
f("op-rope-str", {"x": x}, {"head_dim": 4, "pos0": 0, "theta": "1e4"})
f("op-rope-longstr", {"x": x}, {"head_dim": 4, "pos0": 0, "theta": "t" * 100000})
f("op-rope-angles", {"x": x}, {"head_dim": 4, "pos0": 0, "theta": 1e4, "angles": "\x1b[2J" + "e" * 5000})
f("op-rope-odd", {"x": x}, {"head_dim": 3, "pos0": 0, "theta": 1e4})
f("op-rope-pos", {"x": x}, {"head_dim": 4, "pos0": -1, "theta": 1e4})
f("op-rope-frac", {"x": x}, {"head_dim": 4, "pos0": 0.5, "theta": 1e4})
open(f"{C}/op-cases.txt", "w").write("\n".join(lines) + "\n")
PY
while read -r op a v file; do
  row op "$op $a = $v" "$BIN op $op --in $C/$file.h5 --out $C/$file-out.h5 --force"
done < $C/op-cases.txt
for g in gla-pos gla-zero gla-neg0 gla-huge-neg; do
  row op "gla gamma ($g)" "$BIN op gla --in $C/$g.h5 --out $C/$g-out.h5 --force"
done
row op "gla gamma huge negative on the peer" "$BIN op gla --in $C/gla-huge-neg.h5 --out $C/gla-huge-neg-peer.h5 --backend peer --force"
row op "rope theta as a string" "$BIN op rope --in $C/op-rope-str.h5 --out $C/o1.h5 --force"
row op "rope theta a 100 KB string" "$BIN op rope --in $C/op-rope-longstr.h5 --out $C/o2.h5 --force"
row op "rope angles 5 KB with an escape" "$BIN op rope --in $C/op-rope-angles.h5 --out $C/o3.h5 --force"
row op "rope head_dim odd" "$BIN op rope --in $C/op-rope-odd.h5 --out $C/o4.h5 --force"
row op "rope pos0 -1" "$BIN op rope --in $C/op-rope-pos.h5 --out $C/o5.h5 --force"
row op "rope pos0 0.5" "$BIN op rope --in $C/op-rope-frac.h5 --out $C/o6.h5 --force"
row op "--help shows the ranges (first float line)" "$BIN op --help > $C/help.txt; grep -m1 'float in [[(]' $C/help.txt"

# ---- D. numbers on the command line ----
CK="synth-checkpoint --config $TINY --out $C/ck-num"
GEN="ruler generate --tokenizer $C/none.model --out $C/never.jsonl"
for a in "--shards 010" "--shards 0x2" "--shards +2" "--shards ' 2'" "--shards 2.0" "--shards 1e1" "--shards -0" "--seed -1" "--seed 18446744073709551615" "--seed 9223372036854775808"; do
  row numbers "synth-checkpoint $a" "rm -rf $C/ck-num; $BIN $CK $a"
done
for a in "--seed -1" "--seed 0x10" "--seed 1e3" "--seed 18446744073709551616" "--seed ' 5'" "--samples 0x10" "--samples 010" "--samples +5" "--samples 1.5" "--samples nan" "--tokens-to-generate 04000000" "--tokens-to-generate -0"; do
  row numbers "ruler generate $a" "$BIN $GEN $a"
done
RUN="ruler run --config $TINY --synthetic-seed 1 --tokenizer $C/none.model --data $C/none.jsonl --out $C/r.jsonl"
for a in "--chunk 1e3" "--chunk 0x40" "--chunk -64" "--max-new-tokens 0x10" "--synthetic-seed -1"; do
  row numbers "ruler run $a" "$BIN $RUN $a"
done
for a in "--time-limit nan" "--time-limit inf" "--time-limit 0x1p3" "--time-limit 1e400" "--time-limit -0.5" "--decode 1e2" "--decode 99999999999999999999" "--chunk 0100" "--seed +1"; do
  row numbers "run --plan $a" "$BIN run --plan --config $TINY --context 1K $a"
done
for a in "'6 4K'" "64K+" "1e3" "+64K" "-64K" "64KK" "0x40K" "4097M" "' 64K'" "64k" "1M,,2M" "$(printf '9%.0s' {1..3000})K"; do
  row numbers "model memory --context $a" "$BIN model memory --context $a"
done
for a in "--tokens 1e2" "--tokens 0x64" "--tokens ' 100'" "--decode -1" "--spot 4.0"; do
  row numbers "verify $a" "$BIN verify --backend peer --scenario scenarios/tiny-short.json $a"
done

# ---- E. hardware profiles ----
for fv in "bf16_tensor_flops 1e308" "bf16_tensor_flops -5" "bf16_tensor_flops 0" "bf16_tensor_flops 5e-324" "memory_bandwidth_bytes_per_s 1e300" "memory_bandwidth_bytes_per_s 1" "exp_per_s 1e20" "exp_per_s -1" "memory_bytes 1152921504606846976" "memory_bytes 0" "memory_bytes 1.5e11"; do
  set -- $fv
  py <<PY
import json
j=json.load(open("reports/hw/h200.json")); j["$1"]=json.loads("$2"); open("$C/hw-$1-$2.json","w").write(json.dumps(j))
PY
  row hardware "$1 = $2" "$BIN model latency --hw $C/hw-$1-$2.json --context 64K"
done
for fv in "gemm 11" "gemm 0" "decode -1" "gla 1e-300"; do
  set -- $fv
  py <<PY
import json
j=json.load(open("reports/hw/h200.json")); j["efficiency"]["$1"]=json.loads("$2"); open("$C/hwe-$1-$2.json","w").write(json.dumps(j))
PY
  row hardware "efficiency.$1 = $2" "$BIN model latency --hw $C/hwe-$1-$2.json --context 64K"
done

# ---- F. measured runs ----
for fv in "ttft_s 1e308" "ttft_s 1e-300" "ttft_s -1" "decode_ms_per_token 1e10" "decode_ms_per_token 0" "peak_vram_bytes -1" "context 0" "context 18446744073709551616"; do
  set -- $fv
  py <<PY
import json
j=json.load(open("reports/measured/h200/run_64K.json")); j["$1"]=json.loads("$2"); open("$C/m-$1-$2.json","w").write(json.dumps(j))
PY
  row measured "$1 = $2" "$BIN model latency --measured $C/m-$1-$2.json --context 64K"
done
for fv in "gemm_s -1" "gemm_s 1e-12" "gemm_s 1e300"; do
  set -- $fv
  py <<PY
import json
j=json.load(open("reports/measured/h200/run_64K.json")); j.setdefault("phases", {})["$1"]=json.loads("$2"); open("$C/mp-$1-$2.json","w").write(json.dumps(j))
PY
  row measured "phases.$1 = $2" "$BIN model latency --measured $C/mp-$1-$2.json --context 64K"
done

# ---- G. RULER data lines and tokenizer files (a tokenizer trained here) ----
mkdir -p $C/tok
$BIN ruler train-tokenizer --out $C/tok/tokenizer.model --vocab 1000 --haystack-text none > /dev/null 2>&1
RR="$BIN ruler run --config scenarios/models/tiny-short.json --synthetic-seed 1 --tokenizer $C/tok/tokenizer.model --backend reference --max-new-tokens 2"
py <<PY
import json
C="$C"
good={"index": 0, "input": "The key is 7. What is the key?", "outputs": ["7"], "length": 40, "answer_prefix": " Answer:", "task": "niah_single_1"}
def line(name, obj=None, text=None):
    open(f"{C}/{name}.jsonl","w").write((text if text is not None else json.dumps(obj)) + "\n")
line("d-good", good)
line("d-deep-outputs", text=json.dumps(good)[:-1].replace('"outputs": ["7"]', '"outputs": [' + "["*200000 + "]"*200000 + ']') + "}")
line("d-dup", text=json.dumps(good)[:-1] + ', "length": 50}')
for k, v in [("index", -1), ("index", 1e3), ("index", 18446744073709551616), ("length", 0), ("length", 1e12), ("length", "40"),
             ("outputs", []), ("outputs", [""]), ("outputs", [1]), ("outputs", "7"), ("depths", [101]), ("depths", [-1]),
             ("depths", ["x"]), ("needle_token_spans", [[1]]), ("needle_token_spans", [[-5, 2]]), ("needle_token_spans", [[1, 18446744073709551615]]),
             ("seed", -1), ("seed", 1.5), ("haystack_units", -1), ("task", "niah_single_9"), ("task", "t"*10000), ("max_seq_length", 10), ("template", 5)]:
    import re as _re
    o=dict(good); o[k]=v; line("d-" + k + "-" + _re.sub(r"[^A-Za-z0-9.+-]", "_", json.dumps(v)[:12]), o)
line("d-notjson", text="{not json")
line("d-array", text="[1, 2]")
PY
mkfifo $C/d-fifo.jsonl
for f in $C/d-*.jsonl; do
  n=$(basename $f .jsonl)
  row ruler "data line $n" "rm -f $C/r-$n.jsonl; $RR --data $f --out $C/r-$n.jsonl"
done
mkdir -p $C/tok2 && cp $C/tok/tokenizer.model $C/tok2/
tokcase() {  # name, tokenizer_config text, added_tokens text
  rm -f $C/tok2/tokenizer_config.json $C/tok2/added_tokens.json
  [ -n "$2" ] && printf '%s' "$2" > $C/tok2/tokenizer_config.json
  [ -n "$3" ] && printf '%s' "$3" > $C/tok2/added_tokens.json
  row tokenizer "$1" "$BIN ruler generate --task niah_single_1 --length 1K --samples 1 --tokenizer $C/tok2 --out $C/gen-$RANDOM.jsonl"
}
tokcase "decoder key '+7'" '{"added_tokens_decoder": {"+7": {"content": "<a>"}}}' ''
tokcase "decoder key ' 7'" '{"added_tokens_decoder": {" 7": {"content": "<a>"}}}' ''
tokcase "decoder key '7x'" '{"added_tokens_decoder": {"7x": {"content": "<a>"}}}' ''
tokcase "decoder key 2^31" '{"added_tokens_decoder": {"2147483648": {"content": "<a>"}}}' ''
tokcase "decoder content empty" '{"added_tokens_decoder": {"7": {"content": ""}}}' ''
tokcase "decoder content a number" '{"added_tokens_decoder": {"7": {"content": 5}}}' ''
tokcase "decoder not an object" '{"added_tokens_decoder": [1]}' ''
tokcase "config not an object" '[1]' ''
tokcase "config key twice" '{"added_tokens_decoder": {"7": {"content": "<a>"}, "7": {"content": "<b>"}}}' ''
tokcase "one token, two ids" '{"added_tokens_decoder": {"1000": {"content": "<a>"}}}' '{"<a>": 1001}'
tokcase "one id, two tokens" '{"added_tokens_decoder": {"1000": {"content": "<a>"}}}' '{"<b>": 1000}'
tokcase "added_tokens id 1.5" '' '{"<a>": 1.5}'
tokcase "added_tokens id -1" '' '{"<a>": -1}'
tokcase "added_tokens an array" '' '[1]'
tokcase "both agree" '{"added_tokens_decoder": {"1000": {"content": "<a>"}}}' '{"<a>": 1000}'
rm -f $C/tok2/added_tokens.json $C/tok2/tokenizer_config.json; mkfifo $C/tok2/tokenizer_config.json
row tokenizer "tokenizer_config.json a FIFO" "$BIN ruler generate --task niah_single_1 --length 1K --samples 1 --tokenizer $C/tok2 --out $C/gen-fifo.jsonl"
rm -f $C/tok2/tokenizer_config.json; mkdir -p $C/tok3; mkfifo $C/tok3/tokenizer.model
row tokenizer "tokenizer.model a FIFO" "$BIN ruler generate --task niah_single_1 --length 1K --samples 1 --tokenizer $C/tok3 --out $C/gen-fifo2.jsonl"
row tokenizer "tokenizer.model /dev/zero" "$BIN ruler generate --task niah_single_1 --length 1K --samples 1 --tokenizer /dev/zero --out $C/gen-zero.jsonl"
