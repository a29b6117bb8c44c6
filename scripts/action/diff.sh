#!/usr/bin/env bash
# The GitHub Action's pull-request step (action.yml): what the pull request does to each agent's
# view, `instructions-lsp diff` from the base commit to the checked-out merge, as Markdown in the
# job summary. A shallow checkout lacks the base commit: it is fetched alone. BASE_SHA comes
# from the event: it must be a commit id, never an option or a revision expression.
set -euo pipefail

# On pull_request_target GitHub checks out the base branch, not the pull request's code (for
# safety): a diff of it would say the change does nothing.
if [[ ${EVENT:-} == pull_request_target ]]; then
  echo "::warning title=instructions-lsp::on pull_request_target the checkout is the base branch, not the pull request: what the change does to each agent is not shown (run the action on pull_request)"
  exit 0
fi
if [[ ! ${BASE_SHA:?} =~ ^[0-9a-f]{40}([0-9a-f]{24})?$ ]]; then
  echo "::error title=instructions-lsp::the base commit '$BASE_SHA' is not a commit id"
  exit 2
fi
if ! git cat-file -e "$BASE_SHA^{commit}" 2>/dev/null; then
  git fetch --no-tags --quiet --depth=1 origin -- "$BASE_SHA"
fi
base=$(git rev-parse --short --verify --end-of-options "$BASE_SHA^{commit}")
args=(diff --format markdown --fail-on "${FAIL_ON:?}")
# The checkout is the pull request merged into its base (or a merge group's head): named so, and
# the base by its branch.
if [[ -n ${BASE_REF:-} ]]; then
  head_name="this pull request"
  [[ ${EVENT:-} == merge_group ]] && head_name="this merge group"
  args+=(--base-name "${BASE_REF#refs/heads/} at $base" --head-name "$head_name")
fi
if [[ -n ${PROFILE:-} ]]; then
  args+=(--profile "$PROFILE")
fi
summary="${RUNNER_TEMP:?}/instructions-lsp-diff.md"
status=0
instructions-lsp "${args[@]}" -- "$base" HEAD > "$summary" || status=$?
# A job summary holds at most 1 MiB (GitHub drops a larger one whole): cut at a line below it,
# with a line that says so.
limit=$((1024 * 1024 - 4096))
size=$(wc -c < "$summary")
if ((size > limit)); then
  {
    head -c "$limit" "$summary" | sed '$d'
    # shellcheck disable=SC2016 # (backticks for Markdown, not a command)
    printf '\n**The summary is cut here**: it is %s bytes, more than a job summary holds. `instructions-lsp diff %s HEAD` prints all of it.\n' "$size" "$base"
  } >> "${GITHUB_STEP_SUMMARY:?}"
else
  cat "$summary" >> "${GITHUB_STEP_SUMMARY:?}"
fi
exit "$status"
