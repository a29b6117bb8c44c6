//! The protocol edge under hostile clients and hostile state: bad framing, clients that never
//! answer or never read, cancelled work, many folders, and files in `stateDir` that are not
//! ledgers. Each test bounds a hang with a timeout, and a memory blowup with an address-space
//! limit, so a regression fails instead of stalling the suite.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::lsp::{Client, uri};
use crate::common::stdio::{Proc, frame, limited};
use crate::common::tree::Tree;
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

// B. Framing errors: the stream resynchronises on the next `Content-Length` header.

/// Sends `bad` framed with `declared` as its length, then two good requests; both are answered
/// correctly and the bad message costs one parse error.
fn resynchronises(bad: &[u8], declared: usize) {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    let mut p = Proc::start(&t, &[]);
    p.initialize(&t.root());
    let mut raw = format!("Content-Length: {declared}\r\n\r\n").into_bytes();
    raw.extend_from_slice(bad);
    for id in [6, 7] {
        raw.extend(frame(&json!({"jsonrpc": "2.0", "id": id, "method": "instructions/effective", "params": {}})));
    }
    p.send_raw(&raw);
    for id in [6, 7] {
        assert_eq!(p.response(id)["result"]["baseline"]["files"][0]["path"], "AGENTS.md", "request {id}");
    }
    let errors: Vec<&Value> = p.backlog.iter().filter(|m| m["error"]["code"] == -32700).collect();
    assert_eq!(errors.len(), 1, "one parse error for the bad message: {errors:?}");
}

/// A didOpen with non-ASCII text, as a client that counts characters instead of bytes frames it.
fn non_ascii_did_open(t: &Tree) -> Vec<u8> {
    let msg = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri(&t.path("r/notes.md")), "languageId": "markdown", "version": 1,
        "text": "règles — ünïcode"}}});
    serde_json::to_vec(&msg).expect("json")
}

#[test]
fn a_content_length_too_short_resynchronises_on_the_next_header() {
    let t = Tree::new();
    let body = non_ascii_did_open(&t);
    let chars = String::from_utf8(body.clone()).expect("utf8").chars().count();
    assert!(chars < body.len());
    resynchronises(&body, chars);
}

#[test]
fn a_content_length_too_long_resynchronises_on_the_header_it_swallowed() {
    let body =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 5, "method": "instructions/effective", "params": {}}))
            .expect("json");
    resynchronises(&body, body.len() + 30);
}

// C. A client that never answers `workspace/configuration`.

#[tokio::test]
async fn unanswered_configuration_requests_never_stop_answers() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    let root = t.root();
    let mut c = Client::spawn_only(&t.home()).await;
    c.ignore_config();
    // Not watching: only the settings pull starts the session.
    c.initialize(&[&root], json!({"stateDir": null, "watch": false}), json!({})).await;
    for _ in 0..4 {
        c.notify("workspace/didChangeConfiguration", json!({"settings": {}})).await;
    }
    // Answered while the pulls wait.
    let e = c.effective(json!({})).await;
    assert_eq!(e["baseline"]["files"][0]["path"], "AGENTS.md", "{e}");
    // Once they give up, the last known settings apply and the session starts.
    c.wait_seq(&root, 1).await;
    c.expect_message("client/registerCapability").await;
    assert!(c.config_requests() >= 1, "the settings were asked for");
    c.finish().await;
}

// D. `$/cancelRequest` of a running request.

/// The largest `maxFileBytes` a setting may give: the largest file the engine reads and digests.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

#[tokio::test]
async fn a_cancelled_request_is_answered_request_cancelled_while_it_still_runs() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    // Nested files as large as a file may be, that take seconds to read and digest: the preview
    // below is slow.
    let mut dir = String::from("r");
    for d in ["a", "b", "c", "d", "e", "f"] {
        dir = format!("{dir}/{d}");
        std::fs::create_dir_all(t.path(&dir)).expect("mkdir");
        std::fs::File::create(t.path(&format!("{dir}/AGENTS.md")))
            .and_then(|f| f.set_len(MAX_FILE_BYTES))
            .expect("a sparse file");
    }
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null, "maxFileBytes": MAX_FILE_BYTES})).await;
    c.wait_seq(&root, 1).await;
    let (id, slow) = c.request_later("instructions/effective", json!({"uri": uri(&t.path(&dir)), "profile": "all"}));
    // Cancelled once it runs (a request cancelled while queued never starts at all).
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.notify("$/cancelRequest", json!({"id": id})).await;
    let (_, next) = c.request_later("instructions/effective", json!({}));
    let next = next.await.expect("the next request is answered");
    assert_eq!(next["baseline"]["files"][0]["path"], "AGENTS.md");
    let cancelled = slow.await.map(|v| v["profiles"][0]["profile"].clone()).expect_err("cancelled, not answered");
    assert_eq!(cancelled["code"], -32800, "{cancelled}");
    c.finish().await;
}

