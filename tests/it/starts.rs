//! Every place an agent starts: the root, folders with files of their own, package roots at any
//! depth, the folders `instructions-lsp.toml` names, and any other folder as one class, judged by
//! `check` (and so by the server's diagnostics, which are `check`'s findings).

use std::path::Path;
use std::process::{Command, Output};

use crate::common::tree::Tree;

/// The binary with `args` in `cwd`, with the tree's home and no agent's settings from the
/// environment.
fn run(tree: &Tree, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", tree.home())
        .env_remove("DSH_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .expect("run instructions-lsp")
}

fn check(tree: &Tree, cwd: &Path, args: &[&str]) -> Output {
    run(tree, cwd, &[&["check"], args].concat())
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The finding lines of `check` about `file` (its path as printed).
fn about<'a>(out: &'a str, file: &str) -> Vec<&'a str> {
    out.lines().filter(|l| l.starts_with(&format!("{file}:"))).collect()
}

const MISSES: &str = "does not load this file, which CLAUDE.md imports, in non-interactive runs (`claude -p`, CI): \
    they load no import from outside the working directory (an interactive session asks once whether to allow it); \
    make `CLAUDE.md` a link to `AGENTS.md` (`ln -sf AGENTS.md CLAUDE.md`) instead, which loads in every folder";

/// The pattern most repositories use to give Claude Code one `AGENTS.md` (uv's): a root
/// `CLAUDE.md` that only imports it. In every package root (at any depth, of any ecosystem)
/// and any folder without a `CLAUDE.md` of its own, a non-interactive Claude Code does not load
/// it; 120 package roots read as one line, and the fix that works everywhere is said.
#[test]
fn a_root_import_of_agents_md_is_missed_in_every_package_root_said_once() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "# uv\n- run the tests\n");
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    t.write("r/Cargo.toml", "[workspace]\n");
    for i in 0..100 {
        t.write(&format!("r/crates/c{i:03}/Cargo.toml"), "[package]\n");
        t.write(&format!("r/crates/c{i:03}/src/lib.rs"), "\n");
    }
    for (i, manifest) in ["go.mod", "pyproject.toml", "package.json", "pom.xml", "App.csproj"].iter().enumerate() {
        t.write(&format!("r/tools/deep/t{i}/{manifest}"), "\n");
    }
    for i in 0..15 {
        t.write(&format!("r/apps/a{i}/package.json"), "{}\n");
    }
    // Installed packages and hidden folders are no places where people start agents.
    t.write("r/node_modules/left-pad/package.json", "{}\n");
    t.write("r/.cache/x/Cargo.toml", "\n");
    let o = check(&t, &t.root(), &[]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert_eq!(
        about(&out, "AGENTS.md"),
        [format!(
            "AGENTS.md:1:1: warning[importOutside]: Claude Code, started in any folder below `.` without its own \
             `CLAUDE.md` (such as `apps/a0` and 119 other package roots), {MISSES}"
        )],
        "{out}"
    );
    assert_eq!(out.lines().count(), 2, "the warning and opencode's info: {out}");
    // The same in the crate itself, named as the place it is.
    let o = check(&t, &t.path("r/crates/c007"), &[]);
    assert!(
        stdout(&o).contains(&format!(
            "../../AGENTS.md:1:1: warning[importOutside]: Claude Code, started in `crates/c007`, {MISSES}"
        )),
        "{}",
        stdout(&o)
    );
    // A link instead of the import: Claude Code gets the text wherever it starts.
    std::fs::remove_file(t.path("r/CLAUDE.md")).expect("rm");
    t.symlink("AGENTS.md", "r/CLAUDE.md");
    let o = check(&t, &t.root(), &[]);
    assert!(!stdout(&o).contains("importOutside"), "{}", stdout(&o));
}

/// A folder with no manifest and no files of its own is a place too: with no package root
/// below the root, the class names the first folder someone may start in (not a hidden one,
/// not one `.gitignore` leaves out, not one that holds the imported file, which loads there).
#[test]
fn without_package_roots_any_folder_stands_for_the_class() {
    let t = Tree::new();
    t.write("r/.gitignore", "aaa-build/\n");
    t.write("r/CLAUDE.md", "@docs/rules.md\n");
    t.write("r/docs/rules.md", "rules\n");
    t.write("r/aaa-build/out.txt", "\n");
    t.write("r/.github/workflows/ci.yml", "\n");
    t.write("r/src/main.rs", "\n");
    let o = check(&t, &t.root(), &["--profile", "claude"]);
    let out = stdout(&o);
    assert!(
        out.contains(
            "docs/rules.md:1:1: warning[importOutside]: Claude Code, started in any folder below `.` without its own \
             `CLAUDE.md` (such as `src`), does not load this file, which CLAUDE.md imports, in non-interactive runs"
        ),
        "{out}"
    );
    // Only the root: nowhere else to start, nothing to say.
    std::fs::remove_dir_all(t.path("r/src")).expect("rm");
    let o = check(&t, &t.root(), &["--profile", "claude"]);
    assert_eq!(stdout(&o), "", "docs holds the import, aaa-build is ignored, .github hidden");
}

