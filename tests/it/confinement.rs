//! One confinement rule, seen from every edge: a repository that names, links to and imports a
//! secret planted beside it, in every way an agent's files allow, and every command's output
//! (text, JSON, SARIF, Markdown, the MCP server's answers, a hook's) grepped for the secret's
//! words and for its sizes. Nothing outside the project is opened, listed or measured.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::tree::Tree;
use serde_json::json;

/// The secret's words; none of them may reach any output.
const WORDS: &[&str] = &["SECRETWORD", "SECRETDESC", "secret.instructions.md", "secret-rule.md", "secret-second"];

/// The secret files' sizes, chosen so that they appear nowhere else, and the length of their
/// first line (a finding's end column, were the file opened to place it).
const SIZE: usize = 7_919;
const FIRST_LINE: usize = 6_421;

/// A secret file of [`SIZE`] bytes whose first line is [`FIRST_LINE`] bytes long.
fn secret(head: &str) -> String {
    let mut text = head.to_string();
    let pad = FIRST_LINE - text.len();
    text.push_str(&"S".repeat(pad));
    text.push('\n');
    text.push_str("SECRETWORD ");
    while text.len() < SIZE {
        text.push('x');
    }
    text.truncate(SIZE - 1);
    text.push('\n');
    text
}

/// The hostile repository `r` (a git repository) and `outside`, beside it, holding the secret.
fn hostile() -> Tree {
    let t = Tree::new();
    // The secret, as each agent's kind of file.
    t.write("outside/AGENTS.md", secret("# AGENTS "));
    t.write("outside/CLAUDE.md", secret("# CLAUDE "));
    t.write("outside/secret.instructions.md", secret("---\napplyTo: \"**\"\ndescription: SECRETDESC\n---\n"));
    t.write("outside/rules/secret-rule.md", secret("# rule "));
    // Its links are the file's own words: a file outside is not read for them either.
    let second = "[more](secret-second.instructions.md) ";
    t.write(
        "outside/linked.instructions.md",
        secret(&format!("---\napplyTo: \"**\"\ndescription: SECRETDESC\n---\n{second}")),
    );
    t.write("outside/secret-second.instructions.md", secret("---\napplyTo: \"**\"\n---\n"));
    t.write("outside/rules/secret-rule.mdc", secret("---\nalwaysApply: true\n---\n"));
    let outside = std::fs::canonicalize(t.path("outside")).expect("outside");
    let rel = "../outside";
    // The repository: plain rules at its root, and every way out.
    assert!(Command::new("git").args(["init", "-q"]).arg(t.path("r")).status().expect("git").success());
    t.write("r/AGENTS.md", "# Root rules\nKeep it small.\n");
    t.write(
        "r/CLAUDE.md",
        format!("# Claude\n@{rel}/CLAUDE.md\n@~/../outside/CLAUDE.md\n@{}/CLAUDE.md\n", outside.display()),
    );
    t.write("r/GEMINI.md", format!("# Gemini\n@{rel}/AGENTS.md\n"));
    // Copilot's locations, written every way: through `~`, `..`, `/proc`, absolute, a glob.
    let proc_path = format!("~/../../../proc/self/root{}", outside.display());
    let locations = json!({
        "~/../outside": true,
        proc_path: true,
        outside.display().to_string(): true,
        "../outside": true,
        "~/.copilot/../../outside": true,
        "../outside/*.instructions.md": true,
        // The workspace itself through the home folder: its links out are still links out.
        "~/../r/evil": true,
    });
    t.write(
        "r/.vscode/settings.json",
        json!({"chat.instructionsFilesLocations": locations, "chat.includeReferencedInstructions": true}).to_string(),
    );
    t.write(
        "r/.github/copilot-instructions.md",
        format!("See [this]({}/linked.instructions.md).\n", outside.display()),
    );
    // Links out: a package's file, a rules folder, Cursor's rules, a link to the whole disk.
    t.mkdir("r/evil");
    t.symlink(outside.join("linked.instructions.md"), "r/evil/a.instructions.md");
    t.symlink(&outside, "r/evil/sub");
    t.mkdir("r/.github/instructions");
    t.symlink(&outside, "r/.github/instructions/x");
    t.write("r/pkg/package.json", "{}\n");
    t.symlink(outside.join("AGENTS.md"), "r/pkg/AGENTS.md");
    t.mkdir("r/.claude");
    t.mkdir("r/.cursor");
    t.mkdir("r/lib");
    t.symlink(outside.join("rules"), "r/.claude/rules");
    t.symlink(outside.join("rules"), "r/.cursor/rules");
    t.symlink("/", "r/lib/root");
    t.write("r/lib/Cargo.toml", "[package]\n");
    t.symlink(outside.join("CLAUDE.md"), "r/lib/CLAUDE.md");
    // A link out that a file beside it shadows: listed, never measured.
    t.write("r/svc/AGENTS.md", "# Service\n");
    t.symlink(outside.join("CLAUDE.md"), "r/svc/CLAUDE.md");
    t
}

