#!/usr/bin/env bash
# Installs the real agents that the profile tests compare against, with npm, into .cache/agents
# (ignored by git): Codex CLI, Claude Code, opencode, Gemini CLI core and dsh-agent-instructions,
# each at the version its profile mirrors. Prints the node_modules folder (tests/agents.rs reads it from
# AGENTS_MODULES).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.cache/agents
mkdir -p "$dir"
[[ -f $dir/package.json ]] || echo '{"name":"agents-under-test","private":true}' > "$dir/package.json"
(cd "$dir" && npm install --no-audit --no-fund --silent \
  @openai/codex@0.171.0 @anthropic-ai/claude-code@2.1.332 opencode-ai@1.18.33 \
  @google/gemini-cli-core@0.61.0 @deepseek-ai/dsh-agent-instructions@0.1.0-rc.8 >/dev/null)
echo "$(pwd)/$dir/node_modules"
