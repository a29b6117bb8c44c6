//! The language server driven in process by a fake client over in-memory pipes.

use crate::common::lsp::{Client, uri};
use crate::common::tree::Tree;
use serde_json::{Value, json};

fn paths(block: &Value) -> Vec<String> {
    block["files"]
        .as_array()
        .map_or_else(Vec::new, |f| f.iter().map(|f| f["path"].as_str().unwrap_or("").to_string()).collect())
}

#[tokio::test]
async fn effective_baseline_preview_and_skipped_for_one_folder() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    t.write("r/CLAUDE.md", "old");
    t.write("r/app/AGENTS.md", "app rules");
    t.write("r/app/deep/AGENTS.md", "deep rules");
    let mut c = Client::start(&t.home(), &[&t.path("r/app")], json!({})).await;
    let e = c.effective(json!({})).await;
    assert_eq!(e["folder"], uri(&t.path("r/app")));
    assert_eq!(e["projectRoot"], uri(&t.root()));
    assert_eq!(e["budgetBytes"], 65536);
    assert_eq!(paths(&e["baseline"]), ["AGENTS.md", "app/AGENTS.md"]);
    assert!(e["baseline"]["rendered"].as_str().is_some_and(|r| r.contains("## app/AGENTS.md\n\napp rules")));
    assert_eq!(e["skipped"][0]["reason"], "shadowed");
    assert_eq!(e["preview"], Value::Null);
    let e = c.effective(json!({"uri": uri(&t.path("r/app/deep/main.rs"))})).await;
    assert_eq!(paths(&e["preview"]), ["app/deep/AGENTS.md"]);
    assert_eq!(e["nested"], json!([]), "a preview reaches nothing");
    c.finish().await;
}

#[tokio::test]
async fn did_open_is_a_read_touch_and_instructions_touch_reaches_scopes_once() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root");
    t.write("r/a/AGENTS.md", "a rules");
    t.write("r/a/b/CLAUDE.md", "b rules");
    t.write("r/c/AGENTS.md", "c rules");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({})).await;
    c.open(&t.path("r/a/b/file.rs"), "fn main() {}").await;
    let e = c.effective(json!({})).await;
    assert_eq!(e["nested"].as_array().map(Vec::len), Some(1));
    assert_eq!(paths(&e["nested"][0]), ["a/AGENTS.md", "a/b/CLAUDE.md"]);
    c.open(&t.path("r/a/b/other.rs"), "").await;
    c.notify("instructions/touch", json!({"uri": uri(&t.path("r/c/x.py")), "kind": "edit"})).await;
    let e = c.effective(json!({})).await;
    let nested: Vec<Vec<String>> = e["nested"].as_array().expect("nested").iter().map(paths).collect();
    assert_eq!(nested, [vec!["a/AGENTS.md", "a/b/CLAUDE.md"], vec!["c/AGENTS.md"]], "each scope exactly once");
    t.write("r/d/AGENTS.md", "d rules");
    c.notify("textDocument/didSave", json!({"textDocument": {"uri": uri(&t.path("r/d/new.rs"))}})).await;
    let e = c.effective(json!({})).await;
    assert_eq!(
        e["nested"].as_array().and_then(|n| n.last()).map(paths),
        Some(vec!["d/AGENTS.md".to_string()]),
        "a save is a write touch"
    );
    c.finish().await;
}

#[tokio::test]
async fn sibling_folders_sharing_a_root_are_isolated() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "shared root");
    t.write("r/one/sub/AGENTS.md", "one sub");
    t.write("r/two/sub/AGENTS.md", "two sub");
    let (one, two) = (t.path("r/one"), t.path("r/two"));
    let mut c = Client::start(&t.home(), &[&one, &two], json!({})).await;
    c.open(&t.path("r/one/sub/x.rs"), "").await;
    let e1 = c.effective(json!({"uri": uri(&one)})).await;
    let e2 = c.effective(json!({"uri": uri(&two)})).await;
    assert_eq!(e1["nested"].as_array().map(Vec::len), Some(1));
    assert_eq!(e2["nested"], json!([]), "a touch in one folder reaches nothing in the other");
    assert_eq!(paths(&e1["baseline"]), ["AGENTS.md"]);
    assert_eq!(paths(&e2["baseline"]), ["AGENTS.md"]);
    c.finish().await;
}

#[tokio::test]
async fn a_document_belongs_to_the_innermost_folder() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root");
    t.write("r/inner/AGENTS.md", "inner");
    t.write("r/inner/pkg/AGENTS.md", "pkg");
    let (outer, inner) = (t.root(), t.path("r/inner"));
    let mut c = Client::start(&t.home(), &[&outer, &inner], json!({})).await;
    c.open(&t.path("r/inner/pkg/x.rs"), "").await;
    let eo = c.effective(json!({"uri": uri(&outer)})).await;
    let ei = c.effective(json!({"uri": uri(&inner)})).await;
    assert_eq!(eo["nested"], json!([]), "the outer folder saw no touch");
    assert_eq!(paths(&ei["nested"][0]), ["inner/pkg/AGENTS.md"]);
    let by_file = c.effective(json!({"uri": uri(&t.path("r/inner/pkg/x.rs"))})).await;
    assert_eq!(by_file["folder"], uri(&inner));
    c.finish().await;
}

#[tokio::test]
async fn per_folder_settings_from_workspace_configuration() {
    let t = Tree::new();
    t.write("r/a/AGENTS.md", "a rules");
    t.write("r/b/AGENTS.md", "b rules");
    t.write("r/b/AGENTS.local.md", "b mine");
    let (a, b) = (t.path("r/a"), t.path("r/b"));
    let mut c = Client::spawn_only(&t.home()).await;
    c.set_config(Some(&a), json!({"profile": "dsh"}));
    c.set_config(Some(&b), json!({"profile": "ds4"}));
    c.initialize(&[&a, &b], json!({}), json!({})).await;
    c.sync().await;
    let ea = c.effective(json!({"uri": uri(&a)})).await;
    let eb = c.effective(json!({"uri": uri(&b)})).await;
    assert!(ea["baseline"]["rendered"].as_str().is_some_and(|r| r.starts_with("<workspace-context")));
    assert!(eb["baseline"]["rendered"].as_str().is_some_and(|r| r.starts_with("<system-reminder>")));
    assert_eq!(paths(&eb["baseline"]), ["b/AGENTS.md", "b/AGENTS.local.md"]);
    c.finish().await;
}

