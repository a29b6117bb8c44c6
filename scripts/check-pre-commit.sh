#!/usr/bin/env bash
# Checks .pre-commit-hooks.yaml with pre-commit itself (pinned, with its dependencies, in a venv
# under .cache/): the manifest validates, and the `language: system` hook, run by
# `pre-commit try-repo` in a new repository whose AGENTS.md Codex cuts, fails the commit with the
# finding; then the `language: rust` hook, which pre-commit builds from this repository with
# `cargo install` (reusing target/ for the dependencies), fails it the same way. SERVER: the
# binary to put on PATH (default target/release/instructions-lsp).
set -euo pipefail
cd "$(dirname "$0")/.."

pins=(
  pre-commit==4.7.0 cfgv==3.5.0 distlib==0.4.4 filelock==4.3.1 identify==2.6.20 nodeenv==1.12.0
  packaging==26.4 platformdirs==4.14.9 python-discovery==1.9.6 PyYAML==6.0.4 virtualenv==21.15.11
)
venv=.cache/pre-commit
if [[ ! -x $venv/bin/pre-commit || ! -f $venv/.pinned || $(cat "$venv/.pinned") != "${pins[*]}" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
  echo "${pins[*]}" > "$venv/.pinned"
fi
pre_commit="$(pwd)/$venv/bin/pre-commit"
server="$(cd "$(dirname "${SERVER:-target/release/instructions-lsp}")" && pwd)"
hooks="$(pwd)"

"$pre_commit" validate-manifest .pre-commit-hooks.yaml

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The rust hook's cargo keeps the user's toolchain and downloaded crates (cargo and rustup find
# them from HOME, which is replaced below).
if [[ -n ${HOME:-} ]]; then
  export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
fi
export HOME="$work/home" PRE_COMMIT_HOME="$work/cache" GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME" "$work/repo"
cd "$work/repo"
git init -q
git config user.name t
git config user.email t@example.com
for i in $(seq 1 800); do printf -- '- keep the change small and say why, rule %d\n' "$i"; done > AGENTS.md
# A package with rules of its own for Claude Code, whose checks pass (information at most).
mkdir pkg && printf 'package rules\n' > pkg/CLAUDE.md
git add -A
status=0
PATH="$server:$PATH" "$pre_commit" try-repo "$hooks" instructions-lsp-check-system --all-files > out.txt 2>&1 || status=$?
if [[ $status -ne 1 ]] || ! grep -q 'warning\[agentCut\]: Codex cuts this file' out.txt; then
  cat out.txt
  echo "pre-commit: the hook should have failed with Codex's cut (exit $status)" >&2
  exit 1
fi
# The hook for what a commit touches: a change in pkg/ does not answer for the root's cut; a
# change of the root's AGENTS.md does.
status=0
PATH="$server:$PATH" "$pre_commit" try-repo "$hooks" instructions-lsp-check-changed-system --files pkg/CLAUDE.md > out.txt 2>&1 || status=$?
if [[ $status -ne 0 ]]; then
  cat out.txt
  echo "pre-commit: a change in pkg/ should pass: the cut is the root's (exit $status)" >&2
  exit 1
fi
status=0
PATH="$server:$PATH" "$pre_commit" try-repo "$hooks" instructions-lsp-check-changed-system --files AGENTS.md > out.txt 2>&1 || status=$?
if [[ $status -ne 1 ]] || ! grep -q 'warning\[agentCut\]: Codex cuts this file' out.txt; then
  cat out.txt
  echo "pre-commit: a change of the root's AGENTS.md should fail with Codex's cut (exit $status)" >&2
  exit 1
fi
# pre-commit runs `cargo install --path` without --locked, as for its users: the dependencies
# are the newest that Cargo.toml allows, so a release of one that breaks the build fails here
# as it would fail their hook.
status=0
CARGO_TARGET_DIR="$hooks/target" "$pre_commit" try-repo "$hooks" instructions-lsp-check --all-files > out.txt 2>&1 || status=$?
if [[ $status -ne 1 ]] || ! grep -q 'warning\[agentCut\]: Codex cuts this file' out.txt; then
  cat out.txt
  echo "pre-commit: the rust hook, built by pre-commit, should have failed with Codex's cut (exit $status)" >&2
  exit 1
fi
# Without Rust: a `repo: local` hook of `language: node` whose additional dependency is the npm
# package (docs/ci.md), here the packed tarballs of dist/ (scripts/dist.mjs) where a user names
# `instructions-lsp@VERSION` from the registry. pre-commit installs them into a node environment of
# its own, and the hook fails the commit with the finding, with no cargo and no Rust binary on PATH.
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$hooks/Cargo.toml" | head -n 1)
platform=$(node -p 'process.platform + "-" + process.arch' 2> /dev/null || true)
launcher=$hooks/dist/npm/instructions-lsp-$version.tgz
binary=$hooks/dist/npm/instructions-lsp-cli-$platform-$version.tgz
if [[ -n $platform && -f $launcher && -f $binary ]]; then
  cat > .pre-commit-config.yaml <<EOF
repos:
  - repo: local
    hooks:
      - id: instructions-lsp
        name: instructions-lsp check (npm)
        language: node
        entry: instructions-lsp check --changed
        additional_dependencies: ["$launcher", "$binary"]
        files: (^|/)(AGENTS(\.override)?\.md|CLAUDE(\.local)?\.md)$
EOF
  git add .pre-commit-config.yaml
  status=0
  PATH="$(dirname "$(command -v node)"):$(dirname "$(command -v git)"):/usr/bin:/bin" \
    "$pre_commit" run --files AGENTS.md > out.txt 2>&1 || status=$?
  if [[ $status -ne 1 ]] || ! grep -q 'warning\[agentCut\]: Codex cuts this file' out.txt; then
    cat out.txt
    echo "pre-commit: the npm hook should have failed with Codex's cut (exit $status)" >&2
    exit 1
  fi
  echo "pre-commit: the npm package as a local node hook fails on a cut"
else
  echo "pre-commit: no npm tarballs in dist/ (node scripts/dist.mjs writes them): the npm hook is not tried"
fi
# That build left its binary in target/release; the later steps use the one built from this
# checkout with Cargo.lock.
(cd "$hooks" && CARGO_TARGET_DIR="$hooks/target" cargo build --release --locked --quiet)
echo "pre-commit: the manifest validates, both hooks (installed and built) fail on a cut, and the hook for what a commit touches answers for its folders"
