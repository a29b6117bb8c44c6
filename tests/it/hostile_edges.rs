//! Hostile input on the agents' edges, against the built binary: the MCP server driven by a raw
//! client over stdio (no SDK, so these always run) and the hooks fed events on stdin. Each case
//! once crashed, hung or read outside the project; each now answers, with a clear error or log
//! line, under an address-space limit, and a benign control shows normal input still works.
//! Nothing here times anything: the guard only keeps a regression from hanging the suite.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::common::tree::Tree;
use serde_json::{Value, json};

/// Long enough for a debug build on a loaded machine; a regression hangs far longer.
const GUARD: Duration = Duration::from_secs(90);
/// The address space the binary runs in: a blowup fails fast instead of swapping.
const MAX_AS_BYTES: u64 = 300 * 1024 * 1024;
/// The most resident memory the MCP server may reach here.
const MAX_RSS_KB: u64 = 150 * 1024;

/// The built binary under the address-space limit, with a private home and state directory.
fn bin(t: &Tree, args: &[&str]) -> Command {
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={MAX_AS_BYTES}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(args)
        .env("HOME", t.home())
        .env("CODEX_HOME", t.path("home/.codex"))
        .env_remove("XDG_STATE_HOME")
        .env_remove("DSH_HOME")
        // glibc reserves 64 MiB of address space for each thread's malloc arena; with two, the
        // limit bounds what the binary allocates rather than how many threads it runs.
        .env("MALLOC_ARENA_MAX", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Where the binary keeps its state in the tree's home.
fn state(t: &Tree, rel: &str) -> PathBuf {
    t.path("home/.local/state/instructions-lsp").join(rel)
}

/// `instructions-lsp mcp` in `cwd`, spoken to line by line.
struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    stderr: Arc<Mutex<String>>,
    /// While set, the reader of the server's output reads nothing: the client stops reading.
    paused: Arc<(Mutex<bool>, Condvar)>,
}

impl Mcp {
    /// Started and initialized, by a client without the roots capability (its root is `cwd`).
    fn start(t: &Tree, cwd: &Path) -> Self {
        let mut child = bin(t, &["mcp"]).current_dir(cwd).spawn().expect("spawn the MCP server");
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        let paused = Arc::new((Mutex::new(false), Condvar::new()));
        let gate = paused.clone();
        std::thread::spawn(move || {
            let mut out = BufReader::new(out);
            loop {
                // Waits here, before reading a byte more, while the client does not read.
                let (lock, wake) = &*gate;
                drop(wake.wait_while(lock.lock().expect("gate"), |p| *p).expect("gate"));
                let mut line = String::new();
                match out.read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                if let Ok(v) = serde_json::from_str(&line)
                    && tx.send(v).is_err()
                {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().expect("stderr");
        let keep = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    return;
                }
                keep.lock().expect("stderr").push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdin = child.stdin.take();
        let mut mcp = Self { child, stdin, lines, stderr, paused };
        let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "1"}});
        mcp.send(&request(0, "initialize", init));
        assert!(mcp.answer(&json!(0))["result"]["serverInfo"].is_object(), "initialized");
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).and_then(|()| stdin.flush()).expect("write to the server");
    }

    fn send(&mut self, message: &Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    /// The next message whose id is `id` (others are dropped).
    fn answer(&mut self, id: &Value) -> Value {
        loop {
            let m = self.lines.recv_timeout(GUARD).unwrap_or_else(|_| panic!("no answer for id {id}: {}", self.log()));
            if &m["id"] == id {
                return m;
            }
        }
    }

    /// Calls a tool; returns its result's texts joined.
    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> String {
        self.send(&request(id, "tools/call", json!({"name": tool, "arguments": arguments})));
        let answer = self.answer(&json!(id));
        let texts = answer["result"]["content"].as_array().cloned().unwrap_or_default();
        assert!(!texts.is_empty(), "a tool result: {answer}");
        texts.iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
    }

    /// Stops (`true`) or restarts reading the server's output.
    fn pause_reading(&self, paused: bool) {
        let (lock, wake) = &*self.paused;
        *lock.lock().expect("gate") = paused;
        wake.notify_all();
    }

    fn log(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The server's peak resident memory so far, in KiB.
    fn peak_rss_kb(&self) -> u64 {
        crate::common::peak_rss_kb(self.child.id())
    }

    /// Closes the input: the server must end cleanly. Returns its log.
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait");
        // The log reader ends with the process.
        let log = loop {
            let log = self.log();
            if Arc::strong_count(&self.stderr) == 1 {
                break log;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(status.success(), "the server ended with {status}: {log}");
        assert!(!log.contains("panicked"), "{log}");
        log
    }
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A project, a nested scope in it, and a secret beside it.
fn project() -> Tree {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules\n");
    // What Claude Code loads by itself at the root (else it reads AGENTS.md there, and the hook
    // leaves that out).
    t.write("r/CLAUDE.md", "root claude rules\n");
    t.write("r/a/AGENTS.md", "a rules\n");
    t.write("r/a/x.rs", "code\n");
    t.write("secret/AGENTS.md", "SECRET rules\n");
    t
}

#[test]
fn mcp_a_client_that_never_reads_stops_the_server_reading_and_every_call_is_answered() {
    let t = project();
    let r = t.root();
    let mut mcp = Mcp::start(&t, &r);
    // Benign control: a call answers.
    assert!(mcp.call(1, "instructions_for", json!({"path": r})).contains("root rules"));

    // 20,000 calls, written by a thread that blocks once the server stops reading, while
    // nothing reads the server's answers.
    mcp.pause_reading(true);
    const CALLS: u64 = 20_000;
    let mut stdin = mcp.stdin.take().expect("stdin");
    let written = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let count = written.clone();
    let writer = std::thread::spawn(move || {
        for id in 2..CALLS + 2 {
            let line = format!("{}\n", request(id, "tools/list", json!({})));
            if stdin.write_all(line.as_bytes()).is_err() {
                break;
            }
            count.store(id - 1, std::sync::atomic::Ordering::SeqCst);
        }
        stdin
    });
    // Wait until the writer is done or stuck: the server's input is full.
    let mut last = u64::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = written.load(std::sync::atomic::Ordering::SeqCst);
        if now == last || now == CALLS {
            break;
        }
        last = now;
    }
    let stuck_at = written.load(std::sync::atomic::Ordering::SeqCst);
    // What the server may hold unread: the input pipe (64 KiB), its own read buffer (64 KiB) and
    // 16 calls waiting for their answers; a line is some 65 bytes. Without the bound it reads on
    // (more than 16,000 calls here).
    assert!(stuck_at < 4_000, "the server read {stuck_at} of {CALLS} calls while its answers were not read");
    let peak = mcp.peak_rss_kb();
    assert!(peak < MAX_RSS_KB, "the server's peak resident memory was {peak} KiB");

    // Reading again: every call is answered, once, and the server goes on.
    mcp.pause_reading(false);
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < CALLS as usize {
        let m = mcp.lines.recv_timeout(GUARD).expect("an answer");
        let id = m["id"].as_u64().expect("an answer to a call");
        assert!(m["result"]["tools"].is_array(), "{m}");
        assert!(answered.insert(id), "answered twice: {id}");
    }
    mcp.stdin = Some(writer.join().expect("writer"));
    assert!(mcp.call(CALLS + 2, "instructions_for", json!({"path": r.join("a/x.rs")})).contains("a rules"));
    let peak = mcp.peak_rss_kb();
    assert!(peak < MAX_RSS_KB, "the server's peak resident memory was {peak} KiB");
    mcp.finish();
}

#[test]
fn mcp_a_line_past_16_mib_is_answered_with_an_error_and_the_server_goes_on() {
    let t = project();
    let r = t.root();
    let mut mcp = Mcp::start(&t, &r);
    let pad = "x".repeat(16 * 1024 * 1024);
    let long = request(1, "tools/call", json!({"name": "instructions_for", "arguments": {"path": r, "pad": pad}}));
    let mut stdin = mcp.stdin.take().expect("stdin");
    // Written by a thread: the server answers while the line is still coming.
    let writer = std::thread::spawn(move || {
        stdin.write_all(format!("{long}\n").as_bytes()).expect("the long line");
        stdin
    });
    let error = mcp.answer(&Value::Null);
    assert_eq!(error["error"]["code"], -32700, "{error}");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("longer than 16777216 bytes"), "{message}");
    assert!(error.as_object().is_some_and(|o| o.contains_key("id")), "id null, not left out: {error}");
    mcp.stdin = Some(writer.join().expect("writer"));
    // Benign control: the same call with a normal line answers, and so does the next.
    assert!(mcp.call(2, "instructions_for", json!({"path": r})).contains("root rules"));
    assert!(mcp.call(3, "instructions_touch", json!({"path": r.join("a/x.rs"), "kind": "read"})).contains("a rules"));
    let log = mcp.finish();
    assert!(log.contains("longer than 16777216 bytes"), "{log}");
}

/// A client that ends its input right after its last request, without the newline: the request
/// is still answered (it was dropped), and the server ends cleanly.
#[test]
fn mcp_a_last_request_without_its_newline_is_answered_at_the_end_of_input() {
    let t = project();
    let r = t.root();
    let mut mcp = Mcp::start(&t, &r);
    mcp.send_raw(request(11, "tools/list", json!({})).to_string().as_bytes());
    drop(mcp.stdin.take());
    let answer = mcp.answer(&json!(11));
    assert!(answer["result"]["tools"].as_array().is_some_and(|tools| !tools.is_empty()), "{answer}");
    mcp.finish();
}

/// The one ledger the MCP server keeps in the tree (one root).
fn mcp_ledger(t: &Tree) -> PathBuf {
    let dir = state(t, "mcp");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the MCP state directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

/// Rewrites a ledger's JSON.
fn edit(ledger: &Path, change: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(ledger).expect("read the ledger")).expect("JSON");
    change(&mut v);
    std::fs::write(ledger, v.to_string()).expect("write the ledger");
}

/// Reached scopes outside the folder, every way a ledger can spell them.
fn outside_scopes(t: &Tree) -> Vec<Value> {
    let secret = t.path("secret");
    vec![json!(t.root().join("../secret")), json!(secret), json!("../secret"), json!(t.root().join("a/../../secret"))]
}

#[test]
fn mcp_a_ledger_reaching_outside_its_folder_is_cut_back_to_it() {
    let t = project();
    let r = t.root();
    let mut mcp = Mcp::start(&t, &r);
    assert!(mcp.call(1, "instructions_touch", json!({"path": r.join("a/x.rs"), "kind": "read"})).contains("a rules"));
    mcp.finish();
    let ledger = mcp_ledger(&t);
    edit(&ledger, |v| {
        let reached = v["reached"].as_array_mut().expect("reached");
        assert_eq!(reached.len(), 1, "the touch reached a: {reached:?}");
        reached.extend(outside_scopes(&t));
    });

    let mut mcp = Mcp::start(&t, &r);
    let everything = mcp.call(1, "instructions_transitions", json!({"since": 0}));
    let effective = mcp.call(2, "instructions_for", json!({"path": r.join("a/x.rs")}));
    for out in [&everything, &effective] {
        assert!(!out.contains("SECRET") && !out.contains("secret/AGENTS.md"), "outside text returned: {out}");
    }
    // Benign control: the reached scope inside the folder is kept.
    assert!(everything.contains("a rules") && everything.contains("root rules"), "{everything}");
    let log = mcp.finish();
    assert!(log.matches("not inside the folder; dropped").count() >= 4, "{log}");
}

#[test]
fn mcp_a_ledger_seq_at_the_end_of_u64_starts_the_session_afresh() {
    let t = project();
    let r = t.root();
    let mut mcp = Mcp::start(&t, &r);
    assert!(mcp.call(1, "instructions_for", json!({"path": r})).contains("root rules"));
    mcp.finish();
    let ledger = mcp_ledger(&t);
    edit(&ledger, |v| {
        v["seq"] = json!(u64::MAX);
        if let Some(b) = v["batches"].as_array_mut().and_then(|b| b.last_mut()) {
            b["seq"] = json!(u64::MAX);
        }
    });

    let mut mcp = Mcp::start(&t, &r);
    mcp.send(&request(1, "tools/call", json!({"name": "instructions_transitions", "arguments": {"since": 0}})));
    let answer = mcp.answer(&json!(1));
    let result = &answer["result"]["structuredContent"];
    let seq = result["seq"].as_u64().expect("a seq");
    assert!((1..10).contains(&seq), "a fresh session, not a wrapped one: {answer}");
    assert!(answer.to_string().contains("root rules"), "{answer}");
    // The next change is numbered after it, not wrapped back to 0.
    let touched = mcp.call(2, "instructions_touch", json!({"path": r.join("a/x.rs"), "kind": "read"}));
    assert!(touched.contains("a rules"), "{touched}");
    let log = mcp.finish();
    assert!(log.contains("past the 9007199254740991"), "{log}");
    let saved: Value = serde_json::from_slice(&std::fs::read(&ledger).expect("ledger")).expect("JSON");
    assert!(saved["seq"].as_u64().is_some_and(|s| s > seq && s < 10), "{}", saved["seq"]);
}

/// Runs `instructions-lsp hook AGENT` with `input` on stdin; returns stdout and stderr. The hook
/// must exit 0 whatever it is given.
fn hook(t: &Tree, agent: &str, input: &[u8]) -> (String, String) {
    let mut child = bin(t, &["hook", agent]).spawn().expect("run the hook");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // The hook may stop reading past its cap: a write error then is expected.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("hook output");
    let _ = writer.join();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "the hook never fails the turn: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    (String::from_utf8(out.stdout).expect("utf-8"), stderr)
}

fn start(session: &str, cwd: &Path) -> Value {
    json!({"session_id": session, "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"})
}

fn read(session: &str, cwd: &Path, file: &Path) -> Value {
    json!({"session_id": session, "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Read",
        "tool_input": {"file_path": file}, "tool_response": {"type": "text"}})
}

#[test]
fn hook_a_cwd_of_20000_components_is_refused_and_the_hook_exits_0() {
    let t = project();
    let deep = PathBuf::from(format!("/{}", vec!["a"; 20_000].join("/")));
    let (out, err) = hook(&t, "claude", start("s1", &deep).to_string().as_bytes());
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("is 40000 bytes long, past the 4096"), "{err}");
    // Deep but within the byte bound: refused by its components.
    let many = PathBuf::from(format!("/{}", vec!["a"; 300].join("/")));
    let (out, err) = hook(&t, "claude", start("s1", &many).to_string().as_bytes());
    assert!(out.is_empty() && err.contains("more than the 256 components"), "{err}");
    // A touched path past the bounds is left out, and the rest of the event is followed: the
    // session starts (its baseline), and the long path reaches no scope.
    t.write("r/a/b/AGENTS.md", "b rules\n");
    let long = t.root().join("a").join(vec!["b"; 3000].join("/"));
    let (out, err) = hook(&t, "claude", read("s1", &t.root(), &long).to_string().as_bytes());
    assert!(err.contains("bytes long, past the 4096") && err.contains("left out"), "{err}");
    assert!(out.contains("root rules") && !out.contains("b rules"), "{out}");
    // Benign control: the same session with a normal path reaches a, and the event is logged
    // nothing about.
    let (out, err) = hook(&t, "claude", read("s1", &t.root(), &t.root().join("a/x.rs")).to_string().as_bytes());
    assert!(out.contains("a rules") && !out.contains("SECRET") && err.is_empty(), "{out}; {err}");
}

#[test]
fn hook_an_event_past_16_mib_is_ignored_and_the_hook_exits_0() {
    let t = project();
    let mut event = start("s1", &t.root());
    event["padding"] = json!("x".repeat(16 * 1024 * 1024));
    let (out, err) = hook(&t, "claude", event.to_string().as_bytes());
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("larger than 16777216 bytes (16 MiB)"), "{err}");
    // Benign control: a padded event within the cap is answered.
    event["padding"] = json!("x".repeat(1024 * 1024));
    let (out, _) = hook(&t, "claude", event.to_string().as_bytes());
    assert!(out.contains("root rules"), "{out}");
}

