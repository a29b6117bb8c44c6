//! Benchmarks (issues 7 and 25): latency, scale and memory of the release server over stdio, the
//! engine in process against a minimal syscall walk, `check` as a whole process against the
//! `rg --files` walk of the same tree and against agnix, and the npm peers side by side (their
//! timings come from `benches/peers.mjs`, run by `benches/run.sh`).
//!
//!   cargo bench --bench bench -- [--smoke] [--huge] [--only diff|warm|rss|check|typing] [--peers FILE] [--agnix FILE] [--json FILE]
//!
//! Trees are generated from a fixed seed under `.cache/bench-trees/` and reused. Peers that are
//! not installed (`rg` on `PATH`, agnix at `--agnix` or `.cache/peers/agnix/bin/agnix`) are
//! skipped, so the smoke run needs none of them.

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
    name: &'static str,
    root: PathBuf,
    /// The forced chain's deepest directory (depth 10).
    chain: PathBuf,
    dirs: Vec<PathBuf>,
    instruction_dirs: Vec<PathBuf>,
    /// The source and instruction files (about: a directory chosen twice counts twice).
    files: usize,
}

/// What a generated tree holds besides its directories.
struct Spec {
    name: &'static str,
    dirs: usize,
    /// Directories holding instruction files, chosen at random (the chain's four come on top).
    instruction_dirs: usize,
    /// The instruction files each of them holds.
    instruction_names: &'static [&'static str],
    /// Source files in each directory.
    files_per_dir: usize,
    /// Copilot's rules at the root: `.github/copilot-instructions.md` and `*.instructions.md`.
    copilot: bool,
    /// Cursor rules at the root with a `globs:` list each (besides an always applied rule and
    /// one the agent asks for by its description).
    glob_rules: usize,
    /// The patterns of each of them, and of Copilot's `areas.instructions.md`.
    globs_per_rule: usize,
}

const AGENT_FILES: &[&str] = &["AGENTS.md", "CLAUDE.md", "GEMINI.md"];

/// The benchmark trees: *small* for the smoke run, *large* (the benchmark tree), *huge* (ten
/// times it), and *cursor61*, the tree a new user tried `check --profile cursor` on (issue 25).
const SMALL: Spec = Spec {
    name: "small",
    dirs: 200,
    instruction_dirs: 20,
    instruction_names: AGENT_FILES,
    files_per_dir: 1,
    copilot: true,
    // Few patterns: the smoke run takes the code paths, not the time.
    glob_rules: 2,
    globs_per_rule: 5,
};
/// Three Cursor rules of 100 patterns each (issue 25: pattern × file).
const LARGE: Spec =
    Spec { name: "large", dirs: 20_000, instruction_dirs: 500, glob_rules: 3, globs_per_rule: 100, ..SMALL };
const HUGE: Spec = Spec { name: "huge", dirs: 200_000, ..LARGE };
const CURSOR61: Spec = Spec {
    name: "cursor61",
    dirs: 2_000,
    // With the chain's four: 61 folders with an AGENTS.md.
    instruction_dirs: 57,
    instruction_names: &["AGENTS.md"],
    files_per_dir: 9,
    copilot: false,
    glob_rules: 2,
    globs_per_rule: 10,
};

/// Bumped whenever what a tree holds changes, so that trees generated before are not reused.
const TREES_VERSION: u32 = 3;

/// The extensions of the source files, which the rules' globs name.
const EXTENSIONS: &[&str] = &["rs", "ts", "tsx", "py", "go", "md", "json"];

fn content(rng: &mut Rng, name: &str) -> String {
    let lines = 20 + rng.below(30);
    (0..lines)
        .map(|i| format!("- {name} rule {i}: {}\n", "keep it short and tested. ".repeat(1 + rng.below(3))))
        .collect()
}

/// A glob that matches `file` (relative to the root, `/`-separated), in one of the shapes rules
/// are written in: by folder name, under a path, by extension below a folder, with braces.
fn glob_for(rng: &mut Rng, file: &str) -> String {
    let (parent, base) = file.rsplit_once('/').unwrap_or(("", file));
    let ext = base.rsplit_once('.').map_or("md", |(_, e)| e);
    let folder = parent.rsplit('/').next().unwrap_or(parent);
    let first = parent.split('/').next().unwrap_or(parent);
    match (rng.below(5), parent.is_empty()) {
        (_, true) => format!("*.{ext}"),
        (0, _) => format!("**/{folder}/*.{ext}"),
        (1, _) => format!("{parent}/**"),
        (2, _) => format!("**/{folder}/**/*.{ext}"),
        (3, _) => format!("{first}/**/*.{ext}"),
        _ => {
            let others: Vec<&&str> = EXTENSIONS.iter().filter(|e| **e != ext).collect();
            let other = others[rng.below(others.len())];
            format!("**/{folder}/*.{{{ext},{other}}}")
        }
    }
}

