#!/usr/bin/env bash
# Three LoRA adapters over one base in one command (peft=[a,b,c]): wall time and peak RSS
# (/usr/bin/time -v) of each lm-eval binary given, on the set scripts/make_adapter_bench.py makes.
# usage: scripts/bench_adapters.sh SET_DIR LM_EVAL [LM_EVAL...]   (SET_DIR made first with
#        PYTHON scripts/make_adapter_bench.py SET_DIR; a Python with torch, transformers, peft)
set -euo pipefail
set_dir=$1
shift
tok=$(cd "$(dirname "$0")/.." && pwd)/../shared/fixtures/llama
peft="[$set_dir/a_qv,$set_dir/b_mts,$set_dir/c_embed]"
for bin in "$@"; do
  out=$(mktemp -d)
  /usr/bin/time -v "$bin" run --model hf \
    --model_args "pretrained=$set_dir/base,tokenizer=$tok,dtype=float32,peft=$peft" \
    --device cpu --batch_size 8 --include_path "$set_dir" --tasks adapter_bench \
    --output_path "$out" >/dev/null 2>"$out.err" || { cat "$out.err"; exit 1; }
  printf '%s: %s s wall, peak RSS %s kB\n' "$bin" \
    "$(grep 'Elapsed (wall clock)' "$out.err" | awk '{print $NF}')" \
    "$(grep 'Maximum resident set size' "$out.err" | awk '{print $NF}')"
  grep -c 'hf: loaded ' "$out.err" | sed 's/^/  "hf: loaded" lines: /'
  rm -rf "$out" "$out.err"
done
