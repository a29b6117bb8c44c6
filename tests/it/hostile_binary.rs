//! Hostile repositories, against the built binary: the server over stdio and the
//! CLI. Each tree once hung, exhausted or read past the server; now each answers, within a
//! memory bound read from the kernel (peak resident set), and no outside text reaches an answer.
//! The time guards only keep a regression from hanging the suite; nothing here times anything.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::lsp::uri;
use crate::common::stdio::Proc;
use crate::common::tree::Tree;
use serde_json::{Value, json};

/// Long enough for a debug build on a loaded machine; a regression hangs far longer.
const GUARD: Duration = Duration::from_secs(90);
/// The most resident memory any of these trees may cost.
const MAX_RSS_KB: u64 = 300 * 1024;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
}

/// The built server on stdio, with a private home: the shared stdio client, with requests that
/// wait as long as the guard and keep every other message.
struct Server {
    proc: Proc,
    seen: Vec<Value>,
    next_id: u64,
}

impl Server {
    fn start(t: &Tree, folders: &[&Path], options: Value) -> Self {
        Self::start_with_env(t, folders, options, &[])
    }

    fn start_with_env(t: &Tree, folders: &[&Path], options: Value, env: &[(&str, &str)]) -> Self {
        Self::spawn(t, bin(), folders, options, env, json!({}))
    }

    fn spawn(t: &Tree, mut cmd: Command, folders: &[&Path], options: Value, env: &[(&str, &str)], caps: Value) -> Self {
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut proc = Proc::spawn(t, cmd, &[]);
        // Nobody reads the server's logs here: drained, so that a server logging more than a pipe
        // holds never blocks on them.
        if let Some(mut logs) = proc.child.stderr.take() {
            std::thread::spawn(move || std::io::copy(&mut logs, &mut std::io::sink()));
        }
        let mut s = Self { proc, seen: Vec::new(), next_id: 1 };
        let folders: Vec<Value> = folders.iter().map(|f| json!({"uri": uri(f), "name": "f"})).collect();
        s.request(
            "initialize",
            json!({"capabilities": caps, "workspaceFolders": folders, "initializationOptions": options}),
        );
        s.notify("initialized", json!({}));
        s
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn write(&mut self, msg: &Value) {
        self.proc.send(msg.clone());
    }

    /// Sends a request and waits for its answer (the result, or the error object).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = std::time::Instant::now() + GUARD;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let msg = self
                .proc
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to {method} within the guard: the server hangs or died"));
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg.get("result").cloned().unwrap_or_else(|| msg["error"].clone());
            }
            // The server's own requests (registrations, say) get an empty answer.
            if let (Some(sid), Some(_)) = (msg.get("id"), msg.get("method")) {
                let answer = json!({"jsonrpc": "2.0", "id": sid, "result": null});
                self.write(&answer);
            }
            self.seen.push(msg);
        }
    }

    /// The server's peak resident memory so far, in KiB.
    fn peak_rss_kb(&self) -> u64 {
        crate::common::peak_rss_kb(self.proc.child.id())
    }

    /// Asserts the memory bound, then shuts down cleanly.
    fn finish(mut self) {
        let peak = self.peak_rss_kb();
        assert!(peak < MAX_RSS_KB, "the server's peak resident memory was {peak} KiB");
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.proc.child.wait();
    }
}

/// Runs the CLI with a private home, under the guard; returns (exit code, stdout, stderr). The
/// address space is limited so that a blowup fails instead of swapping.
fn cli(t: &Tree, args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={}", 2u64 << 30)).arg("--").arg(env!("CARGO_BIN_EXE_instructions-lsp"));
    let mut child = cmd
        .args(args)
        .env("HOME", t.home())
        .env_remove("DSH_HOME")
        .env_remove("XDG_STATE_HOME")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the CLI under prlimit");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let (mut o, mut e) = (String::new(), String::new());
        let _ = out.read_to_string(&mut o);
        let _ = err.read_to_string(&mut e);
        (o, e)
    });
    let deadline = std::time::Instant::now() + GUARD;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("`instructions-lsp {}` did not finish within the guard", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (o, e) = reader.join().expect("reader");
    (status.code(), o, e)
}

