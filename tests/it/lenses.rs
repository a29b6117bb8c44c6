//! What an author sees on any file: a lens per agent (what it does with an instruction file or
//! an imported one; which instructions it gets when it reads a source file), each opening that
//! agent's view; the hover on a source file; sizes in tokens beside bytes on every edge.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::lsp::{Client, uri};
use crate::common::tree::Tree;

/// A repository for Claude Code, Cursor and Codex: a `CLAUDE.md` that imports a style guide,
/// a rule for Rust files of each of the first two, and a nested `AGENTS.md`.
fn repository() -> Tree {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/instructions-lsp.toml", "agents = [\"claude\", \"cursor\", \"codex\"]\n");
    t.write("r/CLAUDE.md", "Project rules. Follow @docs/style.md\n");
    t.write("r/docs/style.md", "Write short sentences.\n");
    t.write("r/.claude/rules/rust.md", "---\npaths: src/**/*.rs\n---\nRUST RULE\n");
    t.write("r/.cursor/rules/r.mdc", "---\nglobs: src/**\n---\nCURSOR RULE\n");
    t.write("r/src/AGENTS.md", "Source rules.\n");
    t.write("r/src/main.rs", "fn main() {}\n");
    t
}

fn lenses(v: &Value) -> Vec<(String, String, Value)> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            let c = &l["command"];
            (
                c["title"].as_str().unwrap_or_default().to_string(),
                c["command"].as_str().unwrap_or_default().to_string(),
                c["arguments"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_source_file_shows_what_each_agent_gets_when_it_reads_it_and_opens_that_view() {
    let t = repository();
    let root = t.root();
    let main = t.path("r/src/main.rs");
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let got = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri(&main)}})).await.expect("lens");
    let got = lenses(&got);
    let titles: Vec<&str> = got.iter().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(titles.len(), 3, "one lens per agent: {titles:?}");
    let claude = titles.iter().find(|t| t.starts_with("Claude Code: ")).expect("claude lens");
    assert!(claude.contains("CLAUDE.md, docs/style.md, + .claude/rules/rust.md"), "{claude}");
    assert!(claude.ends_with("tokens (estimate)"), "an estimate for Claude Code: {claude}");
    let cursor = titles.iter().find(|t| t.starts_with("Cursor: ")).expect("cursor lens");
    assert!(cursor.contains("+ .cursor/rules/r.mdc"), "{cursor}");
    // Codex reads only what lies from the project root to where it starts.
    assert!(titles.contains(&"Codex: no instructions for this file"), "{titles:?}");
    for (_, command, args) in &got {
        assert_eq!(command, "instructions.showView");
        assert_eq!(args[0], uri(&main));
    }
    // The lens opens the agent's exact text once it has read the file.
    let (_, command, args) = got.iter().find(|(t, _, _)| t.starts_with("Claude Code")).expect("claude");
    let view =
        c.request("workspace/executeCommand", json!({"command": command, "arguments": args})).await.expect("view");
    assert_eq!(view["title"], "Claude Code reading src/main.rs");
    let text = view["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Project rules.") && text.contains("RUST RULE") && text.contains("Write short sentences."),
        "{text}"
    );
    assert_eq!(view["view"]["profile"], "claude");
    assert!(view["view"]["tokens"]["count"].as_u64().is_some_and(|n| n > 0), "{view}");
    // The hover on its first line: each agent's files, links to each.
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&main)}, "position": {"line": 0, "character": 0}}),
        )
        .await
        .expect("hover");
    let md = hover["contents"]["value"].as_str().unwrap_or_default();
    let rule = uri(&t.path("r/.claude/rules/rust.md"));
    assert!(md.contains(&format!("[.claude/rules/rust.md]({rule}) (for this file)")), "{md}");
    assert!(md.contains("- **Cursor**: "), "{md}");
    // Bad arguments get a clear error.
    let err = c
        .request(
            "workspace/executeCommand",
            json!({"command": "instructions.showView", "arguments": [uri(&main), "claud"]}),
        )
        .await
        .expect_err("an unknown agent");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(message.contains("`claud` is not an agent; expected one of codex, claude"), "{err}");
    c.finish().await;
}

