//! End to end: the built binary over stdio, as an editor starts it.

use std::io::Read;
use std::process::Command;
use std::sync::mpsc;

use crate::common::changes;
use crate::common::lsp::uri;
use crate::common::stdio::Proc;
use crate::common::tree::Tree;
use serde_json::{Value, json};

#[test]
fn a_full_session_over_stdio() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    let shadowed = t.write("r/CLAUDE.md", "claude");
    let mut p = Proc::start(&t, &["--stdio", "--log-level", "debug"]);
    p.initialize_with(&t.root(), json!({"profile": "dsh"}));
    p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "instructions/effective", "params": {}}));
    let e = p.response(2);
    assert_eq!(e["result"]["baseline"]["files"][0]["path"], "AGENTS.md");
    let diags = p.until("the shadowed diagnostic", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri(&shadowed)
    });
    assert_eq!(diags["params"]["diagnostics"][0]["code"], "shadowed");
    p.send(json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    assert_eq!(p.response(3)["result"], Value::Null);
    p.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(p.exit_code(), Some(0), "exit after shutdown is a clean exit, with stdin still open");
    let mut err = String::new();
    let _ = p.child.stderr.take().map(|mut s| s.read_to_string(&mut err));
    assert!(err.contains("DEBUG"), "--log-level debug logs to stderr: {err}");
}

#[test]
fn a_shutdown_and_exit_with_empty_params_are_a_clean_exit() {
    // As lsp-mode sends them: `params: {}` on shutdown, `params: null` on exit.
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    let mut p = Proc::start(&t, &[]);
    p.initialize(&t.root());
    p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": {}}));
    let shutdown = p.response(2);
    assert_eq!(shutdown.get("error"), None, "shutdown with params {{}} is answered: {shutdown}");
    assert_eq!(shutdown["result"], Value::Null);
    p.send(json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
    assert_eq!(p.exit_code(), Some(0), "exit after shutdown is a clean exit");
}

#[test]
fn a_malformed_message_is_answered_and_the_next_request_served() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    let mut p = Proc::start(&t, &[]);
    p.initialize(&t.root());
    p.send_raw(b"Content-Length: 12\r\n\r\n{not json!!}");
    let err = p.until("a parse error", |m| m["error"]["code"] == -32700);
    assert_eq!(err["id"], Value::Null);
    p.send(json!({"jsonrpc": "2.0", "id": 7, "method": "instructions/effective", "params": {"uri": 5}}));
    assert_eq!(p.response(7)["error"]["code"], -32602);
    p.send(json!({"jsonrpc": "2.0", "id": 8, "method": "instructions/effective", "params": {}}));
    assert_eq!(p.response(8)["result"]["baseline"]["files"][0]["path"], "AGENTS.md");
}

#[test]
fn end_of_input_ends_the_process() {
    let t = Tree::new();
    let mut p = Proc::start(&t, &["serve"]);
    p.initialize(&t.root());
    drop(p.stdin.take());
    assert_eq!(p.exit_code(), Some(1), "no shutdown before the end of input: exit code 1");
}

/// The server as a user without root's power to read anything (`nobody`), so that a `chmod
/// 000` really denies it; run directly when the tests themselves are not root.
fn unprivileged(t: &Tree) -> Command {
    let is_root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
    if !is_root {
        return Command::new(env!("CARGO_BIN_EXE_instructions-lsp"));
    }
    use std::os::unix::fs::PermissionsExt;
    let open =
        |p: &std::path::Path, mode| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    open(t.dir.path(), 0o755);
    let bin = t.path("instructions-lsp");
    std::fs::copy(env!("CARGO_BIN_EXE_instructions-lsp"), &bin).expect("copy the binary");
    open(&bin, 0o755);
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(bin);
    c
}

