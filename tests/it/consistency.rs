//! One truth across every edge: on generated trees, the CLI and the language server are asked
//! the same questions and must give the same answers: each agent's text and files after a read,
//! the agents chosen per directory, the findings of every file (`check` against the published
//! diagnostics), and each hover's per-agent statement against the findings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};

use crate::common::lsp::{Client, uri};
use crate::common::tree::Tree;
use serde_json::{Value, json};

use instructions_lsp::chain::lint::Code;
use instructions_lsp::chain::settings::{Env, Profile, Settings};
use instructions_lsp::session::check::{self, Selection};
use std::fs;

fn cli(t: &Tree, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", t.home())
        .env_remove("DSH_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .expect("run instructions-lsp")
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

/// The trees: every combination the issue names, chosen by `seed`.
fn generate(seed: usize) -> Tree {
    let t = Tree::new();
    let rule = "- keep the change small and say why\n";
    // A root file past Codex's 32 KiB every third tree.
    let root_text = if seed.is_multiple_of(3) { rule.repeat(34_000 / rule.len()) } else { "root rules\n".into() };
    t.write("r/AGENTS.md", &root_text);
    match seed % 4 {
        0 => drop(t.write("r/CLAUDE.md", "@AGENTS.md\n")),
        1 => drop(t.symlink("AGENTS.md", "r/CLAUDE.md")),
        2 => drop(t.write("r/CLAUDE.md", "claude notes\n")),
        _ => {}
    }
    for p in 0..(1 + seed % 3) {
        match (seed + p) % 3 {
            0 => drop(t.write(&format!("r/packages/p{p}/AGENTS.md"), format!("package {p} rules\n"))),
            1 => {
                drop(t.write(&format!("r/packages/p{p}/CLAUDE.md"), format!("package {p} claude\n@../../AGENTS.md\n")))
            }
            _ => {
                t.write(&format!("r/packages/p{p}/AGENTS.md"), format!("package {p} rules\n"));
                t.write(&format!("r/packages/p{p}/GEMINI.md"), format!("package {p} gemini\n"));
            }
        }
        t.write(&format!("r/packages/p{p}/src/lib.ts"), "export {}\n");
    }
    if seed.is_multiple_of(2) {
        t.write("r/.claude/rules/ts.md", "---\npaths: \"**/*.ts\"\n---\nTypeScript rules\n");
    }
    if seed % 4 == 1 {
        t.write("r/.github/copilot-instructions.md", "copilot rules\n");
        t.write("r/.github/instructions/ts.instructions.md", "---\napplyTo: \"**/*.ts\"\n---\nTS for Copilot\n");
    }
    if seed % 4 == 2 {
        t.write("r/.cursor/rules/ts.mdc", "---\nglobs: \"**/*.ts,docs/**/*.md\"\n---\nTS for Cursor\n");
    }
    if seed.is_multiple_of(5) {
        t.write(
            "r/instructions-lsp.toml",
            "agents = [\"codex\", \"claude\", \"gemini\"]\n\n[codex]\nmax-bytes = 40000\n",
        );
    }
    t.write("r/src/app.ts", "export const app = 1\n");
    t
}

/// `instructions-lsp mcp` in `root` with `args`, keeping nothing on disk, over pipes.
fn mcp_server(t: &Tree, root: &Path, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(["mcp", "--set", "stateDir=null"])
        .args(args)
        .current_dir(root)
        .env("HOME", t.home())
        .env_remove("DSH_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("CODEX_HOME")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("instructions-lsp mcp")
}

/// The MCP server in `root` (no roots from the client: the working directory is the root), asked
/// over raw JSON-RPC lines: a touch of `touched`, then `instructions_for` the root for each agent.
/// Returns each agent's structured answer.
fn mcp_answers(t: &Tree, root: &Path, touched: &str, agents: &[String]) -> Vec<Value> {
    use std::io::{BufRead, Write};
    let mut child = mcp_server(t, root, &[]);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut call = |id: usize, message: Value| -> Value {
        writeln!(stdin, "{message}").expect("write");
        if id == 0 {
            return Value::Null;
        }
        for line in lines.by_ref() {
            let v: Value = serde_json::from_str(&line.expect("line")).expect("JSON-RPC");
            if v["id"] == id {
                return v;
            }
        }
        panic!("no answer to {id}");
    };
    call(
        1,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "consistency", "version": "1"}}}),
    );
    call(0, json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tool = |id: usize, name: &str, arguments: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
    let touch = call(2, tool(2, "instructions_touch", json!({"path": touched, "kind": "read"})));
    assert!(touch["result"]["isError"] != true, "{touch}");
    let answers = agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let answer = call(3 + i, tool(3 + i, "instructions_for", json!({"path": ".", "profile": a})));
            assert!(answer["result"]["isError"] != true, "{answer}");
            answer["result"].clone()
        })
        .collect();
    drop(stdin);
    let _ = child.wait();
    answers
}

