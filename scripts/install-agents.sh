#!/usr/bin/env bash
# Installs the real agents that the profile tests compare against, with npm, into .cache/agents
# (ignored by git): Codex CLI, Claude Code, opencode, Gemini CLI core and dsh-agent-instructions,
# each at the version its profile mirrors. Prints the node_modules folder (tests/agents.rs reads it from
# AGENTS_MODULES).
#
#   AGENTS_LATEST=1 bash scripts/install-agents.sh
#
# installs the newest release of each (npm's `latest` tag) into .cache/agents-latest instead, so the
# pinned install stays as it is, and says on stderr which versions it got. The drift workflow
# (.github/workflows/agents-drift.yml) runs the profile tests against those.
set -euo pipefail
cd "$(dirname "$0")/.."

# The pinned releases, one package@version a line: the one place they are written down.
# scripts/agent-versions reads them from here; each profile's `mirrors` string and docs/profiles.md
# name the same releases (docs/release.md: moving a profile to a new release).
pins=(
  @openai/codex@0.171.0
  @anthropic-ai/claude-code@2.1.332
  opencode-ai@1.18.33
  @google/gemini-cli-core@0.61.0
  @deepseek-ai/dsh-agent-instructions@0.1.0-rc.8
)

case ${AGENTS_LATEST:-} in
  "" | 0) latest= ;;
  1) latest=1 ;;
  *) echo "install-agents.sh: AGENTS_LATEST is 1 (the newest releases) or unset (the pins), not '$AGENTS_LATEST'" >&2; exit 2 ;;
esac

dir=.cache/agents
specs=("${pins[@]}")
if [[ -n $latest ]]; then
  dir=.cache/agents-latest
  # A scoped name starts with @ too: only the last @ separates the version.
  specs=()
  for pin in "${pins[@]}"; do specs+=("${pin%@*}@latest"); done
fi

mkdir -p "$dir"
[[ -f $dir/package.json ]] || echo '{"name":"agents-under-test","private":true}' > "$dir/package.json"
(cd "$dir" && npm install --no-audit --no-fund --silent "${specs[@]}" >/dev/null)

if [[ -n $latest ]]; then
  for pin in "${pins[@]}"; do
    name=${pin%@*}
    got=$(node -p 'require(process.argv[1]).version' "$(pwd)/$dir/node_modules/$name/package.json")
    note=
    [[ $got == "${pin##*@}" ]] || note=", pinned ${pin##*@}"
    echo "[install-agents] $name $got (latest$note)" >&2
  done
fi
echo "$(pwd)/$dir/node_modules"