fn files_of(r: &Value) -> Vec<(String, String)> {
    r["files"]
        .as_array()
        .map(|fs| {
            fs.iter()
                .map(|f| (f["path"].as_str().unwrap_or("").to_string(), f["status"].as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(unix)]
#[test]
fn rules_folders_that_link_to_themselves_are_walked_once() {
    let t = Tree::new();
    let root = t.root();
    t.write("r/CLAUDE.md", "project rules");
    t.write("r/.claude/rules/style.md", "rule A");
    for l in ["l0", "l1", "l2"] {
        t.symlink(".", &format!("r/.claude/rules/{l}"));
    }
    let mut s = Server::start(&t, &[&root], json!({"stateDir": null}));
    let claude = s.request("instructions/effective", json!({"uri": uri(&root), "profile": "claude"}));
    let text = claude["text"].as_str().unwrap_or("");
    assert_eq!(text.matches("rule A").count(), 1, "{claude}");
    let all = s.request("instructions/effective", json!({"uri": uri(&root), "profile": "all"}));
    assert!(all["profiles"].as_array().is_some_and(|p| p.len() >= 7), "{all}");
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri(&t.path("r/CLAUDE.md")), "languageId": "markdown", "version": 1, "text": "project rules"}}),
    );
    let hover = s.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri(&t.path("r/CLAUDE.md"))}, "position": {"line": 0, "character": 0}}),
    );
    assert!(
        hover["contents"]["value"].as_str().is_some_and(|v| v.contains("- Claude Code loads this file\n")),
        "{hover}"
    );
    s.finish();

    let (code, out, _) = cli(&t, &["check", "--profile", "claude", root.to_str().unwrap_or_default()]);
    assert!(matches!(code, Some(0 | 1)), "check --profile claude: {code:?} {out}");
    let (code, out, _) = cli(&t, &["compare", root.to_str().unwrap_or_default()]);
    assert_eq!(code, Some(0), "compare: {out}");
}