#[tokio::test]
async fn an_imported_file_has_a_lens_per_agent_saying_who_imports_it() {
    let t = repository();
    let root = t.root();
    let style = t.path("r/docs/style.md");
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let got = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri(&style)}})).await.expect("lens");
    let got = lenses(&got);
    let titles: Vec<&str> = got.iter().map(|(t, _, _)| t.as_str()).collect();
    let claude = titles.iter().find(|t| t.starts_with("Claude Code")).expect("claude lens");
    // In the words of `check` (started in `src`, Claude Code does not follow the import).
    assert!(claude.contains("which CLAUDE.md imports"), "who imports it: {claude}");
    assert!(claude.ends_with(" · ~4 tokens (estimate)"), "{claude}");
    assert!(titles.iter().any(|t| t.starts_with("Codex does not read this file")), "{titles:?}");
    assert!(got.iter().all(|(_, c, a)| c == "instructions.showView" && a[0] == uri(&style)), "{got:?}");
    c.finish().await;

    // An agent that loads the import wherever it starts: the lens names the file that imports it.
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/GEMINI.md", "Project rules. Follow @docs/style.md\n");
    let style = t.write("r/docs/style.md", "Write short sentences.\n");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let got = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri(&style)}})).await.expect("lens");
    let titles: Vec<String> = lenses(&got).into_iter().map(|(t, _, _)| t).collect();
    let said = "Gemini CLI loads this file, which `GEMINI.md` imports · ~4 tokens (estimate)";
    assert!(titles.iter().any(|t| t == said), "{titles:?}");
    c.finish().await;
}

fn cli(t: &Tree, args: &[&str]) -> (String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(args)
        .current_dir(t.root())
        .env("HOME", t.home())
        .output()
        .expect("run");
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Every edge gives the same size in tokens: exact (o200k_base) for Codex, a labelled estimate
/// for the others.
#[tokio::test]
async fn sizes_in_tokens_agree_on_every_edge() {
    let t = repository();
    t.write("r/AGENTS.md", "Use pnpm, never npm.\n");
    let (out, _) = cli(&t, &["effective", "."]);
    let header =
        |name: &str| out.lines().find(|l| l.starts_with(&format!("==> {name} "))).unwrap_or_default().to_string();
    let codex = header("Codex");
    assert!(codex.ends_with(" tokens <==") && !codex.contains("estimate"), "{out}");
    assert!(header("Claude Code").ends_with(" tokens (estimate) <=="), "{out}");
    let (json, _) = cli(&t, &["check", "--format", "json"]);
    let json: Value = serde_json::from_str(&json).expect("json");
    let views = json["checkedFor"][0]["views"].as_array().cloned().unwrap_or_default();
    let of = |agent: &str| views.iter().find(|v| v["agent"] == agent).cloned().unwrap_or_default();
    assert_eq!(of("codex")["tokens"]["exact"], true, "{json}");
    assert_eq!(of("claude")["tokens"]["exact"], false, "{json}");
    let count = of("codex")["tokens"]["count"].as_u64().expect("a count");
    assert!(codex.contains(&format!(" bytes, {count} tokens ")), "{codex} vs {count}");
    let (compare, _) = cli(&t, &["compare", "."]);
    assert!(compare.contains(&format!(" bytes, {count} tokens, ")), "{compare}");
    // The server's answer, for the sidebar.
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let all = c
        .request("instructions/effective", json!({"uri": uri(&root), "profile": "targets", "tokens": true}))
        .await
        .expect("all");
    let served = all["profiles"].as_array().and_then(|p| p.iter().find(|p| p["profile"] == "codex")).cloned();
    assert_eq!(served.map(|p| p["tokens"].clone()), Some(json!({"count": count, "exact": true})), "{all}");
    // Only when asked: an agent fetching its blocks does not load the encoding.
    let plain =
        c.request("instructions/effective", json!({"uri": uri(&root), "profile": "codex"})).await.expect("codex");
    assert_eq!(plain["tokens"], Value::Null, "{plain}");
    c.finish().await;
}

fn at(path: &std::path::Path, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri(path)}, "position": {"line": line, "character": character}})
}

