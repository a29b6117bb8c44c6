//! Mistakes flagged where they are written, and mended: front-matter keys and values each agent
//! misreads, dead patterns, imports that name nothing; the quick fixes the server offers, its
//! fix of everything, and `check --fix`, which make the same edits.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::lsp::{Client, uri};
use crate::common::tree::Tree;

/// A repository written for Cursor, Copilot and Claude Code with one mistake of each kind.
fn mistaken() -> Tree {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/instructions-lsp.toml", "agents = [\"cursor\", \"copilot\", \"claude\"]\n");
    t.write("r/src/a.ts", "x\n");
    t.write("r/.cursor/rules/r.mdc", "---\nglob: src/**\ntitle: mine\n---\nrule\n");
    t.write("r/.cursor/rules/g.mdc", "---\nglobs: src/**, gone/**\n---\nrule\n");
    t.write(
        "r/.github/instructions/ts.instructions.md",
        "---\napplyTo:\n  - src/**\n  - test/**\nexcludeAgent: code_review\n---\nts\n",
    );
    t.write("r/CLAUDE.md", "Read @nope.md first.\n");
    t
}

fn check(t: &Tree, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .arg("check")
        .args(args)
        .current_dir(t.root())
        .env("HOME", t.home())
        .output()
        .expect("run check")
}

/// `check` says each mistake at the key or pattern, with the key the file uses and the fix it
/// offers; `check --fix` makes every safe fix (again, for what a fix shows) and reports what is
/// left; it never creates a file.
#[test]
fn check_says_each_mistake_where_it_is_written_and_fix_mends_the_safe_ones() {
    let t = mistaken();
    let o = check(&t, &["--format", "json"]);
    let json: Value = serde_json::from_slice(&o.stdout).expect("json");
    let said: Vec<(String, String, u64, u64, Option<String>)> = json["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap_or_default().to_string(),
                f["code"].as_str().unwrap_or_default().to_string(),
                f["line"].as_u64().unwrap_or_default(),
                f["column"].as_u64().unwrap_or_default(),
                f["fix"]["title"].as_str().map(str::to_string),
            )
        })
        .collect();
    let has = |path: &str, code: &str, line: u64, column: u64, fix: Option<&str>| {
        let want = (path.to_string(), code.to_string(), line, column, fix.map(str::to_string));
        assert!(said.contains(&want), "{want:?} not in {said:#?}");
    };
    has(".cursor/rules/r.mdc", "frontMatter", 2, 1, Some("Rename `glob` to `globs`"));
    has(".cursor/rules/r.mdc", "unknownKey", 3, 1, None);
    has(".cursor/rules/g.mdc", "deadPattern", 2, 16, Some("Drop the pattern `gone/**`, which matches no file"));
    has(".github/instructions/ts.instructions.md", "agentRule", 2, 1, Some("Join the `applyTo` list into one string"));
    has(".github/instructions/ts.instructions.md", "frontMatter", 5, 15, Some("Write `code-review`"));
    has("CLAUDE.md", "missingImport", 1, 6, Some("Create `nope.md`"));
    let unknown = json["findings"].as_array().and_then(|a| a.iter().find(|f| f["code"] == "unknownKey")).cloned();
    assert_eq!(
        unknown.map(|f| f["message"].clone()),
        Some(json!("Cursor does not read `title` in a rule (it reads `description`, `globs`, `alwaysApply`)"))
    );

    let o = check(&t, &["--fix"]);
    let err = String::from_utf8_lossy(&o.stderr);
    // Joining the list shows its `test/**` matches nothing: dropped on the second pass.
    assert!(err.contains("fixed 5 findings in 3 files"), "{err}");
    assert_eq!(t.read("r/.cursor/rules/r.mdc"), "---\nglobs: src/**\ntitle: mine\n---\nrule\n");
    assert_eq!(t.read("r/.cursor/rules/g.mdc"), "---\nglobs: src/**\n---\nrule\n");
    assert_eq!(
        t.read("r/.github/instructions/ts.instructions.md"),
        "---\napplyTo: \"src/**\"\nexcludeAgent: code-review\n---\nts\n"
    );
    assert!(!t.path("r/nope.md").exists(), "a fix of everything creates no file");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("info[unknownKey]") && out.contains("warning[missingImport]"), "{out}");
    assert!(!out.contains("frontMatter") && !out.contains("deadPattern") && !out.contains("agentRule"), "{out}");
    assert_eq!(o.status.code(), Some(1), "the missing import is left: {out}");
}

