#!/usr/bin/env bash
# clang-tidy (.clang-tidy's checks, every warning an error) over the C++ sources changed since a
# base commit, or over all of them; CI runs it from test.sh after the build, which writes the
# compile database.
#   scripts/check_tidy.sh [BASE]
#   scripts/check_tidy.sh --all
# BASE: the argument, else $LMEVAL_TIDY_BASE, else the commit recorded in .clang-tidy-base: a
# commit whose whole tree was checked clean. To move it forward, run `scripts/check_tidy.sh --all`
# (every source) on a checkout of a commit with nothing uncommitted, and record that commit.
# Files compiled against libtorch are left out: Debian's clang-tidy 14 cannot parse Debian's
# libtorch headers (c10::IValue errors in its own headers), so the hf backend is checked by gcc's
# -Wall -Wextra only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${LMEVAL_BUILD_DIR:-$ROOT/build}"
cd "$ROOT"
if [ "${1:-}" = "--all" ]; then
  scope="(every source)"
  list_sources() { git ls-files -- '*.cpp'; }
else
  # shellcheck source=lib/base_commit.sh
  source "$ROOT/scripts/lib/base_commit.sh"
  resolve_base_commit "tidy check" "${1:-}" "${LMEVAL_TIDY_BASE:-}" .clang-tidy-base || exit 0
  scope="(changed since $BASE)"
  list_sources() { git diff --name-only --diff-filter=ACMR "$BASE" -- '*.cpp'; }
fi
if ! command -v clang-tidy >/dev/null; then
  echo "tidy check: clang-tidy is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
DB="$BUILD_DIR/compile_commands.json"
if [ ! -f "$DB" ]; then
  echo "tidy check: $DB is missing (build first: scripts/setup.sh)" >&2
  exit 1
fi
# The sources to check, without the hf backend (the files compiled against libtorch). Unity builds
# leave most sources out of the compile database; clang-tidy then takes the flags of the nearest
# entry, which here are the same include paths and standard.
mapfile -t files < <(list_sources |
  grep -v -e '^src/models/hf/' -e '^tests/models/hf/' -e '_data\.cpp$' |
  while read -r f; do grep -q -E '#include [<"](torch|ATen|c10)/' "$f" || echo "$f"; done)
if [ "${#files[@]}" -eq 0 ]; then
  echo "tidy check: no C++ sources to check $scope"
  exit 0
fi
JOBS="${LMEVAL_JOBS:-$(nproc)}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! printf '%s\n' "${files[@]}" |
  xargs -P "$JOBS" -n 1 clang-tidy -p "$BUILD_DIR" --quiet --warnings-as-errors='*' >"$log" 2>&1; then
  grep -E -A3 '(warning|error):' "$log" >&2 || cat "$log" >&2
  echo "tidy check: clang-tidy found problems (above) in the sources $scope" >&2
  exit 1
fi
echo "tidy check: ${#files[@]} sources clean $scope"
