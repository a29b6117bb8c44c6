#!/usr/bin/env bash
# The benchmark suite with the peers, in one table. Installs the npm peers and agnix into
# .cache/peers (ignored by git) and ripgrep if missing, generates the seeded trees, times the npm
# peers on the depth-10 chain, then runs the Rust harness over the release server (which times
# `check` against `rg --files` and agnix as whole processes).
#   benches/run.sh [--huge]
set -euo pipefail
cd "$(dirname "$0")/.."
peers=.cache/peers
mkdir -p "$peers" .artifacts/bench
[[ -f $peers/package.json ]] || echo '{"name":"bench-peers","private":true}' > "$peers/package.json"
(cd "$peers" && npm install --no-audit --no-fund --ignore-scripts --silent \
  @deepseek-ai/dsh-agent-instructions@0.1.0-rc.8 @google/gemini-cli-core@0.61.0)
# The walk `check` is compared with: Debian's ripgrep.
if ! command -v rg >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 ripgrep >/dev/null
fi
# agnix, a linter of agent configuration files, at the version issue 25 compares with: its PyPI
# package carries the binary. A venv of its own, pinned.
agnix_version=0.59.3
agnix=$peers/agnix
if [[ ! -x $agnix/bin/agnix || $(cat "$agnix/.pinned" 2>/dev/null) != "$agnix_version" ]]; then
  rm -rf "$agnix"
  python3 -m venv "$agnix" >&2
  "$agnix/bin/pip" install --quiet --disable-pip-version-check "agnix==$agnix_version" >&2
  echo "$agnix_version" > "$agnix/.pinned"
fi
chain=$(cargo bench --bench bench --quiet -- --trees-only)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
node benches/peers.mjs --cwd "$chain" --home "$home" --modules "$peers/node_modules" > .artifacts/bench/peers.json
cat .artifacts/bench/peers.json
cargo bench --bench bench --quiet -- --peers .artifacts/bench/peers.json --json .artifacts/bench/results.json \
  --agnix "$PWD/$agnix/bin/agnix" "$@"