/// Writes the Copilot and Cursor rules of `spec` at `root`, their globs drawn from `files`.
fn write_rules(spec: &Spec, rng: &mut Rng, root: &Path, files: &[String]) {
    let globs = |rng: &mut Rng, count: usize| -> Vec<String> {
        (0..count)
            .map(|_| {
                let file = &files[rng.below(files.len())];
                glob_for(rng, file)
            })
            .collect()
    };
    if spec.copilot {
        let github = root.join(".github");
        let instructions = github.join("instructions");
        fs::create_dir_all(&instructions).expect("mkdir .github/instructions");
        fs::write(github.join("copilot-instructions.md"), content(rng, "copilot")).expect("write");
        // Braces, comma-separated alternatives, one alternative that matches no file
        // (`legacy/**/*.cbl`), one rule for every file, and one of `globs_per_rule` patterns.
        let many = globs(rng, spec.globs_per_rule).join(",");
        let rules = [
            ("typescript", "**/*.{ts,tsx}".to_string()),
            ("rust", "**/*.rs".to_string()),
            ("python", "**/*.py, **/d1*/**/*.json".to_string()),
            ("go", "**/*.go,legacy/**/*.cbl".to_string()),
            ("docs", "**/*.{md,mdx}".to_string()),
            ("everywhere", "**".to_string()),
            ("areas", many),
        ];
        for (name, apply_to) in rules {
            let text = format!("---\napplyTo: '{apply_to}'\n---\n{}", content(rng, name));
            fs::write(instructions.join(format!("{name}.instructions.md")), text).expect("write");
        }
    }
    let rules = root.join(".cursor/rules");
    fs::create_dir_all(&rules).expect("mkdir .cursor/rules");
    let always = format!("---\ndescription: Project conventions\nalwaysApply: true\n---\n{}", content(rng, "always"));
    fs::write(rules.join("project.mdc"), always).expect("write");
    let asked =
        format!("---\ndescription: How to review a change\nalwaysApply: false\n---\n{}", content(rng, "review"));
    fs::write(rules.join("review.mdc"), asked).expect("write");
    for i in 0..spec.glob_rules {
        let mut list = globs(rng, spec.globs_per_rule);
        // Quoted, so that the front matter is YAML (a bare `*` starts an alias) for any reader.
        if i == 0 {
            // A brace alternative that matches no file.
            list[0] = "**/*.{ts,cbl}".to_string();
        }
        let text = format!(
            "---\ndescription: Area {i}\nglobs: \"{}\"\nalwaysApply: false\n---\n{}",
            list.join(", "),
            content(rng, "area")
        );
        fs::write(rules.join(format!("area-{i}.mdc")), text).expect("write");
    }
}

