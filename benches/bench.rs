//! Benchmarks (issue 7): latency, scale and memory of the release server over stdio, the engine
//! in process against a minimal syscall walk, and the npm peers side by side (their timings come
//! from `benches/peers.mjs`, run by `benches/run.sh`).
//!
//!   cargo bench --bench bench -- [--smoke] [--huge] [--peers FILE] [--json FILE]
//!
//! Trees are generated from a fixed seed under `.cache/bench-trees/` and reused.

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use instructions_lsp::chain::settings::{Env, Settings};
use instructions_lsp::chain::source::FileCache;
use instructions_lsp::paths::path_to_uri;
use instructions_lsp::session::Session;
use serde_json::{Value, json};

const SEED: u64 = 0x5EED_1234_ABCD;
const CHAIN_DEPTH: usize = 10;

/// xorshift64*: the same tree on every run and for every peer.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

struct Tree {
    root: PathBuf,
    /// The forced chain's deepest directory (depth 10).
    chain: PathBuf,
    dirs: Vec<PathBuf>,
    instruction_dirs: Vec<PathBuf>,
}

fn content(rng: &mut Rng, name: &str) -> String {
    let lines = 20 + rng.below(30);
    (0..lines)
        .map(|i| format!("- {name} rule {i}: {}\n", "keep it short and tested. ".repeat(1 + rng.below(3))))
        .collect()
}

/// Generates (or reuses) a tree of `dirs` directories, depth up to 14, with `instruction_dirs`
/// directories holding AGENTS.md, CLAUDE.md and GEMINI.md, and a forced depth-10 chain with files
/// at depths 0, 3, 6 and 10.
fn tree(name: &str, dirs: usize, instruction_dirs: usize) -> Tree {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/bench-trees").join(format!("{name}-{SEED:x}"));
    let root = base.join("root");
    let chain: PathBuf = (1..=CHAIN_DEPTH).fold(root.clone(), |p, i| p.join(format!("chain{i}")));
    let mut rng = Rng(SEED ^ dirs as u64);
    let mut all = vec![root.clone()];
    let mut depth = vec![0usize];
    while all.len() < dirs {
        // Prefer deep parents so that depths spread over 10..14.
        let i = {
            let a = rng.below(all.len());
            let b = rng.below(all.len());
            if depth[a] >= depth[b] { a } else { b }
        };
        if depth[i] >= 14 {
            continue;
        }
        let child = all[i].join(format!("d{}", all.len()));
        depth.push(depth[i] + 1);
        all.push(child);
    }
    let mut chosen = Vec::new();
    while chosen.len() < instruction_dirs {
        let d = all[rng.below(all.len())].clone();
        if !chosen.contains(&d) {
            chosen.push(d);
        }
    }
    let done = base.join(".done");
    if !done.exists() {
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(root.join(".git")).expect("tree root");
        for d in &all {
            fs::create_dir_all(d).expect("mkdir");
        }
        fs::create_dir_all(&chain).expect("chain");
        let chain_files: Vec<PathBuf> =
            [0, 3, 6, 10].iter().map(|&k| (1..=k).fold(root.clone(), |p, i| p.join(format!("chain{i}")))).collect();
        for d in chosen.iter().chain(&chain_files) {
            for f in ["AGENTS.md", "CLAUDE.md", "GEMINI.md"] {
                fs::write(d.join(f), content(&mut rng, f)).expect("write");
            }
        }
        fs::write(&done, "").expect("done");
    }
    Tree { root, chain, dirs: all, instruction_dirs: chosen }
}

