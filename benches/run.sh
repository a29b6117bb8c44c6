#!/usr/bin/env bash
# The benchmark suite with the npm peers, in one table. Installs the peers with npm into
# .cache/peers (ignored by git), generates the seeded trees, times the peers on the depth-10
# chain, then runs the Rust harness over the release server.
#   benches/run.sh [--huge]
set -euo pipefail
cd "$(dirname "$0")/.."
peers=.cache/peers
mkdir -p "$peers" .artifacts/bench
[[ -f $peers/package.json ]] || echo '{"name":"bench-peers","private":true}' > "$peers/package.json"
(cd "$peers" && npm install --no-audit --no-fund --ignore-scripts --silent \
  @deepseek-ai/dsh-agent-instructions@0.1.0-rc.8 @google/gemini-cli-core@0.61.0)
chain=$(cargo bench --bench bench --quiet -- --trees-only)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
node benches/peers.mjs --cwd "$chain" --home "$home" --modules "$peers/node_modules" > .artifacts/bench/peers.json
cat .artifacts/bench/peers.json
cargo bench --bench bench --quiet -- --peers .artifacts/bench/peers.json --json .artifacts/bench/results.json "$@"