fn action_titles(actions: &Value) -> Vec<String> {
    actions.as_array().into_iter().flatten().filter_map(|a| a["title"].as_str().map(str::to_string)).collect()
}

/// The editor gets the same findings with their fixes: a quick fix per diagnostic that edits the
/// text (or creates the imported file), and one action of kind `source.fixAll.instructions`
/// that makes every safe fix of the file.
#[tokio::test]
async fn the_editor_offers_each_fix_and_a_fix_of_everything() {
    let t = mistaken();
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let rule = root.join(".cursor/rules/r.mdc");
    let d = c.diagnostic(&rule, "frontMatter").await;
    assert_eq!(d["range"], json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 4}}));
    let at = |d: &Value| json!({"start": d["range"]["start"], "end": d["range"]["end"]});
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri(&rule)}, "range": at(&d), "context": {"diagnostics": [d.clone()], "only": ["quickfix"]}}),
        )
        .await
        .expect("actions");
    assert_eq!(
        action_titles(&actions),
        ["Rename `glob` to `globs`", "Accept `frontMatter` for .cursor/rules/r.mdc in instructions-lsp.toml"]
    );
    assert_eq!(
        actions[0]["edit"]["documentChanges"],
        json!([{
            "textDocument": {"uri": uri(&rule), "version": null},
            "edits": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 4}}, "newText": "globs"}]
        }])
    );
    assert_eq!(actions[0]["isPreferred"], true);

    // Every safe fix of the instructions file at once.
    let ts = root.join(".github/instructions/ts.instructions.md");
    c.diagnostic(&ts, "frontMatter").await;
    let all = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri(&ts)}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
        .await
        .expect("fix all");
    assert_eq!(action_titles(&all), ["Fix 2 instruction-file findings"]);
    assert_eq!(all[0]["kind"], "source.fixAll.instructions");
    assert_eq!(all[0]["edit"]["documentChanges"][0]["textDocument"]["uri"], uri(&ts));
    let edits = all[0]["edit"]["documentChanges"][0]["edits"].as_array().cloned().unwrap_or_default();
    let texts: Vec<&str> = edits.iter().filter_map(|e| e["newText"].as_str()).collect();
    assert!(texts.contains(&"applyTo: \"src/**, test/**\"") && texts.contains(&"code-review"), "{edits:?}");

    // A missing import: create the file it names.
    let claude = root.join("CLAUDE.md");
    let d = c.diagnostic(&claude, "missingImport").await;
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri(&claude)}, "range": at(&d), "context": {"diagnostics": [d.clone()]}}),
        )
        .await
        .expect("actions");
    let create = actions.as_array().and_then(|a| a.iter().find(|a| a["title"] == "Create `nope.md`")).cloned();
    let create = create.unwrap_or_else(|| panic!("no create action: {actions}"));
    assert_eq!(
        create["edit"]["documentChanges"],
        json!([{"kind": "create", "uri": uri(&root.join("nope.md")), "options": {"overwrite": false, "ignoreIfExists": true}}])
    );
    c.finish().await;
}