/// Generates (or reuses) a tree of `spec.dirs` directories, depth up to 14, with
/// `spec.instruction_dirs` directories holding its instruction files, a forced depth-10 chain with
/// them at depths 0, 3, 6 and 10, source files in every directory and Copilot's and Cursor's rules
/// at the root.
fn tree(spec: &Spec) -> Tree {
    let (name, dirs, instruction_dirs) = (spec.name, spec.dirs, spec.instruction_dirs);
    let base = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(".cache/bench-trees")
        .join(format!("{name}-{SEED:x}-v{TREES_VERSION}"));
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
            for f in spec.instruction_names {
                fs::write(d.join(f), content(&mut rng, f)).expect("write");
            }
        }
        // Another sequence for what came later, so that the directories and the instruction
        // files stay those of the trees before.
        let mut more = Rng(SEED ^ dirs as u64 ^ 0xF11E5);
        let mut files = Vec::with_capacity(all.len() * spec.files_per_dir);
        for d in &all {
            for k in 0..spec.files_per_dir {
                let ext = EXTENSIONS[more.below(EXTENSIONS.len())];
                let path = d.join(format!("m{k}.{ext}"));
                fs::write(&path, format!("source {k}\n")).expect("write");
                let rel = path.strip_prefix(&root).expect("below the root").to_string_lossy().into_owned();
                files.push(rel);
            }
        }
        write_rules(spec, &mut more, &root, &files);
        fs::write(&done, "").expect("done");
    }
    let files = dirs * spec.files_per_dir + (chosen.len() + 4) * spec.instruction_names.len();
    Tree { name, root, chain, dirs: all, instruction_dirs: chosen, files }
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
        self.until_within(pred, Duration::from_secs(30)).expect("the server answers")
    }

    /// [`Server::until`] giving up after `limit` without the message.
    fn until_within(&mut self, pred: impl Fn(&Value) -> bool, limit: Duration) -> Option<(Instant, Value)> {
        let deadline = Instant::now() + limit;
        loop {
            let (at, msg) = self.rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok()?;
            if msg.get("id").is_some() && msg.get("method").is_some() {
                let id = msg["id"].clone();
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": Value::Null}));
            }
            if pred(&msg) {
                return Some((at, msg));
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> (Duration, Value) {
        self.request_within(method, params, Duration::from_secs(30)).expect("the server answers")
    }

    /// A request whose answer may take longer than a benchmark can wait (the agents' views of a
    /// large repository before issue 25): `None` after `limit`.
    fn request_within(&mut self, method: &str, params: Value, limit: Duration) -> Option<(Duration, Value)> {
        let id = self.next_id;
        self.next_id += 1;
        let start = Instant::now();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let (at, msg) = self.until_within(|m| m["id"] == id && m.get("method").is_none(), limit)?;
        Some((at - start, msg))
    }

    /// Ends a server that may be busy for long (see [`Server::request_within`]).
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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

    /// Waits until the server spends no CPU over a whole `quiet` window (its background walk and
    /// diagnostics passes done), `limit` at most; whether it did, and when.
    fn settle(&self, quiet: Duration, limit: Duration) -> Option<(bool, Instant)> {
        let begin = Instant::now();
        let mut before = self.cpu_time()?;
        loop {
            std::thread::sleep(quiet);
            let now = self.cpu_time()?;
            if now == before {
                // The window was quiet: it settled when the window began.
                return Some((true, Instant::now() - quiet));
            }
            if begin.elapsed() >= limit {
                return Some((false, Instant::now()));
            }
            before = now;
        }
    }

    /// The server's CPU over `window` of doing nothing, as a share of one core.
    fn idle_cpu_share(&self, window: Duration) -> Option<f64> {
        let before = self.cpu_time()?;
        let begin = Instant::now();
        std::thread::sleep(window);
        let cpu = self.cpu_time()?.saturating_sub(before);
        Some(cpu.as_secs_f64() / begin.elapsed().as_secs_f64())
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

/// The rows as a Markdown table.
fn print_rows(rows: &[Row]) {
    println!("\n| measure | result | target | |\n| --- | --- | --- | --- |");
    for r in rows {
        println!("| {} | {} | {} | {} |", r.measure, r.value, r.target, r.verdict);
    }
}

fn row(rows: &mut Vec<Row>, measure: &str, value: String, target: &str, met: Option<bool>) {
    let verdict = match met {
        Some(true) => "met",
        Some(false) => "MISSED",
        None => "",
    };
    // As it comes too: a long run that stops early still says what it measured.
    eprintln!("  {measure}: {value} {verdict}");
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

/// Typing an import into a 100 KB root `CLAUDE.md` of the tree, unsaved: from each `didChange`
/// to the diagnostics that flag the new import as naming no file (the agents the tree targets
/// read the buffer for the findings at its tokens), after the first pass has settled.
fn typing_rows(rows: &mut Vec<Row>, tree: &Tree, home: &Path, smoke: bool) {
    eprintln!("typing");
    let mut s = Server::spawn(home);
    s.initialize(&[&tree.root], json!({"stateDir": null}));
    let file = tree.root.join("CLAUDE.md");
    let uri = path_to_uri(&file);
    let base = "- keep the change small and say why\n".repeat(100_000 / 36);
    s.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": base}}),
    );
    let _ = s.settle(Duration::from_millis(300), Duration::from_secs(60));
    let edits = if smoke { 10 } else { 100 };
    let mut lat: Vec<Duration> = (0..edits)
        .map(|i| {
            let text = format!("{base}Also read @nope{i}.md\n");
            let mention = format!("@nope{i}.md");
            let begin = Instant::now();
            s.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri, "version": i + 2}, "contentChanges": [{"text": text}]}),
            );
            let (at, _) = s.until(|m| {
                m["method"] == "textDocument/publishDiagnostics"
                    && m["params"]["uri"] == uri
                    && m["params"]["diagnostics"]
                        .as_array()
                        .is_some_and(|d| d.iter().any(|d| d["message"].as_str().is_some_and(|t| t.contains(&mention))))
            });
            at - begin
        })
        .collect();
    let p95 = percentile(&mut lat, 0.95);
    row(
        rows,
        "didChange typing an import into a 100 KB root CLAUDE.md (unsaved) to its missingImport, p95",
        format!("{:.1} ms", us(p95) / 1000.0),
        "≤ 50 ms",
        Some(p95 <= Duration::from_millis(50)),
    );
    s.close();
}

/// Samples `f` until `max` samples, or `min` once `budget` has passed (one sample of a slow
/// measurement can take many seconds).
fn sample(min: usize, max: usize, budget: Duration, mut f: impl FnMut() -> Duration) -> Vec<Duration> {
    let begin = Instant::now();
    let mut out = Vec::new();
    while out.len() < max && (out.len() < min || begin.elapsed() < budget) {
        out.push(f());
    }
    out
}

/// How a process run ended.
enum Run {
    Took(Duration),
    /// Still running after the limit: stopped.
    Stopped,
    /// It could not start, or was killed.
    Failed,
}

