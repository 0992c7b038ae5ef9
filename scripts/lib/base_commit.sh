# Sourced by scripts/check_format.sh and scripts/check_tidy.sh: which commit their checks of the
# changed files start from.
#   resolve_base_commit LABEL ARG ENV_VALUE BASE_FILE
# Sets BASE to ARG, else ENV_VALUE, else the commit recorded in BASE_FILE (relative to the current
# directory). Returns 1 after printing "LABEL: skipped (...)" when there is none, or when it is not
# in this clone's history (a shallow clone, or a base recorded on another branch): the check then
# has nothing it can compare against, which is not a failure.
resolve_base_commit() {
  local label="$1" arg="$2" env_value="$3" base_file="$4"
  BASE="${arg:-$env_value}"
  if [ -z "$BASE" ] && [ -f "$base_file" ]; then BASE="$(tr -d ' \n' < "$base_file")"; fi
  if [ -z "$BASE" ]; then
    echo "$label: skipped (no base commit: give one, or record it in $base_file)"
    return 1
  fi
  if ! git rev-parse -q --verify "$BASE^{commit}" >/dev/null 2>&1; then
    echo "$label: skipped (base $BASE is not in this clone's history)"
    return 1
  fi
}
