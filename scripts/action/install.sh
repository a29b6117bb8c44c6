#!/usr/bin/env bash
# Installs instructions-lsp for the GitHub Action (action.yml at the repository's root) and puts
# it on PATH for the action's next steps. INSTALL=release: the release binary for the runner's
# platform (VERSION: a tag such as v0.2.0, or latest), built with cargo from that tag when the
# release has none for the platform; INSTALL=source: built with cargo from the action's own
# checkout (ACTION_PATH), which is how this repository's CI runs the code it tests.
# REPOSITORY: where the releases and the source come from (a fork, or a mirror on GitHub
# Enterprise), as a URL or as owner/name on the workflow's server; this project's repository
# on github.com by default (also for workflows on GitHub Enterprise Server).
set -euo pipefail

repo="${REPOSITORY:-https://github.com/instructions-lsp/instructions-lsp}"
[[ $repo == *://* ]] || repo="${GITHUB_SERVER_URL:-https://github.com}/$repo"
repo="${repo%/}"
root="${RUNNER_TEMP:?}/instructions-lsp"
bin="$root/bin"
mkdir -p "$bin"

exe=instructions-lsp
case "${RUNNER_OS:?}-${RUNNER_ARCH:?}" in
  Linux-X64) target=linux-x64 ;;
  Linux-ARM64) target=linux-arm64 ;;
  macOS-X64) target=darwin-x64 ;;
  macOS-ARM64) target=darwin-arm64 ;;
  Windows-X64) target=win32-x64 exe=instructions-lsp.exe ;;
  *) target= ;;
esac

case "${INSTALL:?}" in
  source)
    cargo install --locked --quiet --root "$root" --path "${ACTION_PATH:?}"
    ;;
  release)
    if [[ ${VERSION:?} == latest ]]; then
      url="$repo/releases/latest/download/instructions-lsp-$target"
    else
      url="$repo/releases/download/$VERSION/instructions-lsp-$target"
    fi
    [[ $exe == *.exe ]] && url+=.exe
    if [[ -n $target ]] && curl --fail --silent --show-error --location --retry 3 --output "$bin/$exe" "$url"; then
      chmod +x "$bin/$exe"
    else
      echo "::notice title=instructions-lsp::no release binary for ${RUNNER_OS}-${RUNNER_ARCH} ($VERSION): building it with cargo"
      from=(--git "$repo")
      [[ $VERSION != latest ]] && from+=(--tag "$VERSION")
      cargo install --locked --quiet --root "$root" "${from[@]}" instructions-lsp
    fi
    ;;
  *)
    echo "::error title=instructions-lsp::install must be release or source, not '$INSTALL'"
    exit 2
    ;;
esac

echo "$bin" >> "${GITHUB_PATH:?}"
"$bin/$exe" --version