/// A command run as a whole process in `dir`, its output read and dropped: how long from its
/// start to its exit, stopped after `limit`.
fn process_time(program: &Path, args: &[&str], dir: &Path, limit: Duration) -> Run {
    let begin = Instant::now();
    let Ok(mut child) = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        return Run::Failed;
    };
    let Some(mut out) = child.stdout.take() else { return Run::Failed };
    let (tx, rx) = mpsc::channel();
    let drain = std::thread::spawn(move || {
        let _ = std::io::copy(&mut out, &mut std::io::sink());
        let _ = tx.send(Instant::now());
    });
    // The output closes when the process exits (neither `check` nor the peers leave children).
    let ended = rx.recv_timeout(limit);
    if ended.is_err() {
        let _ = child.kill();
        let _ = child.wait();
        let _ = drain.join();
        return Run::Stopped;
    }
    let status = child.wait();
    let took = begin.elapsed();
    let _ = drain.join();
    // `check` exits 1 with findings, linters alike; 2 and above are usage or I/O errors.
    match status.ok().and_then(|s| s.code()) {
        Some(0 | 1) => Run::Took(took),
        Some(code) => {
            eprintln!("{} {} exited with {code} in {}", program.display(), args.join(" "), dir.display());
            Run::Took(took)
        }
        None => Run::Failed,
    }
}

/// What [`processes_side_by_side`] found: both medians, or which side did not finish.
enum SideBySide {
    Medians(Duration, Duration, usize),
    /// Ours, then the peer, stopped after the limit (the other's time when it has one).
    Stopped(Option<Duration>, Option<Duration>),
    Failed,
}

/// Times `ours` and `peer` as whole processes, alternately so that a change of load hits both,
/// after one run of each that warms the disk cache (the smoke run's only runs): their medians.
/// A run longer than `limit`
/// is stopped, and then neither is sampled further.
fn processes_side_by_side(ours: (&Path, &[&str]), peer: (&Path, &[&str]), dir: &Path, smoke: bool) -> SideBySide {
    let limit = Duration::from_secs(if smoke { 60 } else { 120 });
    let first = (process_time(ours.0, ours.1, dir, limit), process_time(peer.0, peer.1, dir, limit));
    match first {
        (Run::Failed, _) | (_, Run::Failed) => return SideBySide::Failed,
        (Run::Stopped, Run::Took(p)) => return SideBySide::Stopped(None, Some(p)),
        (Run::Took(o), Run::Stopped) => return SideBySide::Stopped(Some(o), None),
        (Run::Stopped, Run::Stopped) => return SideBySide::Stopped(None, None),
        // The smoke run takes the paths, not the time: the first runs are its numbers.
        (Run::Took(o), Run::Took(p)) if smoke => return SideBySide::Medians(o, p, 1),
        (Run::Took(_), Run::Took(_)) => {}
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    let _ = sample(3, 10, Duration::from_secs(30), || {
        let begin = Instant::now();
        if let (Run::Took(x), Run::Took(y)) =
            (process_time(ours.0, ours.1, dir, limit), process_time(peer.0, peer.1, dir, limit))
        {
            a.push(x);
            b.push(y);
        }
        begin.elapsed()
    });
    if a.is_empty() {
        return SideBySide::Failed;
    }
    let runs = a.len();
    SideBySide::Medians(percentile(&mut a, 0.5), percentile(&mut b, 0.5), runs)
}

fn secs(d: Duration) -> String {
    if d >= Duration::from_secs(1) { format!("{:.2} s", d.as_secs_f64()) } else { format!("{:.0} ms", us(d) / 1000.0) }
}

/// A time that may be missing because its run was stopped.
fn secs_or_stopped(d: Option<Duration>) -> String {
    d.map_or_else(|| "stopped (too long)".to_string(), secs)
}

/// A peer program: on `PATH`, or at a path.
fn find_program(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(name)).find(|c| c.is_file())
}

/// `check` of a whole tree against the `rg --files` walk of the same tree (hidden files listed,
/// as `check` walks them), for the default agents and each of `profiles`; and against agnix when
/// it is installed. Peers that are not installed are skipped.
fn check_rows(rows: &mut Vec<Row>, t: &Tree, label: &str, profiles: &[&str], agnix: Option<&Path>, smoke: bool) {
    let ours = Path::new(env!("CARGO_BIN_EXE_instructions-lsp"));
    let rg = find_program("rg");
    if rg.is_none() {
        eprintln!("rg is not installed: the check rows against the walk are skipped");
    }
    let walk: &[&str] = &["--files", "--hidden", "."];
    for profile in std::iter::once(None).chain(profiles.iter().map(Some)) {
        let mut args = vec!["check"];
        if let Some(p) = profile {
            args.extend(["--profile", p]);
        }
        let what =
            profile.map_or("default `check` (the targeted agents)".to_string(), |p| format!("`check --profile {p}`"));
        let Some(rg) = &rg else { continue };
        eprintln!("  {what} on {label}");
        let measure = format!("{what}, {label}: process / `rg --files` walk");
        match processes_side_by_side((ours, &args), (rg, walk), &t.root, smoke) {
            SideBySide::Medians(check, walked, runs) => {
                let ratio = check.as_secs_f64() / walked.as_secs_f64();
                row(
                    rows,
                    &format!("{measure}, median of {runs}"),
                    format!("{} / {} = {ratio:.2}×", secs(check), secs(walked)),
                    "≤ 1.5×",
                    Some(ratio <= 1.5),
                );
            }
            SideBySide::Stopped(check, walked) => {
                row(
                    rows,
                    &measure,
                    format!("{} / {}", secs_or_stopped(check), secs_or_stopped(walked)),
                    "≤ 1.5×",
                    Some(false),
                );
            }
            SideBySide::Failed => eprintln!("cannot run {what} or rg on {label}"),
        }
    }
    let Some(agnix) = agnix else { return };
    let args: &[&str] = &["--max-files", "0", "."];
    eprintln!("  agnix on {label}");
    // The version installed (benches/run.sh pins the one the issue compares with).
    let version = Command::new(agnix)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().trim_start_matches("agnix ").to_string())
        .unwrap_or_default();
    let measure = format!("default `check` against agnix {version}, {label}: agnix / check");
    match processes_side_by_side((ours, &["check"]), (agnix, args), &t.root, smoke) {
        SideBySide::Medians(check, theirs, runs) => {
            let ratio = theirs.as_secs_f64() / check.as_secs_f64();
            row(
                rows,
                &format!("{measure}, median of {runs}"),
                format!("{} / {} = {ratio:.2}× faster", secs(theirs), secs(check)),
                "≥ 3×",
                Some(ratio >= 3.0),
            );
        }
        SideBySide::Stopped(check, theirs) => {
            // Ours stopped: missed; only agnix stopped: more than we can tell.
            let met = if check.is_none() { Some(false) } else { None };
            row(rows, &measure, format!("{} / {}", secs_or_stopped(theirs), secs_or_stopped(check)), "≥ 3×", met);
        }
        SideBySide::Failed => eprintln!("cannot run agnix on {label}"),
    }
}

