#!/usr/bin/env bash
# clang-format check of the C++ files changed since a base commit (CI runs it from test.sh).
#   scripts/check_format.sh [BASE]
# BASE: the argument, else $LMEVAL_FORMAT_BASE, else the commit recorded in .clang-format-base
# (the commit that formatted the whole tree). Without any of them the check is skipped: files
# written before .clang-format existed are not formatted yet, so checking them would fail on
# code nobody touched. `scripts/check_format.sh HEAD~1` checks the previous commit's files.
# Generated tables are left out.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=lib/base_commit.sh
source "$ROOT/scripts/lib/base_commit.sh"
resolve_base_commit "format check" "${1:-}" "${LMEVAL_FORMAT_BASE:-}" .clang-format-base || exit 0
if ! command -v clang-format >/dev/null; then
  echo "format check: clang-format is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$BASE" -- \
  '*.cpp' '*.hpp' '*.h' '*.cc' | grep -v -e '_data\.cpp$' -e '\.inc$' || true)
if [ "${#files[@]}" -eq 0 ]; then
  echo "format check: no C++ files changed since $BASE"
  exit 0
fi
clang-format --dry-run -Werror "${files[@]}"
echo "format check: ${#files[@]} changed files formatted (since $BASE)"