/// What the agents say at a token follows typing before a save: an import typed in `CLAUDE.md`
/// that names no file is flagged at once, for Claude Code and Gemini CLI, and cleared when the
/// text drops it; a misspelt key typed in a Cursor rule is flagged, with its fix. Nothing is
/// written to the disk.
#[tokio::test]
async fn findings_at_tokens_follow_the_unsaved_buffer() {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/instructions-lsp.toml", "agents = [\"claude\", \"cursor\"]\n");
    t.write("r/src/a.ts", "x\n");
    t.write("r/CLAUDE.md", "Claude rules.\n");
    t.write("r/.cursor/rules/r.mdc", "---\nglobs: src/**\n---\nrule\n");
    let root = t.root();
    let claude = root.join("CLAUDE.md");
    let rule = root.join(".cursor/rules/r.mdc");
    let c = Client::start(&t.home(), &[&root], json!({})).await;
    c.open(&claude, "Claude rules.\n").await;
    c.open(&rule, "---\nglobs: src/**\n---\nrule\n").await;
    c.diagnostics_until(&claude, "the first pass", |_| true).await;
    c.change(&claude, 2, Some(((1, 0), (1, 0))), "Also read @docs/later.md now.\n").await;
    let typed =
        c.diagnostics_until(&claude, "the typed import", |d| d.iter().any(|d| d["code"] == "missingImport")).await;
    let d = typed.iter().find(|d| d["code"] == "missingImport").cloned().unwrap_or_default();
    assert_eq!(d["range"], json!({"start": {"line": 1, "character": 10}, "end": {"line": 1, "character": 24}}));
    assert!(d["message"].as_str().is_some_and(|m| m.starts_with("`@docs/later.md` names no file: Claude Code")), "{d}");
    assert_eq!(d["data"]["fix"]["title"], "Create `docs/later.md`");
    c.change(&claude, 3, Some(((1, 0), (2, 0))), "").await;
    c.diagnostics_until(&claude, "the import gone", |d| d.iter().all(|d| d["code"] != "missingImport")).await;

    c.change(&rule, 2, Some(((1, 0), (1, 5))), "glob").await;
    let typed = c.diagnostics_until(&rule, "the misspelt key", |d| d.iter().any(|d| d["code"] == "frontMatter")).await;
    let d = typed.iter().find(|d| d["code"] == "frontMatter").cloned().unwrap_or_default();
    assert_eq!(d["range"], json!({"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 4}}));
    assert_eq!(d["data"]["fix"]["title"], "Rename `glob` to `globs`");
    assert_eq!(t.read("r/.cursor/rules/r.mdc"), "---\nglobs: src/**\n---\nrule\n", "the disk is not written");
    c.finish().await;
}

/// A misspelt name in `instructions-lsp.toml` stops `check` with the name meant; `--fix` writes
/// it (each name in turn) and checks with the configuration mended. A word that merely shares
/// letters with the name meant is never rewritten.
#[test]
fn check_fix_mends_a_misspelt_configuration() {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/AGENTS.md", "rules\n");
    t.write("r/instructions-lsp.toml", "agents = [\"claud\", \"codx\"]\n[codex]\nmax-byte = 100\n");
    let o = check(&t, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("`agents` names `claud`, which is not an agent; expected some of")
    );
    let o = check(&t, &["--fix"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("fixed 3 findings in 1 file"), "{err}");
    assert_eq!(t.read("r/instructions-lsp.toml"), "agents = [\"claude\", \"codex\"]\n[codex]\nmax-bytes = 100\n");
    // An unknown key that is no misspelling: said, not rewritten.
    t.write("r/instructions-lsp.toml", "agents = [\"codex\"]\nbudget = 1\n");
    let o = check(&t, &["--fix"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(t.read("r/instructions-lsp.toml"), "agents = [\"codex\"]\nbudget = 1\n");
}

fn completion_labels(answer: &Value) -> Vec<String> {
    answer.as_array().into_iter().flatten().filter_map(|i| i["label"].as_str().map(str::to_string)).collect()
}

/// Completion, as typed: the project's files after `@` (from the file's folder), the keys the
/// targeted agents read in a rule's front matter, and the agents of the configuration, each
/// replacing the word typed so far.
#[tokio::test]
async fn completion_offers_files_keys_and_agents_as_typed() {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/instructions-lsp.toml", "agents = [\"cursor\", \"claude\"]\n");
    t.write("r/docs/guide.md", "guide\n");
    t.write("r/CLAUDE.md", "rules\n");
    t.write("r/.cursor/rules/r.mdc", "---\nglobs: src/**\n---\nrule\n");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let claude = root.join("CLAUDE.md");
    c.open(&claude, "rules\nRead @docs/g").await;
    let answer = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri(&claude)}, "position": {"line": 1, "character": 12}}),
        )
        .await
        .expect("completion");
    assert_eq!(completion_labels(&answer), ["guide.md"]);
    assert_eq!(
        answer[0]["textEdit"],
        json!({"range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 12}}, "newText": "guide.md"})
    );
    let rule = root.join(".cursor/rules/r.mdc");
    c.open(&rule, "---\nglobs: src/**\nal\n---\nrule\n").await;
    let answer = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri(&rule)}, "position": {"line": 2, "character": 2}}),
        )
        .await
        .expect("completion");
    assert_eq!(completion_labels(&answer), ["description", "alwaysApply"]);
    assert_eq!(answer[1]["textEdit"]["newText"], "alwaysApply: ");
    let config = root.join("instructions-lsp.toml");
    c.open(&config, "agents = [\"claude\", \"cu").await;
    let answer = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri(&config)}, "position": {"line": 0, "character": 23}}),
        )
        .await
        .expect("completion");
    assert!(completion_labels(&answer).contains(&"cursor".to_string()), "{answer}");
    assert_eq!(answer[0]["textEdit"]["range"]["start"], json!({"line": 0, "character": 21}));
    // The buffer as typed, not the disk: a table's keys.
    c.change(&config, 2, None, "agents = [\"codex\"]\n[codex]\nma").await;
    let answer = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri(&config)}, "position": {"line": 2, "character": 2}}),
        )
        .await
        .expect("completion");
    assert_eq!(completion_labels(&answer), ["max-bytes", "file-names"]);
    c.finish().await;
}