#[tokio::test]
async fn invalid_settings_are_shown_and_the_last_good_value_is_kept() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "x".repeat(2000));
    let mut c = Client::spawn_only(&t.home()).await;
    c.set_config(None, json!({"baselineMaxBytes": 700}));
    c.initialize(&[&t.root()], json!({}), json!({})).await;
    c.sync().await;
    assert_eq!(c.effective(json!({})).await["budgetBytes"], 700);
    c.set_config(None, json!({"baselineMaxBytes": "huge", "frame": "xml"}));
    c.notify("workspace/didChangeConfiguration", json!({"settings": null})).await;
    let shown = c.expect_message("window/showMessage").await;
    let message = shown["params"]["message"].as_str().unwrap_or("");
    assert!(message.contains("baselineMaxBytes") && message.contains("integer"), "{message}");
    assert!(message.contains("frame") && message.contains("workspace-context"), "{message}");
    let e = c.effective(json!({})).await;
    assert_eq!(e["budgetBytes"], 700, "the last good value is kept");
    assert_eq!(e["baseline"]["bytes"], 700);
    c.finish().await;
}

#[tokio::test]
async fn initialization_options_apply_when_the_client_cannot_pull() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root");
    t.write("r/CLAUDE.md", "claude");
    let mut c = Client::spawn_only(&t.home()).await;
    c.initialize_raw(&[&t.root()], json!({"instructionFileCandidates": ["CLAUDE.md"]}), json!({})).await;
    let e = c.effective(json!({})).await;
    assert_eq!(paths(&e["baseline"]), ["CLAUDE.md"]);
    assert_eq!(c.config_requests(), 0);
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"instructions": {"instructionFileCandidates": ["AGENTS.md"]}}}),
    )
    .await;
    let e = c.effective(json!({})).await;
    assert_eq!(paths(&e["baseline"]), ["AGENTS.md"]);
    c.finish().await;
}

#[tokio::test]
async fn unsaved_uses_open_buffers() {
    let t = Tree::new();
    let root_file = t.write("r/AGENTS.md", "on disk");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({})).await;
    c.open(&root_file, "on disk").await;
    c.change(&root_file, 2, Some(((0, 0), (0, 2))), "in the buffer,").await;
    let saved = c.effective(json!({})).await;
    let unsaved = c.effective(json!({"unsaved": true})).await;
    assert!(saved["baseline"]["rendered"].as_str().is_some_and(|r| r.contains("\n\non disk\n\n")));
    assert!(
        unsaved["baseline"]["rendered"].as_str().is_some_and(|r| r.contains("\n\nin the buffer, disk\n\n")),
        "{unsaved}"
    );
    c.finish().await;
}

#[tokio::test]
async fn shadowed_claude_md_gets_a_tagged_warning_pointing_at_the_winner() {
    let t = Tree::new();
    let winner = t.write("r/AGENTS.md", "root");
    let shadowed = t.write("r/CLAUDE.md", "claude rules\n");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({"profile": "dsh"})).await;
    c.open(&shadowed, "claude rules\n").await;
    let d = c.diagnostic(&shadowed, "shadowed").await;
    assert_eq!(d["severity"], 2);
    assert_eq!(d["source"], "instructions");
    assert_eq!(d["tags"], json!([1]));
    assert_eq!(d["range"], json!({"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 12}}));
    assert_eq!(d["relatedInformation"][0]["location"]["uri"], uri(&winner));
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri(&shadowed)}, "range": d["range"], "context": {"diagnostics": [d]}}),
        )
        .await
        .expect("code actions");
    let open = actions
        .as_array()
        .and_then(|a| a.iter().find(|a| a["command"]["command"] == "instructions.open"))
        .cloned()
        .expect("open action");
    assert!(open["title"].as_str().is_some_and(|t| t.contains("AGENTS.md")));
    c.request("workspace/executeCommand", json!({"command": "instructions.open", "arguments": [uri(&winner)]}))
        .await
        .expect("execute");
    let shown = c.expect_message("window/showDocument").await;
    assert_eq!(shown["params"]["uri"], uri(&winner));
    c.finish().await;
}

#[tokio::test]
async fn typing_changes_diagnostics_live_without_saving() {
    // The budget (docs/rendering.md) omits broader files whole before it cuts the most specific one, so the
    // root file's length never moves a child's cut; what typing in the root does change live
    // is the root's own status and the chain-wide findings of the child.
    let t = Tree::new();
    let root_file = t.write("r/AGENTS.md", "short");
    let child_text = format!("{}\n{}", "a".repeat(100), "b".repeat(400));
    let child = t.write("r/app/AGENTS.md", &child_text);
    let app = t.path("r/app");
    let mut c = Client::start(&t.home(), &[&app], json!({"baselineMaxBytes": 1200, "profile": "dsh"})).await;
    c.sync().await;
    c.diagnostics_until(&root_file, "nothing on the root", <[Value]>::is_empty).await;
    c.open(&root_file, "short").await;
    c.change(&root_file, 2, Some(((0, 5), (0, 5))), &"z".repeat(400)).await;
    let omitted = c.diagnostic(&root_file, "omitted").await;
    assert!(omitted["message"].as_str().is_some_and(|m| m.contains("`app`") && m.contains("1,200 bytes")), "{omitted}");
    c.change(&root_file, 3, None, &child_text).await;
    let dup = c.diagnostic(&child, "duplicate").await;
    assert_eq!(dup["relatedInformation"][0]["location"]["uri"], uri(&root_file));
    c.change(&root_file, 4, None, "short").await;
    c.diagnostics_until(&child, "the duplicate hint goes", |d| d.iter().all(|d| d["code"] != "duplicate")).await;
    c.diagnostics_until(&root_file, "the root is whole again", <[Value]>::is_empty).await;
    assert!(std::fs::read_to_string(&root_file).is_ok_and(|s| s == "short"), "nothing was saved");

    // Typing in a truncated file moves its cut live.
    c.change(&root_file, 5, None, &"r".repeat(900)).await;
    c.open(&child, &child_text).await;
    c.change(&child, 2, None, &format!("{}\n{}", "a".repeat(100), "b".repeat(1400))).await;
    let first = c.diagnostic(&child, "truncated").await;
    assert_eq!(first["range"]["start"]["line"], 1);
    c.change(&child, 3, Some(((0, 0), (0, 0))), &"c".repeat(700)).await;
    let moved = c
        .diagnostics_until(&child, "the cut moves to line 0", |d| {
            d.iter().any(|d| d["code"] == "truncated" && d["range"]["start"]["line"] == 0)
        })
        .await;
    assert!(moved.iter().any(|d| d["code"] == "truncated"));
    c.finish().await;
}

