#!/usr/bin/env bash
# Shows the progress line as a terminal draws it: runs the dummy model (slowed down) in a tmux
# window COLS columns wide, captures the screen mid-run and at the end, then the same run with
# stderr redirected to a file. Usage: scripts/check_progress_tmux.sh [BINARY] [COLS...]
set -euo pipefail
bin=$(realpath "${1:-build/lm-eval}")
shift || true
cols=("${@:-80 200}")
[[ $# -eq 0 ]] && cols=(80 200)
args="run --model dummy --tasks demo_story_cloze"
for c in "${cols[@]}"; do
  s="lmeval_progress_$$_$c"
  tmux new-session -d -s "$s" -x "$c" -y 12
  tmux send-keys -t "$s" "LMEVAL_DUMMY_DELAY_MS=30 '$bin' $args >/dev/null; echo EXIT_\$((1+1))=\$?" Enter
  sleep 1.5
  echo "== $c columns, mid-run =="
  tmux capture-pane -p -t "$s" | sed 's/[[:space:]]*$//' | grep -v '^$' || true
  for _ in $(seq 60); do
    tmux capture-pane -p -t "$s" | grep -q 'EXIT_2=' && break
    sleep 1
  done
  echo "== $c columns, at the end =="
  tmux capture-pane -p -t "$s" | sed 's/[[:space:]]*$//' | grep -v '^$' || true
  tmux kill-session -t "$s"
done
log=$(mktemp)
LMEVAL_DUMMY_DELAY_MS=30 "$bin" $args >/dev/null 2>"$log"
echo "== stderr redirected to a file =="
cat -A "$log" | cut -c1-160
rm -f "$log"
