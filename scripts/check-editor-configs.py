#!/usr/bin/env python3
"""Keeps the Helix and Zed configurations honest: they parse, name the `instructions-lsp` binary, and
the real server accepts their arguments and settings (the CLI knows every key; over stdio: initialize,
a block, no window/showMessage complaint, shutdown, exit 0).

Usage: check-editor-configs.py SERVER   (the built binary). Prints `ok - …` lines and a summary; exits
non-zero when a check failed.
"""

import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVER = sys.argv[1] if len(sys.argv) > 1 else str(REPO / "target/release/instructions-lsp")


def server_env(home):
    """The environment of a server run: a temp home, no DSH_HOME of the developer's."""
    env = {k: v for k, v in os.environ.items() if k != "DSH_HOME"}
    env["HOME"] = home
    return env


class Server:
    """The real server over stdio, with LSP framing."""

    def __init__(self, args, home):
        self.proc = subprocess.Popen([SERVER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=server_env(home))
        self.buf = b""

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def recv(self, timeout):
        """The next message, or None after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                length = int(re.search(rb"Content-Length: *(\d+)", head, re.I).group(1))
                if len(rest) >= length:
                    self.buf = rest[length:]
                    return json.loads(rest[:length])
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("the server closed its output; stderr: " + self.proc.stderr.read().decode())
            self.buf += chunk

    def answer_requests(self, msg):
        """Answers what a server asks the client (configuration: nothing beyond initializationOptions)."""
        if "id" in msg and "method" in msg:
            items = msg.get("params", {}).get("items", [])
            result = [None] * len(items) if msg["method"] == "workspace/configuration" else None
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def check_server_accepts(what, args, options):
    """Starts the server with `args`, initializes it on a project with `options`, and shuts it down."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp, "project")
        (project / ".git").mkdir(parents=True)
        (project / "AGENTS.md").write_text("root rules\n")
        # The language server passes over keys it does not know; the CLI names them.
        sets = [arg for key, value in options.items() for arg in ("--set", f"{key}={json.dumps(value)}")]
        cli = subprocess.run([SERVER, "effective", str(project), *sets], capture_output=True, text=True,
                             env=server_env(tmp))
        if cli.returncode != 0:
            raise RuntimeError(f"{what}: the settings are not the server's: {cli.stderr.strip()}")
        server = Server(args, tmp)
        uri = project.as_uri()
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": uri, "capabilities": {},
            "workspaceFolders": [{"uri": uri, "name": "project"}],
            "initializationOptions": options}})
        complaints = []
        while True:
            msg = server.recv(10)
            if msg is None:
                raise RuntimeError(f"{what}: no answer to initialize")
            if msg.get("id") == 1 and "method" not in msg:
                break
            server.answer_requests(msg)
        if "error" in msg:
            raise RuntimeError(f"{what}: initialize failed: {msg['error']}")
        if "instructions" not in msg["result"]["capabilities"].get("experimental", {}):
            raise RuntimeError(f"{what}: not instructions-lsp: {msg['result']}")
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        # The session starts once its settings are known; a bad setting is a window/showMessage.
        server.send({"jsonrpc": "2.0", "id": 2, "method": "instructions/effective", "params": {"uri": uri}})
        while True:
            msg = server.recv(10)
            if msg is None:
                raise RuntimeError(f"{what}: no answer to instructions/effective")
            if msg.get("method") == "window/showMessage":
                complaints.append(msg["params"]["message"])
            server.answer_requests(msg)
            if msg.get("id") == 2 and "method" not in msg:
                break
        if "error" in msg:
            raise RuntimeError(f"{what}: instructions/effective failed: {msg['error']}")
        if "root rules" not in msg["result"]["baseline"]["rendered"]:
            raise RuntimeError(f"{what}: the block lacks AGENTS.md: {msg['result']}")
        # Late complaints (a configuration pull answered after the request) still count.
        while (msg := server.recv(0.3)) is not None:
            if msg.get("method") == "window/showMessage":
                complaints.append(msg["params"]["message"])
            server.answer_requests(msg)
        server.send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
        while (msg := server.recv(10)) is not None and msg.get("id") != 3:
            server.answer_requests(msg)
        server.send({"jsonrpc": "2.0", "method": "exit"})
        server.proc.stdin.close()
        code = server.proc.wait(10)
        if complaints:
            raise RuntimeError(f"{what}: the server rejected the settings: {complaints}")
        if code != 0:
            raise RuntimeError(f"{what}: exit code {code} after shutdown and exit")


def check_helix():
    config = tomllib.loads((REPO / "editors/helix/languages.toml").read_text())
    server = config["language-server"]["instructions-lsp"]
    if server["command"] != "instructions-lsp":
        raise RuntimeError(f"helix: the command is {server['command']!r}, not instructions-lsp")
    users = [lang["name"] for lang in config["language"] if "instructions-lsp" in lang["language-servers"]]
    if "markdown" not in users:
        raise RuntimeError(f"helix: markdown does not use the server (only {users})")
    check_server_accepts("helix", server.get("args", []), server.get("config", {}))


def check_zed():
    ext = tomllib.loads((REPO / "editors/zed/extension.toml").read_text())
    declared = ext["language_servers"]["instructions-lsp"]
    if "Markdown" not in declared["languages"]:
        raise RuntimeError(f"zed: the extension declares {declared['languages']}, not Markdown")
    readme = (REPO / "editors/zed/README.md").read_text()
    for name in ("extension.toml", "settings.json"):
        if f"]({name})" not in readme:
            raise RuntimeError(f"zed: the README does not link {name}")
    # The extension's command lives in the README's src/lib.rs.
    which = re.search(r'worktree\.which\("([^"]+)"\)', readme)
    args = re.search(r"args: vec!\[([^\]]*)\]", readme)
    if not which or which.group(1) != "instructions-lsp":
        raise RuntimeError("zed: src/lib.rs does not look up the instructions-lsp binary")
    if not args:
        raise RuntimeError("zed: src/lib.rs passes no args vector")
    arg_list = re.findall(r'"([^"]*)"', args.group(1))
    settings = json.loads((REPO / "editors/zed/settings.json").read_text())
    shown = re.search(r"```json\n(.*?)```", readme, re.S)
    if not shown or json.loads(shown.group(1)) != settings:
        raise RuntimeError("zed: the README's settings differ from settings.json")
    options = settings["lsp"]["instructions-lsp"]["initialization_options"]
    check_server_accepts("zed", arg_list, options)


def main():
    passed = failed = 0
    for name, check in (("helix: languages.toml", check_helix), ("zed: extension and settings", check_zed)):
        try:
            check()
            passed += 1
            print(f"ok - {name}")
        except Exception as err:  # noqa: BLE001 - every failure is reported the same way
            failed += 1
            print(f"not ok - {name}: {err}")
    print(f"editor configs: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