/// `diff HEAD~1 HEAD` on a generated monorepo history (a root `AGENTS.md` that grows, a
/// Copilot rule over every TypeScript file, packages with their own `AGENTS.md` and sources)
/// against one `check` of the same tree: a diff checks two sides, so its goal is two checks.
fn diff_rows(rows: &mut Vec<Row>, smoke: bool) {
    let packages = if smoke { 20 } else { 500 };
    let Ok(dir) = tempfile::tempdir() else { return };
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        path.parent().map(fs::create_dir_all);
        fs::write(path, text)
    };
    let mut files = 0;
    let mut made = write("AGENTS.md", &"- keep the change small and say why\n".repeat(60)).is_ok()
        && write("CLAUDE.md", "@AGENTS.md\n").is_ok()
        && write(".github/instructions/ts.instructions.md", "---\napplyTo: '**/*.ts'\n---\nStrict types.\n").is_ok();
    for p in 0..packages {
        made &= write(&format!("packages/p{p}/AGENTS.md"), &format!("# package {p}\n")).is_ok();
        for i in 0..20 {
            made &= write(&format!("packages/p{p}/src/f{i}.ts"), "export const a = 1;\n").is_ok()
                && write(&format!("packages/p{p}/src/lib/g{i}.js"), "1\n").is_ok();
            files += 2;
        }
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args(["-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    made = made && git(&["init", "-q"]) && git(&["add", "-A"]) && git(&["commit", "-q", "-m", "base"]);
    made = made
        && write("AGENTS.md", &"- keep the change small and say why\n".repeat(1000)).is_ok()
        && git(&["commit", "-q", "-a", "-m", "the root AGENTS.md grows past 32 KiB"]);
    if !made {
        eprintln!("cannot make the history for the diff rows (is git installed?): skipped");
        return;
    }
    let ours = Path::new(env!("CARGO_BIN_EXE_instructions-lsp"));
    let label = format!("a history of {packages} packages, {files} sources");
    let measure = format!("`diff HEAD~1 HEAD` / default `check`, {label}");
    match processes_side_by_side((ours, &["diff", "HEAD~1", "HEAD"]), (ours, &["check"]), root, smoke) {
        SideBySide::Medians(diff, check, runs) => {
            let ratio = diff.as_secs_f64() / check.as_secs_f64();
            row(
                rows,
                &format!("{measure}, median of {runs}"),
                format!("{} / {} = {ratio:.2}×", secs(diff), secs(check)),
                "≤ 2× (a check of each side)",
                Some(ratio <= 2.0),
            );
        }
        SideBySide::Stopped(diff, check) => {
            row(rows, &measure, format!("{} / {}", secs_or_stopped(diff), secs_or_stopped(check)), "≤ 2×", Some(false));
        }
        SideBySide::Failed => eprintln!("cannot run diff or check on {label}"),
    }
}

/// A server with one workspace folder at a tree's root, as an editor opens a repository: its
/// first answer after `initialize`, its background walk (the first `profile: "targets"` answer
/// waits for it), the time until it settles, warm answers, idle CPU and memory. Returns the warm
/// `effective` and `targets` p50. An answer that does not come within the limit ends the rows.
fn repository_rows(
    rows: &mut Vec<Row>,
    home: &Path,
    t: &Tree,
    label: &str,
    idle: Option<Duration>,
    smoke: bool,
) -> Option<(Duration, Duration)> {
    let limit = Duration::from_secs(if smoke { 30 } else { 120 });
    let mut s = Server::spawn(home);
    let init = s.initialize(&[&t.root], json!({"stateDir": null}));
    let initialized = Instant::now();
    let (first, _) = s.request("instructions/effective", json!({}));
    row(
        rows,
        &format!("{label}, folder at the root: initialize / first effective answer after it"),
        format!("{} / {}", secs(init), secs(first)),
        "≤ 50 ms",
        Some(first <= Duration::from_millis(50)),
    );
    let stopped = |rows: &mut Vec<Row>, s: Server, what: &str| {
        row(rows, &format!("{label}: {what}"), format!("no answer within {}", secs(limit)), "", Some(false));
        s.kill();
        None
    };
    let Some((_, targets)) = s.request_within("instructions/effective", json!({"profile": "targets"}), limit) else {
        return stopped(rows, s, "the first \"targets\" answer");
    };
    let walked = initialized.elapsed();
    let selected: Vec<&str> =
        targets["result"]["selected"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    row(
        rows,
        &format!("{label}: background walk, initialized to the first \"targets\" answer ({})", selected.join(", ")),
        secs(walked),
        "",
        None,
    );
    if let Some((settled, at)) = s.settle(Duration::from_millis(500), limit) {
        let value = if settled { secs(at - initialized) } else { format!("not settled after {}", secs(limit)) };
        row(rows, &format!("{label}: initialized to settled (no CPU for 500 ms)"), value, "", None);
    }
    let budget = Duration::from_secs(if smoke { 1 } else { 10 });
    let mut p50 = Vec::new();
    for (which, params) in [
        ("effective", json!({})),
        ("\"targets\"", json!({"profile": "targets"})),
        ("\"all\"", json!({"profile": "all"})),
    ] {
        let Some(_) = s.request_within("instructions/effective", params.clone(), limit) else {
            return stopped(rows, s, &format!("warm {which}"));
        };
        let mut timed_out = false;
        let mut warm = sample(3, n_of(smoke, 300, 20), budget, || {
            match s.request_within("instructions/effective", params.clone(), limit) {
                Some((took, _)) => took,
                None => {
                    timed_out = true;
                    limit
                }
            }
        });
        if timed_out {
            return stopped(rows, s, &format!("warm {which}"));
        }
        p50.push(percentile(&mut warm, 0.5));
    }
    row(
        rows,
        &format!("{label}, folder at the root: warm effective / \"targets\" / \"all\", p50"),
        format!("{:.0} µs / {:.0} µs / {:.0} µs", us(p50[0]), us(p50[1]), us(p50[2])),
        "≤ 300 µs \"targets\" and \"all\"",
        Some(p50[1] <= Duration::from_micros(300) && p50[2] <= Duration::from_micros(300)),
    );
    if let Some(window) = idle {
        // What the answers started is done before the window opens; a server still busy after
        // the limit is not idle, and the row says so.
        let settled = s.settle(Duration::from_millis(500), limit).is_some_and(|(settled, _)| settled);
        if let Some(share) = s.idle_cpu_share(window) {
            let busy = if settled { String::new() } else { format!(", not settled within {}", secs(limit)) };
            row(
                rows,
                &format!("{label}: idle server CPU over {} s after it settled", window.as_secs()),
                format!("{:.2}% of a core{busy}", share * 100.0),
                "≤ 0.2%",
                Some(settled && share <= 0.002),
            );
        }
    }
    if let Some(kib) = s.peak_rss_kib() {
        let goal = if t.dirs.len() >= HUGE.dirs { Some(60) } else { None };
        row(
            rows,
            &format!("{label}, folder at the root: peak RSS after the answers"),
            format!("{:.1} MB", kib as f64 / 1024.0),
            &goal.map_or(String::new(), |mb| format!("≤ {mb} MB")),
            goal.map(|mb| kib <= mb * 1024),
        );
    }
    s.close();
    Some((p50[0], p50[1]))
}

/// A tree's name and size, as the rows say it.
fn tree_label(t: &Tree) -> String {
    format!("{} tree ({} dirs, ~{} files)", t.name, t.dirs.len(), t.files)
}

fn n_of(smoke: bool, full: usize, quick: usize) -> usize {
    if smoke { quick } else { full }
}

/// Peak RSS of a fresh server with the tree's root and `folders` instruction directories as
/// workspace folders, each asked once, after it settles.
fn rss_rows(rows: &mut Vec<Row>, home: &Path, t: &Tree, folders: usize, smoke: bool) {
    let mut all: Vec<&Path> = vec![&t.root];
    all.extend(t.instruction_dirs.iter().filter(|d| **d != t.root).take(folders).map(PathBuf::as_path));
    let mut s = Server::spawn(home);
    s.initialize(&all, json!({"stateDir": null}));
    for f in &all {
        let _ = s.request("instructions/effective", json!({"uri": path_to_uri(f)}));
    }
    // The background walk and the diagnostics passes (the agents' views of every folder).
    let limit = Duration::from_secs(if smoke { 30 } else { 120 });
    let settled = s.settle(Duration::from_millis(500), limit).is_some_and(|(settled, _)| settled);
    let busy = if settled { String::new() } else { format!(", not settled within {}", secs(limit)) };
    let rss = s.peak_rss_kib();
    // It may still be busy: not a shutdown that waits for it.
    s.kill();
    if let Some(kib) = rss {
        row(
            rows,
            &format!(
                "peak RSS, fresh server, {} folders (the root and {} instruction dirs), settled",
                all.len(),
                all.len() - 1
            ),
            format!("{:.1} MB{busy}", kib as f64 / 1024.0),
            "≤ 30 MB",
            Some(kib <= 30 * 1024),
        );
    }
}

/// Warm answers over JSON-RPC at the depth-10 chain: the engine's, "targets" and "all", their
/// round trips and the server's CPU per request.
fn warm_rows(rows: &mut Vec<Row>, results: &mut HashMap<String, f64>, main_tree: &Tree, home: &Path, smoke: bool) {
    let n = |full: usize, quick: usize| if smoke { quick } else { full };
    // Warm effective over JSON-RPC.
    eprintln!("warm");
    let mut s = Server::spawn(home);
    s.initialize(&[&main_tree.chain], json!({"stateDir": null}));
    let _ = s.request("instructions/effective", json!({}));
    let mut warm: Vec<Duration> = (0..n(2000, 50)).map(|_| s.request("instructions/effective", json!({})).0).collect();
    let (w50, w99) = (percentile(&mut warm, 0.5), percentile(&mut warm, 0.99));
    results.insert("warm_us".into(), us(w50));
    row(
        rows,
        "warm effective, JSON-RPC included, p50",
        format!("{:.0} µs", us(w50)),
        "≤ 100 µs",
        Some(w50 <= Duration::from_micros(100)),
    );
    row(rows, "warm effective, p99", format!("{:.0} µs", us(w99)), "", None);
    // What the server itself spends, which a client's round trip hides: CPU time over requests
    // sent back to back.
    let pipelined = 3000;
    if let Some(cpu) = s.cpu_per_request(json!({}), pipelined) {
        results.insert("warm_cpu_us".into(), us(cpu));
        row(
            rows,
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
    // Before issue 25 one such answer could take minutes on this tree: sampled within a time
    // budget, and given up (the row says so) when one does not come.
    let limit = Duration::from_secs(if smoke { 30 } else { 120 });
    let budget = Duration::from_secs(if smoke { 1 } else { 20 });
    let mut answering = true;
    let mut all50 = None;
    for which in ["targets", "all"] {
        let label = if which == "all" { format!("{profiles} profiles") } else { "the detected agents".to_string() };
        let measure = format!("effective with profile \"{which}\" ({label}), warm, p50 / p99");
        let params = json!({"profile": which});
        answering =
            answering && (0..3).all(|_| s.request_within("instructions/effective", params.clone(), limit).is_some());
        let mut all = Vec::new();
        if answering {
            all = sample(5, n(300, 50), budget, || {
                match s.request_within("instructions/effective", params.clone(), limit) {
                    Some((took, _)) => took,
                    None => {
                        answering = false;
                        limit
                    }
                }
            });
        }
        if !answering {
            row(rows, &measure, format!("no answer within {}", secs(limit)), "≤ 300 µs p50", Some(false));
            continue;
        }
        let p50 = percentile(&mut all, 0.5);
        results.insert(format!("{which}_us"), us(p50));
        all50 = Some(p50);
        row(
            rows,
            &measure,
            format!("{:.0} µs / {:.0} µs", us(p50), us(percentile(&mut all, 0.99))),
            "≤ 300 µs p50",
            Some(p50 <= Duration::from_micros(300)),
        );
    }
    // As many as take about two seconds (3000 at most).
    let count =
        all50.map_or(0, |d| (Duration::from_secs(2).as_secs_f64() / d.as_secs_f64()).clamp(10.0, 3000.0) as usize);
    if answering && let Some(cpu) = s.cpu_per_request(json!({"profile": "all"}), count) {
        results.insert("all_cpu_us".into(), us(cpu));
        row(
            rows,
            &format!("effective with profile \"all\", server CPU per request ({count} pipelined)"),
            format!("{:.0} µs", us(cpu)),
            "",
            None,
        );
    }
    if answering {
        s.close();
    } else {
        s.kill();
    }
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

    let small = tree(&SMALL);
    let large = if smoke { None } else { Some(tree(&LARGE)) };
    if flag("--trees-only") {
        if !smoke {
            tree(&CURSOR61);
        }
        // For benches/run.sh: the chain the peers are timed on.
        println!("{}", large.as_ref().unwrap_or(&small).chain.display());
        return;
    }
    // `--only diff`: the diff rows alone, to measure a change to `diff` without the rest.
    if value("--only").as_deref() == Some("diff") {
        diff_rows(&mut rows, smoke);
        print_rows(&rows);
        return;
    }
    let main_tree = large.as_ref().unwrap_or(&small);
    let n = |full: usize, quick: usize| if smoke { quick } else { full };
    eprintln!("trees ready under {}", main_tree.root.display());
    // `--only check`: the default `check` against the walk alone.
    if value("--only").as_deref() == Some("check") {
        check_rows(&mut rows, main_tree, &tree_label(main_tree), &[], None, smoke);
        print_rows(&rows);
        return;
    }
    // `--only typing`: what the agents say as an author types, alone.
    if value("--only").as_deref() == Some("typing") {
        typing_rows(&mut rows, main_tree, home.path(), smoke);
        print_rows(&rows);
        return;
    }
    // `--only rss`: the memory row alone.
    if value("--only").as_deref() == Some("rss") {
        rss_rows(&mut rows, home.path(), main_tree, n(100, 20), smoke);
        print_rows(&rows);
        return;
    }

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

    warm_rows(&mut rows, &mut results, main_tree, home.path(), smoke);
    if value("--only").as_deref() == Some("warm") {
        print_rows(&rows);
        return;
    }

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
    // The agents' views of the root can keep the server from announcing for minutes before
    // issue 25: the row then says so instead of ending the run.
    let limit = Duration::from_secs(if smoke { 30 } else { 120 });
    let announced = |s: &mut Server| s.until_within(|m| m["method"] == "instructions/didChange", limit);
    let mut lat = Vec::new();
    let mut answering = announced(&mut s).is_some();
    // Shallow first, never the root: every touch then reaches a scope no earlier touch reached.
    let mut fresh: Vec<&PathBuf> = main_tree.instruction_dirs.iter().filter(|d| **d != main_tree.root).collect();
    fresh.sort_by_key(|d| d.components().count());
    for d in fresh.into_iter().take(n(100, 5)) {
        if !answering {
            break;
        }
        let uri = path_to_uri(&d.join("bench-touch.rs"));
        let begin = Instant::now();
        s.notify("instructions/touch", json!({"uri": uri, "kind": "read"}));
        match announced(&mut s) {
            Some((at, _)) => lat.push(at - begin),
            None => answering = false,
        }
    }
    if !answering {
        row(
            &mut rows,
            "touch to instructions/didChange, p50",
            format!("no didChange within {}", secs(limit)),
            "",
            Some(false),
        );
        s.kill();
    } else {
        if !lat.is_empty() {
            let p50 = percentile(&mut lat, 0.5);
            row(&mut rows, "touch to instructions/didChange, p50", format!("{:.0} µs", us(p50)), "", None);
        }
        s.close();
    }

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

    typing_rows(&mut rows, main_tree, home.path(), smoke);

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
    let huge = (!smoke && flag("--huge")).then(|| tree(&HUGE));
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

    // Issue 25: a repository opened at its root (the Copilot and Cursor rules are there), memory
    // with 101 folders, and `check` as whole processes against the `rg --files` walk and agnix.
    eprintln!("repository at the root");
    let main_warm = repository_rows(&mut rows, home.path(), main_tree, &tree_label(main_tree), Some(window), smoke);
    eprintln!("rss, 101 folders");
    rss_rows(&mut rows, home.path(), main_tree, n(100, 20), smoke);
    let cursor61 = (!smoke).then(|| tree(&CURSOR61));
    if let Some(c) = &cursor61 {
        eprintln!("cursor61 at the root");
        repository_rows(&mut rows, home.path(), c, &tree_label(c), None, smoke);
    }
    let agnix = value("--agnix")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/peers/agnix/bin/agnix"));
    // Absolute: `check_rows` runs it in each tree's root.
    let agnix = agnix.is_file().then(|| fs::canonicalize(&agnix).unwrap_or(agnix));
    if agnix.is_none() {
        eprintln!("agnix is not installed (benches/run.sh installs it): its row is skipped");
    }
    eprintln!("check");
    check_rows(&mut rows, main_tree, &tree_label(main_tree), &["cursor", "copilot"], agnix.as_deref(), smoke);
    if let Some(c) = &cursor61 {
        check_rows(&mut rows, c, &tree_label(c), &["cursor", "copilot"], None, smoke);
    }
    eprintln!("diff");
    diff_rows(&mut rows, smoke);
    if let Some(h) = &huge {
        eprintln!("huge at the root");
        let huge_warm = repository_rows(&mut rows, home.path(), h, &tree_label(h), Some(window), smoke);
        if let (Some((warm, targets)), Some((main_warm, main_targets))) = (huge_warm, main_warm) {
            row(
                &mut rows,
                &format!("warm effective / \"targets\" p50, {} against {}", tree_label(h), tree_label(main_tree)),
                format!(
                    "{:.0} / {:.0} µs against {:.0} / {:.0} µs",
                    us(warm),
                    us(targets),
                    us(main_warm),
                    us(main_targets)
                ),
                "independent of tree size",
                None,
            );
        }
        check_rows(&mut rows, h, &tree_label(h), &[], None, smoke);
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

    print_rows(&rows);
    if let Some(path) = value("--json") {
        let doc: Vec<Value> = rows
            .iter()
            .map(|r| json!({"measure": r.measure, "result": r.value, "target": r.target, "verdict": r.verdict}))
            .collect();
        let _ = fs::write(path, serde_json::to_string_pretty(&doc).unwrap_or_default());
    }
    println!("\nchain: {} (tree {})", main_tree.chain.display(), main_tree.root.display());
}
