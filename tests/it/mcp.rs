//! `instructions-lsp mcp` driven by real MCP clients: the official Python SDK
//! (`tests/support/mcp_client.py`, installed by `scripts/install-mcp-client.sh`, which prints the
//! python that `MCP_PYTHON` names) and Claude Code against the stand-in Messages API
//! (`AGENTS_MODULES`, as in tests/it/agents.rs). Without them the tests print a note and pass;
//! `.ci/run` sets both.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::fake_api::FakeApi;
use crate::common::tree::Tree;
use serde_json::{Value, json};

/// The python of the venv with the `mcp` package.
fn python() -> Option<PathBuf> {
    crate::common::installed("MCP_PYTHON", "scripts/install-mcp-client.sh", "the MCP client SDK")
}

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// Runs the Python client on a plan (see tests/support/mcp_client.py) against `instructions-lsp
/// mcp` in `cwd`, with a private home and the state directory `state`; `roots: None` is a
/// client without the roots capability.
fn run(python: &Path, t: &Tree, cwd: &Path, roots: Option<&[&Path]>, calls: Value) -> Value {
    run_with(python, t, cwd, &["mcp"], roots, calls)
}

/// [`run`] with other arguments for our binary.
fn run_with(python: &Path, t: &Tree, cwd: &Path, args: &[&str], roots: Option<&[&Path]>, calls: Value) -> Value {
    run_as(python, t, cwd, args, roots, None, calls)
}