/// A hover on a pattern says what it matches for each agent that reads the rule, as that agent
/// matches; a hover on a missing import adds nothing to the diagnostic there.
#[tokio::test]
async fn a_pattern_hover_counts_the_files_it_matches_and_a_missing_import_hover_is_the_diagnostic() {
    let t = repository();
    t.write("r/.cursor/rules/r.mdc", "---\nglobs: src/**, gone/**\n---\nCURSOR RULE\n");
    let claude = t.write("r/CLAUDE.md", "Project rules.\n\nRead @nope.md first.\n");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let rule = t.path("r/.cursor/rules/r.mdc");
    let hover = c.request("textDocument/hover", at(&rule, 1, 9)).await.expect("hover");
    let md = hover["contents"]["value"].as_str().unwrap_or_default();
    let main = uri(&t.path("r/src/main.rs"));
    assert!(md.starts_with("**`src/**`** (`globs`)"), "{md}");
    assert!(
        md.contains("- Cursor: matches 2 files: [src/AGENTS.md](") && md.contains(&format!("[src/main.rs]({main})")),
        "{md}"
    );
    assert_eq!(hover["range"], json!({"start": {"line": 1, "character": 7}, "end": {"line": 1, "character": 13}}));
    let dead = c.request("textDocument/hover", at(&rule, 1, 17)).await.expect("hover");
    assert!(
        dead["contents"]["value"].as_str().unwrap_or_default().contains("- Cursor: matches no file in the repository"),
        "{dead}"
    );
    // `paths` of a Claude Code rule, a string of one pattern.
    let rust = t.path("r/.claude/rules/rust.md");
    let hover = c.request("textDocument/hover", at(&rust, 1, 9)).await.expect("hover");
    let md = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(md.contains(&format!("- Claude Code: matches 1 file: [src/main.rs]({main})")), "{md}");
    c.open(&claude, "Project rules.\n\nRead @nope.md first.\n").await;
    c.diagnostic(&claude, "missingImport").await;
    assert_eq!(c.request("textDocument/hover", at(&claude, 2, 7)).await.expect("hover"), Value::Null);
    c.finish().await;
}

/// Hostile arguments and files on the new surfaces: each refused with what was wrong, or
/// answered within bounds (a path of thousands of made-up folders, a pattern of 2 KB, a 2 MB file).
#[tokio::test]
async fn the_view_command_and_the_hovers_refuse_or_bound_what_they_are_given() {
    let t = repository();
    let root = t.root();
    let long = format!("---\nglobs: {}\n---\nrule\n", "*a".repeat(1000));
    t.write("r/.cursor/rules/long.mdc", &long);
    let big = t.write("r/AGENTS.md", "rule\n".repeat(400_000));
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let deep = format!("{}/{}x.rs", uri(&root), "a/".repeat(20_000));
    for (args, said) in [
        (json!([deep, "codex"]), "names no file or folder"),
        (json!([uri(&t.path("r/src/main.rs")), "../codex"]), "`../codex` is not an agent; expected one of codex"),
        (json!(["file:///etc/passwd", "claude"]), "`file:///etc/passwd` is not inside a workspace folder"),
        (json!(["https://example.com/x", "claude"]), "is not a file: URI"),
        (json!([1, 2]), "two strings"),
    ] {
        let err = c
            .request("workspace/executeCommand", json!({"command": "instructions.showView", "arguments": args}))
            .await
            .expect_err("refused");
        let message = err["message"].as_str().unwrap_or_default();
        assert!(message.contains(said), "{message}");
    }
    let rule = t.path("r/.cursor/rules/long.mdc");
    let hover = c.request("textDocument/hover", at(&rule, 1, 9)).await.expect("hover");
    let md = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(md.contains("- Cursor: is not matched here: it is 2000 bytes long"), "{md}");
    assert!(md.len() < 600, "the pattern is named by its start: {md}");
    let hover = c.request("textDocument/hover", at(&big, 0, 0)).await.expect("hover");
    let md = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(md.contains("Size: 2,000,000 bytes (too large to count its tokens here)"), "{md}");
    c.finish().await;
}
