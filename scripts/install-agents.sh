#!/usr/bin/env bash
# Installs the real agents that the profile tests compare against, with npm, into .cache/agents
# (ignored by git). Prints the path of the codex binary.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.cache/agents
mkdir -p "$dir"
[[ -f $dir/package.json ]] || echo '{"name":"agents-under-test","private":true}' > "$dir/package.json"
(cd "$dir" && npm install --no-audit --no-fund --silent @openai/codex@0.171.0 >/dev/null)
echo "$(pwd)/$dir/node_modules/.bin/codex"
