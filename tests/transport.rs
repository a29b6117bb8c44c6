//! The protocol edge under hostile clients and hostile state: bad framing, clients that never
//! answer or never read, cancelled work, many folders, and files in `stateDir` that are not
//! ledgers. Each test bounds a hang with a timeout, and a memory blowup with an address-space
//! limit, so a regression fails instead of stalling the suite.

mod common;

use std::path::Path;
use std::process::Command;

use common::lsp::{Client, uri};
use common::stdio::{Proc, limited};
use common::tree::Tree;
use instructions_lsp::session::ledger::ledger_path;
use serde_json::{Value, json};

/// Enough for the server and its threads, far less than a runaway read or queue needs.
const ADDRESS_SPACE_BYTES: u64 = 1 << 30;

// A. Files in stateDir that are not ledgers.

/// Puts `make` at the ledger path, then serves: the folder starts afresh, is answered, and the
/// thing is replaced by a real ledger.
#[cfg(unix)]
fn a_bad_ledger_is_replaced(make: impl FnOnce(&Path)) {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    let root = t.root();
    let state = t.mkdir("state");
    let ledger = ledger_path(&state, &root);
    make(&ledger);
    // Room for a runaway read to show (and to fail gracefully) rather than be cut short.
    let mut p = Proc::spawn(&t, limited(2 * ADDRESS_SPACE_BYTES), &[]);
    p.initialize_with(&root, json!({"stateDir": state.to_string_lossy()}));
    p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "instructions/effective", "params": {}}));
    assert_eq!(p.response(2)["result"]["baseline"]["files"][0]["path"], "AGENTS.md");
    p.send(json!({"jsonrpc": "2.0", "id": 3, "method": "instructions/transitions", "params": {"since": 0}}));
    assert_eq!(p.response(3)["result"]["batches"][0]["reason"], "baseline", "a fresh start");
    let peak = peak_resident_bytes(p.child.id());
    assert!(peak < 256 << 20, "reading the ledger cost {peak} bytes of memory");
    p.send(json!({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}));
    p.response(4);
    p.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(p.exit_code(), Some(0));
    let meta = std::fs::symlink_metadata(&ledger).expect("a ledger");
    assert!(meta.is_file(), "replaced by a regular file: {meta:?}");
    let saved: Value = serde_json::from_slice(&std::fs::read(&ledger).expect("read")).expect("a valid ledger");
    assert_eq!(saved["seq"], 1);
}

/// The most memory the process has held (VmHWM).
fn peak_resident_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kib.expect("VmHWM") * 1024
}

#[cfg(unix)]
#[test]
fn a_fifo_at_the_ledger_path_never_blocks_the_server() {
    a_bad_ledger_is_replaced(|ledger| {
        assert!(Command::new("mkfifo").arg(ledger).status().is_ok_and(|s| s.success()), "mkfifo");
    });
}

#[cfg(unix)]
#[test]
fn a_link_to_dev_zero_at_the_ledger_path_is_never_read() {
    a_bad_ledger_is_replaced(|ledger| std::os::unix::fs::symlink("/dev/zero", ledger).expect("symlink"));
}

#[cfg(unix)]
#[test]
fn a_ledger_of_a_gigabyte_is_never_read() {
    a_bad_ledger_is_replaced(|ledger| {
        std::fs::File::create(ledger).and_then(|f| f.set_len(1 << 30)).expect("a sparse file");
    });
}

// G. `instructions.open` opens only files of the workspace.

#[tokio::test]
async fn instructions_open_refuses_what_is_not_a_workspace_file() {
    let t = Tree::new();
    let agents = t.write("r/AGENTS.md", "root rules");
    let outside = t.write("outside.md", "secret");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let open = |arg: String| json!({"command": "instructions.open", "arguments": [arg]});
    for bad in [
        "https://evil.example/x".to_string(),
        "command:workbench.action.terminal.new".to_string(),
        uri(&outside),
        "file:///etc/passwd".to_string(),
    ] {
        let err = c.request("workspace/executeCommand", open(bad.clone())).await.expect_err(&bad);
        assert_eq!(err["code"], -32602, "{bad}: {err}");
        assert!(err["message"].as_str().is_some_and(|m| m.contains("workspace")), "{bad}: {err}");
    }
    assert_eq!(c.request("workspace/executeCommand", open(uri(&agents))).await, Ok(Value::Null));
    let shown = c.expect_message("window/showDocument").await;
    assert_eq!(shown["params"]["uri"], uri(&agents));
    c.finish().await;
}