#[tokio::test]
async fn a_truncated_range_starts_at_the_exact_column_in_utf16_and_utf8() {
    for (utf8, caps) in [(false, json!({})), (true, json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}))] {
        let t = Tree::new();
        let line2 = "😀日本語テキスト".repeat(40);
        let content = format!("first line\n{line2}\n");
        let file = t.write("r/AGENTS.md", &content);
        let mut c = Client::spawn_only(&t.home()).await;
        let init = c.initialize(&[&t.root()], json!({"baselineMaxBytes": 700, "profile": "dsh"}), caps).await;
        assert_eq!(init["capabilities"]["positionEncoding"], if utf8 { "utf-8" } else { "utf-16" });
        let e = c.effective(json!({})).await;
        let included = e["baseline"]["truncated"][0]["includedBytes"].as_u64().expect("truncated") as usize;
        let prefix = &content[..included];
        let line_start = prefix.rfind('\n').map_or(0, |i| i + 1);
        let col = if utf8 { prefix[line_start..].len() } else { prefix[line_start..].encode_utf16().count() };
        let d = c.diagnostic(&file, "truncated").await;
        assert_eq!(d["range"]["start"], json!({"line": prefix.matches('\n').count(), "character": col}));
        assert_eq!(d["range"]["end"], json!({"line": 2, "character": 0}));
        c.finish().await;
    }
}

#[tokio::test]
async fn hover_and_code_lens_tell_position_status_and_overrides() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root");
    let mid = t.write("r/app/CLAUDE.md", "app rules");
    t.write("r/app/AGENTS.local.md", "mine");
    let app = t.path("r/app");
    let mut c = Client::start(&t.home(), &[&app], json!({"localInstructionFileCandidates": ["AGENTS.local.md"], "profiles": ["dsh", "codex", "claude", "gemini", "opencode", "dsh-next"]})).await;
    c.open(&mid, "app rules").await;
    let hover = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&mid)}, "position": {"line": 0, "character": 1}}),
        )
        .await
        .expect("hover");
    let text = hover["contents"]["value"].as_str().unwrap_or("");
    assert!(text.contains("#2 of 3"), "{text}");
    assert!(text.contains("loaded whole"), "{text}");
    assert!(text.contains("overrides `AGENTS.md`") && text.contains("overridden by `app/AGENTS.local.md`"), "{text}");
    assert!(text.contains("sha256 `") && text.contains("scope `project`"), "{text}");
    assert!(
        text.contains(
            "**Agents** working in app:\n\n- Codex does not read this file\n- Claude Code loads this file\n- Gemini CLI does not read this file\n- opencode, started at the project root, loads this file when it reads a file in `app`\n- DeepSeek Harness (next) loads this file\n"
        ),
        "each agent's view of the file, in the words of `check`: {text}"
    );
    let lenses = c.request("textDocument/codeLens", json!({"textDocument": {"uri": uri(&mid)}})).await.expect("lens");
    let title = lenses[0]["command"]["title"].as_str().unwrap_or("");
    assert!(title.starts_with("app: #2 of 3 · loaded · 9 B · "), "{title}");
    // The rename action: app/CLAUDE.md is the winner and AGENTS.md does not exist there.
    let actions = c
        .request("textDocument/codeAction", json!({"textDocument": {"uri": uri(&mid)}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}))
        .await
        .expect("actions");
    let rename = &actions[0]["edit"]["documentChanges"][0];
    assert_eq!(rename["kind"], "rename");
    assert_eq!(rename["newUri"], uri(&t.path("r/app/AGENTS.md")));
    // Not a candidate: no hover.
    let none = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri(&t.path("r/app/x.rs"))}, "position": {"line": 0, "character": 0}}),
        )
        .await
        .expect("hover");
    assert_eq!(none, Value::Null);
    c.finish().await;
}

#[tokio::test]
async fn bad_requests_get_32602_and_the_server_keeps_serving() {
    let t = Tree::new();
    t.write("r/one/AGENTS.md", "one");
    t.mkdir("r/two");
    let (one, two) = (t.path("r/one"), t.path("r/two"));
    let mut c = Client::start(&t.home(), &[&one, &two], json!({})).await;
    let cases = [
        (json!({}), "several workspace folders"),
        (json!({"uri": uri(&t.path("elsewhere"))}), "not inside any workspace folder"),
        (json!({"uri": "untitled:1"}), "file:// URI"),
        (json!({"uri": 42}), "accepted params: { uri?: string, unsaved?: boolean, profile?: "),
        (json!({"unsaved": "yes"}), "invalid type"),
        (json!([1, 2]), "accepted params"),
    ];
    for (params, needle) in cases {
        let err = c.request("instructions/effective", params.clone()).await.expect_err("an error");
        assert_eq!(err["code"], -32602, "{params}");
        assert!(err["message"].as_str().is_some_and(|m| m.contains(needle)), "{params}: {err}");
    }
    c.notify("instructions/touch", json!({"uri": 3})).await;
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri(&t.path("r/one/nope.md")), "version": 2}, "contentChanges": [{"text": "x"}]})).await;
    let ok = c.effective(json!({"uri": uri(&one)})).await;
    assert_eq!(paths(&ok["baseline"]), ["one/AGENTS.md"]);
    c.finish().await;
}

#[tokio::test]
async fn removing_a_folder_clears_only_its_diagnostics() {
    let t = Tree::new();
    let a_claude = t.write("r/a/CLAUDE.md", "a");
    t.write("r/a/AGENTS.md", "a");
    let b_claude = t.write("r/b/CLAUDE.md", "b");
    t.write("r/b/AGENTS.md", "b");
    let (a, b) = (t.path("r/a"), t.path("r/b"));
    let mut c = Client::start(&t.home(), &[&a], json!({"profile": "dsh"})).await;
    c.diagnostic(&a_claude, "shadowed").await;
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": uri(&b), "name": "b"}], "removed": []}}),
    )
    .await;
    c.diagnostic(&b_claude, "shadowed").await;
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [{"uri": uri(&a), "name": "a"}]}}),
    )
    .await;
    c.diagnostics_until(&a_claude, "cleared", <[Value]>::is_empty).await;
    c.diagnostic(&b_claude, "shadowed").await;
    let err = c.request("instructions/effective", json!({"uri": uri(&a)})).await.expect_err("a is gone");
    assert_eq!(err["code"], -32602);
    c.finish().await;
}

