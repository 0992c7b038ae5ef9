#!/usr/bin/env bash
# generate_until side by side in one run (issue 34, point 5): the reference (lm-eval 0.4.13's hf
# model through ../shared/tools/reference_datasets_shim, batch size REF_BS), lm-eval BEFORE and
# lm-eval AFTER (two builds, each run twice), on one task, model and doc limit; prints the wall
# times and ratios and checks the runs' metrics and generations agree. Runs niced (a shared
# machine).
# Usage: scripts/bench_generation.sh VENV MODEL_DIR BEFORE_BIN AFTER_BIN [TASK] [SHOTS] [LIMIT]
#          [MAX_GEN_TOKS] [REF_BS]
# e.g. scripts/bench_generation.sh VENV ../shared/models/stories260K main/build/lm-eval \
#        build/lm-eval gsm8k 5 16 128 16
# LMEVAL_BENCH_INCLUDE=DIR adds --include_path DIR to all three runs (scripts/bench_tasks holds
# bench_ifeval_like, IFEval's long generations); LMEVAL_BENCH_MAX_POS=N runs a copy of MODEL_DIR
# whose config allows N positions (stories260K's 512 cannot hold a prompt and 1280 new tokens).
set -euo pipefail
venv=$1 model=$(realpath "$2") before=$3 after=$4
task=${5:-gsm8k} shots=${6:-5} limit=${7:-16} gen=${8:-128} ref_bs=${9:-16}
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${LMEVAL_SHARED_DIR:-$root/../shared}
out=$(mktemp -d /tmp/bench_generation.XXXXXX)
export LMEVAL_HF_DATA=$shared/hf_data HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 \
  TOKENIZERS_PARALLELISM=false
common=(--tasks "$task" --num_fewshot "$shots" --limit "$limit" --device cpu --log_samples
        --gen_kwargs "max_gen_toks=$gen")
if [ -n "${LMEVAL_BENCH_INCLUDE:-}" ]; then
  common+=(--include_path "$(realpath "$LMEVAL_BENCH_INCLUDE")")
fi
if [ -n "${LMEVAL_BENCH_MAX_POS:-}" ]; then
  cp -r "$model" "$out/model"
  python3 -c "import json,sys; p=sys.argv[1]; c=json.load(open(p)); c['max_position_embeddings']=int(sys.argv[2]); json.dump(c, open(p, 'w'), indent=2)" \
    "$out/model/config.json" "$LMEVAL_BENCH_MAX_POS"
  model=$out/model
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg) (shared)"
echo "task $task ${shots}-shot, $limit docs, max_gen_toks $gen, model $model (float32); logs $out"
timed() {  # name, command...: wall seconds into $out/name.time
  local name=$1; shift
  local t0; t0=$(date +%s.%N)
  nice "$@" > "$out/$name.log" 2>&1 || { echo "$name failed: see $out/$name.log"; exit 1; }
  echo "$(date +%s.%N) - $t0" | bc > "$out/$name.time"
}
args=(run --model hf --model_args "pretrained=$model,dtype=float32" --batch_size auto
      --data_dir "$shared/hf_data")
# One untimed run of each lm-eval build first (one document, one token), so that the first timed
# run does not alone pay for reading libtorch, the plugin and the weights from disk.
for bin in "$after" "$before"; do
  "$bin" "${args[@]}" --output_path "$out/warmup" --tasks "$task" --num_fewshot "$shots" \
    --limit 1 --device cpu --gen_kwargs max_gen_toks=1 \
    ${LMEVAL_BENCH_INCLUDE:+--include_path "$(realpath "$LMEVAL_BENCH_INCLUDE")"} \
    > "$out/warmup.log" 2>&1 || { echo "warm-up of $bin failed: see $out/warmup.log"; exit 1; }
done
# Each build twice, in the order before, after, after, before (the machine drifts: a run's place
# in the sequence moved it by up to 10%), each build's faster run counted.
timed before "$before" "${args[@]}" --output_path "$out/before" "${common[@]}"
timed after "$after" "${args[@]}" --output_path "$out/after" "${common[@]}"
timed after2 "$after" "${args[@]}" --output_path "$out/after2" "${common[@]}"
timed before2 "$before" "${args[@]}" --output_path "$out/before2" "${common[@]}"
for r in before after; do
  t1=$(cat "$out/$r.time") t2=$(cat "$out/${r}2.time")
  printf '%-9s runs %.1f s, %.1f s\n' "$r" "$t1" "$t2"
  if (( $(echo "$t2 < $t1" | bc) )); then echo "$t2" > "$out/$r.time"; fi
done
timed reference "$venv/bin/python" "$shared/tools/reference_datasets_shim/run_lm_eval.py" run \
  --model hf --model_args "pretrained=$model,dtype=float32" --batch_size "$ref_bs" \
  --output_path "$out/reference" "${common[@]}"
for r in reference before after; do
  m=$(find "$out/$r" -name 'results*.json' | head -1)
  printf '%-9s %8.1f s  %s\n' "$r" "$(cat "$out/$r.time")" \
    "$(python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['results']; print({k: {m: v for m, v in x.items() if 'match' in m and 'stderr' not in m} for k, x in d.items()})" "$m")"
done
ref=$(cat "$out/reference.time") b=$(cat "$out/before.time") a=$(cat "$out/after.time")
echo "reference/after $(echo "scale=2; $ref / $a" | bc)x, before/after $(echo "scale=2; $b / $a" | bc)x, reference/before $(echo "scale=2; $ref / $b" | bc)x"
# The generations themselves: the same texts from every run, doc by doc (every task's samples
# file of a group, each by its task's name and doc_id).
for r in reference before after after2; do
  printf '%-9s responses md5 %s\n' "$r" "$(python3 -c "
import glob, hashlib, json, os, sys
rows = []
for f in sorted(glob.glob(os.path.join(sys.argv[1], '**', 'samples_*.jsonl'), recursive=True)):
    task = os.path.basename(f)[len('samples_'):].rsplit('_', 1)[0]
    rows += [(task, json.loads(l)['doc_id'], json.loads(l)['resps']) for l in open(f)]
print(hashlib.md5(json.dumps(sorted(rows)).encode()).hexdigest(), len(rows), 'samples')" "$out/$r")"
done