/// (path from the project root, status) of an agent view's files as `effective --json` prints them.
fn cli_files(t: &Tree, view: &Value) -> BTreeSet<(String, String)> {
    let base = std::fs::canonicalize(t.root()).expect("root");
    view["files"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let path = Path::new(f["path"].as_str().unwrap_or(""));
            let shown =
                path.strip_prefix(&base).map_or_else(|_| path.display().to_string(), |p| p.display().to_string());
            (shown, f["status"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

/// (path, status) of the server's answer for a profile.
fn server_files(answer: &Value) -> BTreeSet<(String, String)> {
    answer["files"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| (f["path"].as_str().unwrap_or("").to_string(), f["status"].as_str().unwrap_or("").to_string()))
        .collect()
}

/// (code, message) per file URI, as `check --format json` prints them for the tree.
fn check_findings(t: &Tree, check: &Value) -> BTreeMap<String, BTreeSet<(String, String)>> {
    let mut out: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for f in check["findings"].as_array().into_iter().flatten() {
        let path = t.root().join(f["path"].as_str().unwrap_or(""));
        out.entry(uri(&path))
            .or_default()
            .insert((f["code"].as_str().unwrap_or("").to_string(), f["message"].as_str().unwrap_or("").to_string()));
    }
    out
}

fn published(all: &std::collections::HashMap<String, Vec<Value>>) -> BTreeMap<String, BTreeSet<(String, String)>> {
    all.iter()
        .filter(|(_, d)| !d.is_empty())
        .map(|(u, d)| {
            let set = d
                .iter()
                .map(|d| {
                    (d["code"].as_str().unwrap_or("").to_string(), d["message"].as_str().unwrap_or("").to_string())
                })
                .collect();
            (u.clone(), set)
        })
        .collect()
}

#[tokio::test]
async fn every_edge_gives_the_same_answer_on_generated_trees() {
    for seed in 0..8 {
        let t = generate(seed);
        let root = t.root();
        let check = json_of(&cli(&t, &root, &["check", "--format", "json", "--fail-on", "never"]));
        let agents: Vec<String> = check["checkedFor"][0]["agents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect();
        assert!(!agents.is_empty(), "seed {seed}: {check:#}");

        // The agents chosen for each directory: check, compare and a server folder there agree.
        for dir in ["r", "r/packages/p0"] {
            let d = t.path(dir);
            let checked = json_of(&cli(&t, &d, &["check", "--format", "json", "--fail-on", "never"]));
            let compared = cli(&t, &d, &["compare", "--json"]);
            let rows: Vec<String> = json_of(&compared)
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r["profile"].as_str().map(str::to_string))
                .collect();
            let mut c = Client::start(&t.home(), &[&d], json!({"stateDir": null})).await;
            let targets = c.request("instructions/effective", json!({"profile": "targets"})).await.expect("targets");
            let selected: Vec<String> = targets["selected"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str().map(str::to_string))
                .collect();
            assert_eq!(checked["checkedFor"][0]["agents"], json!(agents), "seed {seed}, {dir}: check");
            assert_eq!(rows, agents, "seed {seed}, {dir}: compare");
            assert_eq!(selected, agents, "seed {seed}, {dir}: the server");
            c.finish().await;
        }

        // The server at the root, after the editor opened src/app.ts (a touch of that file).
        let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
        let app = t.path("r/src/app.ts");
        c.open(&app, "export const app = 1\n").await;
        c.sync().await;
        let mcp = mcp_answers(&t, &root, "src/app.ts", &agents);
        for (agent, from_mcp) in agents.iter().zip(&mcp) {
            let text = cli(&t, &root, &["effective", "--profile", agent, "--touch", "src/app.ts"]);
            let view = json_of(&cli(&t, &root, &["effective", "--profile", agent, "--touch", "src/app.ts", "--json"]));
            let answer = c.effective(json!({"profile": agent})).await;
            let served = answer["text"].as_str().unwrap_or("");
            let printed = String::from_utf8_lossy(&text.stdout);
            assert_eq!(printed.strip_suffix('\n').unwrap_or(&printed), served, "seed {seed}: {agent}'s text");
            assert_eq!(cli_files(&t, &view), server_files(&answer), "seed {seed}: {agent}'s files");
            // The MCP server (an unknown client: nothing left out) gives the same text and files.
            let mcp_text = from_mcp["content"][0]["text"].as_str().unwrap_or("");
            if !served.is_empty() {
                assert_eq!(mcp_text, served, "seed {seed}: {agent}'s text over MCP");
            }
            assert_eq!(
                server_files(&from_mcp["structuredContent"]),
                server_files(&answer),
                "seed {seed}: {agent} over MCP"
            );
            // A touch is the file, not its directory: the rules whose globs match it attach.
            let attached = match agent.as_str() {
                "claude" if seed % 2 == 0 => Some("TypeScript rules"),
                "copilot" => Some("TS for Copilot"),
                "cursor" => Some("TS for Cursor"),
                _ => None,
            };
            if let Some(rule) = attached {
                assert!(served.contains(rule), "seed {seed}: {agent} attaches {rule} after src/app.ts: {served}");
            }
        }

        // The findings of every file: what `check` prints is what the server publishes.
        let expected = check_findings(&t, &check);
        let all =
            c.all_diagnostics_until(&format!("seed {seed}: the findings of check"), |d| published(d) == expected).await;
        assert_eq!(published(&all), expected, "seed {seed}");

        // Each hover says, per agent, what the findings say.
        for f in check["findings"].as_array().into_iter().flatten().filter(|f| !f["agent"].is_null()) {
            let path = root.join(f["path"].as_str().unwrap_or(""));
            if std::fs::symlink_metadata(&path).is_err() {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            c.open(&path, &text).await;
            let hover = c
                .request(
                    "textDocument/hover",
                    json!({"textDocument": {"uri": uri(&path)}, "position": {"line": 0, "character": 0}}),
                )
                .await
                .expect("hover");
            let shown = hover["contents"]["value"].as_str().unwrap_or("");
            let message = f["message"].as_str().unwrap_or("");
            assert!(shown.contains(&format!("- {message}\n")), "seed {seed}: the hover of {}: {shown}", f["path"]);
        }
        c.finish().await;
    }
}

/// `check` works out the views of a large tree batch by batch, the next batch while this
/// thread takes in the one before; the server checks the same tree on one core. Both must say
/// the same of every file (the findings CI prints are those the editor shows).
#[test]
fn a_check_on_every_core_says_what_a_check_on_one_core_says() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("r");
    fs::create_dir_all(root.join(".git")).expect("git");
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        fs::write(path, text).expect("write");
    };
    write("AGENTS.md", &"- keep the change small\n".repeat(1500));
    write("CLAUDE.md", "@AGENTS.md\n");
    write(".cursor/rules/ts.mdc", "---\nglobs: \"**/*.ts, P7/**, **/Nothing/*.cbl\"\n---\nTS for Cursor\n");
    write(".github/instructions/ts.instructions.md", "---\napplyTo: \"**/*.TS,**/p3/*.md\"\n---\nTS\n");
    // Enough directories for several batches of views (64 per thread), on any machine.
    for p in 0..90 {
        write(&format!("p{p}/AGENTS.md"), &format!("package {p}\n"));
        if p % 3 == 0 {
            write(&format!("p{p}/CLAUDE.md"), "@../AGENTS.md\n");
        }
        if p % 5 == 0 {
            write(&format!("p{p}/GEMINI.md"), "gemini\n");
        }
        write(&format!("p{p}/src/lib.ts"), "export {}\n");
    }
    let env = Env { home: Some(dir.path().join("home")), ..Env::default() };
    let settings = Settings::defaults(Profile::Dsh, &env);
    let walked = check::walk(&root, &settings);
    let targets = instructions_lsp::session::project::targets_of(&root, &settings.root_markers, Some(&walked.names))
        .expect("targets");
    assert!(targets.agents.len() >= 5, "{:?}", targets.agents);
    let selection = Selection { profiles: targets.agents.clone(), targets: Some(targets), targeted: true };
    let starts = instructions_lsp::session::starts::starts(&root, &walked, &settings, &selection);
    let jobs: usize = starts.dirs.iter().map(|d| starts.agents_at(d).len()).sum();
    // 64 views per thread and batch.
    assert!(jobs > 4 * 64, "{jobs} views: not several batches");
    let all = check::check_walked(&root, walked, &settings, &selection);
    let one = check::check_tree(&root, &settings, &selection);
    assert!(all.findings.iter().any(|f| f.code == Code::AgentCut), "{:#?}", all.findings);
    assert_eq!(format!("{:#?}", all.findings), format!("{:#?}", one.findings));
    assert_eq!(format!("{:#?}", all.statements), format!("{:#?}", one.statements));
    assert!(all.statements.len() > 90, "{}", all.statements.len());
}

/// One setting means the same to every edge: `--set baselineMaxBytes=4096` (the editor's
/// `baselineMaxBytes` for the server) cuts the agent's `AGENTS.md` where `effective` cuts it, in
/// `compare`, `check`, `diff`, MCP and the server's answers and diagnostics, over the
/// repository's own `instructions-lsp.toml`.
#[tokio::test]
async fn one_setting_means_the_same_to_every_edge() {
    let t = Tree::new();
    let root = t.root();
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&root)
            .env("HOME", t.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git");
        assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    let line = "- keep the change small and say why\n";
    git(&["init", "-q"]);
    t.write("r/AGENTS.md", line.repeat(300));
    // The repository's own budgets, which the setting wins over.
    t.write("r/instructions-lsp.toml", "[codex]\nmax-bytes = 65536\n\n[dsh-next]\nmax-bytes = 65536\n");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "rules"]);
    t.write("r/AGENTS.md", line.repeat(350));
    let set = ["--set", "baselineMaxBytes=4096"];
    for (agent, kept) in [("dsh-next", 3705), ("codex", 4096)] {
        let with = |args: &[&str]| -> Value {
            let mut all: Vec<&str> = args.to_vec();
            all.extend(["--profile", agent]);
            all.extend(set);
            json_of(&cli(&t, &root, &all))
        };
        let cut = |files: &Value| -> Vec<(String, Value)> {
            files
                .as_array()
                .into_iter()
                .flatten()
                .filter(|f| f["status"] == "truncated")
                .map(|f| {
                    let path = f["path"].as_str().unwrap_or("").rsplit('/').next().unwrap_or("").to_string();
                    (path, f["includedBytes"].clone())
                })
                .collect()
        };
        let expected = vec![("AGENTS.md".to_string(), json!(kept))];
        let effective = with(&["effective", "--json"]);
        assert_eq!(cut(&effective["files"]), expected, "{agent}: effective {effective:#}");
        let compare = with(&["compare", "--json"]);
        assert_eq!(compare[0]["truncated"][0]["includedBytes"], json!(kept), "{agent}: compare {compare:#}");
        let check = with(&["check", "--format", "json", "--fail-on", "never"]);
        let messages: Vec<&str> =
            check["findings"].as_array().into_iter().flatten().filter_map(|f| f["message"].as_str()).collect();
        let cut_message =
            format!("after {} of 12,600 bytes (4 KiB", instructions_lsp::chain::words::number(kept as u64));
        assert!(messages.iter().any(|m| m.contains(&cut_message)), "{agent}: check {check:#}");
        let diff = with(&["diff", "HEAD", "--json"]);
        let after = &diff["groups"][0]["changes"][0]["after"];
        assert_eq!(
            (&after["status"], &after["includedBytes"]),
            (&json!("truncated"), &json!(kept)),
            "{agent}: {diff:#}"
        );
        let mcp = mcp_answers_with(&t, &root, &set, agent);
        assert_eq!(cut(&mcp["structuredContent"]["files"]), expected, "{agent}: MCP {mcp:#}");
        // The editor's setting, for the server's answers and its diagnostics.
        let options = json!({"stateDir": null, "baselineMaxBytes": 4096, "profiles": [agent]});
        let mut c = Client::start(&t.home(), &[&root], options).await;
        let answer = c.effective(json!({"profile": agent})).await;
        assert_eq!(cut(&answer["files"]), expected, "{agent}: the server {answer:#}");
        let agents_md = t.path("r/AGENTS.md");
        let published = c
            .diagnostics_until(&agents_md, "the cut of the setting", |d| {
                d.iter().any(|d| d["message"].as_str().is_some_and(|m| m.contains(&cut_message)))
            })
            .await;
        assert!(!published.is_empty(), "{agent}");
        c.finish().await;
    }
}

/// The MCP server started with `args`, asked for `agent`'s view of the project root.
fn mcp_answers_with(t: &Tree, root: &Path, args: &[&str], agent: &str) -> Value {
    use std::io::{BufRead, Write};
    let mut child = mcp_server(t, root, args);
    let mut stdin = child.stdin.take().expect("stdin");
    let lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "consistency", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "instructions_for", "arguments": {"path": ".", "profile": agent}}}),
    ];
    for m in messages {
        writeln!(stdin, "{m}").expect("write");
    }
    let mut answer = Value::Null;
    for line in lines {
        let v: Value = serde_json::from_str(&line.expect("line")).expect("JSON-RPC");
        if v["id"] == 2 {
            answer = v["result"].clone();
            break;
        }
    }
    drop(stdin);
    let _ = child.wait();
    answer
}