#[tokio::test]
async fn without_folders_a_session_per_document_project_root() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root");
    t.write("r/pkg/AGENTS.md", "pkg");
    let mut c = Client::start(&t.home(), &[], json!({})).await;
    c.open(&t.path("r/pkg/x.rs"), "").await;
    let e = c.effective(json!({"uri": uri(&t.path("r/pkg/x.rs"))})).await;
    assert_eq!(e["folder"], uri(&t.root()));
    assert_eq!(paths(&e["nested"][0]), ["pkg/AGENTS.md"]);
    c.finish().await;
}

const RULE: &str = "- a root rule that every package has to follow, written at length\n";

/// A root AGENTS.md past Codex's 32 KiB budget, a package file, and a shadowed CLAUDE.md.
fn codex_spent_tree() -> Tree {
    let t = Tree::new();
    let line = RULE;
    t.write("r/AGENTS.md", line.repeat(33_000 / line.len() + 1));
    t.write("r/CLAUDE.md", "old claude rules");
    t.write("r/pkg/AGENTS.md", "package rules");
    t
}

#[tokio::test]
async fn effective_answers_one_profile_or_all_of_them() {
    let t = codex_spent_tree();
    let pkg = t.path("r/pkg");
    let mut c = Client::start(&t.home(), &[&pkg], json!({})).await;
    let codex = c.effective(json!({"profile": "codex"})).await;
    assert_eq!(codex["profile"], "codex");
    assert_eq!(codex["folder"], uri(&pkg));
    let status: Vec<(String, String)> = codex["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| (f["path"].as_str().unwrap_or("").to_string(), f["status"].as_str().unwrap_or("").to_string()))
        .collect();
    // Named from the project root, also for a folder below it (not by an absolute path).
    assert_eq!(status, [("AGENTS.md".into(), "truncated".into()), ("pkg/AGENTS.md".into(), "omitted".into())]);
    assert_eq!(codex["files"][0]["includedBytes"], 32768);

    let all = c.effective(json!({"profile": "all"})).await;
    let names: Vec<&str> =
        all["profiles"].as_array().expect("profiles").iter().filter_map(|p| p["profile"].as_str()).collect();
    assert_eq!(names, ["dsh", "ds4", "codex", "claude", "gemini", "opencode", "dsh-next", "copilot", "cursor"]);
    let dsh = &all["profiles"][0];
    assert!(
        dsh["files"].as_array().expect("files").iter().any(|f| f["path"] == "pkg/AGENTS.md" && f["status"] == "loaded")
    );
    assert!(
        dsh["files"].as_array().expect("files").iter().any(|f| f["path"] == "CLAUDE.md" && f["status"] == "shadowed")
    );
    let claude = &all["profiles"][3];
    assert_eq!(claude["files"][0]["path"], "CLAUDE.md");
    assert_eq!(claude["text"].as_str().map(|t| t.contains("old claude rules")), Some(true));
    assert_eq!(claude["parts"].as_array().map(Vec::len), Some(1), "Claude Code's one reminder at start");

    let err = c.request("instructions/effective", json!({"profile": "windsurf"})).await.expect_err("unknown profile");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(message.contains("unknown profile `windsurf`") && message.contains("cursor, all"), "{message}");
    c.finish().await;
}

#[tokio::test]
async fn profiles_setting_publishes_each_agents_cuts_as_diagnostics() {
    let t = codex_spent_tree();
    let pkg = t.path("r/pkg");
    let c = Client::start(&t.home(), &[&pkg], json!({"profiles": ["dsh", "codex"]})).await;
    let cut = c.diagnostic(&t.path("r/AGENTS.md"), "agentCut").await;
    let message = cut["message"].as_str().unwrap_or_default();
    let line = 32768 / RULE.len() + 1;
    assert!(message.starts_with(&format!("Codex cuts this file at line {line}, after 32,768 of ")), "{message}");
    assert!(message.contains("32 KiB shared budget"), "{message}");
    assert_eq!(cut["range"]["start"]["line"], line - 1);
    let left_out = c.diagnostic(&t.path("r/pkg/AGENTS.md"), "agentCut").await;
    assert_eq!(
        left_out["message"].as_str().map(|m| m.contains("Codex leaves this file out") && m.contains("spent by")),
        Some(true),
        "{left_out}"
    );
    // The session's own findings are still there.
    c.diagnostic(&t.path("r/CLAUDE.md"), "shadowed").await;
    // Agents read the disk: a smaller root file on disk lifts both cuts.
    t.write("r/AGENTS.md", "short root rules");
    let root = t.path("r/AGENTS.md");
    c.diagnostics_until(&root, "no agentCut", |d| d.iter().all(|d| d["code"] != "agentCut")).await;
    let pkg_file = t.path("r/pkg/AGENTS.md");
    c.diagnostics_until(&pkg_file, "no agentCut", |d| d.iter().all(|d| d["code"] != "agentCut")).await;
    c.finish().await;

    // Without dsh in `profiles`, only the agent's findings are published.
    let t = codex_spent_tree();
    let pkg = t.path("r/pkg");
    let c = Client::start(&t.home(), &[&pkg], json!({"profiles": ["codex"]})).await;
    c.diagnostic(&t.path("r/AGENTS.md"), "agentCut").await;
    let left = c.diagnostics_until(&t.path("r/CLAUDE.md"), "no dsh findings", |d| d.is_empty()).await;
    assert!(left.is_empty());
    c.finish().await;
}

#[tokio::test]
async fn a_file_uri_with_a_profile_shows_what_each_agent_loads_once_it_reads_that_file() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root agents");
    t.write("r/app/CLAUDE.md", "app claude");
    t.write("r/app/GEMINI.md", "app gemini");
    t.write("r/app/AGENTS.md", "app agents");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({})).await;
    let nested = |all: &Value, profile: &str| -> Vec<String> {
        let p = all["profiles"].as_array().and_then(|p| p.iter().find(|p| p["profile"] == profile)).cloned();
        p.map(|p| p["files"].as_array().cloned().unwrap_or_default())
            .unwrap_or_default()
            .iter()
            .filter(|f| f["status"] == "loaded" && f["path"].as_str().is_some_and(|p| p.starts_with("app/")))
            .map(|f| f["path"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let folder_only = c.effective(json!({"profile": "all"})).await;
    for p in ["dsh", "claude", "gemini", "opencode"] {
        assert_eq!(nested(&folder_only, p), Vec::<String>::new(), "{p}: nothing below the folder yet");
    }
    let file = t.path("r/app/main.rs");
    let all = c.effective(json!({"uri": uri(&file), "profile": "all"})).await;
    assert_eq!(nested(&all, "dsh"), ["app/AGENTS.md"], "the preview block");
    assert_eq!(nested(&all, "claude"), ["app/CLAUDE.md"]);
    assert_eq!(nested(&all, "gemini"), ["app/GEMINI.md"]);
    assert_eq!(nested(&all, "opencode"), ["app/AGENTS.md"]);
    assert_eq!(nested(&all, "codex"), Vec::<String>::new(), "Codex loads nothing lazily");
    // A preview is not a touch: the session has reached nothing.
    let e = c.effective(json!({})).await;
    assert_eq!(e["nested"], json!([]));
    c.finish().await;
}

#[tokio::test]
async fn claude_home_imports_resolve_against_the_servers_home() {
    let t = Tree::new();
    // The user's own CLAUDE.md may import from anywhere (a project file only from inside the
    // working directory).
    t.write("home/.claude/CLAUDE.md", "see @~/personal.md");
    let personal = t.write("home/personal.md", "my own rules");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({})).await;
    let claude = c.effective(json!({"profile": "claude"})).await;
    let import = claude["files"].as_array().and_then(|f| f.iter().find(|f| f["scope"] == "import")).cloned();
    assert_eq!(import.as_ref().map(|f| f["uri"].clone()), Some(json!(uri(&personal))), "{claude}");
    assert_eq!(import.map(|f| f["status"].clone()), Some(json!("loaded")));
    assert!(claude["text"].as_str().is_some_and(|t| t.contains("my own rules")));
    c.finish().await;
}

/// Asks for `profile` until `pred` holds of its answer (a change on disk reaches the server
/// through its watcher, after the debounce); returns that answer.
async fn effective_until(c: &mut Client, profile: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..200 {
        last = c.effective(json!({ "profile": profile })).await;
        if pred(&last) {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("{what} did not happen; last answer: {last:#}");
}

/// The `text` of `profile` in an answer for `"all"`.
fn text_of<'a>(all: &'a Value, profile: &str) -> &'a str {
    all["profiles"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["profile"] == profile))
        .and_then(|p| p["text"].as_str())
        .unwrap_or("")
}

