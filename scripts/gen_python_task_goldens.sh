#!/usr/bin/env bash
# Reference outputs (requests, samples, results) of the fixture tasks whose `!function`s run in
# lm-eval's embedded Python (tests/fixtures/python_tasks: a task folder with its own utils.py and
# stand-in rows), written to tests/fixtures/python_tasks/goldens/ for
# tests/tasks/python_functions_test.cpp.
#
# The reference (PyPI lm-eval 0.4.13, the versions of ../shared/goldens/README.md) runs through
# the shared tools unchanged: goldens/tools/make_goldens.py drives goldens/tools/run_reference.py
# (the offline datasets shim plus the hashfake model) with --include_path on the fixture's folder.
#
# Usage: scripts/gen_python_task_goldens.sh [VENV]   (default .venv-standin in the repo, as made by
# scripts/gen_standin_goldens.sh). Needs ../shared (goldens/tools, tools/reference_datasets_shim).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${LMEVAL_SHARED_DIR:-$repo/../shared}
shared=$(cd "$shared" && pwd)
venv=${1:-$repo/.venv-standin}
fixture="$repo/tests/fixtures/python_tasks"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/goldens/tools" "$scratch/tools"
for f in make_goldens.py run_reference.py hashfake_plugin.py; do
  ln -s "$shared/goldens/tools/$f" "$scratch/goldens/tools/$f"
done
ln -s "$shared/tools/reference_datasets_shim" "$scratch/tools/reference_datasets_shim"

# name:shots:limit:max_doc:arguments_kept_below (make_goldens.py): every request and sample kept.
"$venv/bin/python" "$scratch/goldens/tools/make_goldens.py" --work "$scratch/work" \
  --hf-data "$fixture/data" "--extra=--include_path=$fixture/tasks" \
  py_helpers_mc:d:-:1000:1000 py_helpers_gen:d:-:1000:1000 py_helpers_ll:d:-:1000:1000 \
  py_helpers_filter:d:-:1000:1000 py_helpers_inplace:d:-:1000:1000 py_helpers_metric:d:-:1000:1000 \
  py_helpers_custom_dataset:d:-:1000:1000 py_class_task:d:-:1000:1000

out="$fixture/goldens"
rm -rf "$out"
mkdir -p "$out"
cp -r "$scratch/goldens/requests" "$scratch/goldens/results" "$scratch/goldens/samples" "$out/"
# The fixture's absolute folder (config_source, the command) becomes relative to the repo.
"$venv/bin/python" - "$scratch/goldens/manifest.json" "$out" "$repo/" <<'PY'
import glob, json, os, sys
manifest, out, repo = sys.argv[1:]
for path in glob.glob(os.path.join(out, "results", "*.json")):
    text = open(path, encoding="utf-8").read().replace(repo, "")
    open(path, "w", encoding="utf-8").write(text)
runs = json.load(open(manifest))
for e in runs:
    assert e["exit_code"] == 0, e
    e["command"] = e["command"].replace(repo, "").replace(
        "LMEVAL_HF_DATA=hf_data", "LMEVAL_HF_DATA=tests/fixtures/python_tasks/data")
    print(e["run"], "ok:", e["requests_kept"], "of", e["requests_received"], "requests")
with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
    json.dump(runs, f, indent=1, ensure_ascii=False)
    f.write("\n")
PY
