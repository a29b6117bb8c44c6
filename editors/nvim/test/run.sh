#!/usr/bin/env bash
# Runs the Neovim plugin test headless against a fresh fixture tree, then checks that no
# server process outlives `:qa`. Needs `nvim` (Debian's neovim) and a built server.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
server=${SERVER:-$repo/target/debug/instructions-lsp}
[[ -x $server ]] || (cd "$repo" && cargo build --locked --quiet)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fixture=$tmp/project
mkdir -p "$fixture/.git" "$fixture/pkg/deep" "$tmp/home"
printf 'root rules' > "$fixture/AGENTS.md"
printf 'old claude rules\n' > "$fixture/CLAUDE.md"
printf 'deep rules' > "$fixture/pkg/deep/AGENTS.md"
printf 'print("hi")\n' > "$fixture/pkg/deep/main.lua"
mkdir -p "$fixture/docs" && printf 'the guide\n' > "$fixture/docs/guide.md"

cd "$fixture"
status=0
HOME=$tmp/home FIXTURE=$fixture SERVER=$server PID_FILE=$tmp/pid \
  timeout 120 nvim --headless -u NONE -i NONE -n --cmd "set rtp^=$repo/editors/nvim" \
  -c "luafile $here/test.lua" || status=$?

pid=$(cat "$tmp/pid" 2>/dev/null || true)
if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
  echo "not ok - the server (pid $pid) is still running after :qa"
  kill "$pid" || true
  status=1
elif [[ -n $pid ]]; then
  echo "ok - no server process is left after :qa"
else
  echo "not ok - the server's pid was never recorded"
  status=1
fi
exit $status
