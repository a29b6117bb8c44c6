#!/usr/bin/env bash
# The GitHub Action's check step (action.yml): `instructions-lsp check` with its findings as
# workflow annotations, failing the step as FAIL_ON says; with SARIF_FILE, the same findings as
# SARIF 2.1.0 in that file too (for a code-scanning upload).
set -euo pipefail

read -r -a trees <<< "${PATHS:-.}"
args=(check "${trees[@]}")
if [[ -n ${PROFILE:-} ]]; then
  args+=(--profile "$PROFILE")
fi
if [[ -n ${SARIF_FILE:-} ]]; then
  instructions-lsp "${args[@]}" --format sarif --fail-on never > "$SARIF_FILE"
fi
instructions-lsp "${args[@]}" --format github --fail-on "${FAIL_ON:?}"
