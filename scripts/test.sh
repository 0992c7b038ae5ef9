#!/usr/bin/env bash
# Builds lm-eval with its tests and runs the whole suite (CTest). Used by CI and the README.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${LMEVAL_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/check_format.sh"
"$ROOT/scripts/check_tidy.sh"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" ${LMEVAL_CTEST_ARGS:-}
