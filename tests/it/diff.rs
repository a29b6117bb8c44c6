//! `instructions-lsp diff BASE [HEAD]` on real git histories made in temp dirs: what a reviewer
//! reads about each kind of change, and that neither the working tree nor the index is touched.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::tree::Tree;
use serde_json::Value;

/// Runs git in the tree's repository, with a private home and no system configuration.
fn git(tree: &Tree, args: &[&str]) -> String {
    git_with_input(tree, args, "")
}

/// [`git`] with `input` on its standard input.
fn git_with_input(tree: &Tree, args: &[&str], input: impl AsRef<[u8]>) -> String {
    use std::io::Write;
    let mut child = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(tree.root())
        .env("HOME", tree.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run git");
    child.stdin.take().expect("stdin").write_all(input.as_ref()).expect("write stdin");
    let o = child.wait_with_output().expect("git output");
    assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A repository in the tree's root.
fn repo() -> Tree {
    let tree = Tree::new();
    git(&tree, &["init", "-q"]);
    tree
}

fn commit(tree: &Tree, message: &str) {
    git(tree, &["add", "-A"]);
    git(tree, &["commit", "-q", "-m", message]);
}

/// `instructions-lsp diff` run in `cwd`, with the tree's home and no agent's settings from the
/// environment.
fn diff_command(tree: &Tree, cwd: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"));
    command
        .arg("diff")
        .args(args)
        .current_dir(cwd)
        .env("HOME", tree.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("DSH_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME");
    command
}

fn diff_in(tree: &Tree, cwd: &Path, args: &[&str]) -> Output {
    diff_command(tree, cwd, args).output().expect("run instructions-lsp diff")
}

fn diff(tree: &Tree, args: &[&str]) -> Output {
    diff_in(tree, &tree.root(), args)
}

/// The output of `child` once it ends; a panic saying `stuck` when it has not ended within a
/// minute (a guard against a run that never ends, not a measure of its time).
fn finished(mut child: std::process::Child, stuck: &str) -> Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{stuck}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn lines(o: &Output) -> Vec<String> {
    stdout(o).lines().map(str::to_string).collect()
}

/// A root `AGENTS.md` of about `bytes` bytes.
fn rules(bytes: usize) -> String {
    let line = "- keep the change small and say why\n";
    line.repeat(bytes / line.len() + 1)
}

#[test]
fn a_root_agents_md_past_codex_budget_costs_every_package_its_own_file() {
    let t = repo();
    t.write("r/AGENTS.md", rules(30_000));
    for p in ["a", "b", "c"] {
        t.write(&format!("r/packages/{p}/AGENTS.md"), "package rules\n");
    }
    commit(&t, "base");
    t.write("r/AGENTS.md", rules(35_000));
    commit(&t, "grow the root file");
    let status_before = git(&t, &["status", "--porcelain"]);
    let o = diff(&t, &["HEAD~1", "HEAD"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = lines(&o);
    assert!(
        out.contains(&"Codex, 3 directories (`packages/a`, `packages/b`, `packages/c`): lose their own `AGENTS.md` (left out by the 32 KiB shared budget; before: whole); `AGENTS.md` grew from 30,024 to 35,028 bytes, past the 32 KiB shared budget: cut at 32,768".to_string()),
        "{out:#?}"
    );
    // The same finding of each package's own file is one line.
    assert!(out.contains(&"  packages/a/AGENTS.md:1:1 (also packages/b/AGENTS.md, packages/c/AGENTS.md): warning[agentCut]: Codex leaves this file out (32 KiB shared budget spent by AGENTS.md (32,768 bytes))".to_string()), "{out:#?}");
    let new = out.iter().position(|l| l == "new findings:").expect("new findings");
    assert!(
        out[new + 1].starts_with("  AGENTS.md:") && out[new + 1].contains("warning[agentCut]: Codex cuts this file")
    );
    // Read from the object database: the working tree and the index are as they were.
    assert_eq!(git(&t, &["status", "--porcelain"]), status_before);
    // A new warning fails the build when asked.
    assert_eq!(diff(&t, &["HEAD~1", "HEAD", "--fail-on", "new-warning"]).status.code(), Some(1));
    // The other way round the cut goes away: nothing new to fail on.
    let back = diff(&t, &["HEAD", "HEAD~1", "--fail-on", "new-warning"]);
    assert_eq!(back.status.code(), Some(0));
    assert!(stdout(&back).contains("gain their own `AGENTS.md` (whole; before: left out by the 32 KiB shared budget)"));
    let json: Value = serde_json::from_slice(&diff(&t, &["HEAD~1", "HEAD", "--json"]).stdout).expect("json");
    let codex = &json["groups"][0];
    assert_eq!(codex["agent"], "codex");
    assert_eq!(codex["dirs"].as_array().map(Vec::len), Some(3));
    assert_eq!(codex["changes"][0]["kind"], "leaves");
    assert_eq!(codex["changes"][0]["file"], serde_json::json!({"path": "AGENTS.md", "own": true}));
    // `--profile` names the agent compared, as in `check`.
    let codex = lines(&diff(&t, &["HEAD~1", "HEAD", "--profile", "codex"]));
    assert_eq!(codex[1], "comparing for Codex (named on the command line)");
    assert!(!codex.iter().any(|l| l.starts_with("opencode")), "{codex:#?}");
    // No path of a temporary directory leaks out.
    assert!(!stdout(&diff(&t, &["HEAD~1", "HEAD", "--json"])).contains("instructions-lsp-diff"));
}

#[test]
fn a_new_root_claude_md_hides_every_agents_md_from_claude_code() {
    let t = repo();
    t.write("r/AGENTS.md", "root rules\n");
    t.write("r/packages/a/AGENTS.md", "a rules\n");
    commit(&t, "base");
    t.write("r/CLAUDE.md", "claude rules\n");
    commit(&t, "add CLAUDE.md");
    let o = diff(&t, &["HEAD~1", "HEAD"]);
    let out = lines(&o);
    // The base side is written for Codex and opencode; the head side adds Claude Code, which is
    // compared on both sides.
    assert!(
        out.iter().any(|l| l.starts_with("HEAD~1: comparing for Codex, opencode") && l.contains("Claude Code too"))
    );
    // (The bytes of Claude Code's text name the repository's path, so they are not compared here.)
    assert!(
        out.iter().any(|l| l.starts_with("Claude Code started in `.` (")
            && l.ends_with("bytes): loses `AGENTS.md` (ignored for `CLAUDE.md`; before: whole, 11 bytes); gains `CLAUDE.md` (whole, 13 bytes)")),
        "{out:#?}"
    );
    assert!(
        out.iter().any(|l| l.starts_with("Claude Code started in `packages/a`")
            && l.contains("loses `packages/a/AGENTS.md` (ignored for `CLAUDE.md`; before: whole)")),
        "{out:#?}"
    );
    assert!(
        out.contains(
            &"opencode, 2 directories (`.`, `packages/a`): ignore the new `CLAUDE.md` (ignored for `AGENTS.md`)"
                .to_string()
        ),
        "{out:#?}"
    );
    // Infos are no new warning.
    assert_eq!(diff(&t, &["HEAD~1", "HEAD", "--fail-on", "new-warning"]).status.code(), Some(0));
}

#[test]
fn a_claude_md_that_stops_importing_agents_md_leaves_claude_code_its_own_two_lines() {
    let t = repo();
    t.write("r/AGENTS.md", rules(1_000));
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    commit(&t, "import");
    t.write("r/CLAUDE.md", "Two lines.\nNo import.\n");
    commit(&t, "stop importing");
    let out = lines(&diff(&t, &["HEAD~1", "HEAD"]));
    assert!(
        out.iter().any(|l| l.starts_with("Claude Code started in `.`")
            && l.contains(
                "loses `AGENTS.md` (ignored for `CLAUDE.md`; before: whole, 1,008 bytes, imported by `CLAUDE.md`)"
            )
            && l.contains("`CLAUDE.md` grows from 11 to 22 bytes")),
        "{out:#?}"
    );
    assert!(out.contains(&"files changed: `CLAUDE.md`: 11 → 22 bytes".to_string()), "{out:#?}");
}

/// Markdown outside the agents' files is laid out when something an agent reads names it: an
/// import, an import of an import, a file name configured for an agent. A change to one is a
/// change of the views; a change to a note nothing names changes nothing.
#[test]
fn an_imported_file_and_its_imports_are_compared_and_unnamed_notes_are_not() {
    let t = repo();
    t.write("r/CLAUDE.md", "Read @docs/guide.md first.\n");
    t.write("r/docs/guide.md", "The guide; then @../more/deep.txt\n");
    t.write("r/more/deep.txt", "deep\n");
    t.write("r/instructions-lsp.toml", "agents = [\"claude\", \"gemini\"]\n[gemini]\nfile-names = [\"NOTES.md\"]\n");
    t.write("r/NOTES.md", "notes\n");
    t.write("r/docs/unrelated.md", "nobody reads this\n");
    commit(&t, "base");
    t.write("r/more/deep.txt", "deeper and deeper\n");
    t.write("r/NOTES.md", "notes, longer\n");
    t.write("r/docs/unrelated.md", "nobody reads this either\n");
    commit(&t, "head");
    let o = diff(&t, &["HEAD~1", "HEAD", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let json: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        json["files"],
        serde_json::json!([
            {"path": "NOTES.md", "before": 6, "after": 14},
            {"path": "more/deep.txt", "before": 5, "after": 18},
        ]),
        "{json:#}"
    );
}

/// A mention that names no file (a handle in prose) is no import: when the text drops it, the
/// only change is the text's size, never a file that "is gone".
#[test]
fn a_mention_that_names_no_file_is_no_change_when_it_goes() {
    let t = repo();
    t.write("r/CLAUDE.md", "Thanks to @neongreen, for the rules below.\n");
    commit(&t, "thanks");
    t.write("r/CLAUDE.md", "The rules below.\n");
    commit(&t, "no thanks");
    let out = diff(&t, &["HEAD~1", "HEAD", "--profile", "claude"]);
    let text = stdout(&out);
    assert!(!text.contains("neongreen"), "{text}");
    assert!(text.contains("`CLAUDE.md` shrinks from 43 to 17 bytes"), "{text}");
}

/// uv's change: the root `CLAUDE.md` becomes `@AGENTS.md`. Started at the root, Claude Code gains
/// `AGENTS.md`; started in any crate (a package root without files of its own) it does not: said
/// on a line of its own for the class, which the JSON names.
#[test]
fn a_root_claude_md_that_becomes_an_import_is_said_apart_for_the_package_roots() {
    let t = repo();
    t.write("r/CLAUDE.md", rules(1_300));
    t.write("r/Cargo.toml", "[workspace]\n");
    for c in ["uv", "uv-auth", "uv-cache"] {
        t.write(&format!("r/crates/{c}/Cargo.toml"), "[package]\n");
        t.write(&format!("r/crates/{c}/src/lib.rs"), "\n");
    }
    commit(&t, "claude rules");
    std::fs::rename(t.path("r/CLAUDE.md"), t.path("r/AGENTS.md")).expect("move");
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    commit(&t, "one AGENTS.md");
    let out = lines(&diff(&t, &["HEAD~1", "HEAD", "--profile", "claude"]));
    assert!(
        out.iter().any(|l| l.starts_with("Claude Code started in `.` (")
            && l.ends_with("gains `AGENTS.md` (whole, 1,332 bytes, imported by `CLAUDE.md`); `CLAUDE.md` shrinks from 1,332 to 11 bytes")),
        "{out:#?}"
    );
    assert!(
        out.iter().any(|l| l.starts_with(
            "Claude Code started in any folder below `.` without its own `CLAUDE.md` (such as `crates/uv` and 2 other package roots) ("
        ) && l.ends_with(
            "`CLAUDE.md` shrinks from 1,332 to 11 bytes; `AGENTS.md` is new: not loaded, outside the directory where the agent starts, imported by `CLAUDE.md`"
        )),
        "{out:#?}"
    );
    let json: Value =
        serde_json::from_slice(&diff(&t, &["HEAD~1", "HEAD", "--profile", "claude", "--json"]).stdout).expect("json");
    let class =
        json["groups"].as_array().into_iter().flatten().find_map(|g| g["dirs"][0]["class"].as_object().cloned());
    assert_eq!(
        class.map(Value::Object),
        Some(serde_json::json!({"below": ".", "packageRoots": 3, "named": 0, "own": "CLAUDE.md"})),
        "{json:#}"
    );
    // Where the class changes as its start does, no line of its own: a link reaches every folder.
    std::fs::remove_file(t.path("r/CLAUDE.md")).expect("rm");
    t.symlink("AGENTS.md", "r/CLAUDE.md");
    let out = stdout(&diff(&t, &["HEAD~1", "--profile", "claude"]));
    assert!(!out.contains("any folder"), "{out}");
    assert!(!out.contains("loses"), "the text of AGENTS.md still reaches Claude Code, through the link: {out}");
}

/// A folder that exists on both sides is compared on both, whether or not it gains an instruction
/// file; only a folder missing on one side is new (langfuse added `web/src/features/evals/AGENTS.md`
/// to a folder of sources).
#[test]
fn a_folder_that_gains_its_first_file_is_compared_on_both_sides() {
    let t = repo();
    t.write("r/AGENTS.md", "root rules\n");
    t.write("r/web/AGENTS.md", rules(6_000));
    t.write("r/web/src/features/evals/page.ts", "export {}\n");
    commit(&t, "web");
    t.write("r/web/src/features/evals/AGENTS.md", rules(3_000));
    t.write("r/docs/new/AGENTS.md", "new folder\n");
    commit(&t, "evals");
    let out = stdout(&diff(&t, &["HEAD~1", "HEAD", "--profile", "codex"]));
    assert!(
        out.contains("Codex started in `web/src/features/evals` (")
            && out.contains("gains `web/src/features/evals/AGENTS.md` (whole)"),
        "{out}"
    );
    assert!(out.contains("new directories where agents start: `docs/new`\n"), "{out}");
    assert!(!out.contains("`web/src/features/evals`\n"), "not new: {out}");
    // dsh-next at 8 KiB: the package's file leaves the view where the folder's own comes in.
    let out = stdout(&diff(&t, &["HEAD~1", "HEAD", "--profile", "dsh-next", "--set", "baselineMaxBytes=8192"]));
    let line = out.lines().find(|l| l.contains("started in `web/src/features/evals`")).unwrap_or_default();
    assert!(line.contains("`web/AGENTS.md`") && line.contains("gains `web/src/features/evals/AGENTS.md`"), "{out}");
}

/// A change to 40 packages' files: the text lists them one a line, and a pull request's comment
/// names a few and folds the rest, with every number written as `check` and `compare` write it.
#[test]
fn a_change_to_many_packages_files_keeps_the_summary_short() {
    let t = repo();
    t.write("r/AGENTS.md", rules(1_200));
    for i in 0..40 {
        t.write(&format!("r/packages/p{i:02}/package.json"), "{}\n");
    }
    commit(&t, "packages");
    for i in 0..40 {
        t.write(&format!("r/packages/p{i:02}/AGENTS.md"), "own rules\n");
    }
    commit(&t, "own files");
    let out = stdout(&diff(&t, &["HEAD~1", "HEAD", "--profile", "codex"]));
    assert!(out.contains("files changed (40):\n  `packages/p00/AGENTS.md`: new, 10 bytes\n"), "{out}");
    assert!(
        out.contains("Codex, 40 directories (`packages/p00`, `packages/p01`, `packages/p02` and 37 more)"),
        "{out}"
    );
    let md = stdout(&diff(&t, &["HEAD~1", "HEAD", "--profile", "codex", "--format", "markdown"]));
    let first = md.lines().find(|l| l.starts_with("Files changed")).unwrap_or_default();
    assert!(first.starts_with("Files changed (40): `packages/p00/AGENTS.md`: new, 10 bytes;"), "{md}");
    assert!(first.ends_with("; and 28 more"), "{first}");
    assert!(md.contains("<details><summary>Every file changed (40)</summary>"), "{md}");
    // The root's size, past a thousand, is written with its separator as everywhere else.
    assert!(md.contains("| Codex | `packages/p00` | 1,"), "{md}");
}

/// A revision can make a folder a link to anywhere: it is no folder an agent starts in on that
/// side, and nothing is read through it (the outside file's size never shows). FIFOs in the
/// working tree, named like a manifest or a Markdown file, are named, never opened.
#[test]
fn a_folder_made_a_link_to_outside_is_gone_and_nothing_is_read_through_it() {
    let t = repo();
    let outside = tempfile::tempdir().expect("outside");
    std::fs::write(outside.path().join("AGENTS.md"), "SECRET\n").expect("secret");
    t.write("r/AGENTS.md", "rules\n");
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    t.write("r/pkg/AGENTS.md", "package\n");
    t.write("r/pkg/Cargo.toml", "[package]\n");
    commit(&t, "pkg");
    std::fs::remove_dir_all(t.path("r/pkg")).expect("rm");
    t.symlink(outside.path(), "r/pkg");
    commit(&t, "pkg is a link");
    let first = stdout(&diff(&t, &["HEAD~1", "HEAD"]));
    assert!(first.contains("directories removed: `pkg`"), "{first}");
    assert!(!first.contains("started in `pkg` ("), "{first}");
    std::fs::write(outside.path().join("AGENTS.md"), "SECRET\n".repeat(1000)).expect("grow");
    assert_eq!(stdout(&diff(&t, &["HEAD~1", "HEAD"])), first, "the outside file is never read");
    #[cfg(unix)]
    {
        std::fs::remove_file(t.path("r/pkg")).expect("rm link");
        t.mkdir("r/pkg");
        for fifo in ["r/pkg/package.json", "r/pkg/go.mod", "r/notes.md"] {
            let made = Command::new("mkfifo").arg(t.path(fifo)).status().expect("mkfifo");
            assert!(made.success());
        }
        let child = diff_command(&t, &t.root(), &["HEAD"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("diff");
        let o = finished(child, "diff HEAD blocked on a FIFO");
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn a_wider_apply_to_attaches_a_copilot_rule_to_more_files() {
    let t = repo();
    for f in ["src/a/x.ts", "src/a/y.ts", "src/b/z.ts", "src/b/w.ts", "src/b/notes.md"] {
        t.write(&format!("r/{f}"), "");
    }
    let rule = |glob: &str| format!("---\napplyTo: \"{glob}\"\n---\nUse strict types.\n");
    t.write("r/.github/instructions/ts.instructions.md", rule("src/a/**"));
    commit(&t, "a rule for src/a");
    t.write("r/.github/instructions/ts.instructions.md", rule("**/*.ts"));
    commit(&t, "for every TypeScript file");
    let out = lines(&diff(&t, &["HEAD~1", "HEAD"]));
    assert!(
        out.iter().any(|l| l.starts_with("Copilot (VS Code) started in `.`")
            && l.ends_with("`.github/instructions/ts.instructions.md` attaches to 4 files (`**/*.ts`) instead of 2 files (`src/a/**`)")),
        "{out:#?}"
    );
}

/// The skeletons leave out the sources (only names count for globs) and the directories that
/// hold nothing an agent reads: the rule still counts files deep in such directories, and a link
/// to one of them.
#[cfg(unix)]
#[test]
fn a_wider_cursor_glob_counts_files_in_folders_without_instructions_and_links_to_them() {
    let t = repo();
    for f in ["src/deep/a/b/c.rs", "lib/x.rs", "lib/y.txt"] {
        t.write(&format!("r/{f}"), "fn main() {}\n");
    }
    std::os::unix::fs::symlink("x.rs", t.root().join("lib/link.rs")).expect("symlink");
    let rule = |glob: &str| format!("---\ndescription: Rust\nglobs: {glob}\nalwaysApply: false\n---\nUse clippy.\n");
    t.write("r/.cursor/rules/rs.mdc", rule("src/deep/**/*.rs"));
    commit(&t, "a rule for src/deep");
    t.write("r/.cursor/rules/rs.mdc", rule("**/*.rs"));
    commit(&t, "for every Rust file");
    let out = lines(&diff(&t, &["HEAD~1", "HEAD"]));
    assert!(
        out.iter().any(|l| l.starts_with("Cursor started in `.`")
            && l.ends_with(
                "`.cursor/rules/rs.mdc` attaches to 3 files (`**/*.rs`) instead of 1 file (`src/deep/**/*.rs`)"
            )),
        "{out:#?}"
    );
    // The working tree goes through the same skeleton: a rule narrowed there is compared too.
    t.write("r/.cursor/rules/rs.mdc", rule("lib/*.rs"));
    let out = lines(&diff(&t, &["HEAD"]));
    assert!(
        out.iter()
            .any(|l| l
                .ends_with("`.cursor/rules/rs.mdc` attaches to 2 files (`lib/*.rs`) instead of 3 files (`**/*.rs`)")),
        "{out:#?}"
    );
}

#[cfg(unix)]
#[test]
fn a_claude_md_link_flipped_the_other_way_changes_nothing_for_any_agent() {
    let t = repo();
    t.write("r/AGENTS.md", "shared rules\n");
    t.symlink("AGENTS.md", "r/CLAUDE.md");
    commit(&t, "CLAUDE.md links to AGENTS.md");
    std::fs::remove_file(t.path("r/CLAUDE.md")).expect("rm");
    std::fs::remove_file(t.path("r/AGENTS.md")).expect("rm");
    t.write("r/CLAUDE.md", "shared rules\n");
    t.symlink("CLAUDE.md", "r/AGENTS.md");
    commit(&t, "AGENTS.md links to CLAUDE.md");
    let o = diff(&t, &["HEAD~1", "HEAD", "--fail-on", "new-warning"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        lines(&o).last().map(String::as_str),
        Some("No agent's view changes: Codex, Claude Code, opencode get the same files, bytes and findings.")
    );
    let md = stdout(&diff(&t, &["HEAD~1", "HEAD", "--format", "markdown"]));
    assert!(md.contains("No agent's view changes"), "{md}");
    let one = diff(&t, &["HEAD~1", "HEAD", "--set", r#"profiles=["claude"]"#]);
    assert_eq!(
        lines(&one).last().map(String::as_str),
        Some("No agent's view changes: Claude Code gets the same files, bytes and findings.")
    );
    let named = diff(&t, &["HEAD~1", "HEAD", "--base-name", "main at 1a2b3c4", "--head-name", "this pull request"]);
    assert_eq!(lines(&named).first().map(String::as_str), Some("main at 1a2b3c4 → this pull request"));
}

#[test]
fn without_head_the_working_tree_is_compared_uncommitted_and_untracked_files_too() {
    let t = repo();
    t.write("r/AGENTS.md", "root rules\n");
    t.write("r/pkg/AGENTS.md", "package rules\n");
    t.write("r/.gitignore", "ignored/\n");
    commit(&t, "base");
    t.write("r/AGENTS.md", "root rules, and more\n");
    t.write("r/tool/AGENTS.md", "tool rules\n");
    t.write("r/ignored/AGENTS.md", "never compared\n");
    git(&t, &["add", "AGENTS.md"]);
    let status_before = git(&t, &["status", "--porcelain"]);
    // From a subdirectory too: the whole repository, its paths from its root.
    let o = diff_in(&t, &t.path("r/pkg"), &["HEAD"]);
    assert_eq!(o.status.code(), Some(0));
    let out = lines(&o);
    assert_eq!(out[0], "HEAD → the working tree");
    assert!(
        out.contains(&"files changed: `AGENTS.md`: 11 → 21 bytes; `tool/AGENTS.md`: new, 11 bytes".to_string()),
        "{out:#?}"
    );
    assert!(
        out.contains(&"Codex, 2 directories (`.`, `pkg`): `AGENTS.md` grows from 11 to 21 bytes".to_string()),
        "{out:#?}"
    );
    assert!(out.contains(&"new directories where agents start: `tool`".to_string()), "{out:#?}");
    assert!(!stdout(&o).contains("ignored"), "{out:#?}");
    assert_eq!(git(&t, &["status", "--porcelain"]), status_before);
}

#[test]
fn a_bad_revision_or_no_repository_is_a_usage_error_that_says_so() {
    let t = repo();
    t.write("r/AGENTS.md", "root rules\n");
    commit(&t, "base");
    let o = diff(&t, &["no-such-branch"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("instructions-lsp diff: no-such-branch: not a revision of this repository"), "{err}");
    let o = diff(&t, &["HEAD", "HEAD~5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("HEAD~5: not a revision of this repository"));
    // Ranges and sets of commits are not one side of a comparison, however git spells them.
    for (spec, why) in [("HEAD^!", "a set of commits"), ("HEAD^@", "a set of commits"), ("HEAD~1..HEAD", "a range")] {
        let o = diff(&t, &[spec]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{spec}: {err}");
        assert!(err.starts_with(&format!("instructions-lsp diff: {spec}: {why}")), "{spec}: {err}");
    }
    // A shallow clone says why the parent is missing, and what to do.
    t.write("r/AGENTS.md", "root rules, second\n");
    commit(&t, "second");
    let clone = tempfile::tempdir().expect("tempdir");
    let url = format!("file://{}", t.root().display());
    let o = Command::new("git").args(["clone", "-q", "--depth", "1", &url]).arg(clone.path().join("c")).output();
    assert!(o.is_ok_and(|o| o.status.success()), "git clone --depth 1");
    let o = diff_in(&t, &clone.path().join("c"), &["HEAD~1", "HEAD"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("HEAD~1: not in this shallow clone") && err.contains("--deepen"), "{err}");
    // A SHA-256 repository says so plainly.
    let sha256 = tempfile::tempdir().expect("tempdir");
    let o = Command::new("git").args(["init", "-q", "--object-format=sha256"]).arg(sha256.path()).output();
    assert!(o.is_ok_and(|o| o.status.success()), "git init --object-format=sha256");
    let o = diff_in(&t, sha256.path(), &["HEAD"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("a SHA-256 git repository, which diff cannot read yet"), "{err}");
    // A configuration one side cannot use, named from the repository's root.
    t.write("r/instructions-lsp.toml", "agents = [\"nosuch\"]\n");
    let o = diff(&t, &["HEAD"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("instructions-lsp diff: the working tree: instructions-lsp.toml: `agents` names `nosuch`, which is not an agent"),
        "{err}"
    );
    let outside = tempfile::tempdir().expect("tempdir");
    let o = diff_in(&t, outside.path(), &["HEAD"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not in a git repository"));
}

/// A hostile history's corrupt commit (an object that claims to be a commit and is not) is an
/// error that names the revision, on either side, never a panic.
#[test]
fn a_corrupt_commit_is_an_error_that_names_it() {
    let t = repo();
    t.write("r/AGENTS.md", "root rules\n");
    commit(&t, "base");
    let bad = git_with_input(&t, &["hash-object", "-t", "commit", "--literally", "-w", "--stdin"], "not a commit\n");
    // (git refuses to point a ref at it: the ref is written as a file, as an attacker would.)
    t.write("r/.git/refs/heads/bad", format!("{}\n", bad.trim()));
    for args in [&["bad", "HEAD"][..], &["HEAD", "bad"], &["bad"]] {
        let o = diff(&t, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("bad: a commit that cannot be read"), "{args:?}: {err}");
        assert!(!err.contains("panicked") && err.lines().count() == 1, "{args:?}: {err}");
    }
}

/// A `TMPDIR` inside the working tree (or the working tree itself) holds no skeleton that the
/// working tree's side would report as a change of its own.
#[test]
fn a_temporary_directory_inside_the_working_tree_is_not_compared() {
    let t = repo();
    t.write("r/AGENTS.md", "root rules\n");
    t.mkdir("r/tmp");
    t.write("r/.gitignore", "/nothing\n");
    commit(&t, "base");
    for tmpdir in [t.root().join("tmp"), t.root()] {
        let o = diff_command(&t, &t.root(), &["HEAD"]).env("TMPDIR", &tmpdir).env_remove("XDG_RUNTIME_DIR").output();
        let o = o.expect("run diff");
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{out}{}", String::from_utf8_lossy(&o.stderr));
        assert!(!out.contains("instructions-lsp-diff-") && out.contains("No agent's view changes"), "{out}");
    }
}

/// A blob larger than any agent reads (as `AGENTS.md`, in a hidden folder, or in the working
/// tree) is laid out by its size: `diff` says how large it is, within an address space far
/// smaller than the blob (it was inflated whole, twice).
#[test]
fn a_blob_larger_than_any_agent_reads_is_judged_by_its_size_without_reading_it() {
    let t = repo();
    t.write("r/AGENTS.md", "root rules\n");
    commit(&t, "base");
    const BIG: u64 = 400 * 1024 * 1024;
    for rel in ["r/AGENTS.md", "r/.hidden/notes.md"] {
        std::fs::create_dir_all(t.path(rel).parent().expect("parent")).expect("mkdir");
        let file = std::fs::File::create(t.path(rel)).expect("create");
        file.set_len(BIG).expect("sparse");
    }
    commit(&t, "big");
    let limited = |args: &[&str]| {
        Command::new("prlimit")
            .arg(format!("--as={}", 300u64 << 20))
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_instructions-lsp"))
            .arg("diff")
            .args(args)
            .current_dir(t.root())
            .env("HOME", t.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("MALLOC_ARENA_MAX", "2")
            .output()
            .expect("run diff under prlimit")
    };
    for args in [&["HEAD~1", "HEAD", "--profile", "codex"][..], &["HEAD~1", "--profile", "codex"]] {
        let o = limited(args);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {out}{}", String::from_utf8_lossy(&o.stderr));
        assert!(out.contains("files changed: `AGENTS.md`: 11 → 419,430,400 bytes"), "{args:?}: {out}");
    }
}

/// A tree that names one 16 MiB `AGENTS.md` in 20 folders (a few hundred bytes in the
/// repository) would lay out 320 MiB: the revision is refused past 256 MiB of files, with a
/// message that says why.
#[test]
fn a_large_file_named_in_many_folders_is_refused_not_written_over_and_over() {
    let t = repo();
    t.write("r/AGENTS.md", "root rules\n");
    commit(&t, "base");
    let big = git_with_input(&t, &["hash-object", "-w", "--stdin"], vec![b'x'; 16 << 20]);
    let folder = git_with_input(&t, &["mktree"], format!("100644 blob {}\tAGENTS.md\n", big.trim()));
    let mut root = git(&t, &["ls-tree", "HEAD"]);
    for i in 0..20 {
        root.push_str(&format!("040000 tree {}\td{i:02}\n", folder.trim()));
    }
    let tree = git_with_input(&t, &["mktree"], root);
    let head = git(&t, &["commit-tree", tree.trim(), "-p", "HEAD", "-m", "bomb"]);
    let o = diff_command(&t, &t.root(), &["HEAD", head.trim(), "--profile", "codex"]).output().expect("run diff");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("its instruction files hold more than 268,435,456 bytes"), "{err}");
}

/// A tree that names a folder holding `AGENTS.md` (or a project manifest) twice at each of 17
/// levels (262,143 folders, within the bound of entries) would start agents in every one of
/// them: refused, saying why. One whose folders hold a note and a source file that nothing
/// names is compared by their names (it took 15 s when every note was written).
#[test]
fn a_tree_of_hundreds_of_thousands_of_instruction_folders_is_refused() {
    let t = repo();
    t.write("r/AGENTS.md", "root rules\n");
    commit(&t, "base");
    let blob = git_with_input(&t, &["hash-object", "-w", "--stdin"], "# rules\n");
    for (names, refused) in [(&["AGENTS.md"][..], true), (&["Cargo.toml"], true), (&["code.rs", "notes.md"], false)] {
        let file: String = names.iter().map(|n| format!("100644 blob {}\t{n}\n", blob.trim())).collect();
        let mut tree = git_with_input(&t, &["mktree"], &file);
        for _ in 0..17 {
            let level = format!("{file}040000 tree {0}\ta\n040000 tree {0}\tb\n", tree.trim());
            tree = git_with_input(&t, &["mktree"], level);
        }
        let head = git(&t, &["commit-tree", tree.trim(), "-p", "HEAD", "-m", "bomb"]);
        let o = diff_command(&t, &t.root(), &["HEAD", head.trim()]).output().expect("run diff");
        let err = String::from_utf8_lossy(&o.stderr);
        if refused {
            assert_eq!(o.status.code(), Some(2), "{names:?}: {err}");
            assert!(
                err.contains(
                    "more than 10,000 folders hold instruction files or project manifests, places where agents start"
                ),
                "{names:?}: {err}"
            );
        } else {
            assert_eq!(o.status.code(), Some(0), "{names:?}: {err}");
        }
    }
}

/// Commits the skeletons of `tests/fixtures/diff/<name>/base` and `…/head` (each file named with
/// `.skeleton` after its own name, so that no agent working in this repository reads them;
/// `.link.skeleton` holds a link's target) as two commits of a new repository.
fn recorded(name: &str) -> Tree {
    let t = repo();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diff").join(name);
    for side in ["base", "head"] {
        for entry in std::fs::read_dir(t.root()).expect("root").flatten() {
            if entry.file_name() != ".git" {
                let p = entry.path();
                if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) }.expect("clear");
            }
        }
        copy_skeleton(&fixture.join(side), &t.root());
        git(&t, &["add", "-A"]);
        git(&t, &["commit", "-q", "--allow-empty", "-m", side]);
    }
    t
}

fn copy_skeleton(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_dir() {
            copy_skeleton(&entry.path(), &to.join(&name));
        } else if let Some(link) = name.strip_suffix(".link.skeleton") {
            std::fs::create_dir_all(to).expect("dir");
            let target = std::fs::read_to_string(entry.path()).expect("link");
            #[cfg(unix)]
            std::os::unix::fs::symlink(target.trim_end(), to.join(link)).expect("symlink");
        } else if let Some(file) = name.strip_suffix(".skeleton") {
            std::fs::create_dir_all(to).expect("dir");
            std::fs::copy(entry.path(), to.join(file)).expect("copy");
        }
    }
}

/// The Markdown's summary lines, without the bytes of each agent's whole text (Codex's and
/// Claude Code's texts name the repository's path, whose length the temp dir decides).
fn summary(md: &str) -> Vec<String> {
    md.lines()
        .filter(|l| l.starts_with("- ") || l.starts_with("Files changed"))
        .map(|l| match (l.find(" ("), l.find(" bytes): ")) {
            (Some(i), Some(j)) if l[..i].ends_with('`') && i < j => format!("{}:{}", &l[..i], &l[j + 8..]),
            _ => l.to_string(),
        })
        .collect()
}

/// From DiversioTeam/claude-plugins, e653fac ("Consolidate config into AGENTS and make
/// CLAUDE.md minimal"): `CLAUDE.md` already imported `AGENTS.md`; its own text moved there.
#[test]
fn recorded_a_claude_md_whose_text_moves_into_the_agents_md_it_imports() {
    let t = recorded("claude-md-becomes-an-import");
    let o = diff(&t, &["HEAD~1", "HEAD", "--format", "markdown", "--fail-on", "new-warning"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        summary(&stdout(&o)),
        [
            "Files changed: `AGENTS.md`: 4,129 → 5,152 bytes; `CLAUDE.md`: 579 → 598 bytes",
            "- **Codex** started in `.`: `AGENTS.md` grows from 4,129 to 5,152 bytes",
            "- **Claude Code** started in `.`: `AGENTS.md` grows from 4,129 to 5,152 bytes; `CLAUDE.md` grows from 579 to 598 bytes",
            "- **opencode** started in `.`: `AGENTS.md` grows from 4,129 to 5,152 bytes",
        ]
    );
}

/// From astral-sh/uv, 27dc562 ("Add `AGENTS.md` (#18902)"): the root `CLAUDE.md` becomes the
/// single line `@AGENTS.md`, in a workspace of 68 packages without instruction files. Started
/// at the root, Claude Code gains `AGENTS.md`; started in any crate it does not (the import is
/// outside the folder it starts in): said on a line of its own, not folded into the root's, with
/// the new warning naming the fix that works in every folder.
#[test]
fn recorded_a_workspace_root_claude_md_that_becomes_an_import() {
    let t = recorded("claude-md-becomes-an-import-in-a-workspace");
    let o = diff(&t, &["HEAD~1", "HEAD", "--format", "markdown", "--fail-on", "new-warning"]);
    assert_eq!(o.status.code(), Some(1));
    let md = stdout(&o);
    let s = summary(&md);
    assert_lines(
        &s,
        &[
            "Files changed: `AGENTS.md`: new, 1,334 bytes; `CLAUDE.md`: 1,334 → 11 bytes",
            "- **Claude Code** started in `.`: gains `AGENTS.md` (whole, 1,334 bytes, imported by `CLAUDE.md`); \
             `CLAUDE.md` shrinks from 1,334 to 11 bytes",
            "- **opencode** started in `.`: loses `CLAUDE.md` (ignored for `AGENTS.md`; before: whole, 1,334 bytes); \
             gains `AGENTS.md` (whole, 1,334 bytes)",
            "- `AGENTS.md:1:1: warning[importOutside]: Claude Code, started in any folder below '.' without its own \
             'CLAUDE.md' (such as 'crates/uv' and 67 other package roots), does not load this file, which CLAUDE.md \
             imports, in non-interactive runs ('claude -p', CI): they load no import from outside the working \
             directory (an interactive session asks once whether to allow it); make 'CLAUDE.md' a link to \
             'AGENTS.md' ('ln -sf AGENTS.md CLAUDE.md') instead, which loads in every folder`",
        ],
    );
    // (The summary leaves out each line's bytes; the class line keeps its words.)
    assert!(
        md.lines().any(|l| l.starts_with(
            "- **Claude Code** started in any folder below `.` without its own `CLAUDE.md` (such as `crates/uv` and 67 \
             other package roots) ("
        ) && l.ends_with(
            "bytes): `CLAUDE.md` shrinks from 1,334 to 11 bytes; `AGENTS.md` is new: not loaded, outside the \
             directory where the agent starts, imported by `CLAUDE.md`"
        )),
        "{md}"
    );
    assert_eq!(md.matches("any folder below").count(), 2, "one line for the 68 packages, one finding: {md}");
}

/// From cybercog/laravel-love, 4f29ea4 ("Add AGENTS.md"): a repository without instruction files
/// gets an `AGENTS.md` and a `CLAUDE.md` that imports it.
#[test]
fn recorded_an_agents_md_added_with_a_claude_md_that_imports_it() {
    let t = recorded("agents-md-added-with-a-claude-import");
    let o = diff(&t, &["HEAD~1", "HEAD", "--format", "markdown"]);
    let md = stdout(&o);
    assert!(md.contains("HEAD~1: no instruction file of an agent yet; compared for Codex, Claude Code, opencode as on the other side"), "{md}");
    assert_eq!(
        summary(&md),
        [
            "Files changed: `AGENTS.md`: new, 3,478 bytes; `CLAUDE.md`: new, 413 bytes",
            "- **Codex** started in `.`: gains `AGENTS.md` (whole, 3,478 bytes)",
            "- **Claude Code** started in `.`: gains `AGENTS.md` (whole, 3,478 bytes, imported by `CLAUDE.md`); gains `CLAUDE.md` (whole, 413 bytes)",
            "- **opencode** started in `.`: gains `AGENTS.md` (whole, 3,478 bytes); ignores the new `CLAUDE.md` (ignored for `AGENTS.md`)",
            "- `CLAUDE.md:1:1: info[agentIgnored]: opencode ignores this file: it loads AGENTS.md instead`",
        ]
    );
}

/// Each line of `expected` among the summary's lines (the others are not asserted: see the test).
fn assert_lines(summary: &[String], expected: &[&str]) {
    for line in expected {
        assert!(summary.iter().any(|l| l == line), "missing {line:?} in\n{}", summary.join("\n"));
    }
}

/// From rocky-data/rocky, 0096f233 ("docs: make AGENTS.md canonical, reduce CLAUDE.md to an
/// @AGENTS.md import (#1027)"): in the root and in each package the text of `CLAUDE.md` moves
/// into an `AGENTS.md` that the `CLAUDE.md` now imports. What a reviewer learns: Codex started in
/// `engine` now spends 7,008 bytes of its 32 KiB on the new root file and cuts the package's grown
/// file; Claude Code started in a package does not follow the root `CLAUDE.md`'s import of the
/// root `AGENTS.md` (outside its working directory); opencode drops the root `CLAUDE.md`'s text.
#[test]
fn recorded_agents_md_made_canonical_in_every_package_cuts_codex_in_the_biggest_one() {
    let t = recorded("agents-md-canonical-in-every-package");
    let o = diff(&t, &["HEAD~1", "HEAD", "--format", "markdown", "--fail-on", "new-warning"]);
    // New warnings: the cut, and the root import Claude Code does not follow from a package.
    assert_eq!(o.status.code(), Some(1));
    let s = summary(&stdout(&o));
    assert_lines(
        &s,
        &[
            "Files changed: `AGENTS.md`: new, 7,008 bytes; `CLAUDE.md`: 9,343 → 2,624 bytes; \
             `editors/vscode/AGENTS.md`: 5,282 → 11,445 bytes; `editors/vscode/CLAUDE.md`: 11,452 → 446 bytes; \
             `engine/AGENTS.md`: 8,817 → 29,459 bytes; `engine/CLAUDE.md`: 23,140 → 210 bytes; \
             `examples/playground/AGENTS.md`: new, 6,032 bytes; `examples/playground/CLAUDE.md`: 6,032 → 147 bytes; \
             `sdk/python/AGENTS.md`: new, 4,519 bytes; `sdk/python/CLAUDE.md`: 4,519 → 142 bytes",
            "- **Codex**, 2 directories (`examples/playground`, `sdk/python`): gain `AGENTS.md` (whole, 7,008 bytes); \
             gain their own `AGENTS.md` (whole)",
            "- **Codex** started in `.`: gains `AGENTS.md` (whole, 7,008 bytes)",
            "- **Codex** started in `editors/vscode`: gains `AGENTS.md` (whole, 7,008 bytes); \
             `editors/vscode/AGENTS.md` grows from 5,282 to 11,445 bytes",
            "- **Codex** started in `engine`: gains `AGENTS.md` (whole, 7,008 bytes); `engine/AGENTS.md` grew from \
             8,817 to 29,459 bytes, past the 32 KiB shared budget: cut at 25,760",
            "- **Claude Code** started in `.`: gains `AGENTS.md` (whole, 7,008 bytes, imported by `CLAUDE.md`); \
             `CLAUDE.md` shrinks from 9,343 to 2,624 bytes",
            // Packages that change alike read as one line, each package's own file named as
            // theirs, and the root import they do not follow said as such.
            "- **Claude Code**, 2 directories (`editors/vscode`, `engine`): gain their own `AGENTS.md` (whole, \
             imported by their own `CLAUDE.md`; before: ignored for `CLAUDE.md`); `CLAUDE.md` shrinks from 9,343 \
             to 2,624 bytes; their own `CLAUDE.md` change size (each directory's bytes below); `AGENTS.md` is new: \
             not loaded, outside the directory where the agent starts, imported by `CLAUDE.md`",
            "- **Claude Code**, 2 directories (`examples/playground`, `sdk/python`): gain their own `AGENTS.md` \
             (whole, imported by their own `CLAUDE.md`); `CLAUDE.md` shrinks from 9,343 to 2,624 bytes; their own \
             `CLAUDE.md` change size (each directory's bytes below); `AGENTS.md` is new: not loaded, outside the \
             directory where the agent starts, imported by `CLAUDE.md`",
            "- **opencode**, 2 directories (`examples/playground`, `sdk/python`): lose `CLAUDE.md` (ignored for \
             `AGENTS.md`; before: whole, 9,343 bytes); lose their own `CLAUDE.md` (ignored for their own \
             `AGENTS.md`; before: whole); gain `AGENTS.md` (whole, 7,008 bytes); gain their own `AGENTS.md` (whole)",
            "- **opencode** started in `.`: loses `CLAUDE.md` (ignored for `AGENTS.md`; before: whole, 9,343 bytes); \
             gains `AGENTS.md` (whole, 7,008 bytes)",
            "- `AGENTS.md:1:1: warning[importOutside]: Claude Code, started in any folder below '.' without its own \
             'CLAUDE.md' (such as 'editors'), does not load this file, which CLAUDE.md imports, in non-interactive \
             runs ('claude -p', CI): they load no import from outside the working directory (an interactive session \
             asks once whether to allow it) (also in 4 other directories)`",
            "- `engine/AGENTS.md:398:244: warning[agentCut]: Codex cuts this file at line 398, after 25,760 of 29,459 \
             bytes (32 KiB shared budget spent by AGENTS.md (7,008 bytes))`",
            // Each package's file that opencode ignores for the `AGENTS.md` beside it: one line.
            "- `CLAUDE.md:1:1 (also examples/playground/CLAUDE.md, sdk/python/CLAUDE.md): info[agentIgnored]: \
             opencode ignores this file: it loads AGENTS.md instead`",
        ],
    );
}

/// From sei-protocol/sei-chain, e7c0eff ("Move all existing CLAUDE agent files to AGENTS
/// (#3590)"): the root `CLAUDE.md` imports the root `AGENTS.md`, and the `CLAUDE.md` of two
/// packages is renamed `AGENTS.md`. What a reviewer learns: Codex and opencode gain each package's
/// file, but Claude Code started in either package loses it, since the root `CLAUDE.md` has text
/// (so no `AGENTS.md` is read) and its import lies outside the package.
#[test]
fn recorded_nested_claude_md_renamed_agents_md_is_lost_to_claude_code_in_those_packages() {
    let t = recorded("nested-claude-md-renamed-to-agents-md");
    let o = diff(&t, &["HEAD~1", "HEAD", "--format", "markdown"]);
    let s = summary(&stdout(&o));
    assert_lines(
        &s,
        &[
            "Files changed: `benchmark/AGENTS.md`: new, 3,787 bytes; `benchmark/CLAUDE.md`: removed (it had 3,787 \
             bytes); `giga/tests/AGENTS.md`: new, 6,541 bytes; `giga/tests/CLAUDE.md`: removed (it had 6,541 bytes)",
            "- **Codex**, 2 directories (`benchmark`, `giga/tests`): gain their own `AGENTS.md` (whole)",
            // The two packages change alike for Claude Code too: one line, whatever their sizes.
            "- **Claude Code**, 2 directories (`benchmark`, `giga/tests`): lose their own `CLAUDE.md` (no longer \
             read; before: whole); ignore their new `AGENTS.md` (ignored for `CLAUDE.md`)",
            "- `benchmark/AGENTS.md:1:1 (also giga/tests/AGENTS.md): info[agentIgnored]: Claude Code ignores this \
             file: it loads CLAUDE.md at the project root instead`",
        ],
    );
    // Claude Code's and opencode's changes, directory by directory, as the JSON says them
    // (each package's own files: `own`).
    let json: Value = serde_json::from_slice(&diff(&t, &["HEAD~1", "HEAD", "--json"]).stdout).expect("json");
    let changes_of = |agent: &str, dir: &str| -> Vec<String> {
        let groups = json["groups"].as_array().expect("groups");
        let g = groups
            .iter()
            .find(|g| g["agent"] == agent && g["dirs"].as_array().expect("dirs").iter().any(|d| d["dir"] == dir))
            .unwrap_or_else(|| panic!("no change for {agent} in {dir}: {json}"));
        g["changes"]
            .as_array()
            .expect("changes")
            .iter()
            .map(|c| {
                let state = |s: &Value| match (s["status"].as_str(), s["by"].as_str()) {
                    (Some(st), Some(by)) => format!("{st} by {by}"),
                    (Some(st), None) => st.to_string(),
                    _ => "none".to_string(),
                };
                let (f, own) = (c["file"]["path"].as_str().expect("path"), c["file"]["own"] == true);
                format!(
                    "{} {}{f}: {} → {}",
                    c["kind"].as_str().expect("kind"),
                    if own { "own " } else { "" },
                    state(&c["before"]),
                    state(&c["after"])
                )
            })
            .collect()
    };
    for dir in ["benchmark", "giga/tests"] {
        assert_eq!(
            changes_of("claude", dir),
            ["leaves own CLAUDE.md: loaded → none", "treated own AGENTS.md: none → shadowed by CLAUDE.md"],
            "{dir}"
        );
        assert_eq!(
            changes_of("opencode", dir),
            ["enters own AGENTS.md: none → loaded", "treated own CLAUDE.md: shadowed by AGENTS.md → none"],
            "{dir}"
        );
    }
}

/// The GitHub Action's steps (scripts/action/, run by action.yml) on a pull request's checkout:
/// the diff from the base commit lands in the job summary as Markdown, the findings become
/// annotations and, when asked, a SARIF file; a new warning fails as `diff-fail-on` says.
#[test]
fn the_github_action_steps_write_the_summary_the_annotations_and_sarif() {
    let t = repo();
    t.write("r/AGENTS.md", rules(30_000));
    t.write("r/packages/a/AGENTS.md", "package rules\n");
    commit(&t, "base");
    let base = git(&t, &["rev-parse", "HEAD"]).trim().to_string();
    t.write("r/AGENTS.md", rules(35_000));
    commit(&t, "the pull request");
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/action");
    let bin = Path::new(env!("CARGO_BIN_EXE_instructions-lsp")).parent().expect("bin dir").to_path_buf();
    let runner = tempfile::tempdir().expect("runner temp");
    let summary = runner.path().join("summary.md");
    let sarif = runner.path().join("out.sarif");
    let step = |script: &str, env: &[(&str, &str)]| {
        let mut cmd = Command::new("bash");
        cmd.arg(scripts.join(script))
            .current_dir(t.root())
            .env("HOME", t.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
            .env("RUNNER_TEMP", runner.path())
            .env("GITHUB_STEP_SUMMARY", &summary);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run the step")
    };
    let o = step("diff.sh", &[("BASE_SHA", &base), ("BASE_REF", "main"), ("FAIL_ON", "new-warning")]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(&summary).expect("summary");
    assert!(md.starts_with("### Instruction files: what this change does to each agent\n"), "{md}");
    assert!(md.contains(&format!("\n\nmain at {} → this pull request", &base[..7])), "{md}");
    assert!(md.contains("- **Codex** started in `packages/a` ("), "{md}");
    assert!(md.contains("loses `packages/a/AGENTS.md` (left out by the 32 KiB shared budget"), "{md}");
    // A merge group's checkout is named as one; pull_request_target checks out the base branch,
    // so the step says why it shows nothing, without failing.
    std::fs::write(&summary, "").expect("empty summary");
    let merge_group =
        [("EVENT", "merge_group"), ("BASE_SHA", &base), ("BASE_REF", "refs/heads/main"), ("FAIL_ON", "never")];
    assert!(step("diff.sh", &merge_group).status.success());
    let md = std::fs::read_to_string(&summary).expect("summary");
    assert!(md.contains(&format!("\n\nmain at {} → this merge group", &base[..7])), "{md}");
    let o = step("diff.sh", &[("EVENT", "pull_request_target"), ("BASE_SHA", &base), ("FAIL_ON", "new-warning")]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).contains("::warning title=instructions-lsp::on pull_request_target the checkout is the base branch"),
        "{}",
        stdout(&o)
    );
    // In action.yml, `check` runs whatever `diff` finds (a composite action stops at a failed
    // step unless the next says otherwise), and `diff` runs on the three events.
    let action = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).expect("action.yml");
    let check_step = action.split("- name: Check the instruction files").nth(1).expect("the check step");
    assert!(
        check_step.trim_start().starts_with("if: ${{ !cancelled() && steps.install.outcome == 'success' }}"),
        "{check_step}"
    );
    assert!(action.contains(
        r#"contains(fromJSON('["pull_request", "pull_request_target", "merge_group"]'), github.event_name)"#
    ));
    // A base that is no commit id (an option, a revision expression) never reaches git.
    for bad in ["--upload-pack=touch /tmp/pwned", "HEAD~1", &base[..7]] {
        let o = step("diff.sh", &[("BASE_SHA", bad), ("FAIL_ON", "never")]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stdout(&o).contains("is not a commit id"), "{bad}: {}", stdout(&o));
    }
    let o = step("check.sh", &[("PATHS", "."), ("FAIL_ON", "warning"), ("SARIF_FILE", &sarif.to_string_lossy())]);
    assert_eq!(o.status.code(), Some(1));
    let annotations = stdout(&o);
    assert!(annotations.lines().any(|l| l.starts_with("::warning file=AGENTS.md,line=")), "{annotations}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    assert_eq!(doc["version"], "2.1.0");
    assert!(step("check.sh", &[("FAIL_ON", "error")]).status.success());

    // A summary past the 1 MiB a job summary holds is cut at a line, with a line that says so
    // (a stand-in `instructions-lsp` first on PATH prints 2 MiB of lines).
    let stand_in = runner.path().join("stand-in");
    std::fs::create_dir_all(&stand_in).expect("stand-in");
    std::fs::write(
        stand_in.join("instructions-lsp"),
        "#!/bin/sh\nyes -- '- a line of the summary' | head -c 2097152\n",
    )
    .expect("write");
    Command::new("chmod").arg("+x").arg(stand_in.join("instructions-lsp")).status().expect("chmod");
    std::fs::write(&summary, "").expect("empty summary");
    let path = format!("{}:{}", stand_in.display(), std::env::var("PATH").unwrap_or_default());
    let o = step("diff.sh", &[("BASE_SHA", &base), ("FAIL_ON", "never"), ("PATH", &path)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(&summary).expect("summary");
    assert!(md.len() < 1024 * 1024 && md.len() > 1_000_000, "{}", md.len());
    assert!(
        md.ends_with(&format!("`instructions-lsp diff {} HEAD` prints all of it.\n", &base[..7])),
        "{}",
        &md[md.len() - 300..]
    );
    assert!(md.lines().rev().nth(2).is_some_and(|l| l == "- a line of the summary"), "cut at a line");
}

/// The action's install step: with `repository` at a folder laid out as GitHub lays out releases
/// (named as owner/name on the workflow's server, or as a URL), it downloads the runner's binary
/// with curl, runs it only when it matches the release's `SHA256SUMS`, and puts it on the job's
/// PATH; a pinned release without that binary, or a platform without releases, is built from
/// the tag with `cargo install --git --tag` (a stand-in `cargo` records what it was asked and
/// installs the binary as cargo would), never from a branch; without `version`, the action's own
/// tag decides, and at a branch its own source is built; a wrong sum, a missing `SHA256SUMS`,
/// an unknown `install` or a version that is no tag stop the step with an error that says why; on
/// a musl system (Alpine) the static `-musl` binary is the one installed.
#[test]
fn the_action_installs_a_verified_release_binary_else_builds_a_pinned_tag_with_cargo() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/action/install.sh");
    let ours = Path::new(env!("CARGO_BIN_EXE_instructions-lsp"));
    let version = stdout(&Command::new(ours).arg("--version").output().expect("version"));
    let work = tempfile::tempdir().expect("tempdir");
    // A fork on the workflow's server (GitHub lays out releases below a repository's URL).
    let server = work.path().join("server");
    let mirror = server.join("me/fork");
    let sha256 = |path: &Path| {
        let o = Command::new("sha256sum").arg(path).output().expect("sha256sum");
        stdout(&o).split_whitespace().next().expect("sum").to_string()
    };
    let release = |dir: &str, sums: Option<&str>| {
        let at = mirror.join(dir);
        std::fs::create_dir_all(&at).expect("releases");
        std::fs::copy(ours, at.join("instructions-lsp-linux-x64")).expect("release binary");
        let sum = sha256(&at.join("instructions-lsp-linux-x64"));
        if let Some(sums) = sums {
            std::fs::write(at.join("SHA256SUMS"), sums.replace("SUM", &sum)).expect("sums");
        }
    };
    release(
        "releases/latest/download",
        Some("SUM  instructions-lsp-linux-x64\nSUM  instructions-lsp-linux-x64.vsix\n"),
    );
    release("releases/download/v0.0.2", Some(&format!("{}  instructions-lsp-linux-x64\n", "0".repeat(64))));
    release("releases/download/v0.0.3", None);
    // A `cargo` that says what it was asked and installs the binary where `--root` says.
    let tools = work.path().join("tools");
    std::fs::create_dir_all(&tools).expect("tools");
    let asked = work.path().join("cargo-args");
    std::fs::write(
        tools.join("cargo"),
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nwhile [ \"$1\" != --root ]; do shift; done\ncp '{}' \"$2/bin/instructions-lsp\"\n",
            asked.display(),
            ours.display()
        ),
    )
    .expect("cargo");
    std::process::Command::new("chmod").arg("+x").arg(tools.join("cargo")).status().expect("chmod");
    let repository = format!("file://{}/", mirror.display());
    let install = |n: usize, env: &[(&str, &str)]| {
        let runner = work.path().join(format!("runner{n}"));
        std::fs::create_dir_all(&runner).expect("runner");
        let github_path = runner.join("path");
        let mut cmd = Command::new("bash");
        cmd.arg(&script)
            .env("PATH", format!("{}:{}", tools.display(), std::env::var("PATH").unwrap_or_default()))
            .env("RUNNER_TEMP", &runner)
            .env("GITHUB_PATH", &github_path)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("VERSION", "latest")
            .env("INSTALL", "release")
            .env("ACTION_PATH", work.path().join("action"))
            .env("REPOSITORY", &repository);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let o = cmd.output().expect("run the step");
        let bin = runner.join("instructions-lsp/bin");
        (o, std::fs::read_to_string(github_path).unwrap_or_default(), bin)
    };
    let cargo_args = || std::fs::read_to_string(&asked).unwrap_or_default();
    let reset = || drop(std::fs::remove_file(&asked));
    // What the step asks cargo for: the repository's source at `tag`, or the action's own.
    let built = |bin: &Path, from: &[&str]| {
        let root = bin.parent().expect("root").to_string_lossy().to_string();
        let mut want = vec!["install".to_string(), "--locked".into(), "--quiet".into(), "--root".into(), root];
        want.extend(from.iter().map(|s| s.to_string()));
        assert_eq!(cargo_args().lines().collect::<Vec<_>>(), want);
    };
    let git = repository.trim_end_matches('/').to_string();

    // The release has the runner's binary and its sum: downloaded, verified, on PATH, and it
    // runs. The repository is named as owner/name, on the server the workflow runs on.
    let server_url = format!("file://{}", server.display());
    let (o, path, bin) = install(1, &[("REPOSITORY", "me/fork"), ("GITHUB_SERVER_URL", &server_url)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(path.trim(), bin.to_string_lossy());
    assert_eq!(stdout(&o), version, "the step prints the installed version");
    assert!(cargo_args().is_empty(), "nothing built: {}", cargo_args());

    // A binary that does not match its sum, or a release without sums: nothing installed.
    let (o, path, bin) = install(2, &[("VERSION", "v0.0.2")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("instructions-lsp-linux-x64 of the release (v0.0.2) does not match its SHA256SUMS"),
        "{}",
        stdout(&o)
    );
    assert!(path.is_empty() && !bin.join("instructions-lsp").exists() && cargo_args().is_empty());
    let (o, path, _) = install(3, &[("VERSION", "v0.0.3")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("the release (v0.0.3) has no SHA256SUMS: its binary is not run unverified"),
        "{}",
        stdout(&o)
    );
    assert!(path.is_empty());

    // A pinned release without the runner's binary: built from that tag.
    let (o, path, bin) = install(4, &[("VERSION", "v0.0.1")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let notice = "::notice title=instructions-lsp::no release binary for Linux-X64 (v0.0.1): building it with cargo";
    assert!(stdout(&o).contains(notice), "{}", stdout(&o));
    built(&bin, &["--git", &git, "--tag", "v0.0.1", "instructions-lsp"]);
    assert_eq!(path.trim(), bin.to_string_lossy());
    reset();

    // A platform releases do not cover: the pinned tag is built; `latest` is an error, never
    // a build of the default branch.
    let (o, _, bin) = install(5, &[("RUNNER_OS", "FreeBSD"), ("VERSION", "v0.0.1")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    built(&bin, &["--git", &git, "--tag", "v0.0.1", "instructions-lsp"]);
    reset();
    let (o, _, _) = install(6, &[("RUNNER_OS", "FreeBSD")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("no release binaries for FreeBSD-X64: pin version to a tag"), "{}", stdout(&o));
    assert!(cargo_args().is_empty());

    // Without `version`: the action's own tag, else (a branch) the action's own source.
    let (o, _, bin) = install(7, &[("VERSION", ""), ("ACTION_REF", "v0.0.1")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    built(&bin, &["--git", &git, "--tag", "v0.0.1", "instructions-lsp"]);
    reset();
    let (o, _, bin) = install(8, &[("VERSION", ""), ("ACTION_REF", "main")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let action = work.path().join("action");
    built(&bin, &["--path", &action.to_string_lossy()]);
    reset();

    // A musl system (an Alpine container job: its ldd is musl's) gets the static binary.
    let latest = mirror.join("releases/latest/download");
    // (Ours with bytes after its end, which the loader ignores: told apart from the glibc one.)
    let mut musl = std::fs::read(ours).expect("ours");
    musl.extend_from_slice(b"static");
    std::fs::write(latest.join("instructions-lsp-linux-x64-musl"), musl).expect("musl binary");
    Command::new("chmod").arg("+x").arg(latest.join("instructions-lsp-linux-x64-musl")).status().expect("chmod");
    let sums = std::fs::read_to_string(latest.join("SHA256SUMS")).expect("sums");
    let musl_sum = sha256(&latest.join("instructions-lsp-linux-x64-musl"));
    std::fs::write(latest.join("SHA256SUMS"), format!("{sums}{musl_sum}  instructions-lsp-linux-x64-musl\n"))
        .expect("sums");
    let alpine = work.path().join("alpine");
    std::fs::create_dir_all(&alpine).expect("alpine");
    std::fs::write(alpine.join("ldd"), "#!/bin/sh\necho 'musl libc (x86_64)' >&2\necho 'Version 1.2.5' >&2\nexit 1\n")
        .expect("ldd");
    Command::new("chmod").arg("+x").arg(alpine.join("ldd")).status().expect("chmod");
    let path = format!("{}:{}:{}", alpine.display(), tools.display(), std::env::var("PATH").unwrap_or_default());
    let (o, _, bin) = install(11, &[("PATH", &path)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout(&o), version, "the static binary runs");
    assert_eq!(
        std::fs::read(bin.join("instructions-lsp")).expect("installed"),
        std::fs::read(latest.join("instructions-lsp-linux-x64-musl")).expect("musl"),
    );
    // (Its sum checked as the glibc binary's is: one that does not match is not installed.)
    std::fs::write(latest.join("SHA256SUMS"), format!("{sums}{}  instructions-lsp-linux-x64-musl\n", "0".repeat(64)))
        .expect("sums");
    let (o, path_file, _) = install(12, &[("PATH", &path)]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("instructions-lsp-linux-x64-musl of the release (latest) does not match"),
        "{}",
        stdout(&o)
    );
    assert!(path_file.is_empty());
    assert!(cargo_args().is_empty(), "nothing built: {}", cargo_args());

    let (o, _, _) = install(9, &[("INSTALL", "binary")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("install must be release or source, not 'binary'"), "{}", stdout(&o));
    let (o, _, _) = install(10, &[("VERSION", "--upload-pack=touch")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("version must be a release tag such as v0.2.0, or latest"), "{}", stdout(&o));
}

/// A pull request can carry any tree git can store, also one no checkout would make: here a
/// link `a` to a directory outside the repository next to a directory `a` holding an
/// `AGENTS.md`. Laying out that revision must not write the file through the link.
#[test]
fn a_crafted_tree_with_a_link_beside_a_directory_of_its_name_writes_nothing_through_the_link() {
    let t = repo();
    t.write("r/AGENTS.md", "# root\n");
    commit(&t, "base");
    let outside = tempfile::tempdir().expect("tempdir");
    let target = outside.path().to_string_lossy().into_owned();
    // (Object ids, without git's closing newline.)
    let object = |args: &[&str], input: &str| git_with_input(&t, args, input).trim().to_string();
    let link = object(&["hash-object", "-w", "--stdin"], &target);
    let text = object(&["hash-object", "-w", "--stdin"], "pwned\n");
    let sub = object(&["mktree"], &format!("100644 blob {text}\tAGENTS.md\n"));
    let root = object(&["rev-parse", "HEAD:AGENTS.md"], "");
    let crafted =
        object(&["mktree"], &format!("100644 blob {root}\tAGENTS.md\n120000 blob {link}\ta\n040000 tree {sub}\ta\n"));
    let tip = git(&t, &["commit-tree", &crafted, "-p", "HEAD", "-m", "crafted"]);
    git(&t, &["update-ref", "refs/heads/crafted", tip.trim()]);
    for (from, to) in [("HEAD", "crafted"), ("crafted", "HEAD")] {
        let o = diff(&t, &[from, to, "--json"]);
        assert!(o.status.code().is_some_and(|c| c <= 1), "{}", String::from_utf8_lossy(&o.stderr));
        let left: Vec<_> =
            std::fs::read_dir(outside.path()).expect("read outside").flatten().map(|e| e.path()).collect();
        assert!(left.is_empty(), "diff {from} {to} wrote through the link: {left:?}");
    }
}

/// A file whose words change but not its size changes no file's bytes or cut: the reviewer is
/// still told that the agents' text changes, in every directory that gets the file, and only
/// there.
#[test]
fn a_change_of_words_at_the_same_size_is_a_change_of_the_text() {
    let t = repo();
    t.write("r/AGENTS.md", "use tabs\n");
    t.write("r/pkg/AGENTS.md", "package rules\n");
    t.write("r/other/AGENTS.md", "other rules\n");
    commit(&t, "base");
    t.write("r/pkg/AGENTS.md", "package RULES\n");
    commit(&t, "same size, other words");
    let json: Value =
        serde_json::from_slice(&diff(&t, &["HEAD~1", "HEAD", "--json", "--profile", "codex"]).stdout).expect("json");
    let groups = json["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1, "{json:#}");
    assert_eq!(groups[0]["dirs"], serde_json::json!([{"dir": "pkg", "before": 108, "after": 108}]), "{json:#}");
    assert_eq!(groups[0]["changes"][0]["kind"], "text", "{json:#}");
    let text = stdout(&diff(&t, &["HEAD~1", "HEAD", "--profile", "codex"]));
    assert!(text.contains("the text changes (the same files, the same sizes)"), "{text}");
    // Back to the first words: no change at all.
    t.write("r/pkg/AGENTS.md", "package rules\n");
    commit(&t, "the first words again");
    let o = diff(&t, &["HEAD~2", "HEAD", "--profile", "codex"]);
    assert_eq!(
        lines(&o).last().map(String::as_str),
        Some("No agent's view changes: Codex gets the same files, bytes and findings.")
    );
}

/// A revision can link an instruction file to anything on the reviewer's machine: a FIFO (or
/// `/dev/stdin`) would block a read forever, `/dev/zero` would never end. `diff` compares such a
/// file without opening it, and finishes.
#[test]
fn an_instruction_file_linked_to_a_fifo_is_compared_without_blocking_on_it() {
    let t = repo();
    t.write("r/AGENTS.md", "# rules\n");
    commit(&t, "base");
    let outside = tempfile::tempdir().expect("tempdir");
    let fifo = outside.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("run mkfifo");
    assert!(made.success(), "mkfifo");
    std::fs::remove_file(t.path("r/AGENTS.md")).expect("rm");
    t.symlink(&fifo, "r/AGENTS.md");
    commit(&t, "AGENTS.md links to a FIFO");
    let child = diff_command(&t, &t.root(), &["HEAD~1", "HEAD", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run diff");
    let o = finished(child, "diff blocked on the FIFO the revision links to");
    let json: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(json["groups"].as_array().is_some_and(|g| !g.is_empty()), "the file's change is reported: {json:#}");
}

/// The engine's own profiles (`--profile dsh`, `--profile ds4`) are no agents: their views are
/// compared as the agents' are, so a root `AGENTS.md` that grows past their budget, or whose
/// words change at the same size, is a change of their view too.
#[test]
fn the_engines_own_profiles_see_a_root_agents_md_that_grows_or_changes() {
    let t = repo();
    t.write("r/AGENTS.md", rules(60_000));
    t.write("r/pkg/AGENTS.md", "package rules\n");
    commit(&t, "base");
    t.write("r/AGENTS.md", rules(70_000));
    commit(&t, "grow the root file");
    t.write("r/AGENTS.md", rules(70_000).replacen("keep", "KEEP", 1));
    commit(&t, "other words");
    for profile in ["dsh", "ds4"] {
        let out = lines(&diff(&t, &["HEAD~2", "HEAD~1", "--profile", profile]));
        assert!(out.contains(&"files changed: `AGENTS.md`: 60,012 → 70,020 bytes".to_string()), "{out:#?}");
        assert!(
            out.iter().any(|l| l.starts_with(&format!("{profile} started in `.` ("))
                && l.contains(
                    "`AGENTS.md` grew from 60,012 to 70,020 bytes, past the 64 KiB budget per block: cut at"
                )),
            "{out:#?}"
        );
        let json: Value = serde_json::from_slice(&diff(&t, &["HEAD~1", "HEAD", "--json", "--profile", profile]).stdout)
            .expect("json");
        let groups = json["groups"].as_array().expect("groups");
        assert!(!groups.is_empty() && groups.iter().all(|g| g["agent"] == profile), "{json:#}");
        assert!(groups.iter().any(|g| g["changes"][0]["kind"] == "text"), "{json:#}");
    }
}

/// A crafted tree can name one file twice (`git mktree` writes a file and a link both named
/// `AGENTS.md`, or a directory and a file `pkg`), and two entries can land on one path (a name
/// holding `/` beside the directory it names); a name can be too long for any file system. Such
/// a revision is its own problem, not the scratch directory's: diff lays out the first entry of
/// a name (a checkout takes one of them), says on stderr what it skipped, and compares.
#[cfg(unix)]
#[test]
fn a_crafted_tree_that_names_a_file_twice_is_laid_out_with_its_first_entry_and_a_warning() {
    let t = repo();
    t.write("r/AGENTS.md", "# root\n");
    t.write("r/other.md", "other rules\n");
    commit(&t, "base");
    let object = |args: &[&str], input: &[u8]| git_with_input(&t, args, input).trim().to_string();
    let root = object(&["rev-parse", "HEAD:AGENTS.md"], b"");
    let other = object(&["rev-parse", "HEAD:other.md"], b"");
    let link = object(&["hash-object", "-w", "--stdin"], b"other.md");
    let sub = object(&["mktree"], format!("100644 blob {root}\tAGENTS.md\n").as_bytes());
    let file = |name: &str| format!("100644 blob {root}\t{name}\n");
    let kept = format!("100644 blob {other}\tother.md\n");
    let link_line = format!("120000 blob {link}\tAGENTS.md\n");
    // Trees git's own tools refuse to write (a name holding `/`) or sort otherwise (`mktree`
    // puts a file before a directory of its name), written as their bytes.
    let raw = |entries: &[(&str, &str, &str)]| {
        let mut bytes = Vec::new();
        for (mode, name, id) in entries {
            bytes.extend(format!("{mode} {name}\0").into_bytes());
            bytes.extend((0..id.len()).step_by(2).map(|i| u8::from_str_radix(&id[i..i + 2], 16).expect("hex")));
        }
        object(&["hash-object", "-t", "tree", "--literally", "-w", "--stdin"], &bytes)
    };
    let slashed = raw(&[("100644", "pkg/AGENTS.md", &other), ("40000", "pkg", &sub)]);
    let dir_first = raw(&[("100644", "AGENTS.md", &root), ("40000", "pkg", &sub), ("100644", "pkg", &root)]);
    // (Hidden, so that its text is kept whether or not something names it.)
    let long = format!(".{}.md", "a".repeat(300));
    let trees = [
        ("file-then-link", object(&["mktree"], format!("{}{link_line}{kept}", file("AGENTS.md")).as_bytes())),
        ("link-then-file", object(&["mktree"], format!("{link_line}{}{kept}", file("AGENTS.md")).as_bytes())),
        ("dir-then-file", dir_first),
        (
            "slashed",
            object(&["mktree"], format!("{}{kept}040000 tree {slashed}\tdeep\n", file("AGENTS.md")).as_bytes()),
        ),
        ("long", object(&["mktree"], format!("{}{kept}{}", file("AGENTS.md"), file(&long)).as_bytes())),
    ];
    for (name, tree) in trees {
        let tip = git(&t, &["commit-tree", &tree, "-p", "HEAD", "-m", name]);
        git(&t, &["update-ref", &format!("refs/heads/{name}"), tip.trim()]);
    }
    let run = |branch: &str| -> (Value, String) {
        let o = diff(&t, &["HEAD", branch, "--json", "--profile", "codex"]);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(0), "{branch}: {err}");
        (serde_json::from_slice(&o.stdout).expect("json"), err)
    };
    let twice = |name: &str| {
        format!(
            "instructions-lsp diff: warning: {name}: a tree names `AGENTS.md` twice: its first entry is laid out, the others are skipped\n"
        )
    };
    // The file comes first: the same AGENTS.md as on the base side.
    let (json, err) = run("file-then-link");
    assert_eq!(err, twice("file-then-link"));
    assert_eq!(json["files"], serde_json::json!([]), "{json:#}");
    assert_eq!(json["warnings"].as_array().map(Vec::len), Some(1), "{json:#}");
    // The link comes first: AGENTS.md is other.md's text.
    let (json, err) = run("link-then-file");
    assert_eq!(err, twice("link-then-file"));
    assert_eq!(json["files"], serde_json::json!([{"path": "AGENTS.md", "before": 7, "after": 12}]), "{json:#}");
    let (json, err) = run("dir-then-file");
    assert!(err.contains("dir-then-file: a tree names `pkg` twice"), "{err}");
    assert_eq!(json["addedDirs"], serde_json::json!(["pkg"]), "{json:#}");
    let (json, err) = run("slashed");
    assert!(err.contains("slashed: `deep/pkg/AGENTS.md` is laid out already, by another entry"), "{err}");
    assert_eq!(
        json["files"],
        serde_json::json!([{"path": "deep/pkg/AGENTS.md", "before": null, "after": 12}]),
        "{json:#}"
    );
    let (_, err) = run("long");
    assert!(err.contains(&format!("long: `{long}` cannot be laid out (")), "{err}");
}

/// A revision's tree can name one subtree twice at each of 23 levels: 1.5 KB of objects that
/// hold 16 million paths (laying them out took 26 s and 3.2 GB). diff visits a bounded number of
/// entries per side and says what was wrong, as it does for a revision it cannot read.
#[test]
fn a_tree_that_names_one_subtree_millions_of_times_is_refused_with_a_clear_error() {
    let t = repo();
    t.write("r/AGENTS.md", "# root\n");
    commit(&t, "base");
    let object = |args: &[&str], input: &str| git_with_input(&t, args, input).trim().to_string();
    let root = object(&["rev-parse", "HEAD:AGENTS.md"], "");
    let mut tree = object(&["mktree"], &format!("100644 blob {root}\tx.rs\n"));
    for _ in 0..23 {
        tree = object(&["mktree"], &format!("040000 tree {tree}\ta\n040000 tree {tree}\tb\n"));
    }
    let bomb = object(&["mktree"], &format!("100644 blob {root}\tAGENTS.md\n040000 tree {tree}\tsrc\n"));
    let tip = git(&t, &["commit-tree", &bomb, "-p", "HEAD", "-m", "bomb"]);
    git(&t, &["update-ref", "refs/heads/bomb", tip.trim()]);
    let child = diff_command(&t, &t.root(), &["HEAD", "bomb"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run diff");
    let o = finished(child, "diff laid out the tree's millions of paths");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "instructions-lsp diff: bomb: its tree holds more than 1000000 entries, more than diff lays out (a tree \
         can name one subtree many times over, a few bytes for millions of paths)\n"
    );
}

/// An agent reads what a link names: `AGENTS.md` linked to `docs/INSTRUCTIONS` (a name whose
/// text the skeleton would leave out), a package's `AGENTS.md` linked through another link, an
/// import of `.claude/notes` where `.claude` links to a folder that is not hidden. A change of
/// those texts is a change of the agents' views. Links that loop, that name the repository's
/// root or its parent, or that leave the repository (relative or absolute) change nothing and
/// make diff read or write nothing outside.
#[cfg(unix)]
#[test]
fn a_link_is_followed_to_the_text_it_names_inside_the_repository() {
    let t = repo();
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret.md"), "secret rules, outside\n").expect("write");
    t.write("r/docs/INSTRUCTIONS", "rules one\n");
    t.symlink("docs/INSTRUCTIONS", "r/AGENTS.md");
    t.write("r/common/RULES", "shared one\n");
    t.symlink("RULES", "r/common/current");
    t.mkdir("r/pkg");
    t.symlink("../common/current", "r/pkg/AGENTS.md");
    t.write("r/CLAUDE.md", "@.claude/notes\n");
    t.write("r/config/claude/notes", "notes one\n");
    t.symlink("config/claude", "r/.claude");
    t.mkdir("r/loop");
    t.symlink("../loop/AGENTS.md", "r/loop/AGENTS.md");
    t.symlink("b", "r/a");
    t.symlink("a", "r/b");
    t.symlink(".", "r/.cycle");
    t.symlink("..", "r/.up");
    t.mkdir("r/ext");
    let depth = t.root().components().count();
    let relative = format!("{}{}", "../".repeat(depth), outside.path().join("secret.md").display());
    t.symlink(&relative, "r/ext/AGENTS.md");
    t.symlink(outside.path().join("secret.md"), "r/ext/CLAUDE.md");
    commit(&t, "links");
    t.write("r/docs/INSTRUCTIONS", "rules two, longer\n");
    t.write("r/common/RULES", "shared two, longer\n");
    t.write("r/config/claude/notes", "notes two, longer\n");
    let files =
        "files changed: `.claude/notes`: 10 → 18 bytes; `AGENTS.md`: 10 → 18 bytes; `pkg/AGENTS.md`: 11 → 19 bytes";
    // The working tree, and the same change committed.
    for args in [&["HEAD"][..], &["HEAD~1", "HEAD"]] {
        if args.len() == 2 {
            commit(&t, "other texts");
        }
        let o = diff(&t, args);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let out = lines(&o);
        assert!(out.contains(&files.to_string()), "{out:#?}");
        assert!(
            out.iter().any(|l| l.starts_with("Codex started in `pkg` (")
                && l.ends_with("`AGENTS.md` grows from 10 to 18 bytes; `pkg/AGENTS.md` grows from 11 to 19 bytes")),
            "{out:#?}"
        );
        assert!(
            out.iter().any(|l| l.starts_with("Claude Code started in `.` (")
                && l.ends_with("`.claude/notes` grows from 10 to 18 bytes")),
            "{out:#?}"
        );
        assert!(!stdout(&o).contains("secret"), "{out:#?}");
    }
    let left: Vec<_> = std::fs::read_dir(outside.path()).expect("outside").flatten().map(|e| e.file_name()).collect();
    assert_eq!(left, ["secret.md"]);
    assert_eq!(std::fs::read_to_string(outside.path().join("secret.md")).expect("read"), "secret rules, outside\n");
}

/// A directory's name is the revision's to choose: one holding a backtick, newlines, HTML and
/// Markdown, one that begins and ends with a backtick, one with a table's `|`. In the Markdown
/// of a pull request's comment each stays in its code span (no line, no HTML of its own), and in
/// the text its newlines are escaped: no name forges a line of the output.
#[test]
fn names_that_hold_newlines_backticks_or_markup_stay_inside_their_code_spans() {
    let t = repo();
    let evil = "a`b\n<script>x</script>\n- **Forged** [link](x)";
    t.write("r/AGENTS.md", rules(30_000));
    for dir in [evil, "`tick`", "pipe|cell"] {
        t.write(&format!("r/{dir}/AGENTS.md"), "package rules\n");
    }
    commit(&t, "base");
    t.write("r/AGENTS.md", rules(35_000));
    commit(&t, "grow the root file");
    let md = stdout(&diff(&t, &["HEAD~1", "HEAD", "--format", "markdown", "--profile", "codex"]));
    // Each line is one the diff writes: no name starts one.
    for line in md.lines() {
        let ours = [
            "### ",
            "`HEAD~1`",
            "comparing for",
            "Files changed",
            "- **Codex**",
            "- `",
            "**",
            "<details>",
            "| ",
            "</details>",
        ];
        assert!(
            line.is_empty() || ours.iter().any(|p| line.starts_with(p)),
            "a line the diff did not write: {line:?}\n{md}"
        );
    }
    assert!(md.contains("| Codex | ``a`b\\n<script>x</script>\\n- **Forged** [link](x)`` | "), "{md}");
    assert!(md.contains("| Codex | `` `tick` `` | "), "{md}");
    assert!(md.contains("| Codex | `pipe\\|cell` | "), "{md}");
    assert!(md.contains("- **Codex**, 3 directories (`` `tick` ``, ``a`b\\n<script>x</script>\\n- **Forged** [link](x)``, `pipe|cell`): lose their own `AGENTS.md`"), "{md}");
    let text = stdout(&diff(&t, &["HEAD~1", "HEAD", "--profile", "codex"]));
    assert!(text.contains("    `a`b\\n<script>x</script>\\n- **Forged** [link](x)`: "), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("<script>") || l.starts_with("- **Forged**")), "{text}");
    // The JSON says the name as it is.
    let json: Value =
        serde_json::from_slice(&diff(&t, &["HEAD~1", "HEAD", "--json", "--profile", "codex"]).stdout).expect("json");
    assert!(json["groups"][0]["dirs"].as_array().expect("dirs").iter().any(|d| d["dir"] == evil), "{json:#}");
}