/// The Markdown links and `#file:` mentions Copilot follows are links too, resolved from the
/// file's folder: not an image, not one in code, not one out of the project; a hover on one
/// says the file is linked, not imported.
#[tokio::test]
async fn markdown_links_and_file_mentions_are_followed_like_imports() {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("outside.md", "not the project's\n");
    t.write("r/docs/guide.md", "guide\n");
    t.write("r/docs/style.md", "style\n");
    let text = "See [the guide](../../docs/guide.md) and #file:../../docs/style.md here\n![pic](../../docs/guide.md) `[x](../../docs/guide.md)` [out](../../../outside.md)\n";
    let rule = t.write("r/.github/instructions/a.instructions.md", text);
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let links =
        c.request("textDocument/documentLink", json!({"textDocument": {"uri": uri(&rule)}})).await.expect("links");
    let got: Vec<(Value, Value)> =
        links.as_array().into_iter().flatten().map(|l| (l["range"]["start"].clone(), l["target"].clone())).collect();
    assert_eq!(
        got,
        [
            (json!({"line": 0, "character": 16}), json!(uri(&root.join("docs/guide.md")))),
            (json!({"line": 0, "character": 47}), json!(uri(&root.join("docs/style.md")))),
        ],
        "{links}"
    );
    assert_eq!(links[0]["tooltip"], "Open the linked file");
    let def = c
        .request(
            "textDocument/definition",
            json!({"textDocument": {"uri": uri(&rule)}, "position": {"line": 0, "character": 50}}),
        )
        .await
        .expect("definition");
    assert_eq!(def["uri"], uri(&root.join("docs/style.md")));
    c.finish().await;
}

/// Renaming or moving a file rewrites the imports and links that name it, in the files the
/// agents read and the open ones, before the move (`workspace/willRenameFiles`); the same
/// mentions are the file's references.
#[tokio::test]
async fn a_rename_rewrites_the_imports_that_name_the_file() {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/docs/guide.md", "guide\n");
    let claude = t.write("r/CLAUDE.md", "Read @docs/guide.md first.\n");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let rules = root.join(".github/instructions/a.instructions.md");
    c.open(&rules, "---\napplyTo: \"**\"\n---\nSee [the guide](../../docs/guide.md).\n").await;
    let edit = c
        .request(
            "workspace/willRenameFiles",
            json!({"files": [{"oldUri": uri(&root.join("docs/guide.md")), "newUri": uri(&root.join("guides/main.md"))}]}),
        )
        .await
        .expect("edit");
    let changes = edit["documentChanges"].as_array().cloned().unwrap_or_default();
    let of = |path: &std::path::Path| {
        changes.iter().find(|c| c["textDocument"]["uri"] == uri(path)).map(|c| c["edits"].clone()).unwrap_or_default()
    };
    assert_eq!(
        of(&claude),
        json!([{"range": {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 19}}, "newText": "guides/main.md"}]),
        "{edit}"
    );
    assert_eq!(
        of(&rules),
        json!([{"range": {"start": {"line": 3, "character": 16}, "end": {"line": 3, "character": 35}}, "newText": "../../guides/main.md"}]),
        "{edit}"
    );
    // Who names the file: its references, the import and the link.
    let guide = root.join("docs/guide.md");
    let refs = c
        .request(
            "textDocument/references",
            json!({"textDocument": {"uri": uri(&guide)}, "position": {"line": 0, "character": 0}, "context": {"includeDeclaration": false}}),
        )
        .await
        .expect("references");
    let mut got: Vec<(String, Value)> = refs
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| (l["uri"].as_str().unwrap_or_default().to_string(), l["range"]["start"].clone()))
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        [(uri(&rules), json!({"line": 3, "character": 16})), (uri(&claude), json!({"line": 0, "character": 5}))],
        "{refs}"
    );
    c.finish().await;
}