#[tokio::test]
async fn a_rules_file_edited_on_disk_changes_the_remembered_claude_answer() {
    let t = Tree::new();
    t.write("r/CLAUDE.md", "claude rules");
    let rule = t.write("r/.claude/rules/x.md", "old rule");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({})).await;
    // Asked until it is answered from memory (the watches are in place after the first ones).
    for _ in 0..5 {
        let claude = c.effective(json!({"profile": "claude"})).await;
        assert!(claude["text"].as_str().is_some_and(|t| t.contains("old rule")), "{claude:#}");
        let all = c.effective(json!({"profile": "all"})).await;
        assert!(text_of(&all, "claude").contains("old rule"), "{all:#}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    std::fs::write(&rule, "new rule").expect("write");
    effective_until(&mut c, "claude", "the edited rule in Claude Code's answer", |v| {
        v["text"].as_str().is_some_and(|t| t.contains("new rule") && !t.contains("old rule"))
    })
    .await;
    effective_until(&mut c, "all", "the edited rule in the answer for every profile", |v| {
        text_of(v, "claude").contains("new rule")
    })
    .await;
    // A rule in a new sub-folder of the rules folder counts too.
    t.write("r/.claude/rules/sub/y.md", "nested rule");
    effective_until(&mut c, "claude", "the new sub-folder's rule in Claude Code's answer", |v| {
        v["text"].as_str().is_some_and(|t| t.contains("nested rule"))
    })
    .await;
    t.write("r/.claude/rules/sub/z.md", "second nested rule");
    effective_until(&mut c, "all", "a rule added to the sub-folder in the answer for every profile", |v| {
        text_of(v, "claude").contains("second nested rule")
    })
    .await;
    c.finish().await;
}

/// Warm, `profile: "all"` is answered from memory: no file an agent reads is opened again.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_warm_answer_for_every_profile_opens_no_file() {
    let t = Tree::new();
    t.write("r/CLAUDE.md", "claude rules");
    t.write("r/GEMINI.md", "gemini rules");
    t.write("r/.claude/rules/x.md", "a rule");
    t.write("home/.gemini/GEMINI.md", "global gemini rules");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({})).await;
    // Only the agents read these (the engine's profiles read neither `GEMINI.md` nor rules).
    let agents_only = [t.path("r/GEMINI.md"), t.path("r/.claude/rules/x.md"), t.path("home/.gemini/GEMINI.md")];
    let last = until_answers_open_nothing(&mut c, &agents_only, |all| {
        assert!(text_of(all, "gemini").contains("global gemini rules"), "{all:#}");
        assert!(text_of(all, "claude").contains("a rule"), "{all:#}");
    })
    .await;
    assert_eq!(last, None, "warm answers for every profile still open the agents' files");
    c.finish().await;
}

/// Asks for every profile until three answers in a row, and the time after each, open none of
/// `files`; `None` then, else the files the last answer opened. The server starts watching,
/// pulls settings and runs diagnostics passes (which read the files) in the background; without
/// memory every answer opens them.
#[cfg(target_os = "linux")]
async fn until_answers_open_nothing(
    c: &mut Client,
    files: &[std::path::PathBuf],
    check: impl Fn(&Value),
) -> Option<Vec<std::path::PathBuf>> {
    use notify::event::AccessKind;
    use notify::{EventKind, RecursiveMode, Watcher};
    let (tx, rx) = std::sync::mpsc::channel();
    let mut w = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
        let _ = tx.send(e);
    })
    .expect("watcher");
    let dirs: std::collections::BTreeSet<_> = files.iter().filter_map(|f| f.parent()).collect();
    for dir in dirs {
        w.watch(dir, RecursiveMode::NonRecursive).expect("watch");
    }
    let opened = || -> Vec<std::path::PathBuf> {
        rx.try_iter()
            .flatten()
            .filter(|e| matches!(e.kind, EventKind::Access(AccessKind::Open(_))))
            .flat_map(|e| e.paths)
            .filter(|p| files.contains(p))
            .collect()
    };
    let (mut quiet, mut last) = (0, Vec::new());
    for _ in 0..100 {
        check(&c.effective(json!({"profile": "all"})).await);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        last = opened();
        quiet = if last.is_empty() { quiet + 1 } else { 0 };
        if quiet == 3 {
            return None;
        }
    }
    Some(last)
}

