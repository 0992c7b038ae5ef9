#!/bin/sh
# Runs a tests/python file with the reference's environment: $LMEVAL_REF_VENV, else .venv-standin
# in the checkout (scripts/setup.sh makes it). Exit 77 (ctest: skipped) with a message without it.
# Usage: run_with_reference_python.sh REPO_ROOT PYTHONPATH TEST_FILE [ARGS...]
repo=$1 pkg=$2 test=$3
shift 3
venv=${LMEVAL_REF_VENV:-$repo/.venv-standin}
if [ ! -x "$venv/bin/python" ]; then
  echo "skipped: no reference environment at $venv (set LMEVAL_REF_VENV to a venv with lm-eval==0.4.13, or run scripts/setup.sh)"
  exit 77
fi
PYTHONPATH=$pkg${PYTHONPATH:+:$PYTHONPATH} exec "$venv/bin/python" "$test" -v "$@"