/// Five files, each importing the next one sixteen times: Gemini inlines every import again, so
/// the last file would be copied 16^5 times.
#[test]
fn an_import_fan_out_is_reported_not_expanded() {
    let t = Tree::new();
    let root = t.root();
    let filler = "Some guidance that takes a line or two of text in every file. ".repeat(3);
    for i in 0..5 {
        let imports = format!("@./f{}.md\n", i + 1).repeat(16);
        let name = if i == 0 { "r/GEMINI.md".to_string() } else { format!("r/f{i}.md") };
        t.write(&name, format!("{filler}\n{imports}"));
    }
    t.write("r/f5.md", &filler);
    let mut s = Server::start(&t, &[&root], json!({"stateDir": null, "profiles": ["gemini"]}));
    let gemini = s.request("instructions/effective", json!({"uri": uri(&root), "profile": "gemini"}));
    let files = files_of(&gemini);
    assert_eq!(files.first(), Some(&("GEMINI.md".to_string(), "runaway".to_string())), "{files:?}");
    assert!(gemini["bytes"].as_u64().is_some_and(|b| b < 1024 * 1024), "{}", gemini["bytes"]);
    s.finish();

    let (code, out, _) = cli(&t, &["check", "--profile", "gemini", root.to_str().unwrap_or_default()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("GEMINI.md:1:1: warning[agentCut]: Gemini CLI inlines this file's @imports again"), "{out}");
}

/// A thousand rules of 100 globs for each of Claude Code, Cursor and Copilot, in the shapes
/// people write (`src/…/**/*.rs` each distinct, `**/pkg…/*.ts`, `**/*.ext`): the server's
/// `"all"` answer stays within its memory bound (Copilot's view took 933 MB, Cursor's 544 MB,
/// when each glob was an alternative of an automaton and `*.ts` an expression of its own).
#[test]
fn the_all_answer_for_thousands_of_rules_of_many_globs_stays_within_bounds() {
    let t = Tree::new();
    let root = t.root();
    t.mkdir("r/.git");
    t.write("r/AGENTS.md", "root\n");
    t.write("r/CLAUDE.md", "claude\n");
    t.write("r/src/m7/p3/x/y.rs", "code\n");
    for rule in 0..1000 {
        let globs: Vec<String> = (0..100)
            .map(|i| match i % 3 {
                0 => format!("src/m{rule}/p{i}/**/*.rs"),
                1 => format!("**/pkg{rule}_{i}/*.ts"),
                _ => format!("**/*.x{i}"),
            })
            .collect();
        let listed: String = globs.iter().map(|g| format!("  - \"{g}\"\n")).collect();
        t.write(&format!("r/.claude/rules/r{rule}.md"), format!("---\npaths:\n{listed}---\nRULE {rule}\n"));
        t.write(
            &format!("r/.cursor/rules/r{rule}.mdc"),
            format!("---\nglobs: {}\n---\nRULE {rule}\n", globs.join(",")),
        );
        t.write(
            &format!("r/.github/instructions/r{rule}.instructions.md"),
            format!("---\napplyTo: \"{}\"\n---\nRULE {rule}\n", globs.join(",")),
        );
    }
    let mut s = Server::start(&t, &[&root], json!({"stateDir": null}));
    let touched = root.join("src/m7/p3/x/y.rs");
    let all = s.request("instructions/effective", json!({"uri": uri(&touched), "profile": "all"}));
    let profiles = all["profiles"].as_array().cloned().unwrap_or_default();
    // The rule whose glob the file matches is loaded for each of the three; the others wait.
    for name in ["claude", "cursor", "copilot"] {
        let p = profiles.iter().find(|p| p["profile"] == name).unwrap_or_else(|| panic!("{name}: {all}"));
        let loaded: Vec<&str> = p["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["status"] == "loaded")
            .filter_map(|f| f["path"].as_str())
            .collect();
        assert!(
            loaded
                .iter()
                .any(|f| f.ends_with("/r7.md") || f.ends_with("/r7.mdc") || f.ends_with("/r7.instructions.md")),
            "{name}: {loaded:?}"
        );
        assert!(
            !loaded
                .iter()
                .any(|f| f.ends_with("/r8.md") || f.ends_with("/r8.mdc") || f.ends_with("/r8.instructions.md")),
            "{name}: {loaded:?}"
        );
    }
    s.finish();
}

#[cfg(unix)]
#[test]
fn many_links_to_large_rule_files_cost_no_more_than_the_view_cap() {
    let t = Tree::new();
    let root = t.root();
    t.write("r/CLAUDE.md", "project rules");
    // Over the per-file cap: never read, however many links.
    let big = t.write("r/big.md", "b".repeat(16 * 1024 * 1024));
    // Under it: read until the view's cap is spent.
    let medium = t.write("r/medium.md", "m".repeat(3 * 1024 * 1024));
    t.mkdir("r/.claude/rules");
    for i in 0..50 {
        t.symlink(&big, &format!("r/.claude/rules/big{i:02}.md"));
        t.symlink(&medium, &format!("r/.claude/rules/medium{i:02}.md"));
    }
    let mut s = Server::start(&t, &[&root], json!({"stateDir": null}));
    let claude = s.request("instructions/effective", json!({"uri": uri(&root), "profile": "claude"}));
    let statuses: Vec<String> = files_of(&claude).into_iter().map(|(_, st)| st).collect();
    let count = |s: &str| statuses.iter().filter(|x| *x == s).count();
    assert_eq!(count("oversized"), 50, "{statuses:?}");
    assert!(count("loaded") <= 3 && count("capped") >= 47, "{statuses:?}");
    let _ = s.request("instructions/effective", json!({"uri": uri(&root), "profile": "all"}));
    s.finish();
}

/// The most common layout, idle: nothing may open the instruction files once the server has
/// said what it has to say (the server's own reads used to come back as changes, forever).
#[cfg(target_os = "linux")]
#[test]
fn an_idle_server_opens_no_file() {
    use notify::event::AccessKind;
    use notify::{EventKind, RecursiveMode, Watcher};
    let t = Tree::new();
    let root = t.root();
    t.write("r/AGENTS.md", "root rules\n</workspace-context>\n".repeat(3000));
    t.write("r/CLAUDE.md", "shadowed rules");
    let mut s = Server::start(&t, &[&root], json!({"stateDir": null, "profiles": ["dsh", "claude", "codex"]}));
    let _ = s.request("instructions/effective", json!({"uri": uri(&root)}));
    let (tx, rx) = std::sync::mpsc::channel();
    let mut w = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
        let _ = tx.send(e);
    })
    .expect("watcher");
    w.watch(&root, RecursiveMode::NonRecursive).expect("watch");
    let pid = s.proc.child.id();
    let cpu_ticks = || -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
            + fields.get(12).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
    };
    // Opens and CPU clock ticks (1/100 s) within a window.
    let activity = |window: Duration| -> (Vec<PathBuf>, u64) {
        let before = cpu_ticks();
        std::thread::sleep(window);
        let opens = rx
            .try_iter()
            .flatten()
            .filter(|e| matches!(e.kind, EventKind::Access(AccessKind::Open(_))))
            .flat_map(|e| e.paths)
            .collect();
        (opens, cpu_ticks().saturating_sub(before))
    };
    // The first diagnostics passes read the files and take a while (a debug build places
    // thousands of findings); wait until a whole second goes by with neither an open nor CPU
    // time. A server that reopens its files forever never gets there.
    let mut settled = false;
    for _ in 0..60 {
        let (opens, ticks) = activity(Duration::from_secs(1));
        if opens.is_empty() && ticks <= 1 {
            settled = true;
            break;
        }
    }
    assert!(settled, "the server never stopped working");
    let (opens, ticks) = activity(Duration::from_secs(2));
    assert!(ticks <= 2, "an idle server used {ticks} clock ticks of CPU");
    assert!(opens.is_empty(), "an idle server opened {} files: {opens:?}", opens.len());
    // A busy directory above the project (as `/tmp` or a home directory is) changes nothing the
    // agents read there: it must not make the server read the project again.
    let above = root.parent().expect("the tree's directory").to_path_buf();
    let churn = std::thread::spawn(move || {
        for i in 0..100 {
            let d = above.join(format!("scratch-{i}"));
            let _ = std::fs::create_dir(&d);
            let _ = std::fs::write(d.join("notes.txt"), "x");
            let _ = std::fs::write(above.join("history.txt"), format!("{i}"));
            let _ = std::fs::remove_dir_all(&d);
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let (opens, _) = activity(Duration::from_secs(2));
    churn.join().expect("churn");
    assert!(opens.is_empty(), "changes above the project made the server read {} files: {opens:?}", opens.len());
    s.finish();
}

/// A touch of a made-up path tens of thousands of bytes long reaches only the directories that
/// exist, and costs nothing later.
#[test]
fn a_long_touch_reaches_only_directories_that_exist() {
    let t = Tree::new();
    let root = t.root();
    let state = t.path("state");
    t.write("r/AGENTS.md", "root rules");
    t.write("r/pkg/AGENTS.md", "package rules");
    let mut long = t.path("r/pkg");
    for i in 0..3000 {
        long.push(format!("d{i:05}"));
    }
    long.push("x.rs");
    assert!(long.as_os_str().len() > 20_000);
    let mut s = Server::start(&t, &[&root], json!({"stateDir": state}));
    s.notify("instructions/touch", json!({"uri": uri(&long), "kind": "read"}));
    for _ in 0..20 {
        let e = s.request("instructions/effective", json!({"uri": uri(&root)}));
        let nested: Vec<&str> = e["nested"][0]["files"]
            .as_array()
            .map(|f| f.iter().filter_map(|f| f["path"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(nested, ["pkg/AGENTS.md"], "{e}");
    }
    s.finish();
    let ledgers: Vec<PathBuf> = std::fs::read_dir(&state)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect())
        .unwrap_or_default();
    assert_eq!(ledgers.len(), 1);
    let ledger: Value = serde_json::from_slice(&std::fs::read(&ledgers[0]).expect("ledger")).expect("json");
    assert_eq!(ledger["reached"], json!([t.path("r/pkg")]), "only the directory that exists is reached");
}

/// A directory linked out of the project: nothing in it reaches any answer or the ledger, under
/// `skip`, `withinRoot` and `ds4` alike; `follow` follows it knowingly.
#[cfg(unix)]
#[test]
fn directories_linked_out_of_the_project_load_nothing() {
    let t = Tree::new();
    let root = t.root();
    t.write("r/AGENTS.md", "root rules");
    t.write("outside/AGENTS.md", "OUTSIDE SECRET");
    t.write("outside/deeper/AGENTS.md", "DEEPER SECRET");
    t.symlink(t.path("outside"), "r/pkg");
    for options in [
        json!({"symlinks": "skip"}),
        json!({"symlinks": "withinRoot"}),
        json!({"profile": "ds4"}),
        json!({"symlinks": "follow"}),
    ] {
        let state = t.path("state");
        let _ = std::fs::remove_dir_all(&state);
        let mut opts = options.clone();
        opts["stateDir"] = json!(state);
        let mut s = Server::start(&t, &[&root], opts);
        s.notify("instructions/touch", json!({"uri": uri(&t.path("r/pkg/deeper/x.rs")), "kind": "read"}));
        let effective = s.request("instructions/effective", json!({"uri": uri(&t.path("r/pkg/deeper/y.rs"))}));
        let transitions = s.request("instructions/transitions", json!({"uri": uri(&root), "since": 0}));
        let skipped: Vec<String> = effective["skipped"]
            .as_array()
            .map(|s| {
                s.iter()
                    .map(|s| format!("{} {}", s["path"].as_str().unwrap_or(""), s["reason"].as_str().unwrap_or("")))
                    .collect()
            })
            .unwrap_or_default();
        s.finish();
        let ledger: String = std::fs::read_dir(&state)
            .map(|d| d.flatten().map(|e| std::fs::read_to_string(e.path()).unwrap_or_default()).collect())
            .unwrap_or_default();
        let everything = format!("{effective}{transitions}{ledger}");
        if options["symlinks"] == "follow" {
            assert!(everything.contains("OUTSIDE SECRET"), "follow follows the link: {effective}");
            continue;
        }
        assert!(!everything.contains("SECRET"), "{options}: outside text reached an answer: {everything}");
        assert!(skipped.contains(&"pkg/AGENTS.md outsideRoot".to_string()), "{options}: {skipped:?}");
        assert!(skipped.contains(&"pkg/deeper/AGENTS.md outsideRoot".to_string()), "{options}: {skipped:?}");
    }
}

/// Rule files linked to a private key or to the process's environment: an agent would read
/// them; this tool shows the link as a finding and never reads the target.
#[cfg(target_os = "linux")]
#[test]
fn agent_rules_linked_outside_are_shown_not_read() {
    let t = Tree::new();
    let root = t.root();
    t.write("r/CLAUDE.md", "project rules");
    let key = t.write("home/.ssh/id_rsa", "-----BEGIN PRIVATE KEY-----");
    t.mkdir("r/.claude/rules");
    t.symlink(&key, "r/.claude/rules/key.md");
    t.symlink("/proc/self/environ", "r/.claude/rules/env.md");
    let mut s = Server::start_with_env(
        &t,
        &[&root],
        json!({"stateDir": null, "profiles": ["claude"]}),
        &[("HOSTILE_PROBE", "hunter2-in-the-environment")],
    );
    for profile in ["claude", "all"] {
        let r = s.request("instructions/effective", json!({"uri": uri(&root), "profile": profile}));
        let text = r.to_string();
        assert!(!text.contains("PRIVATE KEY"), "{profile}: {text}");
        assert!(!text.contains("hunter2"), "{profile}: {text}");
        if profile == "claude" {
            let files = files_of(&r);
            assert!(files.contains(&(".claude/rules/key.md".into(), "linked-outside".into())), "{files:?}");
            assert!(files.contains(&(".claude/rules/env.md".into(), "linked-outside".into())), "{files:?}");
        }
    }
    s.finish();
    let (code, out, _) = cli(&t, &["check", "--profile", "claude", root.to_str().unwrap_or_default()]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(".claude/rules/key.md:1:1: warning[linkOutside]: Claude Code would load this link's target"),
        "{out}"
    );
    assert!(!out.contains("PRIVATE KEY"));
}

/// With no folder open, every project asked about used to become a permanent session.
#[test]
fn sessions_for_projects_the_client_did_not_open_are_bounded() {
    let t = Tree::new();
    let mut s = Server::start(&t, &[], json!({"stateDir": null}));
    for i in 0..100 {
        let p = t.write(&format!("p{i}/.git/HEAD"), "ref").parent().and_then(Path::parent).map(Path::to_path_buf);
        let p = p.expect("project");
        std::fs::write(p.join("AGENTS.md"), format!("rules {i}")).expect("write");
        let e = s.request("instructions/effective", json!({"uri": uri(&p.join("src/x.rs"))}));
        assert_eq!(e["baseline"]["files"][0]["path"], "AGENTS.md", "{e}");
    }
    // Made-up paths make no session of their own: they belong to the nearest directory that exists.
    let e = s.request("instructions/effective", json!({"uri": uri(&t.path("p99/no/such/dir/x.rs"))}));
    assert_eq!(e["folder"], json!(uri(&t.path("p99"))), "{e}");
    let err = s.request("instructions/effective", json!({}));
    let listed = err["message"].as_str().unwrap_or("").matches("file://").count();
    assert!((1..=64).contains(&listed), "{listed} sessions: {err}");
    s.finish();
}

/// A directory the server cannot watch (here: one it may not read) makes it ask the client to
/// report changes, instead of missing them.
#[cfg(target_os = "linux")]
#[test]
fn directories_that_cannot_be_watched_are_left_to_the_client() {
    use std::os::unix::fs::PermissionsExt;
    let t = Tree::new();
    let root = t.root();
    t.write("r/AGENTS.md", "root rules");
    t.write("r/pkg/AGENTS.md", "package rules");
    let mode = |p: &Path, m| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).expect("chmod");
    for p in [t.dir.path(), &root, &t.home(), &t.path("r/.git")] {
        mode(p, 0o755);
    }
    mode(&t.path("r/AGENTS.md"), 0o644);
    mode(&t.path("r/pkg/AGENTS.md"), 0o644);
    // Searchable but not readable by others: stat works, a watch does not.
    mode(&t.path("r/pkg"), 0o711);
    let server = t.path("instructions-lsp");
    std::fs::copy(env!("CARGO_BIN_EXE_instructions-lsp"), &server).expect("copy the binary");
    mode(&server, 0o755);
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(&server);
    let caps = json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let mut s = Server::spawn(&t, cmd, &[&root], json!({"stateDir": null}), &[], caps);
    let _ = s.request("instructions/effective", json!({"uri": uri(&root)}));
    s.notify("instructions/touch", json!({"uri": uri(&t.path("r/pkg/x.rs")), "kind": "read"}));
    let e = s.request("instructions/effective", json!({"uri": uri(&root)}));
    assert_eq!(e["nested"][0]["files"][0]["path"], "pkg/AGENTS.md", "{e}");
    let mut registered = false;
    for _ in 0..50 {
        let _ = s.request("instructions/effective", json!({"uri": uri(&root)}));
        registered = s.seen.iter().any(|m| {
            m["method"] == "client/registerCapability"
                && m["params"]["registrations"][0]["method"] == "workspace/didChangeWatchedFiles"
        });
        if registered {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(registered, "the server never asked the client to watch: {:?}", s.seen);
    s.finish();
}

/// The root `AGENTS.md` itself a link to a private key: every agent would read it, and no
/// profile's view reads it here, Codex's budget included (it once read the target to cut it).
#[cfg(target_os = "linux")]
#[test]
fn an_instruction_file_linked_outside_is_read_by_no_profile() {
    let t = Tree::new();
    let root = t.root();
    t.mkdir("r/.git");
    let key = t.write("home/.ssh/id_rsa", format!("-----BEGIN PRIVATE KEY-----{}", "k".repeat(40_000)));
    t.symlink(&key, "r/AGENTS.md");
    t.write("r/CLAUDE.md", "project rules");
    let root_arg = root.to_str().unwrap_or_default();
    for profile in ["codex", "claude", "gemini", "opencode", "dsh-next", "copilot", "cursor", "dsh", "ds4"] {
        let (code, out, err) = cli(&t, &["effective", "--profile", profile, "--json", root_arg]);
        assert_eq!(code, Some(0), "{profile}: {err}");
        assert!(!out.contains("PRIVATE KEY"), "{profile}: {out}");
    }
    let (_, out, _) = cli(&t, &["effective", "--profile", "codex", "--json", root_arg]);
    let view: serde_json::Value = serde_json::from_str(&out).expect("json");
    let agents_md = view["files"].as_array().into_iter().flatten().find(|f| f["path"] == "AGENTS.md");
    assert_eq!(agents_md.map(|f| f["status"].clone()), Some(json!("linked-outside")), "{view}");
    let (_, out, _) = cli(&t, &["compare", "--all", root_arg]);
    assert!(!out.contains("PRIVATE KEY") && !out.contains("truncated  AGENTS.md"), "{out}");
    let (_, out, _) = cli(&t, &["check", "--profile", "codex", root_arg]);
    assert!(out.contains("AGENTS.md:1:1: warning[linkOutside]: Codex would load this link's target"), "{out}");
}

#[test]
fn a_name_holding_a_newline_forges_no_line_of_check() {
    let t = Tree::new();
    t.write("r/.git/HEAD", "ref: refs/heads/main\n");
    t.write("r/AGENTS.md", "Root rules.\n");
    // A file Codex cuts (a finding) in a folder whose name carries a line of its own.
    let forged = "pkg\nforged/AGENTS.md:1:1: error[forged]: planted";
    t.write(&format!("r/{forged}/AGENTS.md"), "x".repeat(40_000));
    let root = t.path("r");
    let (code, out, err) = cli(&t, &["check", "--profile", "codex", &root.to_string_lossy()]);
    assert!(matches!(code, Some(0 | 1)), "check ends with its findings: {code:?} {err}");
    let escaped = "pkg\\nforged/AGENTS.md:1:1: error[forged]: planted/AGENTS.md";
    let line = out.lines().find(|l| l.contains(escaped)).unwrap_or_else(|| panic!("the finding, escaped: {out}"));
    assert!(line.contains("warning[agentCut]"), "the escaped name is the cut file's: {line}");
    for l in out.lines() {
        assert!(!l.starts_with("forged/"), "a forged line: {l:?} in {out}");
    }
    for l in err.lines() {
        assert!(!l.starts_with("forged/"), "a forged line on stderr: {l:?} in {err}");
    }
}