#[test]
fn hook_a_patch_naming_20000_files_is_followed_up_to_the_cap() {
    let t = project();
    t.write("r/d0/AGENTS.md", "d0 rules\n");
    let names: String = (0..20_000).map(|i| format!("*** Add File: d{i}/f.rs\n+x\n")).collect();
    let patch = format!("*** Begin Patch\n{names}*** End Patch\n");
    let event = json!({"session_id": "s1", "cwd": t.root(), "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": patch},
        "tool_response": "Exit code: 0\nOutput:\nSuccess."});
    let (out, err) = hook(&t, "codex", event.to_string().as_bytes());
    assert!(err.contains("names 18976 more files than the 1024"), "{err}");
    // The files within the cap are followed: the first one's scope is given.
    assert!(out.contains("d0 rules"), "{out}; {err}");
    // Benign control: a patch of one file gives its scope, and logs nothing.
    let patch = "*** Begin Patch\n*** Update File: a/x.rs\n@@\n-code\n+edited\n*** End Patch\n";
    let event = json!({"session_id": "s1", "cwd": t.root(), "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch", "tool_input": {"command": patch},
        "tool_response": "Exit code: 0\nOutput:\nSuccess."});
    let (out, err) = hook(&t, "codex", event.to_string().as_bytes());
    assert!(out.contains("a rules") && err.is_empty(), "{out}; {err}");
}

