#!/usr/bin/env bash
# Runs instructions-lsp.el headless (emacs --batch) with each client, eglot then lsp-mode, against
# a fresh fixture tree, then checks that no server process outlives Emacs. Needs Debian's emacs-nox,
# elpa-eglot and elpa-lsp-mode, and the server (SERVER, default the release build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
server=${SERVER:-$repo/target/release/instructions-lsp}
[[ -x $server ]] || (cd "$repo" && cargo build --release --locked --quiet)
server=$(realpath "$server") # Emacs runs in the fixture

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset DSH_HOME

passed=0 failed=0
for client in eglot lsp-mode; do
  fixture=$tmp/$client/project
  mkdir -p "$fixture/.git" "$fixture/pkg" "$tmp/$client/home"
  # Past the 1024-byte budget the test sets: the block cuts AGENTS.md.
  for i in $(seq 1 60); do printf 'Rule %d: keep the change small and say why.\n' "$i"; done > "$fixture/AGENTS.md"
  printf 'package rules\n' > "$fixture/pkg/AGENTS.md"
  printf 'notes\n' > "$fixture/pkg/notes.md"
  HOME=$tmp/$client/home "$server" effective "$fixture" --profile dsh --set baselineMaxBytes=1024 --set stateDir=null \
    > "$tmp/$client/expected"

  log=$tmp/$client/out
  status=0
  (cd "$fixture" && HOME=$tmp/$client/home CLIENT=$client SERVER=$server FIXTURE=$fixture \
    EXPECTED=$tmp/$client/expected PID_FILE=$tmp/$client/pid TMPDIR=$tmp/$client \
    timeout 120 emacs --batch -q -L "$repo/editors/emacs" -l "$here/test.el") > "$log" 2> "$tmp/$client/err" || status=$?
  cat "$log"
  pid=$(cat "$tmp/$client/pid" 2>/dev/null || true)
  # A server Emacs killed on its way out may still await its reaper for a moment.
  for _ in $(seq 1 50); do
    [[ -n $pid ]] && ps -o stat= -p "$pid" | grep -qv Z || break
    sleep 0.1
  done
  if [[ -n $pid ]] && ps -o stat= -p "$pid" | grep -qv Z; then
    echo "not ok - $client: the server (pid $pid) is still running after Emacs exited"
    kill "$pid" || true
    failed=$((failed + 1))
  elif [[ -n $pid ]]; then
    echo "ok - $client: no server process is left after Emacs exited"
    passed=$((passed + 1))
  fi
  if [[ $status -ne 0 ]] && ! grep -q '^not ok' "$log"; then
    echo "not ok - $client: emacs exited with status $status"
    failed=$((failed + 1))
  fi
  if [[ $status -ne 0 ]]; then
    echo "--- $client: Emacs's messages"
    cat "$tmp/$client/err"
  fi
  passed=$((passed + $(grep -c '^ok - ' "$log" || true)))
  failed=$((failed + $(grep -c '^not ok - ' "$log" || true)))
done

echo "emacs: $passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