/// `edits` (LSP text edits, ASCII text) applied to `text`.
fn applied(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| {
        let (line, ch) = (p["line"].as_u64().unwrap_or(0) as usize, p["character"].as_u64().unwrap_or(0) as usize);
        text.split_inclusive('\n').take(line).map(str::len).sum::<usize>() + ch
    };
    let mut out = text.to_string();
    for e in edits.iter().rev() {
        let (start, end) = (offset(&e["range"]["start"]), offset(&e["range"]["end"]));
        out.replace_range(start..end, e["newText"].as_str().unwrap_or_default());
    }
    out
}

/// The quick fixes the server offers on `path`'s diagnostic of code `code`.
async fn actions_for(c: &mut Client, path: &std::path::Path, code: &str) -> Value {
    let d = c.diagnostic(path, code).await;
    let params = json!({"textDocument": {"uri": uri(path)}, "range": d["range"].clone(), "context": {"diagnostics": [d], "only": ["quickfix"]}});
    c.request("textDocument/codeAction", params).await.expect("actions")
}

/// A repository whose `AGENTS.md` (40,000 bytes) Codex cuts at its 32 KiB budget, with a
/// `CLAUDE.md` opencode ignores and the configuration `config`: its tree, and the paths of those
/// three files.
fn cut_by_codex(config: &str) -> (Tree, std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let t = Tree::new();
    t.mkdir("r/.git");
    let rule = "- a rule for every package\n";
    let agents_md = t.write("r/AGENTS.md", rule.repeat(40_000 / rule.len()));
    let claude = t.write("r/CLAUDE.md", "claude rules\n");
    let config = t.write("r/instructions-lsp.toml", config);
    (t, agents_md, claude, config)
}

/// The quick fixes that write the configuration: raise the budget of the agent that cuts a file
/// (a decision, never made by a fix of everything), and accept a finding for one file; once
/// written, the finding is gone from the editor and from `check`.
#[tokio::test]
async fn a_budget_is_raised_and_a_finding_accepted_in_the_configuration() {
    let (t, agents_md, claude, config) = cut_by_codex("# ours\nagents = [\"codex\", \"claude\", \"opencode\"]\n");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let actions = actions_for(&mut c, &agents_md, "agentCut").await;
    let raise = actions[0].clone();
    assert_eq!(raise["title"], "Raise Codex's budget to 40 KiB in instructions-lsp.toml", "{actions}");
    assert_eq!(raise["isPreferred"], false);
    let change = &raise["edit"]["documentChanges"][0];
    assert_eq!(change["textDocument"]["uri"], uri(&config));
    let before = std::fs::read_to_string(&config).expect("config");
    let after = applied(&before, change["edits"].as_array().map(Vec::as_slice).unwrap_or_default());
    assert_eq!(after, "# ours\nagents = [\"codex\", \"claude\", \"opencode\"]\n\n[codex]\nmax-bytes = 40960\n");
    // `check` offers it too, as a fix it does not make by itself.
    let json: Value = serde_json::from_slice(&check(&t, &["--format", "json"]).stdout).expect("json");
    let cut = json["findings"].as_array().into_iter().flatten().find(|f| f["code"] == "agentCut").cloned();
    assert_eq!(cut.map(|f| f["fix"].clone()), Some(json!({"title": raise["title"], "safe": false})));
    check(&t, &["--fix"]);
    assert_eq!(std::fs::read_to_string(&config).expect("config"), before, "check --fix raises no budget");
    // Accept: opencode ignoring CLAUDE.md is known and wanted here.
    let actions = actions_for(&mut c, &claude, "agentIgnored").await;
    let title = "Accept `agentIgnored` for CLAUDE.md in instructions-lsp.toml";
    assert!(action_titles(&actions).iter().any(|a| a == title), "{actions}");
    c.finish().await;
    // Both written, as the editor would: the budget first, then the acceptance, placed in the
    // file as it is then.
    std::fs::write(&config, &after).expect("write");
    let edits_now = {
        let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
        let actions = actions_for(&mut c, &claude, "agentIgnored").await;
        let accept = actions.as_array().and_then(|a| a.iter().find(|a| a["title"] == title)).cloned();
        c.finish().await;
        accept.map(|a| a["edit"]["documentChanges"][0]["edits"].clone()).unwrap_or_default()
    };
    let accepted_now = applied(&after, edits_now.as_array().map(Vec::as_slice).unwrap_or_default());
    assert!(accepted_now.ends_with("\n[accept]\n\"CLAUDE.md\" = [\"agentIgnored\"]\n"), "{accepted_now}");
    std::fs::write(&config, &accepted_now).expect("write");
    let out = String::from_utf8_lossy(&check(&t, &[]).stdout).into_owned();
    assert!(!out.contains("agentCut") && !out.contains("CLAUDE.md:1:1: info[agentIgnored]"), "{out}");
    assert!(out.contains("AGENTS.md:1:1: info[agentIgnored]"), "accepted for CLAUDE.md alone: {out}");
    let c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let all = c.diagnostics_until(&agents_md, "the diagnostics", |_| true).await;
    assert!(all.iter().all(|d| d["code"] != "agentCut"), "{all:?}");
    c.finish().await;
}