/// The binary in `cwd` with the tree's home; its output, whatever the exit code.
fn run(t: &Tree, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", t.home())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("DSH_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .expect("run instructions-lsp")
}

/// Panics when `out` holds a word of the secret or one of its sizes.
fn assert_confined(what: &str, out: &str) {
    for word in WORDS {
        assert!(!out.contains(word), "{what}: the secret's `{word}` reached the output:\n{out}");
    }
    for n in [SIZE, FIRST_LINE, FIRST_LINE + 1] {
        let grouped = instructions_lsp::chain::words::number(n as u64);
        for shown in [n.to_string(), grouped] {
            assert!(!out.contains(&shown), "{what}: the secret's size {shown} reached the output:\n{out}");
        }
    }
}

fn both(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

const PROFILES: &[&str] = &["codex", "claude", "gemini", "opencode", "copilot", "cursor", "dsh-next", "dsh", "ds4"];

#[test]
fn the_cli_reads_nothing_outside_the_repository_whatever_its_files_name() {
    let t = hostile();
    let r = t.root();
    for dir in [r.clone(), r.join("pkg"), r.join("lib")] {
        for profile in PROFILES {
            for args in [
                vec!["effective", "--profile", profile],
                vec!["effective", "--profile", profile, "--json"],
                vec!["check", "--profile", profile, "--format", "json"],
                vec!["check", "--profile", profile, "--format", "sarif"],
                vec!["check", "--profile", profile],
            ] {
                let o = run(&t, &dir, &args);
                assert_confined(&format!("{} in {}", args.join(" "), dir.display()), &both(&o));
            }
        }
        for args in [vec!["compare", "--all", "--json"], vec!["compare", "--all"], vec!["check"], vec!["effective"]] {
            let o = run(&t, &dir, &args);
            assert_confined(&format!("{} in {}", args.join(" "), dir.display()), &both(&o));
        }
    }
    // The control: what lies inside is read.
    let o = run(&t, &r, &["effective", "--profile", "codex"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("Keep it small."), "{}", both(&o));
    // A location that names a folder inside the project, written through `..`, is searched.
    t.write("r/docs/inside.instructions.md", "---\napplyTo: \"**\"\n---\nINSIDE RULE\n");
    t.write("r/.vscode/settings.json", json!({"chat.instructionsFilesLocations": {"pkg/../docs": true}}).to_string());
    let o = run(&t, &r, &["effective", "--profile", "copilot"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("INSIDE RULE"), "{}", both(&o));
}

#[test]
fn diff_reads_nothing_outside_the_repository_through_either_side() {
    let t = hostile();
    let r = t.root();
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(&r)
            .env("HOME", t.home())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git");
        assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "hostile"]);
    // The next revision climbs out with relative links, which resolve outside from any scratch
    // folder the revision is laid out in.
    let climb = format!("{}outside/AGENTS.md", "../".repeat(12));
    std::os::unix::fs::symlink(&climb, r.join("AGENTS.md.tmp")).expect("link");
    std::fs::rename(r.join("AGENTS.md.tmp"), r.join("AGENTS.md")).expect("replace");
    t.write("r/CLAUDE.md", "# Claude\n@AGENTS.md\n");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "climb"]);
    let mut runs = 0;
    for profile in ["", "claude", "gemini", "copilot", "cursor", "codex"] {
        let profile: &[&str] = if profile.is_empty() { &[] } else { &["--profile", profile] };
        for format in ["text", "markdown", "json"] {
            for range in [&["HEAD~1", "HEAD"][..], &["HEAD", "HEAD~1"], &["HEAD~1"]] {
                let args = [&["diff"][..], range, profile, &["--format", format]].concat();
                let o = run(&t, &r, &args);
                assert!(matches!(o.status.code(), Some(0 | 1)), "{args:?}: {}", both(&o));
                assert_confined(&args.join(" "), &both(&o));
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 54);
}

/// The agents' edges: the MCP server's answers for every profile, and a hook's additions.
#[test]
fn the_mcp_server_and_the_hooks_read_nothing_outside_the_repository() {
    let t = hostile();
    let r = t.root();
    let mut calls = Vec::new();
    for profile in PROFILES.iter().chain(&["all"]) {
        for path in [r.clone(), r.join("pkg"), r.join("lib"), r.join("svc")] {
            calls.push(("instructions_for", json!({"path": path, "profile": profile})));
        }
    }
    calls.push(("instructions_touch", json!({"path": r.join("pkg/package.json")})));
    calls.push(("instructions_transitions", json!({"path": r})));
    let mut answers = String::new();
    for ((name, args), answer) in calls.iter().zip(crate::common::mcp_calls(&t, &r, &calls)) {
        assert!(answer.get("result").is_some(), "{name} {args}: {answer}");
        answers.push_str(&answer.to_string());
    }
    assert!(answers.contains("Keep it small."), "control: the project's own rules reach MCP");
    assert_confined("mcp", &answers);

    for agent in ["claude", "codex"] {
        let event = json!({"session_id": "s", "hook_event_name": "SessionStart", "cwd": r, "source": "startup"});
        let mut hook = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
            .args(["hook", agent])
            .current_dir(&r)
            .env("HOME", t.home())
            .env_remove("XDG_STATE_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("hook");
        hook.stdin.take().expect("stdin").write_all(event.to_string().as_bytes()).expect("event");
        let o = hook.wait_with_output().expect("hook output");
        assert_confined(&format!("hook --agent {agent}"), &both(&o));
    }
}

/// The language server, in process: its diagnostics (placed in their files) and its answers for
/// every profile name nothing outside.
#[tokio::test]
async fn the_language_server_reads_nothing_outside_the_repository() {
    use crate::common::lsp::{Client, uri};
    let t = hostile();
    let r = t.root();
    let profiles = json!(["dsh", "codex", "claude", "gemini", "opencode", "dsh-next", "copilot", "cursor"]);
    // `svc` as a folder of its own: its shadowed link out is listed in the folder's answers.
    let svc = r.join("svc");
    let mut c = Client::start(&t.home(), &[&r, &svc], json!({"profiles": profiles})).await;
    // The link out is reported, placed without opening its target.
    let link = c.diagnostic(&r.join("pkg/AGENTS.md"), "linkOutside").await;
    assert_eq!(link["range"]["end"]["character"], 0, "{link}");
    let mut answers = String::new();
    for dir in [r.clone(), r.join("pkg"), r.join("lib"), svc] {
        let all = c.effective(json!({"uri": uri(&dir), "profile": "all"})).await;
        answers.push_str(&all.to_string());
    }
    let diagnostics = c.all_diagnostics_until("diagnostics of the link", |d| !d.is_empty()).await;
    answers.push_str(&serde_json::to_string(&diagnostics).unwrap_or_default());
    assert!(answers.contains("Keep it small."), "control: the project's own rules reach the server");
    assert_confined("the language server", &answers);
    c.finish().await;
}

/// The binary in `cwd`, ended by a guard if it has not finished within a minute (a run that
/// blocks on a FIFO never would): its output and whether it finished.
fn run_guarded(t: &Tree, cwd: &Path, args: &[&str]) -> (Output, bool) {
    let child = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(args)
        .current_dir(cwd)
        .env("HOME", t.home())
        .env_remove("XDG_STATE_HOME")
        .env_remove("DSH_HOME")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        if rx.recv_timeout(std::time::Duration::from_secs(60)).is_err() {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
        }
    });
    let o = child.wait_with_output().expect("output");
    let finished = tx.send(()).is_ok() && o.status.code().is_some();
    (o, finished)
}

