#!/usr/bin/env bash
# Reference outputs (requests, samples, results) of leaderboard_math_hard and leaderboard_musr on
# the STAND-IN data of tests/fixtures/standin_data (not the real datasets, which are absent here:
# docs/tasks.md, "Stand-in data"), written to tests/fixtures/standin_goldens/.
#
# The reference (PyPI lm-eval 0.4.13 with its math extra, the versions of
# ../shared/goldens/README.md) runs through the shared tools unchanged: goldens/tools/make_goldens.py
# drives goldens/tools/run_reference.py (the offline datasets shim plus the hashfake model). Those
# tools write beside themselves, so they are linked into a scratch tree whose goldens/ is then
# copied here. Every document is kept (no --limit; requests and samples arguments of all docs).
#
# Usage: scripts/gen_standin_goldens.sh [VENV]   (default /work/main/.venv-standin; made if absent)
# Needs ../shared (goldens/tools, tools/reference_datasets_shim). About 1 minute on 2 cores.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${LMEVAL_SHARED_DIR:-$repo/../shared}
shared=$(cd "$shared" && pwd)
venv=${1:-/work/main/.venv-standin}

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "lm-eval[math]==0.4.13" "datasets==5.2.0" "sympy==1.14.0" \
    "math-verify==0.9.0" "antlr4-python3-runtime==4.11.0" "numpy==2.4.6" "pyarrow==26.0.1" \
    "scikit-learn==1.9.1" "sacrebleu==2.6.0" "evaluate==0.4.6"
fi

# The data first: the rows whose answers are written from the fake model's number depend on it.
"$venv/bin/python" "$repo/scripts/gen_standin_data.py" "$repo/tests/fixtures/standin_data"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/goldens/tools" "$scratch/tools"
for f in make_goldens.py run_reference.py hashfake_plugin.py; do
  ln -s "$shared/goldens/tools/$f" "$scratch/goldens/tools/$f"
done
ln -s "$shared/tools/reference_datasets_shim" "$scratch/tools/reference_datasets_shim"

# name:shots:limit:max_doc:arguments_kept_below — default shots, no limit, everything kept.
"$venv/bin/python" "$scratch/goldens/tools/make_goldens.py" --work "$scratch/work" \
  --hf-data "$repo/tests/fixtures/standin_data" \
  leaderboard_math_hard:d:-:1000:1000 leaderboard_musr:d:-:1000:1000

out="$repo/tests/fixtures/standin_goldens"
rm -rf "$out/requests" "$out/results" "$out/samples" "$out/manifest.json"
mkdir -p "$out"
cp -r "$scratch/goldens/requests" "$scratch/goldens/results" "$scratch/goldens/samples" "$out/"
# make_goldens.py names the data root hf_data in the recorded command; here it is the stand-in.
sed 's#LMEVAL_HF_DATA=hf_data#LMEVAL_HF_DATA=tests/fixtures/standin_data#' \
  "$scratch/goldens/manifest.json" > "$out/manifest.json"
"$venv/bin/python" - "$out/manifest.json" <<'EOF'
import json, sys
for e in json.load(open(sys.argv[1])):
    assert e["exit_code"] == 0, e
    print(e["run"], "ok:", e["requests_kept"], "requests,", len(e["samples"]), "samples files")
EOF
