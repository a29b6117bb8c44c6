//! The editor agents: `copilot` (VS Code's chat instructions, mirrored from reading
//! VS Code's source) and `cursor` (Cursor's documented rules). Copilot Chat and Cursor cannot
//! run offline, so these trees check the documented rules through the real binary and server,
//! one test per rule or switch.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::lsp::{Client, uri};
use crate::common::tree::Tree;
use serde_json::{Value, json};

fn run(t: &Tree, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", t.home())
        .env("XDG_CONFIG_HOME", t.path("home/.config"))
        .env_remove("DSH_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .expect("run instructions-lsp")
}

/// `effective --json` of `profile` in the project root, after the touches (relative to it).
fn effective(t: &Tree, profile: &str, extra: &[&str]) -> Value {
    let mut args = vec!["effective", "--json", "--profile", profile];
    args.extend(extra);
    let o = run(t, &t.root(), &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

/// `(path relative to the project, status)` of every file of a view.
fn statuses(t: &Tree, view: &Value) -> Vec<(String, String)> {
    let root = std::fs::canonicalize(t.root()).expect("root");
    let home = std::fs::canonicalize(t.home()).expect("home");
    view["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            let p = Path::new(f["path"].as_str().unwrap_or(""));
            let shown = p
                .strip_prefix(&root)
                .map(|r| r.display().to_string())
                .or_else(|_| p.strip_prefix(&home).map(|r| format!("~/{}", r.display())))
                .unwrap_or_else(|_| p.display().to_string());
            (shown, f["status"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// A repository written for Copilot: every kind of instructions file, both root files, a
/// nested `AGENTS.md`.
fn copilot_tree() -> Tree {
    let t = Tree::new();
    t.write("r/.github/copilot-instructions.md", "Use tabs.\n");
    t.write("r/.github/instructions/all.instructions.md", "---\napplyTo: \"**\"\n---\nEvery file.\n");
    t.write(
        "r/.github/instructions/ts.instructions.md",
        "---\napplyTo: \"src/**/*.ts, lib/*.ts\"\ndescription: TypeScript rules\nexcludeAgent: \"code-review\"\n---\nTS rules.\n",
    );
    t.write("r/.github/instructions/plain.instructions.md", "No front matter.\n");
    t.write(
        "r/.github/instructions/sub/deeper.instructions.md",
        "---\napplyTo: \"**\"\n---\nNot read: a sub-folder.\n",
    );
    t.write("r/.github/instructions/notes.md", "---\napplyTo: \"**\"\n---\nNot an instructions file.\n");
    t.write("r/AGENTS.md", "Root agents.\n");
    t.write("r/pkg/AGENTS.md", "Package agents.\n");
    t.write("r/src/app.ts", "");
    t.write("r/pkg/lib/util.ts", "");
    t
}

#[test]
fn copilot_attaches_wildcards_and_root_files_at_start_and_applyto_rules_on_a_matching_touch() {
    let t = copilot_tree();
    let v = effective(&t, "copilot", &[]);
    assert_eq!(
        statuses(&t, &v),
        pairs(&[
            (".github/instructions/all.instructions.md", "loaded"),
            (".github/instructions/plain.instructions.md", "on-request"),
            (".github/instructions/sub/deeper.instructions.md", "loaded"),
            (".github/instructions/ts.instructions.md", "waiting"),
            (".github/copilot-instructions.md", "loaded"),
            ("AGENTS.md", "loaded"),
        ]),
        "the folder searched in its order, sub-folders in their place, `*.instructions.md` only; \
         nested AGENTS.md is off by default"
    );
    assert_eq!(v["files"][3]["globs"], json!(["src/**/*.ts", "lib/*.ts"]), "applyTo split at commas");
    // VS Code's order: applying instructions, copilot-instructions.md, AGENTS.md, the list.
    let parts: Vec<&str> = v["parts"].as_array().expect("parts").iter().filter_map(Value::as_str).collect();
    assert_eq!(parts.len(), 5, "{parts:?}");
    assert!(
        parts[0].contains("reason=\"automatically attached as pattern is **\"") && parts[0].contains("Every file.")
    );
    assert!(parts[1].contains("Not read: a sub-folder."), "sub-folders are searched now: {}", parts[1]);
    assert!(parts[2].contains("reason=\"always added\"") && parts[2].contains("Use tabs."));
    assert!(parts[3].contains("reason=\"always added\"") && parts[3].contains("Root agents."));
    let list = parts[4];
    assert!(list.starts_with("<instructions>\nHere is a list of instruction files"), "{list}");
    assert!(list.contains("ts.instructions.md</file>\n<description>TypeScript rules</description>\n"), "{list}");
    assert!(list.contains("<applyTo>src/**/*.ts, lib/*.ts</applyTo>\n</instruction>"), "{list}");
    assert!(list.contains("plain.instructions.md</file>\n</instruction>"), "no front matter: listed with its path");
    assert!(list.ends_with("</instructions>\n\n"));

    // A touch of a matching file attaches the rule in its place among the instructions files,
    // before copilot-instructions.md; `excludeAgent` changes nothing.
    let v = effective(&t, "copilot", &["--touch", "src/app.ts"]);
    let s = statuses(&t, &v);
    assert_eq!(s[3], (".github/instructions/ts.instructions.md".into(), "loaded".into()), "{s:?}");
    let third = v["parts"][2].as_str().unwrap_or("");
    assert!(third.contains("pattern src/**/*.ts, lib/*.ts matches") && third.contains("TS rules."), "{third}");
    // A relative pattern gets `**/` in front: `lib/*.ts` matches `pkg/lib/util.ts`.
    let v = effective(&t, "copilot", &["--touch", "pkg/lib/util.ts"]);
    assert!(statuses(&t, &v).contains(&(".github/instructions/ts.instructions.md".into(), "loaded".into())));
    // Case does not matter.
    let v = effective(&t, "copilot", &["--touch", "SRC/Other.TS"]);
    assert!(statuses(&t, &v).contains(&(".github/instructions/ts.instructions.md".into(), "loaded".into())));
    // Another file leaves it waiting.
    let v = effective(&t, "copilot", &["--touch", "pkg/AGENTS.md"]);
    assert!(statuses(&t, &v).contains(&(".github/instructions/ts.instructions.md".into(), "waiting".into())));
    // The workspace folder is the repository: from a sub-folder, a touch elsewhere still counts.
    let o = run(&t, &t.path("r/pkg"), &["effective", "--json", "--profile", "copilot", "--touch", "../src/app.ts"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("Copilot (VS Code), whose workspace is the repository, counts it"), "{said}");
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(statuses(&t, &v).contains(&(".github/instructions/ts.instructions.md".into(), "loaded".into())), "{v}");
}

#[test]
fn copilot_attaches_claude_files_and_rules_drops_a_link_to_a_listed_file_and_sorts_by_uri() {
    let t = Tree::new();
    t.write("r/CLAUDE.md", "Claude root.\n");
    t.write("r/CLAUDE.local.md", "Claude local.\n");
    t.write("r/.claude/CLAUDE.md", "Claude folder.\n");
    t.write("r/.claude/rules/api.md", "---\npaths:\n  - \"src/api/**\"\n  - \"*.proto\"\n---\nAPI.\n");
    t.write("r/.claude/rules/always.md", "Every file.\n");
    t.write("r/.claude/rules/README.md", "Not a rule.\n");
    t.write("r/.github/instructions/list.instructions.md", "---\napplyTo:\n  - \"**\"\n---\nA YAML list.\n");
    t.symlink("CLAUDE.md", "r/AGENTS.md");
    t.write("r/src/api/x.ts", "");
    let v = effective(&t, "copilot", &["--touch", "src/api/x.ts"]);
    assert_eq!(
        statuses(&t, &v),
        pairs(&[
            (".github/instructions/list.instructions.md", "on-request"),
            (".claude/rules/always.md", "loaded"),
            (".claude/rules/api.md", "loaded"),
            (".claude/CLAUDE.md", "loaded"),
            ("CLAUDE.local.md", "loaded"),
            ("CLAUDE.md", "loaded"),
        ]),
        "`applyTo` as a list is no pattern; a rule without `paths:` is `**`; AGENTS.md links to a listed file"
    );
    assert_eq!(v["files"][2]["globs"], json!(["src/api/**", "*.proto"]));
    let o = run(&t, &t.root(), &["effective", "--profile", "copilot", "--set", "chat.useClaudeMdFile=false"]);
    let text = String::from_utf8_lossy(&o.stdout);
    // Off, the CLAUDE files go; the `AGENTS.md` link to `CLAUDE.md` is no longer dropped.
    assert!(!text.contains("Claude local.") && !text.contains("Claude folder."), "{text}");
    assert!(
        text.contains("r/AGENTS.md\" reason=\"always added\">\nClaude root.") && text.contains("Every file."),
        "{text}"
    );
    let v = effective(&t, "copilot", &["--set", "chat.includeApplyingInstructions=false"]);
    assert!(
        v["files"]
            .as_array()
            .expect("files")
            .iter()
            .all(|f| !f["path"].as_str().unwrap_or("").contains("rules/") || f["status"] == "on-request"),
        "{v}"
    );
}

#[test]
fn copilot_says_nothing_of_dead_patterns_in_a_repository_too_large_to_list() {
    let t = Tree::new();
    t.write("r/.github/instructions/dead.instructions.md", "---\napplyTo: \"nowhere/**\"\n---\nx\n");
    let check = |t: &Tree| {
        let o = run(t, &t.root(), &["check", "--profile", "copilot", "--format", "json", "--fail-on", "never"]);
        let out: Value = serde_json::from_slice(&o.stdout).expect("json");
        out["findings"].as_array().expect("findings").iter().filter(|f| f["code"] == "agentRule").count()
    };
    assert_eq!(check(&t), 1, "a small repository: the dead pattern is said");
    // Past the 100,000 entries listed, what the pattern matches is not known.
    for d in 0..101 {
        for f in 0..1000 {
            t.write(&format!("r/bulk/d{d}/f{f}.txt"), "");
        }
    }
    assert_eq!(check(&t), 0, "a pattern of a repository not listed whole is not called dead");
}

#[test]
fn copilot_attaches_what_instructions_link_to_only_when_asked() {
    let t = Tree::new();
    t.write(
        "r/.github/instructions/all.instructions.md",
        "---\napplyTo: '**'\n---\nSee [the guide](../../docs/guide.md).\n",
    );
    t.write("r/docs/guide.md", "The guide.\n");
    let v = effective(&t, "copilot", &[]);
    assert!(!v["text"].as_str().unwrap_or("").contains("The guide."));
    let v = effective(&t, "copilot", &["--set", "chat.includeReferencedInstructions=true"]);
    let s = statuses(&t, &v);
    assert_eq!(s[1], ("docs/guide.md".into(), "loaded".into()), "{s:?}");
    assert!(v["text"].as_str().unwrap_or("").contains("reason=\"Referenced by all.instructions.md\""), "{v}");
    // A name with quotes or a line break stays inside the attachment's attribute.
    t.write("r/.github/instructions/a\" reason=\"x<y>.instructions.md", "---\napplyTo: '**'\n---\nquoted\n");
    let text = effective(&t, "copilot", &[])["text"].as_str().unwrap_or("").to_string();
    assert!(
        text.contains("/a&quot; reason=&quot;x&lt;y&gt;.instructions.md\" reason=\"automatically attached"),
        "{text}"
    );
}

#[test]
fn copilot_settings_switch_each_source_and_set_overrides_the_workspace() {
    let t = copilot_tree();
    t.write(
        "r/.vscode/settings.json",
        "{\n  // JSON with comments\n  \"github.copilot.chat.codeGeneration.useInstructionFiles\": false,\n  \"chat.useNestedAgentsMdFiles\": true,\n  \"chat.instructionsFilesLocations\": { \".github/instructions\": false, \"docs/ai\": true, },\n}\n",
    );
    t.write("r/docs/ai/style.instructions.md", "---\napplyTo: \"**/*.md\"\n---\nStyle.\n");
    let v = effective(&t, "copilot", &[]);
    assert_eq!(
        statuses(&t, &v),
        pairs(&[
            ("docs/ai/style.instructions.md", "waiting"),
            ("AGENTS.md", "loaded"),
            ("pkg/AGENTS.md", "on-request"),
        ]),
        "the default folder off, another on; copilot-instructions.md off; every AGENTS.md listed"
    );
    let text = v["text"].as_str().unwrap_or("");
    assert!(text.contains("<description>Instructions for the workspace</description>"), "{text}");
    assert!(text.contains("<description>Instructions for folder 'pkg'</description>"), "{text}");

    // `--set` wins over the workspace's settings.
    let v = effective(
        &t,
        "copilot",
        &["--set", "chat.useAgentsMdFile=false", "--set", "chat.useNestedAgentsMdFiles=false"],
    );
    assert_eq!(statuses(&t, &v), pairs(&[("docs/ai/style.instructions.md", "waiting")]));
    let o = run(&t, &t.root(), &["effective", "--profile", "copilot", "--set", "chat.bogus=1"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("takes github.copilot.chat"));

    // The project configuration's table does the same.
    t.write(
        "r/instructions-lsp.toml",
        "agents = [\"copilot\"]\n\n[copilot]\nsettings = { \"chat.useNestedAgentsMdFiles\" = false }\n",
    );
    let o = run(&t, &t.root(), &["compare", "--json"]);
    let rows: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(rows[0]["profile"], "copilot");
    assert_eq!(rows[0]["files"], json!(["AGENTS.md"]), "{rows}");
}

#[test]
fn copilot_never_reads_instructions_a_repositorys_settings_place_outside_it() {
    let t = Tree::new();
    t.write("secret/keys.instructions.md", "---\ndescription: SECRET\napplyTo: \"**\"\n---\nSECRET\n");
    // An absolute path is no link: only the guard keeps it out.
    let secret = std::fs::canonicalize(t.path("secret")).expect("secret");
    let locations =
        json!({"chat.instructionsFilesLocations": {secret.to_string_lossy(): true, "../**/*.instructions.md": true}});
    t.write("r/.vscode/settings.json", locations.to_string());
    let v = effective(&t, "copilot", &[]);
    // A folder outside is not even listed: its files' names are not the repository's to show.
    assert_eq!(statuses(&t, &v), Vec::<(String, String)>::new());
    assert!(!v.to_string().contains("SECRET") && !v.to_string().contains("keys.instructions"), "{v}");
}

#[test]
fn copilot_reads_the_users_prompts_folder_first() {
    let t = copilot_tree();
    t.write("home/.config/Code/User/prompts/mine.instructions.md", "---\napplyTo: \"*\"\n---\nMine.\n");
    let v = effective(&t, "copilot", &[]);
    let s = statuses(&t, &v);
    assert_eq!(s[0], ("~/.config/Code/User/prompts/mine.instructions.md".into(), "loaded".into()), "{s:?}");
    assert_eq!(v["files"][0]["scope"], "global");
}

/// A repository written for Cursor: a rule of each kind, a nested rules folder, both `AGENTS.md`
/// and the legacy file.
fn cursor_tree() -> Tree {
    let t = Tree::new();
    t.write("r/.cursor/rules/always.mdc", "---\nalwaysApply: true\n---\nAlways.\n");
    t.write("r/.cursor/rules/ts/ts.mdc", "---\nglobs: src/**/*.ts, *.tsx\nalwaysApply: false\n---\nTS.\n");
    t.write("r/.cursor/rules/migrations.mdc", "---\ndescription: When writing migrations\n---\nMigrations.\n");
    t.write("r/.cursor/rules/manual.mdc", "Only by name.\n");
    t.write("r/.cursor/rules/notes.md", "Not a rule: not `.mdc`.\n");
    t.write("r/AGENTS.md", "Root agents.\n");
    t.write("r/.cursorrules", "Legacy.\n");
    t.write("r/pkg/.cursor/rules/pkg.mdc", "---\nalwaysApply: true\n---\nPackage.\n");
    t.write("r/pkg/.cursor/rules/api.mdc", "---\nglobs: [\"api/**\"]\n---\nPackage API.\n");
    t.write("r/pkg/AGENTS.md", "Package agents.\n");
    t.write("r/src/app.ts", "");
    t.write("r/pkg/api/x.py", "");
    t.write("r/pkg/web/y.tsx", "");
    t
}

#[test]
fn cursor_rules_apply_always_by_glob_on_request_or_by_hand() {
    let t = cursor_tree();
    let v = effective(&t, "cursor", &[]);
    assert_eq!(
        statuses(&t, &v),
        pairs(&[
            (".cursor/rules/always.mdc", "loaded"),
            (".cursor/rules/manual.mdc", "manual"),
            (".cursor/rules/migrations.mdc", "on-request"),
            (".cursor/rules/ts/ts.mdc", "waiting"),
            ("AGENTS.md", "loaded"),
            (".cursorrules", "loaded"),
        ]),
        "rules by path, then AGENTS.md, then the legacy file; a nested folder waits for a touch"
    );
    assert_eq!(v["files"][3]["globs"], json!(["src/**/*.ts", "*.tsx"]));
    assert_eq!(
        v["text"],
        "Rule from ".to_string()
            + &format!("{}/.cursor/rules/always.mdc:\nAlways.", real(&t))
            + &format!(
                "\n\nRule from {}/AGENTS.md:\nRoot agents.\n\nRule from {}/.cursorrules:\nLegacy.",
                real(&t),
                real(&t)
            )
    );

    // A glob rule attaches on a matching touch; a touch in `pkg/` adds its rules folder (its globs
    // relative to `pkg/`) and its AGENTS.md.
    let v = effective(&t, "cursor", &["--touch", "src/app.ts"]);
    assert!(statuses(&t, &v).contains(&(".cursor/rules/ts/ts.mdc".into(), "loaded".into())));
    let v = effective(&t, "cursor", &["--touch", "pkg/api/x.py"]);
    let s = statuses(&t, &v);
    assert!(s.contains(&(".cursor/rules/ts/ts.mdc".into(), "waiting".into())), "{s:?}");
    assert_eq!(
        s[s.len() - 3..].to_vec(),
        pairs(&[
            ("pkg/.cursor/rules/api.mdc", "loaded"),
            ("pkg/.cursor/rules/pkg.mdc", "loaded"),
            ("pkg/AGENTS.md", "loaded")
        ]),
        "{s:?}"
    );
    // `*.tsx` matches at any depth.
    let v = effective(&t, "cursor", &["--touch", "pkg/web/y.tsx"]);
    assert!(statuses(&t, &v).contains(&(".cursor/rules/ts/ts.mdc".into(), "loaded".into())));
}

fn real(t: &Tree) -> String {
    std::fs::canonicalize(t.root()).expect("root").display().to_string()
}

#[test]
fn compare_shows_what_each_editor_attaches_at_start_and_after_a_touch() {
    let t = copilot_tree();
    t.write("r/.cursor/rules/ts.mdc", "---\nglobs: src/**\n---\nTS.\n");
    let o = run(&t, &t.root(), &["compare", "--touch", "src/app.ts"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.starts_with("comparing for Codex, opencode, Copilot (VS Code), Cursor: detected from .cursor/rules/, .github/copilot-instructions.md, .github/instructions/, AGENTS.md"), "{said}");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("  loads      .github/instructions/all.instructions.md, .github/instructions/sub/deeper.instructions.md, .github/instructions/ts.instructions.md, .github/copilot-instructions.md, AGENTS.md\n"), "{text}");
    assert!(text.contains("Copilot in VS Code 1.139.1 (copilot): 2,256 bytes in one request of 6 parts ("), "{text}");
    assert!(text.contains("  on request .github/instructions/plain.instructions.md\n"), "{text}");
    assert!(text.contains("  loads      AGENTS.md, .cursor/rules/ts.mdc\n"), "{text}");
    let o = run(&t, &t.root(), &["compare", "--json", "--all"]);
    let rows: Value = serde_json::from_slice(&o.stdout).expect("json");
    let cursor = rows.as_array().and_then(|r| r.iter().find(|r| r["profile"] == "cursor")).cloned().unwrap_or_default();
    assert_eq!(cursor["waits"], json!([".cursor/rules/ts.mdc (for `src/**`)"]));
    // A VS Code setting given to every row is Copilot's alone.
    let o = run(&t, &t.root(), &["compare", "--json", "--all", "--set", "chat.useAgentsMdFile=false"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Value = serde_json::from_slice(&o.stdout).expect("json");
    let copilot =
        rows.as_array().and_then(|r| r.iter().find(|r| r["profile"] == "copilot")).cloned().unwrap_or_default();
    assert_eq!(
        copilot["files"],
        json!([
            ".github/instructions/all.instructions.md",
            ".github/instructions/sub/deeper.instructions.md",
            ".github/copilot-instructions.md"
        ])
    );
}

#[test]
fn detection_without_editor_files_is_unchanged() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "Rules.\n");
    t.write("r/.github/workflows/ci.yml", "on: push\n");
    t.write("r/.cursor/mcp.json", "{}\n");
    let o = run(&t, &t.root(), &["compare"]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(said.starts_with("comparing for Codex, opencode: detected from AGENTS.md;"), "{said}");
}

#[test]
fn check_names_the_agent_of_each_rule_problem() {
    let t = Tree::new();
    t.write("r/.github/instructions/dead.instructions.md", "---\napplyTo: \"docs/**/*.md, src/*.ts\"\n---\nx\n");
    t.write("r/.github/instructions/bad.instructions.md", "---\napplyTo: \"src/**\n---\nx\n");
    t.write("r/.github/instructions/fine.instructions.md", "---\napplyTo: \"src/*.ts\"\n---\nx\n");
    t.write("r/.cursor/rules/manual.mdc", "---\nalwaysApply: false\n---\nx\n");
    t.write("r/.cursor/rules/dead.mdc", "---\nglobs: \"*.go\"\n---\nx\n");
    t.write("r/.cursor/rules/open.mdc", "---\nglobs: src/**\nno close\n");
    t.write("r/.cursor/rules/half.mdc", "---\nglobs: \"src/*.ts, *.go\"\n---\nx\n");
    t.write("r/src/a.ts", "");
    // Files VS Code never finds, and one text attached twice.
    t.write("r/.github/instructions/style.md", "---\napplyTo: \"**\"\n---\nnot an instructions file\n");
    t.write("r/.github/prompts/misplaced.instructions.md", "---\napplyTo: \"**\"\n---\nnowhere\n");
    t.write("r/.github/instructions/a/b/c/d/e/f/deep.instructions.md", "---\napplyTo: \"**\"\n---\ndeep\n");
    t.write("r/.github/instructions/README.md", "What this folder is for.\n");
    t.write("r/.github/instructions/linked.instructions.md", "---\napplyTo: \"LINKED.md\"\n---\nx\n");
    t.write("r/notes/source.md", "linked\n");
    t.symlink("notes/source.md", "r/LINKED.md");
    t.write("r/AGENTS.md", "The same text, twice.\n");
    t.mkdir("r/.claude/rules");
    t.symlink("../../AGENTS.md", "r/.claude/rules/agents.md");
    let o = run(&t, &t.root(), &["check", "--format", "json", "--fail-on", "never"]);
    let out: Value = serde_json::from_slice(&o.stdout).expect("json");
    let with = |code: &str| -> Vec<(String, String)> {
        out["findings"]
            .as_array()
            .or_else(|| out.as_array())
            .expect("findings")
            .iter()
            .filter(|f| f["code"] == code)
            .map(|f| {
                (
                    f["path"].as_str().unwrap_or("").rsplit('/').next().unwrap_or("").to_string(),
                    f["message"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let found = with("agentRule");
    let message = |file: &str| found.iter().filter(|(p, _)| p == file).map(|(_, m)| m.as_str()).collect::<Vec<_>>();
    let info = with("deadPattern");
    assert_eq!(
        info.iter().map(|(p, m)| (p.as_str(), m.as_str())).collect::<Vec<_>>(),
        [
            (
                "half.mdc",
                "Cursor attaches this file by its other `globs` patterns; the pattern `*.go` matches no file in the repository"
            ),
            (
                "dead.instructions.md",
                "Copilot (VS Code) attaches this file by its other `applyTo` patterns; the pattern `docs/**/*.md` matches no file in the repository"
            ),
        ],
        "one dead alternative of a rule that attaches is information, not a warning"
    );
    assert!(message("dead.instructions.md").is_empty() && message("half.mdc").is_empty(), "{found:?}");
    let never = "Copilot (VS Code) never finds this file, so neither it nor the model can read it: ";
    assert_eq!(
        message("style.md"),
        [format!("{never}in `.github/instructions` VS Code reads only files named `*.instructions.md`")]
    );
    assert!(
        message("misplaced.instructions.md")
            .first()
            .is_some_and(|m| m.starts_with(never) && m.contains("none of the folders VS Code searches")),
        "{found:?}"
    );
    assert!(message("deep.instructions.md").first().is_some_and(|m| m.contains("5 folders deep")), "{found:?}");
    assert!(message("README.md").is_empty(), "a folder's README is no misplaced rule: {found:?}");
    assert!(message("linked.instructions.md").is_empty(), "a link is a file VS Code can attach: {found:?}");
    let twice = with("attachedTwice");
    assert_eq!(twice.len(), 1, "{twice:?}");
    assert_eq!(twice[0].0, "AGENTS.md");
    assert!(
        twice[0].1.starts_with(
            "Copilot (VS Code) attaches this file's text twice: its 22 bytes are the same as `.claude/rules/agents.md`"
        ),
        "{twice:?}"
    );
    assert_eq!(message("bad.instructions.md").len(), 1, "{found:?}");
    assert!(message("bad.instructions.md")[0].starts_with("Copilot (VS Code) cannot read this file's front matter"));
    assert!(message("fine.instructions.md").is_empty(), "{found:?}");
    assert_eq!(
        message("manual.mdc"),
        [
            "Cursor never attaches this rule on its own: its front matter has neither `alwaysApply`, `globs` nor `description` (only an @-mention adds it)"
        ]
    );
    assert_eq!(
        message("dead.mdc"),
        ["Cursor never attaches this file by its `globs`: `*.go` matches no file in the repository"]
    );
    assert!(message("open.mdc").first().is_some_and(|m| m.contains("never closes")), "{found:?}");
}

#[tokio::test]
async fn the_server_answers_for_copilot_with_globs_and_a_preview() {
    let t = copilot_tree();
    t.write("r/.github/instructions/dead.instructions.md", "---\napplyTo: \"nowhere/**\"\n---\nx\n");
    let root = t.root();
    let mut c = Client::start(&t.home(), &[&root], json!({})).await;
    let e = c.effective(json!({"profile": "copilot"})).await;
    assert_eq!(e["profile"], "copilot");
    let ts = e["files"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["path"] == ".github/instructions/ts.instructions.md"))
        .cloned();
    assert_eq!(ts.as_ref().map(|f| f["status"].clone()), Some(json!("waiting")), "{e}");
    assert_eq!(ts.map(|f| f["globs"].clone()), Some(json!(["src/**/*.ts", "lib/*.ts"])));
    // A file below the folder counts as a touch.
    let e = c.effective(json!({"uri": uri(&t.path("r/src/app.ts")), "profile": "copilot"})).await;
    let ts = e["files"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["path"] == ".github/instructions/ts.instructions.md"))
        .cloned();
    assert_eq!(ts.map(|f| f["status"].clone()), Some(json!("loaded")), "{e}");
    // The repository targets Copilot, so its rule problems are diagnostics.
    let targets = c.effective(json!({"profile": "targets"})).await;
    let names: Vec<&str> =
        targets["profiles"].as_array().expect("profiles").iter().filter_map(|p| p["profile"].as_str()).collect();
    assert!(names.contains(&"copilot"), "{names:?}");
    let d = c.diagnostic(&t.path("r/.github/instructions/dead.instructions.md"), "agentRule").await;
    assert!(d["message"].as_str().is_some_and(|m| m.contains("`nowhere/**` matches no file")), "{d}");
    // A hover on a rule says when, and for which files, Copilot attaches it.
    let hover = |path: std::path::PathBuf| json!({"textDocument": {"uri": uri(&path)}, "position": {"line": 0, "character": 0}});
    let h = c.request("textDocument/hover", hover(t.path("r/.github/instructions/ts.instructions.md"))).await;
    let shown = h.as_ref().ok().and_then(|h| h["contents"]["value"].as_str()).unwrap_or("").to_string();
    assert!(
        shown.contains("loads this rule when a file matching") && shown.contains("2 files of the repository match"),
        "{shown}"
    );
    c.finish().await;
}

/// The VS Code extension sends the server every kind of file the server treats as an agent's:
/// its list of patterns names each of the server's file names (`.claude` as a folder).
#[test]
fn the_vs_code_extension_selects_every_agent_file_the_server_knows() {
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode/src/settings.ts"))
        .expect("settings.ts");
    for name in instructions_lsp::chain::agents::FILE_NAMES {
        let pattern = if *name == ".claude" { "\"**/.claude/**/*.md\"".to_string() } else { format!("\"**/{name}\"") };
        assert!(source.contains(&pattern), "the extension does not select {pattern}");
    }
    for pattern in ["\"**/*.instructions.md\"", "\"**/*.mdc\"", "\"**/instructions-lsp.toml\""] {
        assert!(source.contains(pattern), "the extension does not select {pattern}");
    }
}