/// [`run_with`] by a client that announces itself as `client` (its `clientInfo` name; `None`:
/// the SDK's own name).
fn run_as(
    python: &Path,
    t: &Tree,
    cwd: &Path,
    args: &[&str],
    roots: Option<&[&Path]>,
    client: Option<&str>,
    calls: Value,
) -> Value {
    let plan = json!({
        "command": env!("CARGO_BIN_EXE_instructions-lsp"),
        "args": args,
        "cwd": cwd,
        "env": {
            "HOME": t.home(),
            "XDG_STATE_HOME": t.path("state"),
            "PATH": std::env::var("PATH").unwrap_or_default(),
        },
        "roots": roots.map(|r| r.iter().map(|p| uri(p)).collect::<Vec<_>>()),
        "client": client.map(|name| json!({ "name": name, "version": "1.0.0" })),
        "calls": calls,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/mcp_client.py");
    let mut child = Command::new(python)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python");
    child.stdin.take().expect("stdin").write_all(plan.to_string().as_bytes()).expect("plan");
    let out = child.wait_with_output().expect("client output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the MCP client failed: {stderr}");
    assert!(!stderr.contains("panicked"), "the server panicked: {stderr}");
    serde_json::from_slice(&out.stdout).expect("the client prints JSON")
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({ "tool": tool, "arguments": arguments })
}

fn results(out: &Value) -> Vec<Value> {
    out["results"].as_array().cloned().unwrap_or_default()
}

/// The block text of a successful result (its first text when it has two), or "".
fn block(r: &Value) -> String {
    assert_eq!(r["isError"], false, "a tool error: {r}");
    let texts = r["texts"].as_array().cloned().unwrap_or_default();
    if texts.len() == 2 { texts[0].as_str().unwrap_or_default().to_string() } else { String::new() }
}

fn error(r: &Value) -> String {
    assert_eq!(r["isError"], true, "expected a tool error, got {r}");
    r["texts"][0].as_str().unwrap_or_default().to_string()
}

/// The (action, path) pairs of a result's batches.
fn changes(r: &Value) -> Vec<(String, String)> {
    r["structured"]["batches"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|b| b["changes"].as_array().cloned().unwrap_or_default())
        .map(|c| (c["action"].as_str().unwrap_or("").to_string(), c["path"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, p)| (a.to_string(), p.to_string())).collect()
}

/// A project with a root file, two nested levels and a sibling directory.
fn project() -> Tree {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules\n");
    t.write("r/a/AGENTS.md", "a rules\n");
    t.write("r/a/b/AGENTS.md", "b rules\n");
    t.write("r/a/b/x.rs", "code\n");
    t.write("r/c/AGENTS.md", "c rules\n");
    t
}

#[test]
fn the_tools_answer_a_real_client_and_a_touch_gives_its_block_once() {
    let Some(py) = python() else { return };
    let t = project();
    let r = t.root();
    let out = run(
        &py,
        &t,
        &r,
        Some(&[&r]),
        json!([
            call("instructions_for", json!({ "path": r })),
            call("instructions_for", json!({ "path": "a/b/x.rs" })),
            call("instructions_touch", json!({ "path": r.join("a/b/x.rs"), "kind": "read" })),
            call("instructions_touch", json!({ "path": "a/b/y.rs", "kind": "edit" })),
            call("instructions_for", json!({ "path": r, "profile": "claude" })),
            { "write": r.join("a/AGENTS.md"), "content": "a rules, changed\n" },
            { "remove": r.join("a/b/AGENTS.md") },
            call("instructions_touch", json!({ "path": "c/z.rs", "kind": "write" })),
            call("instructions_transitions", json!({ "since": 2 })),
            call("instructions_transitions", json!({ "since": 0 })),
        ]),
    );
    assert_eq!(out["server"]["name"], "instructions-lsp");
    assert!(out["instructions"].as_str().is_some_and(|i| i.contains("instructions_touch")));
    let tools = out["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["instructions_for", "instructions_touch", "instructions_transitions"]);
    let required = |i: usize| tools[i]["inputSchema"]["required"].clone();
    assert_eq!((required(0), required(1), required(2)), (json!(["path"]), json!(["path", "kind"]), json!(["since"])));
    assert_eq!(tools[1]["inputSchema"]["properties"]["kind"]["enum"], json!(["read", "write", "edit"]));
    assert!(tools.iter().all(|t| t["description"].as_str().is_some_and(|d| d.len() > 100)));

    let res = results(&out);
    // The root: its baseline, with each file's metadata; the session starts at seq 1.
    let root = &res[0];
    assert!(block(root).contains("root rules") && !block(root).contains("a rules"), "{root}");
    assert_eq!(root["structured"]["profile"], "dsh");
    assert_eq!(root["structured"]["parts"], json!([block(root)]), "the blocks, once (no `text` beside them)");
    assert_eq!(root["structured"].get("text"), None);
    assert_eq!(root["structured"]["seq"], 1);
    let file = &root["structured"]["files"][0];
    assert_eq!((&file["path"], &file["status"], &file["bytes"]), (&json!("AGENTS.md"), &json!("loaded"), &json!(11)));
    // A file below the root: what working on it adds, without counting as a touch.
    let deep = block(&res[1]);
    assert!(deep.contains("root rules") && deep.contains("a rules") && deep.contains("b rules"), "{deep}");
    assert_eq!(res[1]["structured"]["seq"], 1);
    // The touch gives both nested files once, in one `touch` batch; the second touch in the same
    // directory (another kind) gives nothing.
    let first = &res[2];
    assert_eq!(changes(first), pairs(&[("set", "a/AGENTS.md"), ("set", "a/b/AGENTS.md")]));
    assert!(block(first).contains("a rules") && block(first).contains("b rules") && !block(first).contains("root"));
    assert_eq!(first["structured"]["batches"][0]["reason"], "touch");
    assert_eq!(first["structured"]["seq"], 2);
    assert!(first["structured"]["batches"][0]["changes"][0]["sha256"].as_str().is_some_and(|s| s.len() == 64));
    assert_eq!(changes(&res[3]), pairs(&[]));
    assert_eq!(block(&res[3]), "", "nothing new, no block: {}", res[3]);
    assert_eq!(res[3]["texts"].as_array().map(Vec::len), Some(1), "only the metadata");
    // Another profile: Claude Code's view of the root after the same touches.
    let claude = &res[4];
    assert_eq!(claude["structured"]["profile"], "claude");
    assert!(block(claude).contains("Contents of") && block(claude).contains("root rules"), "{claude}");
    // On the next call, the changed file is replaced and the deleted one removed (a `change`
    // batch, before the touch's own batch).
    let after = &res[5];
    assert_eq!(
        changes(after),
        pairs(&[("replace", "a/AGENTS.md"), ("remove", "a/b/AGENTS.md"), ("set", "c/AGENTS.md")])
    );
    let text = block(after);
    assert!(text.contains("a rules, changed") && text.contains("Instructions removed: a/b/AGENTS.md"), "{text}");
    assert!(text.contains("c rules"));
    // Transitions since the first touch: exactly those two batches; since 0: all four.
    let since2 = &res[6];
    let seqs = |r: &Value| -> Vec<u64> {
        r["structured"]["batches"].as_array().into_iter().flatten().filter_map(|b| b["seq"].as_u64()).collect()
    };
    assert_eq!(seqs(since2), [3, 4]);
    assert_eq!(since2["structured"]["reset"], false);
    assert_eq!(block(since2), text);
    assert_eq!(seqs(&res[7]), [1, 2, 3, 4]);
}

#[test]
fn a_budget_cut_is_in_the_metadata() {
    let Some(py) = python() else { return };
    let t = project();
    t.write("r/AGENTS.md", "y".repeat(4000));
    let r = t.root();
    let plan = json!([call("instructions_for", json!({ "path": r }))]);
    // `--set` reaches the engine's settings as on the command line.
    let out = run_with(&py, &t, &r, &["mcp", "--set", "baselineMaxBytes=2000"], None, plan);
    let file = &results(&out)[0]["structured"]["files"][0];
    assert_eq!(file["status"], "truncated", "{file}");
    assert_eq!(file["bytes"], 4000);
    assert!(file["includedBytes"].as_u64().is_some_and(|b| b > 0 && b < 2000), "{file}");
}

#[test]
fn bad_arguments_are_tool_errors_that_say_what_was_wrong() {
    let Some(py) = python() else { return };
    let t = project();
    let r = t.root();
    let out = run(
        &py,
        &t,
        &r,
        Some(&[&r]),
        json!([
            call("instructions_for", json!({})),
            call("instructions_for", json!({ "path": "" })),
            call("instructions_for", json!({ "path": 7 })),
            call("instructions_for", json!({ "path": r, "profile": "windsurf" })),
            call("instructions_for", json!({ "path": "../elsewhere" })),
            call("instructions_for", json!({ "path": "/" })),
            call("instructions_touch", json!({ "path": "a/x.rs", "kind": "delete" })),
            call("instructions_touch", json!({ "path": "a/x.rs" })),
            call("instructions_touch", json!({ "path": "a/x.rs", "kind": "read", "mode": 1 })),
            call("instructions_transitions", json!({ "since": 1_000_000 })),
            call("instructions_transitions", json!({ "since": -1 })),
            call("instructions_transitions", json!({ "since": "3" })),
            call("instructions_transitions", json!({})),
            call("no_such_tool", json!({})),
            // The server still serves; a directory is reached as a file in it would reach it.
            call("instructions_touch", json!({ "path": "a", "kind": "read" })),
        ]),
    );
    let res = results(&out);
    let expect = [
        "`path` is required",
        "`path` is empty",
        "`path` must be a string, got 7",
        "unknown profile `windsurf`; expected one of dsh, ds4, codex, claude",
        "`../elsewhere` escapes the workspace root",
        "/ is outside every workspace root",
        "`kind` is `delete`; expected one of read, write, edit",
        "`kind` is required",
        "unknown argument `mode`",
        "`since` is 1000000, but this session is only at seq 1",
        "`since` must be a whole number of at least 0 (a seq), got -1",
        "`since` must be a whole number of at least 0 (a seq), got \"3\"",
        "`since` is required",
    ];
    for (i, want) in expect.iter().enumerate() {
        let got = error(&res[i]);
        assert!(got.contains(want), "call {i}: `{got}` does not say `{want}`");
    }
    assert!(
        res[13]["protocolError"].as_str().is_some_and(|e| e.contains("unknown tool `no_such_tool`")),
        "{}",
        res[13]
    );
    assert_eq!(changes(&res[14]), pairs(&[("set", "a/AGENTS.md")]));
}

/// A second project beside the first, with a root and a nested `AGENTS.md`.
fn second_root(t: &Tree) -> PathBuf {
    t.mkdir("r2/.git");
    t.write("r2/AGENTS.md", "second root\n");
    t.write("r2/a/AGENTS.md", "second a\n");
    t.path("r2")
}

#[test]
fn two_roots_are_two_isolated_sessions() {
    let Some(py) = python() else { return };
    let t = project();
    let (r, r2) = (t.root(), second_root(&t));
    let out = run(
        &py,
        &t,
        &t.home(),
        Some(&[&r, &r2]),
        json!([
            call("instructions_touch", json!({ "path": r.join("a/x.rs"), "kind": "read" })),
            call("instructions_touch", json!({ "path": r2.join("a/x.rs"), "kind": "read" })),
            call("instructions_touch", json!({ "path": r2.join("a/y.rs"), "kind": "read" })),
            call("instructions_transitions", json!({ "since": 0, "path": r })),
            call("instructions_transitions", json!({ "since": 0, "path": r2.join("a") })),
            call("instructions_transitions", json!({ "since": 0 })),
            call("instructions_touch", json!({ "path": "a/x.rs", "kind": "read" })),
            // The client drops the first root: its paths are outside now, the other's go on.
            { "roots": [uri(&r2)] },
            call("instructions_touch", json!({ "path": r.join("c/x.rs"), "kind": "read" })),
            call("instructions_transitions", json!({ "since": 0 })),
        ]),
    );
    let res = results(&out);
    // Each root's first call starts its own session: its baseline, then the touch.
    assert_eq!(changes(&res[0]), pairs(&[("set", "AGENTS.md"), ("set", "a/AGENTS.md")]));
    assert!(block(&res[0]).contains("a rules") && !block(&res[0]).contains("second"));
    assert_eq!(changes(&res[1]), pairs(&[("set", "AGENTS.md"), ("set", "a/AGENTS.md")]));
    assert!(block(&res[1]).contains("second a") && !block(&res[1]).contains("a rules"));
    assert_eq!(changes(&res[2]), pairs(&[]));
    for (i, root) in [(3, &r), (4, &r2)] {
        assert_eq!(res[i]["structured"]["folder"], uri(root));
        assert_eq!(res[i]["structured"]["seq"], 2, "each session counts its own batches");
    }
    assert!(block(&res[3]).contains("a rules") && !block(&res[3]).contains("second"));
    assert!(error(&res[5]).contains("several roots"));
    assert!(error(&res[6]).contains("is relative, and the client has several roots"));
    assert!(error(&res[7]).contains("is outside every workspace root of this session"), "{}", res[7]);
    assert_eq!(res[8]["structured"]["folder"], uri(&r2));
    assert_eq!(res[8]["structured"]["seq"], 2);
}

/// The `leftOut` paths of a result.
fn left_out(r: &Value) -> Vec<String> {
    r["structured"]["leftOut"].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect()
}

/// A package with both an `AGENTS.md` and a `CLAUDE.md`, at the root and in `apps/webapp`; the
/// engine is set to give both (`AGENTS.md` the winner, `CLAUDE.md` an overlay), so that what a
/// client is not given is what it loads by itself, not what the engine skips.
fn both_files() -> Tree {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root agents\n");
    t.write("r/CLAUDE.md", "root claude\n");
    t.write("r/apps/webapp/AGENTS.md", "webapp agents\n");
    t.write("r/apps/webapp/CLAUDE.md", "webapp claude\n");
    t.write("r/apps/webapp/x.ts", "code\n");
    t
}

const BOTH: &[&str] = &[
    "mcp",
    "--set",
    r#"instructionFileCandidates=["AGENTS.md"]"#,
    "--set",
    r#"localInstructionFileCandidates=["CLAUDE.md"]"#,
    "--set",
    "stateDir=null",
];

#[test]
fn claude_code_is_not_given_the_claude_md_it_loads_itself_and_an_unknown_client_gets_all() {
    let Some(py) = python() else { return };
    let t = both_files();
    let r = t.root();
    let calls = json!([
        call("instructions_touch", json!({ "path": "apps/webapp/x.ts", "kind": "read" })),
        { "write": r.join("apps/webapp/AGENTS.md"), "content": "webapp agents, changed\n" },
        { "write": r.join("apps/webapp/CLAUDE.md"), "content": "webapp claude, changed\n" },
        call("instructions_touch", json!({ "path": "apps/webapp/x.ts", "kind": "edit" })),
        { "remove": r.join("apps/webapp/CLAUDE.md") },
        call("instructions_touch", json!({ "path": "apps/webapp/x.ts", "kind": "read" })),
        call("instructions_transitions", json!({ "since": 0 })),
        call("instructions_for", json!({ "path": "apps/webapp/x.ts" })),
    ]);
    let claude = results(&run_as(&py, &t, &r, BOTH, Some(&[&r]), Some("claude-code"), calls));
    // Claude Code loads the root CLAUDE.md when it starts and apps/webapp/CLAUDE.md when it reads
    // x.ts (and then no AGENTS.md): it gets the AGENTS.md blocks only.
    let first = &claude[0];
    assert_eq!(first["structured"]["client"], "claude");
    assert_eq!(changes(first), pairs(&[("set", "AGENTS.md"), ("set", "apps/webapp/AGENTS.md")]));
    assert_eq!(left_out(first), ["CLAUDE.md", "apps/webapp/CLAUDE.md"]);
    let text = block(first);
    assert!(text.contains("root agents") && text.contains("webapp agents"), "{text}");
    assert!(!text.contains("claude"), "a CLAUDE.md given again: {text}");
    assert_eq!(first["structured"]["seq"], 2);
    // Both files changed: only the AGENTS.md is replaced.
    assert_eq!(changes(&claude[1]), pairs(&[("replace", "apps/webapp/AGENTS.md")]));
    assert_eq!(left_out(&claude[1]), ["apps/webapp/CLAUDE.md"]);
    assert!(!block(&claude[1]).contains("claude"), "{}", block(&claude[1]));
    // The removal of its own file is not announced: the batch is left out whole, seq goes on.
    assert_eq!(claude[2]["structured"]["batches"], json!([]), "{}", claude[2]);
    assert_eq!(left_out(&claude[2]), ["apps/webapp/CLAUDE.md"]);
    assert_eq!(claude[2]["structured"]["seq"], 4);
    assert_eq!(block(&claude[2]), "");
    // Catching up leaves them out alike.
    let all = &claude[3];
    assert_eq!(all["structured"]["client"], "claude");
    assert_eq!(
        changes(all),
        pairs(&[("set", "AGENTS.md"), ("set", "apps/webapp/AGENTS.md"), ("replace", "apps/webapp/AGENTS.md")])
    );
    assert_eq!(left_out(all), ["CLAUDE.md", "apps/webapp/CLAUDE.md"]);
    assert!(!block(all).contains("claude"), "{}", block(all));
    // An explicit question is answered in full.
    assert!(block(&claude[4]).contains("root claude"), "{}", claude[4]);

    // The same steps on the same tree by a client this server does not know: everything.
    let t = both_files();
    let r = t.root();
    let calls = json!([
        call("instructions_touch", json!({ "path": "apps/webapp/x.ts", "kind": "read" })),
        { "write": r.join("apps/webapp/AGENTS.md"), "content": "webapp agents, changed\n" },
        { "write": r.join("apps/webapp/CLAUDE.md"), "content": "webapp claude, changed\n" },
        call("instructions_touch", json!({ "path": "apps/webapp/x.ts", "kind": "edit" })),
    ]);
    let other = results(&run_as(&py, &t, &r, BOTH, Some(&[&r]), Some("some-editor"), calls));
    let first = &other[0];
    assert_eq!(first["structured"]["client"], Value::Null);
    assert_eq!(left_out(first), Vec::<String>::new());
    assert_eq!(
        changes(first),
        pairs(&[
            ("set", "AGENTS.md"),
            ("set", "CLAUDE.md"),
            ("set", "apps/webapp/AGENTS.md"),
            ("set", "apps/webapp/CLAUDE.md")
        ])
    );
    assert!(block(first).contains("webapp claude") && block(first).contains("webapp agents"), "{}", block(first));
    assert_eq!(
        changes(&other[1]),
        pairs(&[("replace", "apps/webapp/AGENTS.md"), ("replace", "apps/webapp/CLAUDE.md")])
    );
}

#[test]
fn codex_is_not_given_what_the_repository_configuration_makes_it_load() {
    let Some(py) = python() else { return };
    let calls = |r: &Path| {
        json!([
            call("instructions_touch", json!({ "path": "a/x.rs", "kind": "read" })),
            call("instructions_for", json!({ "path": r, "profile": "codex" })),
        ])
    };
    // Codex reads CLAUDE.md only as a fallback name, which the repository's configuration sets.
    let t = Tree::new();
    t.write("r/CLAUDE.md", "root claude\n");
    t.write("r/a/AGENTS.md", "a rules\n");
    t.write("r/instructions-lsp.toml", "[codex]\nfile-names = [\"CLAUDE.md\"]\n");
    let r = t.root();
    let configured = results(&run_as(&py, &t, &r, &["mcp"], Some(&[&r]), Some("codex-mcp-client"), calls(&r)));
    assert!(block(&configured[1]).contains("root claude"), "the configuration's fallback: {}", configured[1]);
    let touch = &configured[0];
    assert_eq!(touch["structured"]["client"], "codex");
    assert_eq!(changes(touch), pairs(&[("set", "a/AGENTS.md")]));
    assert_eq!(left_out(touch), ["CLAUDE.md"]);

    // Without the configuration Codex does not read CLAUDE.md: it is given.
    std::fs::remove_file(r.join("instructions-lsp.toml")).expect("remove");
    std::fs::remove_dir_all(t.path("state")).ok();
    let plain = results(&run_as(&py, &t, &r, &["mcp"], Some(&[&r]), Some("codex-mcp-client"), calls(&r)));
    assert!(!block(&plain[1]).contains("root claude"), "{}", plain[1]);
    assert_eq!(changes(&plain[0]), pairs(&[("set", "CLAUDE.md"), ("set", "a/AGENTS.md")]));
    assert_eq!(left_out(&plain[0]), Vec::<String>::new());
}

#[test]
fn a_call_right_after_a_roots_change_is_answered_under_the_new_roots() {
    let Some(py) = python() else { return };
    let t = project();
    let (r, r2) = (t.root(), second_root(&t));
    // Each change is followed at once (no pause) by calls that need the roots: a relative path,
    // a path in the root just dropped, and transitions without a path (one root).
    let rounds = 30;
    let mut calls = Vec::new();
    for i in 0..rounds {
        let (now, before) = if i % 2 == 0 { (&r2, &r) } else { (&r, &r2) };
        calls.push(json!({ "roots": [uri(now)] }));
        calls.push(call("instructions_touch", json!({ "path": format!("a/x{i}.rs"), "kind": "read" })));
        calls.push(call("instructions_touch", json!({ "path": before.join("a/x.rs"), "kind": "read" })));
        calls.push(call("instructions_transitions", json!({ "since": 0 })));
    }
    let out = run(&py, &t, &t.home(), Some(&[&r]), Value::Array(calls));
    let res = results(&out);
    assert_eq!(res.len(), 3 * rounds);
    for (i, round) in res.chunks(3).enumerate() {
        let (now, before) = if i % 2 == 0 { (&r2, &r) } else { (&r, &r2) };
        let touch = &round[0];
        assert_eq!(touch["isError"], false, "round {i}: {touch}");
        assert_eq!(touch["structured"]["folder"], uri(now), "round {i}: {touch}");
        let outside = error(&round[1]);
        let want = format!("is outside every workspace root of this session ({})", now.display());
        assert!(outside.contains(&want), "round {i}: `{outside}` does not say `{want}`");
        assert!(outside.contains(&before.display().to_string()), "round {i}: {outside}");
        assert_eq!(round[2]["structured"]["folder"], uri(now), "round {i}: {}", round[2]);
    }
}

#[test]
fn a_restarted_server_continues_seq_and_gives_only_what_changed() {
    let Some(py) = python() else { return };
    let t = project();
    let r = t.root();
    // No roots capability: the working directory is the root.
    let first =
        run(&py, &t, &r, None, json!([call("instructions_touch", json!({ "path": "a/b/x.rs", "kind": "read" }))]));
    let res = results(&first);
    assert_eq!(res[0]["structured"]["seq"], 2);
    assert_eq!(res[0]["structured"]["folder"], uri(&r));
    let ledgers: Vec<_> = std::fs::read_dir(t.path("state/instructions-lsp/mcp")).expect("ledger dir").collect();
    assert_eq!(ledgers.len(), 1, "one ledger, in the state directory's mcp folder");
    t.write("r/a/AGENTS.md", "a rules, while it was down\n");
    std::fs::remove_file(r.join("a/b/AGENTS.md")).expect("remove");
    let second = run(
        &py,
        &t,
        &r,
        None,
        json!([
            call("instructions_touch", json!({ "path": "a/b/x.rs", "kind": "read" })),
            call("instructions_transitions", json!({ "since": 2 })),
            call("instructions_touch", json!({ "path": "a/b/x.rs", "kind": "read" })),
        ]),
    );
    let res = results(&second);
    // Only what changed, in one `restart` batch with the next seq: nothing given again.
    let restart = &res[0];
    assert_eq!(changes(restart), pairs(&[("replace", "a/AGENTS.md"), ("remove", "a/b/AGENTS.md")]));
    assert_eq!(restart["structured"]["batches"][0]["reason"], "restart");
    assert_eq!(restart["structured"]["seq"], 3);
    assert!(!block(restart).contains("root rules"));
    assert_eq!(res[1]["structured"]["batches"].as_array().map(Vec::len), Some(1));
    assert_eq!(res[1]["structured"]["batches"][0]["seq"], 3);
    assert_eq!(changes(&res[2]), pairs(&[]));
}

/// Every text a message carries: string content, text blocks, and the texts of tool results.
fn texts(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().flat_map(texts).collect(),
        Value::Object(o) => o
            .get("text")
            .and_then(Value::as_str)
            .map(str::to_string)
            .into_iter()
            .chain(o.get("content").map(texts).into_iter().flatten())
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn claude_code_lists_the_tools_and_hands_a_touch_block_to_the_model() {
    let Some(modules) = crate::common::agents_modules() else { return };
    let t = project();
    // Claude Code loads the root AGENTS.md itself when it starts (no CLAUDE.md is loaded yet), and
    // a/CLAUDE.md and a/b/CLAUDE.md when it reads a/b/x.rs (where a/b's own CLAUDE.md hides the
    // AGENTS.md beside it): the server, which knows it by its clientInfo, leaves those out and
    // gives a/b/AGENTS.md.
    std::fs::remove_file(t.path("r/a/AGENTS.md")).expect("remove");
    t.write("r/a/CLAUDE.md", "a claude\n");
    t.write("r/a/b/CLAUDE.md", "b claude\n");
    let r = t.root();
    // The stand-in Messages API answers the first turn with a call of our touch tool.
    let (api, config) = (FakeApi::start("fake-anthropic.mjs"), t.path("mcp.json"));
    let input = json!({ "path": r.join("a/b/x.rs"), "kind": "read" });
    std::fs::write(&api.target, format!("tool:mcp__instructions__instructions_touch {input}")).expect("target");
    let server = json!({
        "command": env!("CARGO_BIN_EXE_instructions-lsp"),
        "args": ["mcp"],
        "env": { "XDG_STATE_HOME": t.path("state") },
    });
    std::fs::write(&config, json!({ "mcpServers": { "instructions": server } }).to_string()).expect("config");
    let out = api
        .claude(&modules.join(".bin/claude"))
        .args(["-p", "hi", "--mcp-config"])
        .arg(&config)
        .args(["--strict-mcp-config", "--allowedTools", "mcp__instructions__instructions_touch"])
        .current_dir(&r)
        .env("HOME", t.home())
        // Claude Code lists MCP tools by name only and loads them through ToolSearch unless
        // this is off; with it off they are in the request's tool list.
        .env("ENABLE_TOOL_SEARCH", "false")
        .output()
        .expect("run claude");
    assert!(out.status.success(), "claude failed: {}", String::from_utf8_lossy(&out.stderr));
    let requests = api.requests("/v1/messages");
    let first = requests.first().expect("a request");
    let tools: Vec<&str> = first["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    for name in ["instructions_for", "instructions_touch", "instructions_transitions"] {
        assert!(tools.contains(&format!("mcp__instructions__{name}").as_str()), "{name} is not in {tools:?}");
    }
    // The next request carries the tool's result: the touch batch with the nested files' block.
    let after =
        requests.iter().find(|r| r["messages"].to_string().contains("tool_result")).expect("a request after the call");
    let result = after["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|c| c["type"] == "tool_result" && c["tool_use_id"] == "toolu_1")
        .expect("the tool's result");
    assert_ne!(result["is_error"], true, "{result}");
    // Claude Code hands the model the structured result as JSON (or the text blocks).
    let given: Vec<String> = texts(&result["content"])
        .iter()
        .flat_map(|t| match serde_json::from_str::<Value>(t) {
            Ok(v) => {
                assert_eq!(v["client"], "claude", "Claude Code is known by its clientInfo: {v}");
                assert_eq!(v["leftOut"], json!(["AGENTS.md", "a/CLAUDE.md"]), "{v}");
                v["batches"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b["reason"] == "touch")
                    .map(|b| b["text"].as_str().unwrap_or("").to_string())
                    .collect()
            }
            Err(_) => vec![t.clone()],
        })
        .collect();
    let blocks: Vec<&String> = given.iter().filter(|t| t.contains("## a/b/AGENTS.md")).collect();
    assert_eq!(blocks.len(), 1, "the block, once: {result}");
    assert!(blocks[0].contains("b rules"), "{}", blocks[0]);
    assert!(!result.to_string().contains("a claude"), "the CLAUDE.md it loads itself, given again: {result}");
    assert!(!result.to_string().contains("b claude"), "the CLAUDE.md it loads itself, given again: {result}");
}

/// Raw lines on stdin: what is not JSON-RPC is skipped and the server answers what follows (this
/// one needs no client SDK).
#[test]
fn lines_that_are_not_json_rpc_do_not_stop_the_server() {
    use std::io::BufRead;
    let t = project();
    let mut child = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .arg("mcp")
        .current_dir(t.root())
        .env("HOME", t.home())
        .env("XDG_STATE_HOME", t.path("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("instructions-lsp mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let touch = |id: u32| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "instructions_touch", "arguments": { "path": "a/b/x.rs", "kind": "read" } } })
    };
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "raw", "version": "1" } } });
    let lines = [
        "this is not JSON".to_string(),
        init.to_string(),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string(),
        "{\"broken\": ".to_string(),
        touch(2).to_string(),
        "[]".to_string(),
        touch(3).to_string(),
    ];
    for l in &lines {
        writeln!(stdin, "{l}").expect("write");
    }
    let mut answers = std::collections::BTreeMap::new();
    for line in std::io::BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let v: Value = serde_json::from_str(&line.expect("line")).expect("the server writes JSON-RPC");
        answers.insert(v["id"].as_u64().unwrap_or(0), v);
        // Calls are answered concurrently: in any order.
        if answers.contains_key(&2) && answers.contains_key(&3) {
            break;
        }
    }
    drop(stdin);
    assert!(child.wait().expect("exit").success(), "the server ends cleanly when stdin closes");
    assert_eq!(answers[&1]["result"]["serverInfo"]["name"], "instructions-lsp");
    let batches = |id: u64| answers[&id]["result"]["structuredContent"]["batches"].as_array().map(Vec::len);
    let mut got = [batches(2), batches(3)];
    got.sort();
    assert_eq!(got, [Some(0), Some(2)], "baseline and touch once, then nothing: {answers:?}");
}
