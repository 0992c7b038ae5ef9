#!/usr/bin/env bash
# Reference outputs (requests, samples, results) of leaderboard_math_hard and leaderboard_musr on
# the STAND-IN data of tests/fixtures/standin_data (not the real datasets, which are absent here:
# docs/tasks.md, "Stand-in data"), and of the whole leaderboard group on that data beside
# ../shared/hf_data, written to tests/fixtures/standin_goldens/.
#
# The reference (PyPI lm-eval 0.4.13 with its ifeval and math extras, the versions of
# ../shared/goldens/README.md) runs through the shared tools unchanged: goldens/tools/make_goldens.py
# drives goldens/tools/run_reference.py (the offline datasets shim plus the hashfake model). Those
# tools write beside themselves, so they are linked into a scratch tree whose goldens/ is then
# copied here.
#
# Usage: scripts/gen_standin_goldens.sh [VENV]   (default .venv-standin in the repo; made if absent)
# Needs ../shared (goldens/tools, tools/reference_datasets_shim, hf_data). About 65 s on 2 cores
# (130 s when it makes the venv).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${LMEVAL_SHARED_DIR:-$repo/../shared}
shared=$(cd "$shared" && pwd)
venv=${1:-$repo/.venv-standin}

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r "$repo/scripts/python-test-requirements.txt"
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# leaderboard_ifeval needs NLTK's punkt_tab, which NLTK would download: taken, as for
# ../shared/goldens, from the copy inside the llama-index-core 0.14.25 wheel.
if [ ! -d "$venv/nltk_data/tokenizers/punkt_tab" ]; then
  "$venv/bin/pip" download -q --no-deps "llama-index-core==0.14.25" -d "$scratch/wheel"
  "$venv/bin/python" -c '
import os, sys, zipfile
prefix = "llama_index/core/_static/nltk_cache/tokenizers/"
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.startswith(prefix + "punkt_tab/") and not name.endswith("/"):
            dest = os.path.join(sys.argv[2], name[len(prefix):])
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(z.read(name))
' "$scratch"/wheel/llama_index_core-*.whl "$venv/nltk_data/tokenizers"
fi

# The data first: the rows whose answers are written from the fake model's number depend on it.
"$venv/bin/python" "$repo/scripts/gen_standin_data.py" "$repo/tests/fixtures/standin_data"

mkdir -p "$scratch/goldens/tools" "$scratch/tools"
for f in make_goldens.py run_reference.py hashfake_plugin.py; do
  ln -s "$shared/goldens/tools/$f" "$scratch/goldens/tools/$f"
done
ln -s "$shared/tools/reference_datasets_shim" "$scratch/tools/reference_datasets_shim"

# name:shots:limit:max_doc:arguments_kept_below[:samples_max_doc] (make_goldens.py).
# The two families on the stand-in alone: default shots, no limit, everything kept; and at other
# shot counts (MATH: 2 of the 4 fixed exemplars; MuSR, which names no few-shot split: 1 drawn
# from its test split), samples without arguments (the requests hold them).
"$venv/bin/python" "$scratch/goldens/tools/make_goldens.py" --work "$scratch/work" \
  --hf-data "$repo/tests/fixtures/standin_data" \
  leaderboard_math_hard:d:-:1000:1000 leaderboard_musr:d:-:1000:1000 \
  leaderboard_math_hard:2:-:1000:0 leaderboard_musr:1:-:1000:0

# The whole leaderboard group, for its top-level numbers (every family's leaves pooled):
# ../shared's datasets for the four families it has and the stand-in for MATH and MuSR, side by
# side in one root. --limit 3; requests and samples (without arguments) kept for doc 0
# (each family's prompts are checked by its own goldens).
mkdir -p "$scratch/data"
for d in "$shared"/hf_data/*/ "$repo"/tests/fixtures/standin_data/*/; do
  ln -s "${d%/}" "$scratch/data/$(basename "$d")"
done
"$venv/bin/python" "$scratch/goldens/tools/make_goldens.py" --work "$scratch/work" \
  --hf-data "$scratch/data" leaderboard:d:3:1:0:1

out="$repo/tests/fixtures/standin_goldens"
rm -rf "$out/requests" "$out/results" "$out/samples" "$out/manifest.json"
mkdir -p "$out"
cp -r "$scratch/goldens/requests" "$scratch/goldens/results" "$scratch/goldens/samples" "$out/"
# make_goldens.py names the data root hf_data in the recorded command; say which root it was, and
# record it as "data": the stand-in alone, or the stand-in beside ../shared/hf_data.
"$venv/bin/python" - "$scratch/goldens/manifest.json" "$out/manifest.json" <<'EOF'
import json, sys
runs = json.load(open(sys.argv[1]))
for e in runs:
    assert e["exit_code"] == 0, e
    e["data"] = "standin+shared" if e["run"] == "leaderboard" else "standin"
    root = ("<tests/fixtures/standin_data and ../shared/hf_data side by side>"
            if e["data"] == "standin+shared" else "tests/fixtures/standin_data")
    e["command"] = e["command"].replace("LMEVAL_HF_DATA=hf_data", "LMEVAL_HF_DATA=" + root)
    print(e["run"], "ok:", e["requests_kept"], "of", e["requests_received"], "requests,",
          len(e["samples"]), "samples files")
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump(runs, f, indent=1, ensure_ascii=False)
    f.write("\n")
EOF