/// Copilot's and Cursor's views are remembered too, their rules' patterns searched once in the
/// repository's listing: warm answers open no rule; and a file made in a new folder of the
/// repository is heard, so that a pattern that matched nothing now matches it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn editor_agents_views_are_remembered_until_a_file_is_made_in_the_repository() {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/AGENTS.md", "root rules");
    t.write("r/src/app.ts", "x");
    let mdc =
        t.write("r/.cursor/rules/ts.mdc", "---\ndescription: ts\nglobs: src/**/*.ts, web/**/*.vue\n---\nts rule\n");
    t.write("r/.github/copilot-instructions.md", "copilot rules");
    let py = t.write("r/.github/instructions/py.instructions.md", "---\napplyTo: \"**/*.py\"\n---\npy rule\n");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({"profiles": ["copilot", "cursor"]})).await;
    let last = until_answers_open_nothing(&mut c, &[mdc.clone(), py.clone()], |all| {
        assert!(text_of(all, "copilot").contains("copilot rules"), "{all:#}");
    })
    .await;
    assert_eq!(last, None, "warm answers with Copilot and Cursor rules still open them");
    let dead = c.diagnostic(&mdc, "deadPattern").await;
    assert!(dead["message"].as_str().is_some_and(|m| m.contains("`web/**/*.vue`")), "{dead}");
    let never = c.diagnostic(&py, "agentRule").await;
    assert!(never["message"].as_str().is_some_and(|m| m.contains("`**/*.py` matches no file")), "{never}");
    // New folders, each holding a file a pattern matches.
    t.write("r/web/deep/page.vue", "x");
    t.write("r/tools/gen/run.py", "x");
    c.diagnostics_until(&mdc, "the pattern that now matches a file no longer dead", |d| {
        !d.iter().any(|d| d["code"] == "deadPattern")
    })
    .await;
    c.diagnostics_until(&py, "the rule that now matches a file no longer said to match none", |d| {
        !d.iter().any(|d| d["code"] == "agentRule")
    })
    .await;
    c.finish().await;
}

/// A warm answer is sent from memory, but never before an earlier message's effect: a document
/// opened just before the request is a touch the answer includes.
#[tokio::test]
async fn a_remembered_answer_never_overtakes_a_touch_sent_before_it() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    t.write("r/app/AGENTS.md", "app rules");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({})).await;
    // Asked until the answer stays the same (the session starts, the watches come in place):
    // from then on it comes from memory.
    let mut warm = c.effective(json!({})).await;
    let mut same = 0;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let again = c.effective(json!({})).await;
        same = if again == warm { same + 1 } else { 0 };
        warm = again;
        if same == 5 {
            break;
        }
    }
    assert_eq!(same, 5, "the answer never settled: {warm:#}");
    assert!(!warm.to_string().contains("app rules"), "{warm:#}");
    c.open(&t.path("r/app/main.rs"), "fn main() {}").await;
    let after = c.effective(json!({})).await;
    assert!(after.to_string().contains("app rules"), "the touch is in the answer: {after:#}");
    c.finish().await;
}

/// A client may send many requests before it reads an answer, some remembered and some worked
/// out again: each answer is the one of the moment its request came, before a touch sent after
/// it and after a touch sent before it.
#[tokio::test]
async fn requests_sent_back_to_back_around_a_touch_each_get_the_answer_of_their_moment() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules");
    t.write("r/app/AGENTS.md", "app rules");
    let mut c = Client::start(&t.home(), &[&t.root()], json!({})).await;
    let first = c.effective(json!({})).await;
    assert!(!first.to_string().contains("app rules"), "{first:#}");
    let before: Vec<_> = (0..100).map(|_| c.request_later("instructions/effective", json!({})).1).collect();
    c.open(&t.path("r/app/main.rs"), "fn main() {}").await;
    let after: Vec<_> = (0..100).map(|_| c.request_later("instructions/effective", json!({})).1).collect();
    for answer in futures::future::join_all(before).await {
        let answer = answer.expect("an answer");
        assert!(!answer.to_string().contains("app rules"), "asked before the touch: {answer:#}");
    }
    for answer in futures::future::join_all(after).await {
        let answer = answer.expect("an answer");
        assert!(answer.to_string().contains("app rules"), "asked after the touch: {answer:#}");
    }
    c.finish().await;
}

/// The editor defaults to the agents the repository targets, with the settings its
/// instructions-lsp.toml gives them: here Codex, and then Codex's budget.
#[tokio::test]
async fn diagnostics_follow_the_repositorys_agents_and_their_configured_budgets() {
    let t = Tree::new();
    let rule = "- a rule for every package\n";
    let agents_md = t.write("r/AGENTS.md", rule.repeat(40_000 / rule.len()));
    t.write("r/instructions-lsp.toml", "agents = [\"codex\"]\n");
    let root = t.root();
    let c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let d = c.diagnostic(&agents_md, "agentCut").await;
    assert!(d["message"].as_str().is_some_and(|m| m.contains("after 32,768 of 39,987 bytes")), "{d}");
    c.finish().await;

    // The repository's budget for Codex applies in the editor as in `check`.
    t.write("r/instructions-lsp.toml", "agents = [\"codex\"]\n\n[codex]\nmax-bytes = 36000\n");
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let d = c.diagnostic(&agents_md, "agentCut").await;
    assert!(d["message"].as_str().is_some_and(|m| m.contains("after 36,000 of 39,987 bytes")), "{d}");
    let e = c.request("instructions/effective", json!({"uri": uri(&root), "profile": "codex"})).await.expect("codex");
    assert_eq!(e["files"][0]["includedBytes"], 36000, "{e}");
    // The hover says which agents, and why.
    c.open(&agents_md, &std::fs::read_to_string(&agents_md).expect("read")).await;
    let position = json!({"textDocument": {"uri": uri(&agents_md)}, "position": {"line": 0, "character": 0}});
    let hover = c.request("textDocument/hover", position).await.expect("hover");
    let text = hover["contents"]["value"].as_str().unwrap_or("");
    // In the words of the diagnostic and of `check`.
    let message = d["message"].as_str().unwrap_or_default();
    assert!(text.contains(&format!("- {message}\n")), "{text}");
    assert!(text.contains("Codex cuts this file at line 1334, after 36,000 of 39,987 bytes"), "{text}");
    assert!(text.contains("_showing for Codex: named in "), "{text}");
    c.finish().await;
}