/// A fix of the configuration is placed in the configuration as the editor holds it, saved or
/// not: the edit names the buffer's version (an editor whose buffer moved on refuses it rather
/// than misplacing it), and a buffer that does not read as a configuration gets no such fix.
#[tokio::test]
async fn a_configuration_fix_is_placed_in_the_unsaved_buffer() {
    let saved = "agents = [\"codex\", \"claude\", \"opencode\"]\n";
    let (t, agents_md, claude, config) = cut_by_codex(saved);
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    // Typed, not saved: a comment above, and a `[codex]` table the disk does not have.
    let typed = format!("# the team's settings\n{saved}\n[codex]\nmax-bytes = 1000\n\n[claude]\n");
    c.open(&config, saved).await;
    c.change(&config, 2, None, &typed).await;
    let edit_of = |actions: &Value, title: &str| {
        let action = actions.as_array().and_then(|a| a.iter().find(|a| a["title"] == title)).cloned();
        action.map(|a| a["edit"]["documentChanges"].clone()).unwrap_or_default()
    };
    let actions = actions_for(&mut c, &agents_md, "agentCut").await;
    let changes = edit_of(&actions, "Raise Codex's budget to 40 KiB in instructions-lsp.toml");
    assert_eq!(changes.as_array().map(Vec::len), Some(1), "one edit, no file made: {actions}");
    assert_eq!(changes[0]["textDocument"], json!({"uri": uri(&config), "version": 2}));
    let raised = applied(&typed, changes[0]["edits"].as_array().map(Vec::as_slice).unwrap_or_default());
    assert_eq!(raised, format!("# the team's settings\n{saved}\n[codex]\nmax-bytes = 40960\n\n[claude]\n"));
    let actions = actions_for(&mut c, &claude, "agentIgnored").await;
    let changes = edit_of(&actions, "Accept `agentIgnored` for CLAUDE.md in instructions-lsp.toml");
    let accepted = applied(&typed, changes[0]["edits"].as_array().map(Vec::as_slice).unwrap_or_default());
    assert_eq!(accepted, format!("{typed}\n[accept]\n\"CLAUDE.md\" = [\"agentIgnored\"]\n"));
    // Half typed: no configuration edit is sure, so none is offered.
    c.change(&config, 3, None, "agents = [\"codex\",\n").await;
    let actions = actions_for(&mut c, &agents_md, "agentCut").await;
    assert!(action_titles(&actions).iter().all(|a| !a.starts_with("Raise")), "{actions}");
    assert_eq!(std::fs::read_to_string(&config).expect("config"), saved, "nothing written by the server");
    c.finish().await;
}
