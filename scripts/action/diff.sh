#!/usr/bin/env bash
# The GitHub Action's pull-request step (action.yml): what the pull request does to each agent's
# view, `instructions-lsp diff` from the base commit to the checked-out merge, as Markdown in the
# job summary. A shallow checkout lacks the base commit: it is fetched alone.
set -euo pipefail

if ! git cat-file -e "${BASE_SHA:?}^{commit}" 2>/dev/null; then
  git fetch --no-tags --quiet --depth=1 origin "$BASE_SHA"
fi
base=$(git rev-parse --short "$BASE_SHA")
args=(diff "$base" HEAD --format markdown --fail-on "${FAIL_ON:?}")
# The checkout is the pull request merged into its base: named so, and the base by its branch.
if [[ -n ${BASE_REF:-} ]]; then
  args+=(--base-name "$BASE_REF at $base" --head-name "this pull request")
fi
if [[ -n ${PROFILE:-} ]]; then
  args+=(--profile "$PROFILE")
fi
summary="${RUNNER_TEMP:?}/instructions-lsp-diff.md"
status=0
instructions-lsp "${args[@]}" > "$summary" || status=$?
cat "$summary" >> "${GITHUB_STEP_SUMMARY:?}"
exit "$status"