/// A file that no selected agent reads is a warning in the editor as in `check` (`notRead`,
/// saying what each agent loads instead); a file that one of them reads is only information.
/// The `targets` answer tells the editor to show these agents first, unless `profile` is set.
#[tokio::test]
async fn a_file_no_targeted_agent_reads_is_a_warning_and_the_agents_come_first() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "shared rules\n");
    let claude = t.write("r/CLAUDE.md", "claude rules\n");
    let root = t.root();
    // Detected: Claude Code reads CLAUDE.md, so opencode's ignoring it is only information.
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let d = c.diagnostic(&claude, "agentIgnored").await;
    assert!(d["message"].as_str().is_some_and(|m| m.contains("opencode ignores this file")), "{d}");
    let all = c.diagnostics_until(&claude, "agentIgnored", |d| !d.is_empty()).await;
    assert!(!all.iter().any(|d| d["code"] == "notRead"), "{all:?}");
    let targets =
        c.request("instructions/effective", json!({"uri": uri(&root), "profile": "targets"})).await.expect("targets");
    assert_eq!(targets["view"], "agents", "{targets}");
    let names: Vec<&str> =
        targets["profiles"].as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, ["Codex", "Claude Code", "opencode"], "{targets}");
    c.finish().await;

    // Written for Codex and opencode only: neither reads CLAUDE.md.
    t.write("r/instructions-lsp.toml", "agents = [\"codex\", \"opencode\"]\n");
    let c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let d = c.diagnostic(&claude, "notRead").await;
    assert_eq!(d["severity"], 2, "a warning: {d}");
    let message = d["message"].as_str().unwrap_or("");
    assert!(message.contains("no agent this repository is checked for reads this file"), "{d}");
    assert!(message.contains("opencode ignores this file: it loads AGENTS.md instead"), "{d}");
    c.finish().await;

    // `profile` set: the engine's rules come first.
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null, "profile": "dsh"})).await;
    let targets =
        c.request("instructions/effective", json!({"uri": uri(&root), "profile": "targets"})).await.expect("targets");
    assert_eq!(targets["view"], "engine", "{targets}");
    c.finish().await;
}

/// A session starts from the instruction files near its project root, so that a large
/// repository does not hold up `initialize`; the whole walk follows in the background, and
/// agents found deeper are announced (`instructions/didChange`) and selected.
#[tokio::test]
async fn agents_whose_files_lie_deep_are_found_after_the_start() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "shared rules\n");
    t.write("r/packages/web/src/GEMINI.md", "gemini rules\n");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let mut selected = Value::Null;
    for _ in 0..100 {
        let targets = c
            .request("instructions/effective", json!({"uri": uri(&root), "profile": "targets"}))
            .await
            .expect("targets");
        selected = targets["selected"].clone();
        if selected.to_string().contains("gemini") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(selected, json!(["codex", "gemini", "opencode"]), "GEMINI.md four levels down selects Gemini CLI");
    assert!(!c.did_changes(&root).is_empty(), "the change of agents is announced");
    c.finish().await;
}

/// Every instruction file an agent reads gets the per-agent hover, in the words of `check`:
/// `GEMINI.md`, `CLAUDE.local.md`, `AGENTS.override.md`, `.claude/rules`, Copilot's and Cursor's
/// files, not only `AGENTS.md` and `CLAUDE.md`.
#[tokio::test]
async fn every_instruction_file_gets_each_agents_word_on_hover() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules\n");
    t.write("r/AGENTS.override.md", "override rules\n");
    t.write("r/CLAUDE.md", "claude rules\n");
    t.write("r/CLAUDE.local.md", "my notes\n");
    t.write("r/GEMINI.md", "gemini rules\n");
    t.write("r/.claude/rules/ts.md", "---\npaths: \"**/*.ts\"\n---\nTypeScript rules\n");
    t.write("r/.github/instructions/ts.instructions.md", "---\napplyTo: \"**/*.ts\"\n---\nTS for Copilot\n");
    t.write("r/.cursor/rules/ts.mdc", "---\nglobs: \"**/*.ts\"\n---\nTS for Cursor\n");
    t.write("r/src/app.ts", "export {}\n");
    t.write("r/pkg/AGENTS.md", "package rules\n");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({"stateDir": null})).await;
    let expect = [
        // Codex started at the root never loads a package's file: only started there.
        ("r/pkg/AGENTS.md", "- Codex loads this file when started in `pkg`\n"),
        ("r/GEMINI.md", "- Gemini CLI loads this file\n"),
        ("r/CLAUDE.local.md", "- Claude Code loads this file\n"),
        ("r/AGENTS.override.md", "- Codex loads this file\n"),
        ("r/AGENTS.md", "- Codex ignores this file: it loads AGENTS.override.md instead\n"),
        ("r/.claude/rules/ts.md", "- Claude Code loads this rule when a file matching `**/*.ts` is read\n"),
        ("r/.github/instructions/ts.instructions.md", "- Copilot (VS Code)"),
        ("r/.cursor/rules/ts.mdc", "- Cursor"),
    ];
    for (file, said) in expect {
        let path = t.path(file);
        c.open(&path, &std::fs::read_to_string(&path).expect("read")).await;
        let hover = c
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri(&path)}, "position": {"line": 0, "character": 0}}),
            )
            .await
            .expect("hover");
        let text = hover["contents"]["value"].as_str().unwrap_or("");
        assert!(text.contains("**Agents** working in r:"), "{file}: {text}");
        assert!(text.contains(said), "{file}: {text}");
        // Every agent the repository targets has its word, one line each.
        for agent in ["Codex", "Claude Code", "Gemini CLI", "opencode", "Copilot (VS Code)", "Cursor"] {
            assert!(text.contains(&format!("\n- {agent} ")), "{file}: {agent}: {text}");
        }
    }
    c.finish().await;
}