#[test]
fn hook_a_ledger_reaching_outside_its_folder_is_cut_back_to_it() {
    let t = project();
    t.write("r/c/y.rs", "code\n");
    t.write("r/c/AGENTS.md", "c rules\n");
    let r = t.root();
    let (out, _) = hook(&t, "claude", read("s1", &r, &r.join("a/x.rs")).to_string().as_bytes());
    assert!(out.contains("a rules"), "{out}");
    let sessions = state(&t, "hooks/claude");
    let ledger = std::fs::read_dir(&sessions)
        .expect("the hook's sessions")
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("hook.json"))
        .expect("a ledger");
    edit(&ledger, |v| v["reached"].as_array_mut().expect("reached").extend(outside_scopes(&t)));
    // The next event continues the ledger: only c is new, and nothing from outside comes.
    let (out, err) = hook(&t, "claude", read("s1", &r, &r.join("c/y.rs")).to_string().as_bytes());
    assert!(out.contains("c rules") && !out.contains("a rules"), "{out}");
    assert!(!out.contains("SECRET") && !out.contains("secret/AGENTS.md"), "outside text returned: {out}");
    assert!(err.matches("not inside the folder; dropped").count() >= 4, "{err}");
}

/// Runs the CLI under the address-space limit in `dir`; its exit code, stdout and stderr.
fn cli(t: &Tree, dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = bin(t, args).current_dir(dir).stdin(Stdio::null()).output().expect("run the CLI");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One `{a,a,…}` group of 16,000 alternatives in front of 32 KiB, in a Cursor rule's `globs` and a
/// Claude Code rule's `paths`: once a thousand 32 KiB globs (1.1 GB, seconds per command), now
/// left as written. The benign rule beside them, with an ordinary brace group, still attaches.
#[test]
fn cli_a_brace_bomb_in_a_rules_globs_stays_within_bounds() {
    let t = Tree::new();
    let r = t.root();
    t.mkdir("r/.git");
    t.write("r/src/a.ts", "code\n");
    let bomb = format!("{{{}}}{}", vec!["a"; 16_000].join(","), "x".repeat(32 * 1024));
    t.write("r/.cursor/rules/bomb.mdc", format!("---\nglobs: \"{bomb}\"\n---\nBOMB cursor rule\n"));
    t.write("r/.cursor/rules/fine.mdc", "---\nglobs: \"src/{a,b}.ts\"\n---\nFINE cursor rule\n");
    t.write("r/.claude/rules/bomb.md", format!("---\npaths: \"{bomb}\"\n---\nBOMB claude rule\n"));
    t.write("r/.claude/rules/fine.md", "---\npaths: \"src/{a,b}.ts\"\n---\nFINE claude rule\n");
    for profile in ["cursor", "claude"] {
        let (code, out, err) = cli(&t, &r, &["effective", "--profile", profile, "--touch", "src/a.ts", "."]);
        assert_eq!(code, Some(0), "{profile}: {err}");
        assert!(out.contains(&format!("FINE {profile} rule")), "{profile}: the benign rule attaches: {out}");
        assert!(!out.contains("BOMB"), "{profile}: the bomb's glob, as written, matches nothing: {out}");
    }
    let (code, _, err) = cli(&t, &r, &["check", "."]);
    assert!(matches!(code, Some(0 | 1)), "check ends with its findings, not a crash: {code:?} {err}");
}

/// `chat.instructionsFilesLocations` naming one folder of 2,000 instructions files a thousand
/// times, in a thousand spellings: once 15 s and 900 MB; now the folder is searched once and
/// each file listed once.
#[test]
fn cli_a_thousand_spellings_of_one_instructions_folder_search_it_once() {
    let t = Tree::new();
    let r = t.root();
    t.mkdir("r/.git");
    for i in 0..2_000 {
        t.write(
            &format!("r/docs/ai/rule{i:04}.instructions.md"),
            format!("---\napplyTo: \"**/*.rs\"\n---\nrule {i}\n"),
        );
    }
    let locations: serde_json::Map<String, Value> =
        (0..1_000).map(|k| (format!("{}docs/ai", "./".repeat(k)), Value::Bool(true))).collect();
    t.write("r/.vscode/settings.json", json!({"chat.instructionsFilesLocations": locations}).to_string());
    let (code, out, err) = cli(&t, &r, &["effective", "--profile", "copilot", "--json", "."]);
    assert_eq!(code, Some(0), "{err}");
    let view: Value = serde_json::from_str(&out).expect("json");
    let files = view["files"].as_array().expect("files");
    let rule0 = files.iter().filter(|f| f["path"].as_str().is_some_and(|p| p.ends_with("rule0000.instructions.md")));
    assert_eq!(rule0.count(), 1, "each file once");
    assert_eq!(files.len(), 2_000, "every file of the folder, once");
}

/// A hundred nested directories, each with a 1 MiB `AGENTS.md` (small in git): the engine's
/// chain once read all of it for each answer, several copies deep (600 MB at 150 levels), and
/// fitted its block once per dropped file. Now one chain loads at most 32 MiB, the deepest
/// first, and the broadest are `chainTooLarge`; the hook on a read at the bottom stays bounded too.
#[test]
fn cli_and_hook_a_deep_chain_of_large_files_stays_within_bounds() {
    let t = Tree::new();
    let r = t.root();
    t.mkdir("r/.git");
    let big = "y".repeat(1024 * 1024 - 1);
    let mut rel = String::from("r");
    for _ in 0..100 {
        t.write(&format!("{rel}/AGENTS.md"), &big);
        rel.push_str("/d");
    }
    let bottom = t.write(&format!("{rel}/f.txt"), "code\n");
    let deepest = bottom.parent().expect("parent").to_path_buf();
    let (code, out, err) = cli(&t, &r, &["effective", "--profile", "dsh", "--json", &deepest.to_string_lossy()]);
    assert_eq!(code, Some(0), "{err}");
    let answer: Value = serde_json::from_str(&out).expect("json");
    let capped = answer["skipped"].as_array().expect("skipped").iter().filter(|s| s["reason"] == "chainTooLarge");
    assert_eq!(capped.count(), 100 - 32, "{}", &out[..out.len().min(2000)]);
    assert_eq!(answer["baseline"]["files"].as_array().map(Vec::len), Some(32));
    // The hook on a read of the bottom file, from a session started at the root.
    hook(&t, "claude", start("deep", &r).to_string().as_bytes());
    let (out, err) = hook(&t, "claude", read("deep", &r, &bottom).to_string().as_bytes());
    assert!(out.contains("d/d/d"), "nested files reach the agent: {out:.300} {err}");
}

/// A folder of Claude Code rules, each within the count bounds but with globs of 6.5 KB (a brace
/// group in front of a long name): each view compiled hundreds of KB of globs per rule (10 rules:
/// 4.6 s and 216 MB for one `compare`). A rule's globs now hold at most 16 KiB together; the
/// benign rule beside them still attaches on a read.
#[test]
fn cli_a_folder_of_rules_with_long_globs_stays_within_bounds() {
    let t = Tree::new();
    let r = t.root();
    t.mkdir("r/.git");
    t.write("r/CLAUDE.md", "root\n");
    t.write("r/p1/CLAUDE.md", "p1\n");
    t.write("r/p1/src/main.rs", "code\n");
    let long = "x".repeat(6_500);
    for rule in 0..30 {
        let paths: Vec<String> =
            (0..9).map(|i| format!("  - \"{{a,b,c,d,e,f,g,h,i,j}}src/{long}/**/*.rs{i}\"")).collect();
        t.write(
            &format!("r/.claude/rules/r{rule}.md"),
            format!("---\npaths:\n{}\n---\nLONG rule {rule}\n", paths.join("\n")),
        );
    }
    t.write("r/.claude/rules/fine.md", "---\npaths: \"p1/src/**\"\n---\nFINE rule\n");
    let (code, out, err) = cli(&t, &r, &["effective", "--profile", "claude", "--touch", "p1/src/main.rs", "."]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("FINE rule") && !out.contains("LONG rule"), "{out}");
    let (code, _, err) = cli(&t, &r, &["check", "--profile", "claude", "."]);
    assert!(matches!(code, Some(0 | 1)), "check ends with its findings, not a crash: {code:?} {err}");
}

/// Many rules of many globs of the shape people write (`src/…/**/*.rs`): each glob was its own
/// regular expression (`globset` matches a glob with a literal extension by its own), 35 KB
/// apiece, 3.5 GB for a thousand rules of 100; they now share automata of at most a thousand
/// globs each, and `compare` stays within the address-space limit.
#[test]
fn cli_many_rules_of_many_globs_share_their_automata() {
    let t = Tree::new();
    let r = t.root();
    t.mkdir("r/.git");
    t.write("r/AGENTS.md", "root\n");
    t.write("r/lib/x.rs", "code\n");
    for rule in 0..150 {
        let globs: Vec<String> = (0..100).map(|i| format!("src/mod{rule}_{i}/**/*.rs")).collect();
        t.write(
            &format!("r/.github/instructions/r{rule}.instructions.md"),
            format!("---\napplyTo: \"{}\"\n---\nRULE {rule}\n", globs.join(",")),
        );
        t.write(
            &format!("r/.cursor/rules/r{rule}.mdc"),
            format!("---\nglobs: {}\n---\nRULE {rule}\n", globs.join(",")),
        );
    }
    for profile in ["copilot", "cursor"] {
        let (code, out, err) = cli(&t, &r, &["compare", "--profile", profile, "--json", "."]);
        assert_eq!(code, Some(0), "{profile}: {err}");
        assert!(out.contains("r0.") && out.contains("r149."), "{profile}: {out}");
    }
}
