#!/usr/bin/env bash
# clang-tidy (.clang-tidy's checks, every warning an error) over the C++ sources changed since a
# base commit; CI runs it from test.sh after the build, which writes the compile database.
#   scripts/check_tidy.sh [BASE]
# BASE: the argument, else $LMEVAL_TIDY_BASE, else the commit recorded in .clang-tidy-base (the
# last commit whose whole tree was checked clean; move it forward after such a run:
# `scripts/check_tidy.sh <older base>` then record HEAD). Files compiled against libtorch are
# left out: Debian's clang-tidy 14 cannot parse Debian's libtorch headers (c10::IValue errors in
# its own headers), so the hf backend is checked by gcc's -Wall -Wextra only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${LMEVAL_BUILD_DIR:-$ROOT/build}"
cd "$ROOT"
BASE="${1:-${LMEVAL_TIDY_BASE:-}}"
if [ -z "$BASE" ] && [ -f .clang-tidy-base ]; then BASE="$(tr -d ' \n' < .clang-tidy-base)"; fi
if [ -z "$BASE" ]; then
  echo "tidy check: skipped (no base commit: give one, or record it in .clang-tidy-base)"
  exit 0
fi
if ! command -v clang-tidy >/dev/null; then
  echo "tidy check: clang-tidy is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
if ! git rev-parse -q --verify "$BASE^{commit}" >/dev/null 2>&1; then
  echo "tidy check: skipped (base $BASE is not in this clone's history)"
  exit 0
fi
DB="$BUILD_DIR/compile_commands.json"
if [ ! -f "$DB" ]; then
  echo "tidy check: $DB is missing (build first: scripts/setup.sh)" >&2
  exit 1
fi
# Sources changed since BASE, without the hf backend (the files compiled against libtorch). Unity
# builds leave most sources out of the compile database; clang-tidy then takes the flags of the
# nearest entry, which here are the same include paths and standard.
mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$BASE" -- '*.cpp' |
  grep -v -e '^src/models/hf/' -e '^tests/models/hf/' -e '_data\.cpp$' |
  while read -r f; do grep -q -E '#include [<"](torch|ATen|c10)/' "$f" || echo "$f"; done)
if [ "${#files[@]}" -eq 0 ]; then
  echo "tidy check: no C++ sources to check changed since $BASE"
  exit 0
fi
JOBS="${LMEVAL_JOBS:-$(nproc)}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! printf '%s\n' "${files[@]}" |
  xargs -P "$JOBS" -n 1 clang-tidy -p "$BUILD_DIR" --quiet --warnings-as-errors='*' >"$log" 2>&1; then
  grep -E -A3 '(warning|error):' "$log" >&2 || cat "$log" >&2
  echo "tidy check: clang-tidy found problems (above) in the files changed since $BASE" >&2
  exit 1
fi
echo "tidy check: ${#files[@]} changed sources clean (since $BASE)"