#[cfg(unix)]
#[test]
fn an_agents_whole_story_over_stdio() {
    use std::os::unix::fs::PermissionsExt;
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    t.write("r/app/AGENTS.md", "app rules");
    t.write("r/app/core/AGENTS.md", "core rules");
    let state = t.mkdir("state");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).expect("chmod state");
    let app = t.path("r/app");
    let options = json!({"stateDir": state.to_string_lossy()});
    let mut p = Proc::spawn(&t, unprivileged(&t), &[]);
    p.initialize_with(&app, options.clone());
    let mut next_id = 10;
    let mut transitions = |p: &mut Proc, since: u64| {
        next_id += 1;
        p.send(
            json!({"jsonrpc": "2.0", "id": next_id, "method": "instructions/transitions", "params": {"since": since}}),
        );
        p.response(next_id)["result"].clone()
    };
    let did_change = |p: &mut Proc, seq: u64| {
        p.until(&format!("didChange {seq}"), |m| m["method"] == "instructions/didChange" && m["params"]["seq"] == seq);
    };
    let actions = |tr: &Value| changes(&tr["batches"][0]);
    let watched = |p: &mut Proc, rel: &str| {
        p.send(json!({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": [{"uri": uri(&t.path(rel)), "type": 2}]}}));
    };

    // 1. Baseline.
    did_change(&mut p, 1);
    let tr = transitions(&mut p, 0);
    assert_eq!(tr["batches"][0]["reason"], "baseline");
    assert_eq!(actions(&tr), [("set".into(), "AGENTS.md".into()), ("set".into(), "app/AGENTS.md".into())]);
    // 2. A touch two directories deeper, twice: one `set`.
    for f in ["r/app/core/io/a.rs", "r/app/core/io/b.rs"] {
        p.send(json!({"jsonrpc": "2.0", "method": "instructions/touch", "params": {"uri": uri(&t.path(f)), "kind": "read"}}));
    }
    did_change(&mut p, 2);
    assert_eq!(actions(&transitions(&mut p, 1)), [("set".into(), "app/core/AGENTS.md".into())]);
    assert_eq!(transitions(&mut p, 0)["seq"], 2);
    // 3. An edit on disk, by another process: `replace`, announced by the watcher.
    t.write("r/app/AGENTS.md", "app rules, edited");
    did_change(&mut p, 3);
    assert_eq!(actions(&transitions(&mut p, 2)), [("replace".into(), "app/AGENTS.md".into())]);
    // 4. An unchanged rewrite: nothing.
    t.write("r/app/AGENTS.md", "app rules, edited");
    watched(&mut p, "r/app/AGENTS.md");
    assert_eq!(transitions(&mut p, 0)["seq"], 3);
    // 5. A deletion: `remove`.
    std::fs::remove_file(t.path("r/app/core/AGENTS.md")).expect("delete");
    did_change(&mut p, 4);
    assert_eq!(actions(&transitions(&mut p, 3)), [("remove".into(), "app/core/AGENTS.md".into())]);
    // 6. chmod 000: the server cannot read it, which is not an absence: no `remove`.
    std::fs::set_permissions(t.path("r/AGENTS.md"), std::fs::Permissions::from_mode(0o000)).expect("chmod");
    watched(&mut p, "r/AGENTS.md");
    assert_eq!(transitions(&mut p, 0)["seq"], 4);
    p.send(json!({"jsonrpc": "2.0", "id": 90, "method": "instructions/effective", "params": {}}));
    let e = p.response(90);
    assert_eq!(e["result"]["skipped"][0]["reason"], "unreadable", "{e}");
    p.send(json!({"jsonrpc": "2.0", "id": 91, "method": "shutdown"}));
    p.response(91);
    p.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(p.exit_code(), Some(0));

    // 7. Offline edits, then a restart with the same stateDir: seq continues, and the
    // `restart` batch holds only those edits (the unreadable file is still not removed).
    t.write("r/app/AGENTS.md", "app rules, edited offline");
    let mut p = Proc::spawn(&t, unprivileged(&t), &[]);
    p.initialize_with(&app, options);
    did_change(&mut p, 5);
    let tr = transitions(&mut p, 4);
    assert_eq!(tr["batches"][0]["reason"], "restart");
    assert_eq!(actions(&tr), [("replace".into(), "app/AGENTS.md".into())]);
    // 8. `since` outside the log: reset.
    let tr = transitions(&mut p, 50);
    assert_eq!(tr["reset"], true);
    assert_eq!(tr["batches"][0]["reason"], "baseline");
    std::fs::set_permissions(t.path("r/AGENTS.md"), std::fs::Permissions::from_mode(0o644)).expect("chmod back");
}

#[test]
fn a_client_that_vanishes_mid_request_ends_the_server_cleanly() {
    let t = Tree::new();
    let deep = t.mkdir("r/a/b/c");
    t.write("r/AGENTS.md", "x".repeat(500_000));
    let mut p = Proc::start(&t, &[]);
    p.initialize(&t.root());
    // A request in flight, then the client is gone: no stdin, and nobody reads stdout.
    p.send(json!({"jsonrpc": "2.0", "id": 5, "method": "instructions/effective", "params": {"uri": uri(&deep)}}));
    drop(p.stdin.take());
    drop(std::mem::replace(&mut p.messages, mpsc::channel().1));
    assert!(p.exit_code().is_some(), "the server ends");
    let mut err = String::new();
    let _ = p.child.stderr.take().map(|mut s| s.read_to_string(&mut err));
    assert!(!err.contains("panicked"), "{err}");
}

/// Without inotify (no instance left, or a file system it cannot see, as NFS) the server polls:
/// an edit and a new file on disk still become `replace` and `set`, with no client help (this
/// client registers no file watching). `INSTRUCTIONS_LSP_POLL=1` forces what the server falls
/// back to when inotify cannot start.
#[test]
fn a_server_that_cannot_use_inotify_polls_and_sees_edits() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    t.write("r/app/AGENTS.md", "app rules");
    let mut command = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"));
    command.env("INSTRUCTIONS_LSP_POLL", "1");
    let mut p = Proc::spawn(&t, command, &[]);
    p.initialize_with(&t.path("r/app"), json!({"stateDir": null}));
    let transitions = |p: &mut Proc, id: u64, since: u64| {
        p.send(json!({"jsonrpc": "2.0", "id": id, "method": "instructions/transitions", "params": {"since": since}}));
        p.response(id)["result"].clone()
    };
    let did_change = |p: &mut Proc, seq: u64| {
        p.until(&format!("didChange {seq}"), |m| m["method"] == "instructions/didChange" && m["params"]["seq"] == seq);
    };
    did_change(&mut p, 1);
    assert_eq!(transitions(&mut p, 2, 0)["seq"], 1);
    // Same size, same second: only the nanoseconds of the modification time tell.
    t.write("r/app/AGENTS.md", "app RULES");
    did_change(&mut p, 2);
    assert_eq!(changes(&transitions(&mut p, 3, 1)["batches"][0]), [("replace".into(), "app/AGENTS.md".into())]);
    p.send(json!({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}));
    p.response(4);
    p.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(p.exit_code(), Some(0));
    let mut err = String::new();
    let _ = p.child.stderr.take().map(|mut s| s.read_to_string(&mut err));
    assert!(err.contains("looking for changes every 2 s instead"), "the fallback is logged: {err}");
}