/// Runs the release binary's `hook claude` on `event` with `HOME` (and so the state directory) in
/// `home`: how long from the process start to its exit, and what it printed.
fn hook(home: &Path, event: &Value) -> (Duration, String) {
    let begin = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(["hook", "claude"])
        .env("HOME", home)
        .env_remove("DSH_HOME")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the hook");
    let input = serde_json::to_vec(event).expect("json");
    child.stdin.take().expect("stdin").write_all(&input).expect("write the event");
    let out = child.wait_with_output().expect("the hook's answer");
    (begin.elapsed(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The release server over stdio.
struct Server {
    child: Child,
    stdin: ChildStdin,
    rx: mpsc::Receiver<(Instant, Value)>,
    next_id: u64,
}

impl Server {
    fn spawn(home: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
            .args(["--log-level", "error"])
            .env("HOME", home)
            .env_remove("DSH_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the release server");
        let stdout = child.stdout.take().expect("stdout");
        let stdin = child.stdin.take().expect("stdin");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let at = Instant::now();
                if let Ok(v) = serde_json::from_slice(&body)
                    && tx.send((at, v)).is_err()
                {
                    return;
                }
            }
        });
        Self { child, stdin, rx, next_id: 1 }
    }

    fn send(&mut self, msg: &Value) {
        let body = serde_json::to_vec(msg).expect("json");
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend(body);
        self.stdin.write_all(&out).and_then(|()| self.stdin.flush()).expect("write");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Waits for a message matching `pred`, answering server requests; returns when it arrived.
    fn until(&mut self, pred: impl Fn(&Value) -> bool) -> (Instant, Value) {
        loop {
            let (at, msg) = self.rx.recv_timeout(Duration::from_secs(30)).expect("the server answers");
            if msg.get("id").is_some() && msg.get("method").is_some() {
                let id = msg["id"].clone();
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": Value::Null}));
            }
            if pred(&msg) {
                return (at, msg);
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> (Duration, Value) {
        let id = self.next_id;
        self.next_id += 1;
        let start = Instant::now();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let (at, msg) = self.until(|m| m["id"] == id && m.get("method").is_none());
        (at - start, msg)
    }

    fn initialize(&mut self, folders: &[&Path], options: Value) -> Duration {
        let folders: Vec<Value> = folders.iter().map(|f| json!({"uri": path_to_uri(f), "name": "f"})).collect();
        let (took, _) = self.request(
            "initialize",
            json!({"processId": null, "capabilities": {}, "workspaceFolders": folders, "initializationOptions": options}),
        );
        self.notify("initialized", json!({}));
        took
    }

    fn peak_rss_kib(&self) -> Option<u64> {
        let status = fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
    }

    /// The CPU time (user and system) the server has used so far.
    fn cpu_time(&self) -> Option<Duration> {
        let stat = fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        // Fields after the command name (which may hold spaces) are split by spaces.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split(' ').collect();
        let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        // The kernel reports clock ticks of 1/100 s on Linux.
        Some(Duration::from_millis(ticks * 10))
    }

    /// The server's CPU time per request over `count` identical requests sent back to back (no
    /// client round trip in between), from the process's own accounting; `None` without /proc.
    fn cpu_per_request(&mut self, params: Value, count: usize) -> Option<Duration> {
        // Work the server started on its own (the whole walk of a large repository after
        // `initialize`) is not the requests' cost: wait until it spends no CPU for 200 ms.
        for _ in 0..50 {
            let before = self.cpu_time()?;
            std::thread::sleep(Duration::from_millis(200));
            if self.cpu_time()? == before {
                break;
            }
        }
        let before = self.cpu_time()?;
        let first = self.next_id;
        for _ in 0..count {
            let id = self.next_id;
            self.next_id += 1;
            self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "instructions/effective", "params": params}));
        }
        let last = self.next_id - 1;
        let mut answered = 0;
        while answered < count {
            let (_, msg) = self.until(|m| m.get("method").is_none() && m["id"].as_u64().is_some());
            if msg["id"].as_u64().is_some_and(|id| id >= first && id <= last) {
                answered += 1;
            }
        }
        let after = self.cpu_time()?;
        Some(after.saturating_sub(before) / u32::try_from(count).ok()?)
    }

    fn close(mut self) {
        let _ = self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let _ = self.child.wait();
    }
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i.min(samples.len() - 1)]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// One row of the results table.
struct Row {
    measure: String,
    value: String,
    target: String,
    verdict: &'static str,
}

fn row(rows: &mut Vec<Row>, measure: &str, value: String, target: &str, met: Option<bool>) {
    let verdict = match met {
        Some(true) => "met",
        Some(false) => "MISSED",
        None => "",
    };
    rows.push(Row { measure: measure.into(), value, target: target.into(), verdict });
}

/// The engine alone for one chain: cold (a new cache each time), warm (a warm cache: every
/// candidate is stat'ed again, nothing is read), and a minimal syscall walk.
fn engine_vs_walk(tree: &Tree, iterations: usize) -> (Duration, Duration, Duration) {
    let env = Env { home: Some(tree.root.join("no-home")), dsh_home: None, xdg_state_home: None };
    let (settings, _) = Settings::parse(&json!({"globalInstructionFile": null}), None, &env);
    let mut engine = Vec::with_capacity(iterations);
    let mut walk = Vec::with_capacity(iterations);
    let mut warm = Vec::with_capacity(iterations);
    let warm_cache = FileCache::new();
    let warm_session = Session::new(&tree.chain, settings.clone());
    let names = ["AGENTS.md", "CLAUDE.md"];
    for _ in 0..iterations {
        let start = Instant::now();
        let cache = FileCache::new();
        let session = Session::new(&tree.chain, settings.clone());
        let snap = session.snapshot(&cache, None);
        std::hint::black_box(&snap.baseline.rendered.text);
        engine.push(start.elapsed());

        // The floor: find the root, lstat the candidates root..cwd, read each winner.
        let start = Instant::now();
        let root = tree.chain.ancestors().find(|d| fs::symlink_metadata(d.join(".git")).is_ok()).unwrap_or(&tree.chain);
        let mut total = 0;
        let mut dirs: Vec<&Path> = tree.chain.ancestors().take_while(|d| d.starts_with(root)).collect();
        dirs.reverse();
        for d in dirs {
            for n in names {
                let p = d.join(n);
                if fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
                    total += fs::read(&p).map(|b| b.len()).unwrap_or(0);
                    break;
                }
            }
        }
        std::hint::black_box(total);
        walk.push(start.elapsed());

        let start = Instant::now();
        let snap = warm_session.snapshot(&warm_cache, None);
        std::hint::black_box(&snap.baseline.rendered.text);
        warm.push(start.elapsed());
    }
    (percentile(&mut engine, 0.5), percentile(&mut warm, 0.5), percentile(&mut walk, 0.5))
}

