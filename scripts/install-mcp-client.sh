#!/usr/bin/env bash
# Installs the official Python MCP client SDK (the `mcp` package, pinned) into a venv under
# .cache/ (ignored by git), for tests/mcp.rs, which drives `instructions-lsp mcp` with it.
# Prints the venv's python (tests/mcp.rs reads it from MCP_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."

pin=mcp==2.3.0
venv=.cache/mcp-client
if [[ ! -x $venv/bin/python || ! -f $venv/.pinned || $(cat "$venv/.pinned") != "$pin" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$pin" >&2
  echo "$pin" > "$venv/.pinned"
fi
echo "$(pwd)/$venv/bin/python"