/// Ignore files count as git counts them: from the repository's root down, never one in a
/// folder above it; and one that is a FIFO (or a link out of the project) leaves its folder
/// out instead of blocking every command on it.
#[test]
fn ignore_files_count_from_the_repositorys_root_and_never_block() {
    let t = Tree::new();
    t.write("parent/.gitignore", "pkg/\n");
    assert!(Command::new("git").args(["init", "-q"]).arg(t.path("parent/repo")).status().expect("git").success());
    t.write("parent/repo/AGENTS.md", "# root\n");
    t.write("parent/repo/pkg/AGENTS.md", "# pkg\n");
    t.write("parent/repo/pkg/AGENTS.override.md", "# override\n");
    let repo = t.path("parent/repo");
    let (o, _) = run_guarded(&t, &repo, &["check", "--profile", "codex"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("pkg/AGENTS.md:1:1: warning[notRead]"),
        "the package is checked: {}",
        both(&o)
    );

    let t = Tree::new();
    assert!(Command::new("git").args(["init", "-q"]).arg(t.root()).status().expect("git").success());
    t.write("r/AGENTS.md", "# Root rules\nKeep it small.\n");
    t.write("r/sub/AGENTS.md", "# sub\n");
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(t.root())
            .env("HOME", t.home())
            .output()
            .expect("git");
        assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "base"]);
    for fifo in ["r/sub/.gitignore", "r/.ignore", "r/sub/.ignore", "r/.git/info/exclude", "r/.gitignore"] {
        let path = t.path(fifo);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        let _ = std::fs::remove_file(&path);
        assert!(Command::new("mkfifo").arg(&path).status().expect("mkfifo").success());
        for args in [&["check"][..], &["effective"], &["compare", "--all"], &["diff", "HEAD"]] {
            let (o, finished) = run_guarded(&t, &t.root(), args);
            assert!(finished, "{fifo}: `{}` blocked", args.join(" "));
            assert!(matches!(o.status.code(), Some(0 | 1)), "{fifo}: {args:?}: {}", both(&o));
        }
        let (o, _) = run_guarded(&t, &t.root(), &["effective", "--profile", "codex"]);
        assert!(String::from_utf8_lossy(&o.stdout).contains("Keep it small."), "{fifo}: {}", both(&o));
        std::fs::remove_file(&path).expect("remove the FIFO");
    }
}