/// An agent that loads nothing says why, in the same words on every edge, and every edge heads an
/// agent's answer the way `effective` does.
#[tokio::test]
async fn an_empty_answer_says_why_and_every_edge_heads_an_agent_alike() {
    let t = Tree::new();
    let root = t.root();
    t.write("r/AGENTS.md", "root rules\n");
    t.write("r/CLAUDE.md", "claude rules\n");
    let why = "none of GEMINI.md is on its way here, nor a global file of its own";

    let cli_said = cli(&t, &root, &["effective", "--profile", "gemini"]);
    assert!(cli_said.stdout.is_empty(), "stdout stays the agent's exact text");
    assert_eq!(String::from_utf8_lossy(&cli_said.stderr), format!("Gemini CLI loads nothing here: {why}\n"));

    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let served = c.effective(json!({"profile": "gemini"})).await;
    assert_eq!(served["text"], "", "{served}");
    assert_eq!(served["nothing"], why, "{served}");
    assert_eq!(served["headline"], "Gemini CLI core 0.61.0 (gemini)", "{served}");
    // An agent that loads something has no `nothing`, and its headline is the CLI's header.
    let printed = String::from_utf8_lossy(&cli(&t, &root, &["effective"]).stdout).into_owned();
    for agent in ["codex", "claude"] {
        let answer = c.effective(json!({"profile": agent})).await;
        assert!(answer.get("nothing").is_none(), "{answer}");
        let headline = answer["headline"].as_str().unwrap_or_default();
        assert!(printed.contains(&format!("==> {headline}: ")), "{agent}: `{headline}` in\n{printed}");
    }
    c.finish().await;

    let mcp = mcp_answers_with(&t, &root, &[], "gemini");
    let text = mcp["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(text, format!("Gemini CLI loads nothing for {}: {why}.", root.display()), "{mcp}");
    assert_eq!(mcp["structuredContent"]["nothing"], why, "{mcp}");
}