#[tokio::test]
async fn a_cancelled_hover_is_answered_request_cancelled_while_it_still_runs() {
    let t = Tree::new();
    // Four folders, each with a file as large as a file may be: the hover digests them all.
    let roots: Vec<_> = ["r", "r2", "r3", "r4"]
        .iter()
        .map(|r| t.mkdir(&format!("{r}/.git")).parent().map(|p| p.to_path_buf()).expect("root"))
        .collect();
    for r in &roots {
        std::fs::File::create(r.join("AGENTS.md")).and_then(|f| f.set_len(MAX_FILE_BYTES - 1)).expect("a sparse file");
    }
    let agents = roots[0].join("AGENTS.md");
    // Not watching, so that nothing but the hover reads the files once they change.
    let options = json!({"stateDir": null, "watch": false, "maxFileBytes": MAX_FILE_BYTES});
    let folders: Vec<&std::path::Path> = roots.iter().map(|r| r.as_path()).collect();
    let mut c = Client::start(&t.home(), &folders, options).await;
    for r in &roots {
        c.wait_seq(r, 1).await;
    }
    c.expect_message("client/registerCapability").await;
    // Changed: the hover reads and digests them again, which takes seconds.
    for r in &roots {
        std::fs::OpenOptions::new()
            .write(true)
            .open(r.join("AGENTS.md"))
            .and_then(|f| f.set_len(MAX_FILE_BYTES))
            .expect("grow");
    }
    let position = json!({"textDocument": {"uri": uri(&agents)}, "position": {"line": 0, "character": 0}});
    let (id, slow) = c.request_later("textDocument/hover", position);
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.notify("$/cancelRequest", json!({"id": id})).await;
    let unknown = c.request("workspace/executeCommand", json!({"command": "nope", "arguments": []})).await;
    assert_eq!(unknown.map_err(|e| e["code"].clone()), Err(json!(-32602)), "the next request is answered");
    let cancelled = slow.await.map(|h| h.is_object()).expect_err("cancelled, not answered");
    assert_eq!(cancelled["code"], -32800, "{cancelled}");
    c.finish().await;
}

// E. A client that never reads.

/// The `id` of a response body, read from its end (where tower-lsp-server writes it) so that an
/// answer of a megabyte is not parsed whole; `None` for a notification or a server request.
fn response_id(body: &[u8]) -> Option<u64> {
    if body.len() < 64 * 1024 {
        let v: Value = serde_json::from_slice(body).ok()?;
        return if v.get("method").is_none() { v["id"].as_u64() } else { None };
    }
    let tail = String::from_utf8_lossy(&body[body.len() - 64..]).into_owned();
    let at = tail.rfind("\"id\":")?;
    tail[at + 5..].trim_end_matches('}').trim().parse().ok()
}