/// Opens the root file (`root_uri`), asks `folder`'s answer, lets the server `settle`, then edits
/// the file `edits` times, one byte longer or shorter each time so that the cut moves: how long
/// each edit took to come back as diagnostics of the file.
fn did_change_latencies(
    s: &mut Server,
    root_uri: &str,
    folder: &Path,
    settle: Duration,
    edits: usize,
) -> Vec<Duration> {
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": root_uri, "languageId": "markdown", "version": 1, "text": "x"}}),
    );
    let _ = s.request("instructions/effective", json!({"uri": path_to_uri(folder)}));
    std::thread::sleep(settle);
    (0..edits)
        .map(|i| {
            let text = "r".repeat(61_440 + i % 2);
            let begin = Instant::now();
            s.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": root_uri, "version": i + 2}, "contentChanges": [{"text": text}]}),
            );
            let (at, _) =
                s.until(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == root_uri);
            at - begin
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |f: &str| args.iter().any(|a| a == f);
    let value = |f: &str| args.iter().position(|a| a == f).and_then(|i| args.get(i + 1)).cloned();
    // `cargo bench` passes --bench; the smoke run is what CI runs.
    let smoke = flag("--smoke");
    let home = tempfile::tempdir().expect("home");
    let mut rows = Vec::new();
    let mut results: HashMap<String, f64> = HashMap::new();

    let small = tree("small", 200, 20);
    let large = if smoke { None } else { Some(tree("large", 20_000, 500)) };
    if flag("--trees-only") {
        // For benches/run.sh: the chain the peers are timed on.
        println!("{}", large.as_ref().unwrap_or(&small).chain.display());
        return;
    }
    let main_tree = large.as_ref().unwrap_or(&small);
    let n = |full: usize, quick: usize| if smoke { quick } else { full };
    eprintln!("trees ready under {}", main_tree.root.display());

    // Start to initialize, and cold (first) effective, over fresh processes.
    eprintln!("start and cold");
    let mut starts = Vec::new();
    let mut colds = Vec::new();
    for _ in 0..n(20, 3) {
        let begin = Instant::now();
        let mut s = Server::spawn(home.path());
        let _ = s.initialize(&[&main_tree.chain], json!({"stateDir": null}));
        starts.push(begin.elapsed());
        let (cold, _) = s.request("instructions/effective", json!({}));
        colds.push(cold);
        s.close();
    }
    let start_p50 = percentile(&mut starts, 0.5);
    row(
        &mut rows,
        "process start to initialize response, p50",
        format!("{:.1} ms", us(start_p50) / 1000.0),
        "≤ 20 ms",
        Some(start_p50 <= Duration::from_millis(20)),
    );
    let cold_p50 = percentile(&mut colds, 0.5);
    results.insert("cold_us".into(), us(cold_p50));
    row(&mut rows, "cold (first) effective, depth-10 chain, p50", format!("{:.0} µs", us(cold_p50)), "", None);

    // The agent hook: a process per event, from start to its answer on stdout. A Read of a file
    // at the bottom of the depth-10 chain, working at the root: a new agent session (the baseline
    // and every nested scope on the way), then the same read again (nothing new).
    eprintln!("hook");
    let state = tempfile::tempdir().expect("hook home");
    let touched = main_tree.chain.join("file.rs");
    let (mut first, mut again) = (Vec::new(), Vec::new());
    for i in 0..n(50, 5) {
        let event = json!({"session_id": format!("bench-{i}"), "transcript_path": "", "cwd": main_tree.root,
            "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_input": {"file_path": touched},
            "tool_response": {}, "tool_use_id": "t"});
        let (took, answer) = hook(state.path(), &event);
        assert!(answer.contains("additionalContext"), "the hook answers a new session: {answer}");
        first.push(took);
        let (took, answer) = hook(state.path(), &event);
        assert!(answer.is_empty(), "nothing new: {answer}");
        again.push(took);
    }
    let hook_p50 = percentile(&mut first, 0.5);
    row(
        &mut rows,
        "hook claude: process start to answer, depth-10 chain, new session / nothing new, p50",
        format!("{:.1} ms / {:.1} ms", us(hook_p50) / 1000.0, us(percentile(&mut again, 0.5)) / 1000.0),
        "≤ 5 ms",
        Some(hook_p50 <= Duration::from_millis(5)),
    );

    // Warm effective over JSON-RPC.
    eprintln!("warm");
    let mut s = Server::spawn(home.path());
    s.initialize(&[&main_tree.chain], json!({"stateDir": null}));
    let _ = s.request("instructions/effective", json!({}));
    let mut warm: Vec<Duration> = (0..n(2000, 50)).map(|_| s.request("instructions/effective", json!({})).0).collect();
    let (w50, w99) = (percentile(&mut warm, 0.5), percentile(&mut warm, 0.99));
    results.insert("warm_us".into(), us(w50));
    row(
        &mut rows,
        "warm effective, JSON-RPC included, p50",
        format!("{:.0} µs", us(w50)),
        "≤ 100 µs",
        Some(w50 <= Duration::from_micros(100)),
    );
    row(&mut rows, "warm effective, p99", format!("{:.0} µs", us(w99)), "", None);
    // What the server itself spends, which a client's round trip hides: CPU time over requests
    // sent back to back.
    let pipelined = 3000;
    if let Some(cpu) = s.cpu_per_request(json!({}), pipelined) {
        results.insert("warm_cpu_us".into(), us(cpu));
        row(
            &mut rows,
            &format!("warm effective, server CPU per request ({pipelined} pipelined)"),
            format!("{:.0} µs", us(cpu)),
            "≤ 20 µs",
            Some(cpu <= Duration::from_micros(20)),
        );
    }
    // What the sidebar asks (the agents the repository targets, here detected from its files),
    // then every profile at once: agent views are remembered while every directory they read
    // is watched (the first requests put the watches in place); Copilot's and Cursor's search
    // the workspace, so theirs are computed again for every answer.
    let profiles = instructions_lsp::session::profiles::names().len() - 2;
    for which in ["targets", "all"] {
        for _ in 0..3 {
            let _ = s.request("instructions/effective", json!({"profile": which}));
        }
        let mut all: Vec<Duration> =
            (0..n(300, 50)).map(|_| s.request("instructions/effective", json!({"profile": which})).0).collect();
        let all50 = percentile(&mut all, 0.5);
        results.insert(format!("{which}_us"), us(all50));
        let label = if which == "all" { format!("{profiles} profiles") } else { "the detected agents".to_string() };
        row(
            &mut rows,
            &format!("effective with profile \"{which}\" ({label}), warm, p50 / p99"),
            format!("{:.0} µs / {:.0} µs", us(all50), us(percentile(&mut all, 0.99))),
            "≤ 300 µs p50",
            Some(all50 <= Duration::from_micros(300)),
        );
    }
    if let Some(cpu) = s.cpu_per_request(json!({"profile": "all"}), pipelined) {
        results.insert("all_cpu_us".into(), us(cpu));
        row(
            &mut rows,
            &format!("effective with profile \"all\", server CPU per request ({pipelined} pipelined)"),
            format!("{:.0} µs", us(cpu)),
            "",
            None,
        );
    }
    s.close();

    // The engine alone against the syscall floor.
    eprintln!("engine vs walk");
    let (engine, engine_warm, walk) = engine_vs_walk(main_tree, n(2000, 50));
    results.insert("engine_cold_us".into(), us(engine));
    results.insert("engine_warm_us".into(), us(engine_warm));
    let ratio = engine.as_secs_f64() / walk.as_secs_f64();
    row(
        &mut rows,
        "engine cold chain / syscall walk (in process)",
        format!("{:.0} µs / {:.0} µs = {ratio:.2}×", us(engine), us(walk)),
        "≤ 2×",
        Some(ratio <= 2.0),
    );

    // Touch throughput: didOpen of documents spread over the tree.
    eprintln!("touch throughput");
    let docs = n(10_000, 300);
    let mut s = Server::spawn(home.path());
    s.initialize(&[&main_tree.root], json!({"stateDir": null, "watch": false}));
    let begin = Instant::now();
    for i in 0..docs {
        let dir = &main_tree.dirs[i * 7919 % main_tree.dirs.len()];
        let uri = path_to_uri(&dir.join(format!("f{i}.rs")));
        s.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "rust", "version": 1, "text": "fn main() {}"}}),
        );
    }
    let _ = s.request("instructions/effective", json!({}));
    let took = begin.elapsed();
    row(
        &mut rows,
        &format!("touch throughput: didOpen of {docs} documents"),
        format!("{:.0} docs/s", docs as f64 / took.as_secs_f64()),
        "",
        None,
    );

    s.close();

    // Touch to instructions/didChange: each touch reaches a new instruction directory.
    eprintln!("touch latency");
    let mut s = Server::spawn(home.path());
    s.initialize(&[&main_tree.root], json!({"stateDir": null, "watch": false}));
    s.until(|m| m["method"] == "instructions/didChange");
    let mut lat = Vec::new();
    // Shallow first, never the root: every touch then reaches a scope no earlier touch reached.
    let mut fresh: Vec<&PathBuf> = main_tree.instruction_dirs.iter().filter(|d| **d != main_tree.root).collect();
    fresh.sort_by_key(|d| d.components().count());
    for d in fresh.into_iter().take(n(100, 5)) {
        let uri = path_to_uri(&d.join("bench-touch.rs"));
        let begin = Instant::now();
        s.notify("instructions/touch", json!({"uri": uri, "kind": "read"}));
        let (at, _) = s.until(|m| m["method"] == "instructions/didChange");
        lat.push(at - begin);
    }
    if !lat.is_empty() {
        let p50 = percentile(&mut lat, 0.5);
        row(&mut rows, "touch to instructions/didChange, p50", format!("{:.0} µs", us(p50)), "", None);
    }
    s.close();

    // didChange of a 60 KiB root AGENTS.md with 20 workspace folders, to publishDiagnostics.
    eprintln!("didChange to diagnostics");
    let folders: Vec<&Path> = main_tree
        .dirs
        .iter()
        .filter(|d| d.parent() == Some(main_tree.root.as_path()))
        .take(20)
        .map(PathBuf::as_path)
        .collect();
    let mut s = Server::spawn(home.path());
    // A 32 KiB budget cuts the 60 KiB root in every session, so every edit moves the cut and
    // must be published (unchanged diagnostics are not). The engine's findings are the ones
    // published (`profiles`): the agents the tree targets read the disk, not the buffer, so an
    // edit does not change theirs.
    s.initialize(&folders, json!({"stateDir": null, "watch": false, "baselineMaxBytes": 32768, "profiles": ["dsh"]}));
    let root_file = main_tree.root.join("AGENTS.md");
    let root_uri = path_to_uri(&root_file);
    let mut lat = did_change_latencies(&mut s, &root_uri, folders[0], Duration::ZERO, n(200, 10));
    let p99 = percentile(&mut lat, 0.99);
    row(
        &mut rows,
        "didChange (60 KiB root, 20 folders) to diagnostics, p99",
        format!("{:.2} ms", us(p99) / 1000.0),
        "≤ 5 ms",
        Some(p99 <= Duration::from_millis(5)),
    );
    s.close();

    // The same with three agents selected besides the server's own profile (whose moving cut
    // is what gets published: the agents read the disk, not the buffer): every pass also asks
    // each agent's view of every folder (remembered while watched, so watching is on here).
    let mut s = Server::spawn(home.path());
    s.initialize(
        &folders,
        json!({"stateDir": null, "baselineMaxBytes": 32768, "profiles": ["dsh", "codex", "claude", "opencode"]}),
    );
    // The first passes read the agents' files and put the watches in place (300 ms).
    let mut lat = did_change_latencies(&mut s, &root_uri, folders[0], Duration::from_millis(300), n(200, 30));
    let p99 = percentile(&mut lat, 0.99);
    results.insert("did_change_agents_p99_us".into(), us(p99));
    row(
        &mut rows,
        "didChange (60 KiB root, 20 folders, dsh + codex, claude, opencode) to diagnostics, p99",
        format!("{:.2} ms", us(p99) / 1000.0),
        "≤ 5 ms",
        Some(p99 <= Duration::from_millis(5)),
    );
    s.close();

    // A file changed on disk to instructions/didChange, watching on.
    eprintln!("watcher");
    let mut s = Server::spawn(home.path());
    s.initialize(&[&main_tree.chain], json!({"stateDir": null}));
    s.until(|m| m["method"] == "instructions/didChange");
    let target = main_tree.chain.join("AGENTS.md");
    let original = fs::read(&target).expect("chain file");
    let mut lat = Vec::new();
    for i in 0..n(30, 3) {
        // Let the previous edit settle, and drop what it announced.
        std::thread::sleep(Duration::from_millis(150));
        while s.rx.try_recv().is_ok() {}
        let begin = Instant::now();
        fs::write(&target, format!("{}\nedit {i}\n", String::from_utf8_lossy(&original))).expect("edit");
        let (at, _) = s.until(|m| m["method"] == "instructions/didChange");
        lat.push(at - begin);
    }
    fs::write(&target, &original).expect("restore");
    let p50 = percentile(&mut lat, 0.5);
    let debounce = instructions_lsp::watch::DEBOUNCE;
    row(
        &mut rows,
        "file changed on disk to didChange (watching), p50",
        format!("{:.1} ms", us(p50) / 1000.0),
        &format!("≤ debounce ({} ms) + 20 ms", debounce.as_millis()),
        Some(p50 <= debounce + Duration::from_millis(20)),
    );
    s.close();

    // Peak RSS with 100 workspace folders over the instruction files.
    eprintln!("rss");
    let hundred: Vec<&Path> = main_tree.instruction_dirs.iter().take(100).map(PathBuf::as_path).collect();
    let mut s = Server::spawn(home.path());
    s.initialize(&hundred, json!({"stateDir": null}));
    for f in &hundred {
        let _ = s.request("instructions/effective", json!({"uri": path_to_uri(f)}));
    }
    if let Some(kib) = s.peak_rss_kib() {
        row(
            &mut rows,
            &format!("peak RSS, {} folders, {} instruction dirs", hundred.len(), main_tree.instruction_dirs.len()),
            format!("{:.1} MB", kib as f64 / 1024.0),
            "≤ 30 MB",
            Some(kib <= 30 * 1024),
        );
    }
    s.close();

    // An idle server does no work: CPU and file opens while nothing happens, in the most common
    // layout and in a monorepo whose 400 packages were all touched.
    eprintln!("idle");
    let window = Duration::from_secs(if smoke { 1 } else { 10 });
    for (layout, packages) in
        [("AGENTS.md and a shadowed CLAUDE.md", 0usize), ("400-package monorepo, all touched", 400)]
    {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        fs::create_dir_all(root.join(".git")).expect("git");
        fs::write(root.join("AGENTS.md"), "root rules").expect("write");
        fs::write(root.join("CLAUDE.md"), "shadowed rules").expect("write");
        let mut watched = vec![root.clone()];
        for i in 0..packages {
            let pkg = root.join(format!("packages/p{i:03}"));
            fs::create_dir_all(&pkg).expect("package");
            fs::write(pkg.join("AGENTS.md"), format!("package {i} rules")).expect("write");
            fs::write(pkg.join("CLAUDE.md"), "shadowed").expect("write");
            watched.push(pkg);
        }
        let mut s = Server::spawn(home.path());
        s.initialize(&[root.as_path()], json!({"stateDir": null}));
        for pkg in watched.iter().skip(1) {
            s.notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": path_to_uri(&pkg.join("index.ts")), "languageId": "typescript", "version": 1, "text": ""}}),
            );
        }
        let _ = s.request("instructions/effective", json!({"uri": path_to_uri(&root)}));
        // Let the diagnostics passes and the watcher's catch-up settle.
        std::thread::sleep(Duration::from_millis(1500));
        let (tx, rx) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
            let _ = tx.send(e);
        })
        .expect("watcher");
        for d in &watched {
            let _ = notify::Watcher::watch(&mut watcher, d, notify::RecursiveMode::NonRecursive);
        }
        let before = s.cpu_time();
        std::thread::sleep(window);
        let after = s.cpu_time();
        let opens = rx
            .try_iter()
            .flatten()
            .filter(|e| matches!(e.kind, notify::EventKind::Access(notify::event::AccessKind::Open(_))))
            .count();
        if let (Some(b), Some(a)) = (before, after) {
            let cpu = a.saturating_sub(b);
            row(
                &mut rows,
                &format!("idle {} s, {layout}: CPU, file opens", window.as_secs()),
                format!("{} ms, {opens} opens", cpu.as_millis()),
                "~0",
                Some(opens == 0 && cpu <= Duration::from_millis(20 * window.as_secs())),
            );
        }
        s.close();
    }

    // The cost of a chain does not depend on the tree's size.
    eprintln!("tree sizes");
    let mut sizes = vec![&small];
    let huge = (!smoke && flag("--huge")).then(|| tree("huge", 200_000, 500));
    if let Some(l) = &large {
        sizes.push(l);
    }
    if let Some(h) = &huge {
        sizes.push(h);
    }
    for t in sizes {
        let mut s = Server::spawn(home.path());
        s.initialize(&[&t.chain], json!({"stateDir": null, "watch": false}));
        let (cold, _) = s.request("instructions/effective", json!({}));
        let mut warm: Vec<Duration> =
            (0..n(500, 20)).map(|_| s.request("instructions/effective", json!({})).0).collect();
        row(
            &mut rows,
            &format!("chain cost on a tree of {} dirs: cold / warm p50", t.dirs.len()),
            format!("{:.0} µs / {:.0} µs", us(cold), us(percentile(&mut warm, 0.5))),
            "independent of tree size",
            None,
        );
        s.close();
    }

    // The npm peers, measured by benches/peers.mjs on the same chain.
    if let Some(path) = value("--peers") {
        match fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok()) {
            Some(peers) => {
                let mut fastest: Option<(f64, f64)> = None;
                for (name, p) in peers.as_object().into_iter().flatten() {
                    let (warm, cold) =
                        (p["warm_us"].as_f64().unwrap_or(f64::NAN), p["cold_us"].as_f64().unwrap_or(f64::NAN));
                    row(
                        &mut rows,
                        &format!("peer {name}: cold / warm per chain"),
                        format!("{cold:.0} µs / {warm:.0} µs"),
                        "",
                        None,
                    );
                    fastest = Some(match fastest {
                        Some((w, c)) => (w.min(warm), c.min(cold)),
                        None => (warm, cold),
                    });
                }
                if let Some((pw, pc)) = fastest {
                    let warm_ratio = pw / results["warm_us"];
                    let cold_ratio = pc / results["cold_us"];
                    row(
                        &mut rows,
                        "warm: faster npm peer / ours over JSON-RPC",
                        format!("{warm_ratio:.0}×"),
                        "≥ 100×",
                        Some(warm_ratio >= 100.0),
                    );
                    row(
                        &mut rows,
                        "cold: faster npm peer / ours over JSON-RPC",
                        format!("{cold_ratio:.0}×"),
                        "≥ 20×",
                        Some(cold_ratio >= 20.0),
                    );
                    // Like for like: the peers are in-process calls, and so is the engine here.
                    let in_warm = pw / results["engine_warm_us"];
                    let in_cold = pc / results["engine_cold_us"];
                    let label = "warm: faster npm peer / our engine in process (re-stat, no memo)";
                    row(&mut rows, label, format!("{in_warm:.0}×"), "", None);
                    let label = "cold: faster npm peer / our engine in process";
                    row(&mut rows, label, format!("{in_cold:.0}×"), "≥ 20×", Some(in_cold >= 20.0));
                }
            }
            None => eprintln!("cannot read peers results from {path}"),
        }
    }

    println!("\n| measure | result | target | |\n| --- | --- | --- | --- |");
    for r in &rows {
        println!("| {} | {} | {} | {} |", r.measure, r.value, r.target, r.verdict);
    }
    if let Some(path) = value("--json") {
        let doc: Vec<Value> = rows
            .iter()
            .map(|r| json!({"measure": r.measure, "result": r.value, "target": r.target, "verdict": r.verdict}))
            .collect();
        let _ = fs::write(path, serde_json::to_string_pretty(&doc).unwrap_or_default());
    }
    println!("\nchain: {} (tree {})", main_tree.chain.display(), main_tree.root.display());
}