/// A file above every folder (the root's CLAUDE.md of a package opened as the folder) gets no
/// finding of the engine's own rules, which nobody selected: only what `check pkg` says of it.
#[tokio::test]
async fn a_file_above_the_folder_gets_only_what_check_says() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules\n");
    let claude = t.write("r/CLAUDE.md", "claude rules\n");
    t.write("r/pkg/AGENTS.md", "package rules\n");
    let pkg = t.path("r/pkg");
    let c = Client::start(&t.home(), &[&pkg], json!({"stateDir": null})).await;
    c.open(&claude, "claude rules\n").await;
    let d = c.diagnostic(&claude, "agentIgnored").await;
    assert!(d["message"].as_str().is_some_and(|m| m.contains("opencode ignores this file")), "{d}");
    let all = c.diagnostics_until(&claude, "the agents' finding", |d| !d.is_empty()).await;
    assert!(all.iter().all(|d| d["code"] != "shadowed"), "{all:?}");
    c.finish().await;
}

/// An `@` import that names no file is a diagnostic at the mention, for Claude Code and Gemini
/// CLI alike, with `check`'s words; a handle in prose is none.
#[tokio::test]
async fn an_import_that_names_no_file_is_flagged_at_the_mention() {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/CLAUDE.md", "Thanks @neongreen, and\nalso read @nope.md please\n");
    t.write("r/GEMINI.md", "See @docs/gone.md\n");
    let root = t.root();
    let c = Client::start(&t.home(), &[&root], json!({})).await;
    let claude = c.diagnostic(&root.join("CLAUDE.md"), "missingImport").await;
    assert_eq!(claude["range"], json!({"start": {"line": 1, "character": 10}, "end": {"line": 1, "character": 18}}));
    assert_eq!(claude["severity"], 2);
    assert_eq!(
        claude["message"],
        "`@nope.md` names no file: Claude Code loads nothing for it, without a word (nothing at `nope.md`)"
    );
    let gemini = c.diagnostic(&root.join("GEMINI.md"), "missingImport").await;
    assert_eq!(gemini["range"]["start"], json!({"line": 0, "character": 4}));
    let all = c.all_diagnostics_until("both files", |d| d.len() >= 2).await;
    let claude_all = &all[&uri(&root.join("CLAUDE.md"))];
    assert_eq!(claude_all.iter().filter(|d| d["code"] == "missingImport").count(), 1, "{claude_all:?}");
    c.finish().await;
}

/// An `@` import can be followed: a document link and a definition on each mention that names a
/// file of the project, not on one in code, one that names nothing, or one that leads out; an
/// open buffer's text counts, as typed.
#[tokio::test]
async fn imports_are_links_and_definitions() {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("outside.md", "not the project's\n");
    t.write("r/docs/a.md", "A\n");
    t.write("r/CLAUDE.md", "See @docs/a.md and @nope.md.\n```\n@docs/a.md\n```\nAlso @../outside.md\n");
    let root = t.root();
    let claude = root.join("CLAUDE.md");
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let links = c.request("textDocument/documentLink", json!({"textDocument": {"uri": uri(&claude)}})).await;
    let links = links.expect("links");
    assert_eq!(links.as_array().map(Vec::len), Some(1), "{links}");
    assert_eq!(links[0]["range"], json!({"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 14}}));
    assert_eq!(links[0]["target"], uri(&root.join("docs/a.md")));
    // As typed: the buffer, not the disk.
    c.open(&claude, "x @docs/a.md\n").await;
    let at = |character: u32| json!({"textDocument": {"uri": uri(&claude)}, "position": {"line": 0, "character": character}});
    let found = c.request("textDocument/definition", at(5)).await.expect("definition");
    assert_eq!(found["uri"], uri(&root.join("docs/a.md")), "{found}");
    let found = c.request("textDocument/definition", at(0)).await.expect("definition");
    assert_eq!(found, Value::Null);
    // A hover on the mention names the file, its size, and what the agents do with it (after
    // the file's own hover, on its first line).
    let hover = c.request("textDocument/hover", at(5)).await.expect("hover");
    let text = hover["contents"]["value"].as_str().unwrap_or_default();
    let (own, imported) = text.split_once("Imports `docs/a.md` (2 bytes)").unwrap_or_default();
    assert!(own.contains("Claude Code loads this file"), "the file's own hover first: {text}");
    assert!(imported.contains("Claude Code"), "what the agents do with the imported file: {text}");
    assert_eq!(hover["range"]["start"], json!({"line": 0, "character": 2}));
    c.finish().await;
}

/// A configuration that cannot be used is an error on its file, where the problem is (the
/// unknown agent's name, the line and column of a parse error), in `check`'s words; fixed, it
/// goes away.
#[tokio::test]
async fn a_configuration_that_cannot_be_used_is_an_error_where_it_is_wrong() {
    let t = Tree::new();
    t.mkdir("r/.git");
    t.write("r/CLAUDE.md", "rules\n");
    t.write("r/instructions-lsp.toml", "# ours\nagents = [\"claud\"]\n");
    let root = t.root();
    let config = root.join("instructions-lsp.toml");
    let c = Client::start(&t.home(), &[&root], json!({})).await;
    let d = c.diagnostic(&config, "badConfig").await;
    assert_eq!(d["range"], json!({"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 16}}));
    assert_eq!(d["severity"], 1);
    let message = d["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("this configuration cannot be used: `agents` names `claud`, which is not an agent")
            && message.ends_with("; the agents are detected from the files instead"),
        "{message}"
    );
    // A parse error, at its line and column.
    t.write("r/instructions-lsp.toml", "# ours\nagents = \"claude\"\n");
    c.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": uri(&config), "type": 2}]})).await;
    let d = c
        .diagnostics_until(&config, "the parse error", |d| {
            d.iter().any(|d| d["message"].as_str().is_some_and(|m| m.contains("TOML parse error")))
        })
        .await;
    assert_eq!(d[0]["range"]["start"], json!({"line": 1, "character": 9}), "{d:?}");
    // Fixed: nothing.
    t.write("r/instructions-lsp.toml", "agents = [\"claude\"]\n");
    c.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": uri(&config), "type": 2}]})).await;
    c.diagnostics_until(&config, "no finding", |d| d.is_empty()).await;
    c.finish().await;
}