#[test]
fn a_client_that_never_reads_keeps_the_server_bounded_and_is_answered_once_it_reads() {
    const REQUESTS: u64 = 800;
    let t = Tree::new();
    // Each answer carries the whole file: eight hundred unread answers are about 720 MB, more
    // than the server may map.
    t.write("r/AGENTS.md", "x".repeat(900_000));
    let root = t.root();
    let mut child = limited(ADDRESS_SPACE_BYTES / 2)
        .env("HOME", t.home())
        .env_remove("DSH_HOME")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the server");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let options = json!({"stateDir": null, "baselineMaxBytes": 1_000_000, "maxFileBytes": 1_000_000});
    // Writes block once the server stops reading: on their own thread.
    let writer = std::thread::spawn(move || {
        let mut raw = frame(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": null, "rootUri": null, "capabilities": {}, "initializationOptions": options,
            "workspaceFolders": [{"uri": uri(&root), "name": "r"}]}}));
        raw.extend(frame(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})));
        for id in 2..REQUESTS + 2 {
            raw.extend(frame(&json!({"jsonrpc": "2.0", "id": id, "method": "instructions/effective", "params": {}})));
        }
        let written = stdin.write_all(&raw).and_then(|()| stdin.flush());
        (stdin, written)
    });
    // Nobody reads for a while: the server must hold its output without growing.
    std::thread::sleep(Duration::from_secs(3));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut length = None;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                length = line.strip_prefix("Content-Length: ").and_then(|v| v.parse::<usize>().ok());
            }
            let mut body = vec![0; length.unwrap_or(0)];
            if reader.read_exact(&mut body).is_err() || tx.send(response_id(&body)).is_err() {
                return;
            }
        }
    });
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < REQUESTS as usize + 1 {
        match rx.recv_timeout(crate::common::stdio::WAIT) {
            Ok(Some(id)) => {
                answered.insert(id);
            }
            Ok(None) => {}
            Err(e) => {
                let status = child.try_wait();
                panic!("{} of {} answers, then {e}; the server: {status:?}", answered.len(), REQUESTS + 1);
            }
        }
    }
    assert_eq!(answered, (1..REQUESTS + 2).collect(), "every request answered once");
    let (_stdin, written) = writer.join().expect("writer");
    assert!(written.is_ok(), "the server read every request: {written:?}");
    let _ = child.kill();
    let _ = child.wait();
}

// F. Many folders: ledgers are written off the protocol thread.

/// The server started and initialized on `folders`, its ledgers in `state`.
fn started_on(t: &Tree, folders: &[std::path::PathBuf], state: &std::path::Path) -> Proc {
    let mut p = Proc::start(t, &[]);
    let list: Vec<Value> = folders.iter().map(|f| json!({"uri": uri(f), "name": "f"})).collect();
    p.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": null, "rootUri": null, "capabilities": {},
        "initializationOptions": {"stateDir": state.to_string_lossy()}, "workspaceFolders": list}}));
    p.response(1);
    p.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    p
}

#[test]
fn ten_thousand_folders_are_answered_and_every_ledger_is_written() {
    const FOLDERS: usize = 10_000;
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    let folders: Vec<std::path::PathBuf> = (0..FOLDERS).map(|i| t.mkdir(&format!("r/f{i}"))).collect();
    let state = t.path("state");
    let mut p = started_on(&t, &folders, &state);
    // Answered, and every ledger on disk after shutdown. Whether the first answer comes before
    // the last ledger is written depends on the disk and the load (the sessions start on the
    // protocol thread, their ledgers are written right behind): not asserted, since it cannot be
    // asserted reliably. The guards are generous (a loaded machine is slow).
    let answer = |p: &mut Proc, id: u64| {
        let deadline = std::time::Instant::now() + Duration::from_secs(300);
        loop {
            match p.messages.recv_timeout(Duration::from_secs(1)) {
                Ok(m) if m["id"] == id && m.get("method").is_none() => return m,
                Ok(_) => {}
                Err(_) => assert!(std::time::Instant::now() < deadline, "no answer to request {id}"),
            }
        }
    };
    p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "instructions/effective", "params": {"uri": uri(&folders[0])}}));
    assert_eq!(answer(&mut p, 2)["result"]["baseline"]["files"][0]["path"], "AGENTS.md");
    // Shutdown waits for every pending write.
    p.send(json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    assert_eq!(answer(&mut p, 3)["result"], Value::Null);
    let missing = folders.iter().filter(|f| !ledger_path(&state, f).is_file()).count();
    assert_eq!(missing, 0, "ledgers missing after shutdown");
    let leftovers = std::fs::read_dir(&state)
        .expect("state")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .count();
    assert_eq!(leftovers, 0, "temporary files left");
}

#[test]
fn exit_without_shutdown_still_writes_every_ledger() {
    const FOLDERS: usize = 200;
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    let folders: Vec<std::path::PathBuf> = (0..FOLDERS).map(|i| t.mkdir(&format!("r/f{i}"))).collect();
    let state = t.path("state");
    let mut p = started_on(&t, &folders, &state);
    p.send(json!({"jsonrpc": "2.0", "id": 2, "method": "instructions/effective", "params": {"uri": uri(&folders[0])}}));
    p.response(2);
    p.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(p.exit_code(), Some(1), "exit without shutdown");
    let missing = folders.iter().filter(|f| !ledger_path(&state, f).is_file()).count();
    assert_eq!(missing, 0, "ledgers missing after exit");
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