/// Nested repositories (and a worktree's `.git` file) name git folders of their own: their
/// `.git/info/exclude` and the `gitdir` and `commondir` their `.git` files point at are never
/// read, so a FIFO there blocks nothing, `/dev/zero` fills no memory, and an exclude file outside
/// the project hides none of the project's files.
#[test]
fn nested_repositories_git_files_are_never_read() {
    let t = Tree::new();
    let fifo = |rel: &str| {
        let path = t.path(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        assert!(Command::new("mkfifo").arg(&path).status().expect("mkfifo").success());
    };
    // Outside: a git folder whose `commondir` blocks, and one whose exclude hides AGENTS.md.
    fifo("outside/blocking/commondir");
    t.write("outside/hiding/commondir", ".\n");
    t.write("outside/hiding/info/exclude", "AGENTS.md\n");
    assert!(Command::new("git").args(["init", "-q"]).arg(t.root()).status().expect("git").success());
    t.write("r/AGENTS.md", "# Root rules\nKeep it small.\n");
    fifo("r/n1/.git/info/exclude");
    t.write("r/n2/.git", format!("gitdir: {}\n", t.path("outside/blocking").display()));
    t.mkdir("r/n3/.git/info");
    t.symlink("/dev/zero", "r/n3/.git/info/exclude");
    t.write("r/n4/.git", format!("gitdir: {}\n", t.path("outside/hiding").display()));
    // The repository's own exclude file counts, below its `.gitignore` files.
    t.write("r/.git/info/exclude", "hidden/\n");
    for n in ["n1", "n2", "n3", "n4", "hidden"] {
        t.write(&format!("r/{n}/AGENTS.md"), "# nested\n");
        t.write(&format!("r/{n}/AGENTS.override.md"), "# override\n");
    }
    let (o, finished) = run_guarded(&t, &t.root(), &["check", "--profile", "codex"]);
    assert!(finished, "`check` blocked: {}", both(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for n in ["n1", "n2", "n3", "n4"] {
        assert!(out.contains(&format!("{n}/AGENTS.md:1:1: warning[notRead]")), "{n} is checked: {}", both(&o));
    }
    assert!(!out.contains("hidden/"), "the repository's exclude file holds: {}", both(&o));
    for args in [&["effective"][..], &["compare", "--all"]] {
        let (o, finished) = run_guarded(&t, &t.root(), args);
        assert!(finished && o.status.code() == Some(0), "{args:?}: {}", both(&o));
    }
    // A worktree's `.git` file at the root: its `commondir` is not read either.
    std::fs::remove_dir_all(t.path("r/.git")).expect("rm .git");
    t.write("r/.git", format!("gitdir: {}\n", t.path("outside/blocking").display()));
    let (o, finished) = run_guarded(&t, &t.root(), &["check", "--profile", "codex"]);
    assert!(finished && o.status.code() == Some(1), "{}", both(&o));
}

/// A folder linked to another repository is not part of this one because the other holds
/// `.git`: `.claude -> ../other` leads out of the project, and its rules are not listed.
#[test]
fn a_link_to_another_repository_leads_out_of_the_project() {
    let t = Tree::new();
    for repo in ["other", "r"] {
        assert!(Command::new("git").args(["init", "-q"]).arg(t.path(repo)).status().expect("git").success());
    }
    t.write("other/rules/secret-rule.md", secret("---\npaths: [\"**\"]\n---\n"));
    t.write("r/CLAUDE.md", "# Root rules\nKeep it small.\n");
    t.symlink(t.path("other"), "r/.claude");
    for args in
        [&["check", "--profile", "claude"][..], &["effective", "--profile", "claude", "--json"], &["compare", "--all"]]
    {
        let o = run(&t, &t.root(), args);
        let out = both(&o);
        assert_confined(&args.join(" "), &out);
        assert!(out.contains(".claude/rules"), "{args:?}: the folder is said as one link out: {out}");
    }
}

/// A file linked out of the project is not even opened: Gemini CLI asks whether its files are
/// readable (`access(R_OK)`), and so does its profile, without opening the link's target. The
/// opens of the target are counted with inotify, up to an open of our own that marks the end.
#[cfg(target_os = "linux")]
#[test]
fn a_link_out_of_the_project_is_not_opened() {
    use notify::{EventKind, RecursiveMode, Watcher, event::AccessKind};
    let t = Tree::new();
    t.write("outside/GEMINI.md", "SECRETWORD\n");
    assert!(Command::new("git").args(["init", "-q"]).arg(t.root()).status().expect("git").success());
    t.write("r/AGENTS.md", "# Root rules\n");
    t.mkdir("r/pkg");
    t.symlink(t.path("outside/GEMINI.md"), "r/pkg/GEMINI.md");
    let target = t.path("outside/GEMINI.md");
    let (tx, rx) = std::sync::mpsc::channel();
    let mut watcher = notify::recommended_watcher(tx).expect("watcher");
    watcher.watch(&target, RecursiveMode::NonRecursive).expect("watch");
    for args in [&["check", "--profile", "gemini"][..], &["effective", "--profile", "gemini"], &["compare", "--all"]] {
        let o = run(&t, &t.root(), args);
        assert_confined(&args.join(" "), &both(&o));
    }
    // The mark: an open and a write, the write's event after every open before it.
    let mut mark = std::fs::OpenOptions::new().append(true).open(&target).expect("the marking open");
    mark.write_all(b"x").expect("the marking write");
    drop(mark);
    let mut opens = 0;
    while let Ok(Ok(event)) = rx.recv_timeout(std::time::Duration::from_secs(60)) {
        match event.kind {
            EventKind::Access(AccessKind::Open(_)) => opens += 1,
            EventKind::Modify(_) => break,
            _ => {}
        }
    }
    assert_eq!(opens, 1, "only the marking open reached the file outside");
}

/// Copilot's own files linked out of the workspace: a `.github` folder linked outside is not
/// searched for stray instructions, and a `.vscode/settings.json` linked outside (which could be
/// the user's own settings) is not read, so what it says never shows.
#[test]
fn copilots_folders_and_settings_linked_outside_are_not_read() {
    let t = Tree::new();
    t.write("outside/gh/secret.instructions.md", "---\napplyTo: \"**\"\n---\nSECRETWORD\n");
    t.write("outside/settings.json", r#"{"chat.instructionsFilesLocations": {"probe": true}}"#);
    assert!(Command::new("git").args(["init", "-q"]).arg(t.root()).status().expect("git").success());
    t.write("r/AGENTS.md", "# Root rules\nKeep it small.\n");
    t.write("r/probe/x.instructions.md", "---\napplyTo: \"**\"\n---\nPROBE\n");
    t.symlink(t.path("outside/gh"), "r/.github");
    t.mkdir("r/.vscode");
    t.symlink(t.path("outside/settings.json"), "r/.vscode/settings.json");
    for args in [&["check", "--profile", "copilot"][..], &["effective", "--profile", "copilot", "--json"]] {
        let o = run(&t, &t.root(), args);
        let out = both(&o);
        assert_confined(&args.join(" "), &out);
        assert!(!out.contains("PROBE") && !out.contains("probe/x.instructions.md"), "{args:?}: {out}");
    }
}

/// A configuration file linked out of the project is not read: its text would reach the output
/// in a parse error's quoted line.
#[test]
fn a_configuration_file_linked_outside_is_not_read() {
    let t = Tree::new();
    t.write("outside/config.toml", "agents = [\"codex\"]\nSECRETWORD is not TOML\n");
    assert!(Command::new("git").args(["init", "-q"]).arg(t.root()).status().expect("git").success());
    t.write("r/AGENTS.md", "# Root rules\n");
    t.symlink(t.path("outside/config.toml"), "r/instructions-lsp.toml");
    for args in [&["check"][..], &["effective"], &["compare"]] {
        let o = run(&t, &t.root(), args);
        let out = both(&o);
        assert_confined(&args.join(" "), &out);
        assert!(
            out.contains("instructions-lsp.toml is a link to") && out.contains("outside the project: not read"),
            "{out}"
        );
    }
}