/// A package root that holds the imported file loads it when Claude Code starts there: it is
/// judged on its own, and says what it misses of the other imports.
#[test]
fn a_package_root_that_holds_an_import_is_judged_apart() {
    let t = Tree::new();
    t.write("r/CLAUDE.md", "@AGENTS.md\n@sdk/GUIDE.md\n");
    t.write("r/AGENTS.md", "rules\n");
    t.write("r/sdk/GUIDE.md", "guide\n");
    t.write("r/sdk/package.json", "{}\n");
    t.write("r/web/package.json", "{}\n");
    let o = check(&t, &t.root(), &["--profile", "claude"]);
    let out = stdout(&o);
    assert_eq!(
        about(&out, "sdk/GUIDE.md"),
        ["sdk/GUIDE.md:1:1: warning[importOutside]: Claude Code, started in any folder below `.` without its own \
          `CLAUDE.md` (such as the package root `web`), does not load this file, which CLAUDE.md imports, in \
          non-interactive runs (`claude -p`, CI): they load no import from outside the working directory (an \
          interactive session asks once whether to allow it)"],
        "{out}"
    );
    let agents = about(&out, "AGENTS.md");
    assert!(agents.len() == 1 && agents[0].ends_with("(also in 1 other directory)"), "web, and sdk apart: {out}");
}

/// A package root whose only instruction file is another agent's (`GEMINI.md`) is still a place
/// where Claude Code starts: what it misses there is said.
#[test]
fn a_package_root_with_another_agents_file_is_where_claude_code_starts_too() {
    let t = Tree::new();
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    t.write("r/AGENTS.md", "rules\n");
    t.write("r/pkg/pyproject.toml", "\n");
    t.write("r/pkg/GEMINI.md", "gemini notes\n");
    let o = check(&t, &t.root(), &["--profile", "claude"]);
    let out = stdout(&o);
    assert!(out.contains("Claude Code, started in `pkg`, does not load this file"), "{out}");
}

/// `starts = [...]` in `instructions-lsp.toml` names folders (globs) where the repository's
/// people start agents; a pattern that leaves the repository is a clear error.
#[test]
fn the_repository_names_its_own_starts() {
    let t = Tree::new();
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    t.write("r/AGENTS.md", "rules\n");
    t.write("r/instructions-lsp.toml", "agents = [\"claude\"]\nstarts = [\"services/*\", \"tools/cli\"]\n");
    for d in ["services/api", "services/web", "tools/cli", "tools/other"] {
        t.mkdir(&format!("r/{d}"));
    }
    let o = check(&t, &t.root(), &[]);
    let out = stdout(&o);
    assert!(
        out.contains(
            "AGENTS.md:1:1: warning[importOutside]: Claude Code, started in any folder below `.` without its own \
             `CLAUDE.md` (such as `services/api` and 2 other folders named in `starts`), does not load this file"
        ),
        "{out}"
    );
    for bad in ["../outside", "/abs", "a/**/../b", "[x"] {
        t.write("r/instructions-lsp.toml", format!("starts = [\"{bad}\"]\n"));
        let o = check(&t, &t.root(), &[]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("instructions-lsp.toml: `starts` holds `{bad}`, which")), "{bad}: {err}");
    }
}

