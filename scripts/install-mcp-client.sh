#!/usr/bin/env bash
# Installs the official Python MCP client SDK (the `mcp` package) into a venv under .cache/
# (ignored by git), for tests/it/mcp.rs, which drives `instructions-lsp mcp` with it. Every package
# is pinned, the SDK's dependencies too, so that a new release of one cannot change the tests.
# Prints the venv's python (tests/it/mcp.rs reads it from MCP_PYTHON).
set -euo pipefail
cd "$(dirname "$0")/.."

pins=(
  mcp==2.3.0 mcp-types==2.3.0
  annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 cffi==2.1.1 click==8.5.1 cryptography==50.0.2
  h11==0.16.0 httpcore2==2.16.2 httpx2==2.16.2 idna==3.20 jsonschema==4.26.0
  jsonschema-specifications==2025.9.1 opentelemetry-api==1.45.2 pycparser==3.12 pydantic==2.14.4
  pydantic_core==2.50.5 PyJWT==2.15.1 python-multipart==0.0.34 referencing==0.37.0 rpds-py==2026.9.1
  sse-starlette==3.7.0 starlette==1.10.0 truststore==0.10.5 typing-inspection==0.4.5
  typing_extensions==4.16.0 uvicorn==0.54.0
)
venv=.cache/mcp-client
if [[ ! -x $venv/bin/python || ! -f $venv/.pinned || $(cat "$venv/.pinned") != "${pins[*]}" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}" >&2
  echo "${pins[*]}" > "$venv/.pinned"
fi
echo "$(pwd)/$venv/bin/python"
