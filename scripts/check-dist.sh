#!/usr/bin/env bash
# Installs each release artefact of this machine's platform (scripts/dist.mjs wrote them in dist/)
# from the packed files, into empty folders, and runs `check` through each, as a user would: the
# archive, the npm packages with npx, and the crate with cargo install. The .vsix is installed into
# code-server by the extension's end-to-end test. Needs Node and cargo; cargo fetches the crate's
# dependencies.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dist=$repo/dist
target=$(node -p 'process.platform + "-" + process.arch')
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$repo/Cargo.toml" | head -n 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A repository a user checks: Codex and opencode read AGENTS.md, Claude Code CLAUDE.md.
fixture=$tmp/project
mkdir -p "$fixture/.git"
printf 'root rules\n' > "$fixture/AGENTS.md"
printf 'claude rules\n' > "$fixture/CLAUDE.md"
expected='CLAUDE.md:1:1: info[agentIgnored]: opencode ignores this file: it loads AGENTS.md instead'

checked() { # what: the command's check of the fixture, which must say $expected and exit 0
  local what=$1 out
  shift
  out=$(cd "$fixture" && "$@" check 2>/dev/null) || { echo "not ok - $what: check failed"; exit 1; }
  if [[ $out != *"$expected"* ]]; then
    printf 'not ok - %s: check printed:\n%s\n' "$what" "$out"
    exit 1
  fi
  echo "ok - $what: check runs"
}

if command -v sha256sum > /dev/null; then
  (cd "$dist" && sha256sum --quiet -c SHA256SUMS)
else # macOS
  (cd "$dist" && shasum -a 256 --quiet -c SHA256SUMS)
fi
echo "ok - SHA256SUMS matches every file of dist/"

mkdir "$tmp/archive"
tar -xzf "$dist/instructions-lsp-$target.tar.gz" -C "$tmp/archive"
checked "the archive" "$tmp/archive/instructions-lsp-$target/instructions-lsp"

# npm from the two tarballs; the other platforms' packages are not published yet, so optional
# dependencies are left out and this platform's is installed by its tarball.
mkdir "$tmp/npm"
(cd "$tmp/npm" && npm init -y >/dev/null &&
  npm install --no-audit --no-fund --omit=optional --loglevel=error \
    "$dist/npm/instructions-lsp-$version.tgz" "$dist/npm/instructions-lsp-cli-$target-$version.tgz" >/dev/null)
checked "npx instructions-lsp (the npm packages)" npx --prefix "$tmp/npm" --no-install instructions-lsp
# Without this platform's package the launcher says what is missing.
rm -rf "$tmp/npm/node_modules/@instructions-lsp"
if said=$("$tmp/npm/node_modules/.bin/instructions-lsp" check 2>&1); then
  echo "not ok - the launcher ran without its platform's package"
  exit 1
fi
[[ $said == *"no binary for $target was installed"* ]] || { echo "not ok - the launcher said: $said"; exit 1; }
echo "ok - without its platform's package the launcher says so"

# cargo from the packaged crate (cargo package wrote and unpacked it in target/package/).
crate=$repo/target/package/instructions-lsp-$version
[[ -f $crate/Cargo.toml ]] || (cd "$repo" && cargo package --locked --allow-dirty >/dev/null)
cargo install --quiet --locked --path "$crate" --root "$tmp/cargo" --target-dir "$repo/target/install-check"
checked "cargo install (the packaged crate)" "$tmp/cargo/bin/instructions-lsp"

# The static musl artefacts, when built (`node scripts/dist.mjs --target <platform>-musl --add`):
# the binary asks for no C library of the system (the one an Alpine container lacks), the .vsix is
# VS Code's Alpine one, and npm's launcher given only that package runs it (npm installs it on a
# musl system by its `libc`; here it must be forced onto glibc).
musl=$target-musl
if [[ $target == linux-* && -f $dist/instructions-lsp-$musl.tar.gz ]]; then
  mkdir "$tmp/musl"
  tar -xzf "$dist/instructions-lsp-$musl.tar.gz" -C "$tmp/musl"
  bin=$tmp/musl/instructions-lsp-$musl/instructions-lsp
  linked=$(ldd "$bin" 2>&1 || true)
  if [[ $linked != *"statically linked"* && $linked != *"not a dynamic executable"* ]]; then
    printf 'not ok - the %s binary loads libraries of the system:\n%s\n' "$musl" "$linked"
    exit 1
  fi
  echo "ok - the $musl binary is static"
  checked "the $musl archive" "$bin"
  platform=$(python3 -c 'import re, sys, zipfile
m = zipfile.ZipFile(sys.argv[1]).read("extension.vsixmanifest").decode()
print(re.search(r"TargetPlatform=\"([^\"]+)\"", m).group(1))' "$dist/instructions-lsp-$musl.vsix")
  [[ $platform == alpine-${target#linux-} ]] || { echo "not ok - the $musl .vsix is for $platform"; exit 1; }
  echo "ok - the $musl .vsix is VS Code's $platform"
  mkdir "$tmp/npm-musl"
  (cd "$tmp/npm-musl" && npm init -y >/dev/null &&
    npm install --force --no-audit --no-fund --omit=optional --loglevel=error \
      "$dist/npm/instructions-lsp-$version.tgz" "$dist/npm/instructions-lsp-cli-$musl-$version.tgz" >/dev/null 2>&1)
  checked "npx instructions-lsp (the launcher with only the $musl package)" npx --prefix "$tmp/npm-musl" --no-install instructions-lsp
fi
