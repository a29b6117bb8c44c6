#!/usr/bin/env bash
# Installs instructions-lsp for the GitHub Action (action.yml at the repository's root) and puts
# it on PATH for the action's next steps. Nothing unverified runs:
#
# - INSTALL=release: the release binary for the runner's platform (on musl, as in an Alpine
#   container job, the static `-musl` one), checked against the
#   release's SHA256SUMS before it is made executable (a missing or different sum stops the step).
#   VERSION is a tag such as v0.2.0, `latest`, or empty: then the release of the tag the action
#   itself was used at (ACTION_REF, `uses: …@v0.2.0`), and for a branch or a commit the action's
#   own source, so that its scripts and its binary always come from the same commit. A platform
#   without release binaries (or a release without one) is built with cargo from that tag, never
#   from a branch: with `latest` it is an error that says to pin a version.
# - INSTALL=source: built with cargo from the action's own checkout (ACTION_PATH), which is how
#   this repository's CI runs the code it tests.
#
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

fail() {
  echo "::error title=instructions-lsp::$1"
  exit "${2:-1}"
}

exe=instructions-lsp
case "${RUNNER_OS:?}-${RUNNER_ARCH:?}" in
  Linux-X64) target=linux-x64 ;;
  Linux-ARM64) target=linux-arm64 ;;
  macOS-X64) target=darwin-x64 ;;
  macOS-ARM64) target=darwin-arm64 ;;
  Windows-X64) target=win32-x64 exe=instructions-lsp.exe ;;
  *) target= ;;
esac
# A musl system (an Alpine container job) gets the static binary. The C library's own ldd
# says which it is (musl's says so and exits 1); the loader's file only where there is no ldd (a
# glibc system may have musl's loader installed beside its own).
musl() {
  if command -v ldd > /dev/null; then
    { ldd --version 2>&1 || true; } | grep -qi musl
  else
    compgen -G '/lib/ld-musl-*' > /dev/null
  fi
}
if [[ $target == linux-* ]] && musl; then
  target+=-musl
fi

install="${INSTALL:?}"
version="${VERSION:-}"
if [[ $install == release && -z $version ]]; then
  # The action's own tag, else (a branch, a commit: no release of it) the action's own source.
  if [[ ${ACTION_REF:-} =~ ^v[0-9]+(\.[0-9]+)*([-+][0-9A-Za-z.-]+)?$ ]]; then
    version=$ACTION_REF
  else
    echo "::notice title=instructions-lsp::the action is used at '${ACTION_REF:-}', which is no release tag: building its own source with cargo"
    install=source
  fi
fi
if [[ -n $version && $version != latest && ! $version =~ ^v[0-9]+(\.[0-9]+)*([-+][0-9A-Za-z.-]+)?$ ]]; then
  fail "version must be a release tag such as v0.2.0, or latest, not '$version'" 2
fi

# The SHA-256 of a file, by whichever tool the runner has.
sha256() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# Builds the release `tag` from the repository's source with cargo.
build_tag() {
  echo "::notice title=instructions-lsp::no release binary for ${RUNNER_OS}-${RUNNER_ARCH} ($1): building it with cargo"
  cargo install --locked --quiet --root "$root" --git "$repo" --tag "$1" instructions-lsp
}

case "$install" in
  source)
    cargo install --locked --quiet --root "$root" --path "${ACTION_PATH:?}"
    ;;
  release)
    if [[ $version == latest ]]; then
      download="$repo/releases/latest/download"
    else
      download="$repo/releases/download/$version"
    fi
    name="instructions-lsp-$target"
    [[ $exe == *.exe ]] && name+=.exe
    get() { curl --fail --silent --show-error --location --retry 3 --output "$2" "$download/$1"; }
    if [[ -z $target ]]; then
      [[ $version == latest ]] && fail "no release binaries for ${RUNNER_OS}-${RUNNER_ARCH}: pin version to a tag (built from that tag with cargo), or use install: source" 2
      build_tag "$version"
    elif ! get "$name" "$root/$name.download"; then
      [[ $version == latest ]] && fail "the latest release has no $name: pin version to a tag (built from that tag with cargo), or use install: source"
      build_tag "$version"
    else
      get SHA256SUMS "$root/SHA256SUMS" || fail "the release ($version) has no SHA256SUMS: its binary is not run unverified"
      want=$(awk -v n="$name" '$2 == n || $2 == "*" n { print $1; exit }' "$root/SHA256SUMS")
      got=$(sha256 "$root/$name.download")
      if [[ -z $want || $want != "$got" ]]; then
        rm -f "$root/$name.download"
        fail "$name of the release ($version) does not match its SHA256SUMS (${want:-no line for it}, downloaded $got): not installed"
      fi
      mv "$root/$name.download" "$bin/$exe"
      chmod +x "$bin/$exe"
    fi
    ;;
  *)
    fail "install must be release or source, not '$install'" 2
    ;;
esac

echo "$bin" >> "${GITHUB_PATH:?}"
"$bin/$exe" --version