/// `effective` and `compare` in a package without files of its own say, one line each, that
/// Claude Code skips the root's import there, and the fix; `effective`'s stdout stays the text.
#[test]
fn effective_and_compare_say_the_import_skipped_in_a_package() {
    let t = Tree::new();
    t.write("r/AGENTS.md", "rules\n");
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    t.write("r/crates/x/Cargo.toml", "[package]\n");
    let in_crate = t.path("r/crates/x");
    let said = format!("AGENTS.md: Claude Code, started in `crates/x`, {MISSES}");
    let o = run(&t, &in_crate, &["effective", "--profile", "claude"]);
    assert!(stdout(&o).ends_with("@AGENTS.md\n</system-reminder>\n"), "{}", stdout(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains(&format!("note: {said}\n")), "{o:?}");
    let o = run(&t, &in_crate, &["compare", "--profile", "claude"]);
    assert!(stdout(&o).contains(&format!("  note: {said}\n")), "{}", stdout(&o));
    // Started beside the files, nothing is skipped, nothing said.
    let o = run(&t, &t.root(), &["effective", "--profile", "claude"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("note:"), "{o:?}");
}

/// Hostile configurations: more than 256 patterns is an error; a configuration above a folder
/// that is no repository (in the home directory, say) names no start in it, and nothing outside
/// the checked folder is listed for it.
#[test]
fn starts_are_bounded_and_never_come_from_outside_the_project() {
    let t = Tree::new();
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    t.write("r/AGENTS.md", "rules\n");
    let many: Vec<String> = (0..300).map(|i| format!("\"p{i}\"")).collect();
    t.write("r/instructions-lsp.toml", format!("starts = [{}]\n", many.join(", ")));
    let o = check(&t, &t.root(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`starts` holds 300 patterns; at most 256"), "{o:?}");
    // A folder with no `.git`, below a configuration that names every folder.
    t.write("outer/instructions-lsp.toml", "starts = [\"**\"]\n");
    t.mkdir("outer/other/secret");
    t.write("outer/proj/CLAUDE.md", "@AGENTS.md\n");
    t.write("outer/proj/AGENTS.md", "rules\n");
    t.mkdir("outer/proj/sub");
    let o = check(&t, &t.path("outer/proj"), &["--profile", "claude"]);
    let out = stdout(&o);
    assert!(out.contains("started in any folder below `.` without its own `CLAUDE.md` (such as `sub`)"), "{out}");
}

/// The editor shows the same places and the same words as `check`: the `targets` answer counts
/// where agents start and says each class with the sentence of its diagnostic; in a package,
/// each agent's answer (the server's and MCP's) says the import it skips there. A package
/// root that appears is counted at once.
#[tokio::test]
async fn the_editor_and_mcp_show_where_agents_start_as_check_says_it() {
    use crate::common::lsp::{Client, uri};
    use serde_json::json;
    let t = Tree::new();
    t.write("r/AGENTS.md", "rules\n");
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    for c in ["a", "b", "c"] {
        t.write(&format!("r/crates/{c}/Cargo.toml"), "[package]\n");
    }
    let root = t.root();
    let krate = t.path("r/crates/a");
    let mut c = Client::start(&t.home(), &[&root, &krate], json!({})).await;
    let agents_md = t.path("r/AGENTS.md");
    let said = |roots: usize| {
        format!(
            "Claude Code, started in any folder below `.` without its own `CLAUDE.md` (such as `crates/a` and {} \
             other package roots), {MISSES}",
            roots - 1
        )
    };
    let diagnostic = c.diagnostic(&agents_md, "importOutside").await;
    assert_eq!(diagnostic["message"], said(3));
    let targets = c.effective(json!({"uri": uri(&root), "profile": "targets"})).await;
    let starts = &targets["starts"];
    assert_eq!((starts["withFiles"].as_u64(), starts["packageRoots"].as_u64()), (Some(0), Some(3)), "{starts}");
    let class = &starts["classes"][0];
    assert_eq!(starts["classes"].as_array().map(Vec::len), Some(1), "{starts}");
    assert_eq!((class["profile"].as_str(), class["example"].as_str()), (Some("claude"), Some("crates/a")));
    assert_eq!(class["misses"][0]["path"], "AGENTS.md");
    assert_eq!(class["misses"][0]["uri"], uri(&agents_md));
    assert_eq!(class["misses"][0]["message"], diagnostic["message"], "one sentence on every edge");
    // In the crate, Claude Code's own answer says what it skips, as `effective` prints it.
    let in_crate = c.effective(json!({"uri": uri(&krate), "profile": "targets"})).await;
    let claude = in_crate["profiles"].as_array().and_then(|p| p.iter().find(|p| p["profile"] == "claude"));
    let skipped = claude.map(|p| p["importsSkipped"].clone()).unwrap_or_default();
    assert_eq!(skipped, json!([format!("AGENTS.md: Claude Code, started in `crates/a`, {MISSES}")]));
    // A new package root: the diagnostics and the answer count it.
    t.write("r/crates/d/Cargo.toml", "[package]\n");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&t.path("r/crates/d/Cargo.toml")), "type": 1}]}),
    )
    .await;
    let grown = said(4);
    c.diagnostics_until(&agents_md, "a fourth package root", |d| d.iter().any(|d| d["message"] == grown.as_str()))
        .await;
    let targets = c.effective(json!({"uri": uri(&root), "profile": "targets"})).await;
    assert_eq!(targets["starts"]["packageRoots"], 4, "{}", targets["starts"]);
    assert_eq!(targets["starts"]["classes"][0]["misses"][0]["message"], grown.as_str());
    c.finish().await;

    // MCP started in the crate says the same for Claude Code.
    let mcp =
        crate::common::mcp_calls(&t, &krate, &[("instructions_for", json!({"path": krate, "profile": "claude"}))]);
    assert_eq!(
        mcp[0]["result"]["structuredContent"]["importsSkipped"],
        json!([format!("AGENTS.md: Claude Code, started in `crates/a`, {MISSES}")])
    );
}
