#!/usr/bin/env bash
# Puts a real VS Code (code-server) into a directory for the extension's end-to-end test, using
# only the npm registry and Debian packages: nothing else is reachable on CI, so every step that
# would fetch a prebuilt binary (ripgrep, Node headers, argon2) is replaced by a local source.
#
#   bash scripts/install-code-server.sh DIR      prints DIR/bin/code-server when it is ready
#
# code-server 4.100.x is Code 1.100, the last line whose server still runs on Node 20 (the Node
# this project's machines have). A finished install is kept and reused; a different pinned
# version reinstalls. Needs root for apt-get when the Debian packages are missing.
set -euo pipefail

version=4.100.3
target=${1:?usage: install-code-server.sh DIR}
mkdir -p "$target"
target=$(cd "$target" && pwd)
stamp=$target/.installed-version
launcher=$target/bin/code-server

if [[ -x $launcher && -f $stamp && $(cat "$stamp") == "$version" ]]; then
  echo "$launcher"
  exit 0
fi

say() { printf '[install-code-server] %s\n' "$*" >&2; }

# Debian packages: ripgrep stands in for @vscode/ripgrep's downloaded binary, chromium is the
# browser the test drives, libkrb5-dev lets the kerberos module compile, and a C++ toolchain
# builds the native modules whose prebuilt downloads cannot be reached.
debian_packages() {
  local missing=()
  command -v rg >/dev/null || missing+=(ripgrep)
  command -v chromium >/dev/null || missing+=(chromium)
  command -v g++ >/dev/null || missing+=(g++)
  command -v make >/dev/null || missing+=(make)
  dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
  ((${#missing[@]} == 0)) && return 0
  say "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
}

# npm and node-gyp settings for every step below. node-gyp would download Node's headers; a
# Node install carries them beside its binary (Debian's nodejs under /usr/include/node), so it
# is pointed there.
npm_offline_env() {
  local prefix
  prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  [[ -f $prefix/include/node/node.h ]] || { say "Node's headers are missing in $prefix/include/node"; exit 1; }
  export npm_config_nodedir=$prefix
  export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
  export npm_config_loglevel=error
}

# The package itself, without its install scripts: they fetch binaries.
fetch_code_server() {
  say "npm install code-server@$version"
  cd "$target"
  [[ -f package.json ]] || printf '{"name":"e2e-code-server","private":true}\n' > package.json
  npm install --ignore-scripts --no-save "code-server@$version" >/dev/null
}

# code-server's postinstall would do this: install VS Code's own dependencies and its built-in
# extensions' dependencies, then compile native modules from source.
prepare_vscode() {
  local vs=$target/node_modules/code-server/lib/vscode
  say "VS Code dependencies"
  (cd "$vs" && npm install --omit=dev --ignore-scripts >/dev/null)
  mkdir -p "$vs/node_modules/@vscode/ripgrep/bin"
  cp -f "$(command -v rg)" "$vs/node_modules/@vscode/ripgrep/bin/rg"
  say "native modules (compiled here)"
  # The rebuild exits non-zero because node-pty's optional compile_commands target cannot be
  # made; the modules the server loads are checked by the --version run at the end.
  (cd "$vs" && npm rebuild >/dev/null 2>&1) || say "npm rebuild reported errors (optional targets); continuing"
  # The server loads node_modules through an asar path that a packaged build would have.
  [[ -e $vs/node_modules.asar ]] || ln -s node_modules "$vs/node_modules.asar"
  ln -sf code-linux.sh "$vs/bin/remote-cli/code-server"
  ln -sf browser-linux.sh "$vs/bin/helpers/browser.sh"
  say "built-in extensions' dependencies"
  (cd "$vs/extensions" && npm install --omit=dev >/dev/null)
  # code-server's own password hashing module; its prebuilt download fails, so compile it.
  (cd "$target" && npm rebuild argon2 >/dev/null 2>&1)
}

write_launcher() {
  mkdir -p "$target/bin"
  cat > "$launcher" <<EOF
#!/usr/bin/env bash
exec node "$target/node_modules/code-server/out/node/entry.js" "\$@"
EOF
  chmod +x "$launcher"
  "$launcher" --version >/dev/null
}

debian_packages
npm_offline_env
fetch_code_server
prepare_vscode
write_launcher
echo "$version" > "$stamp"
say "ready: $("$launcher" --version | head -n 1)"
echo "$launcher"
