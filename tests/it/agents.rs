//! Agent profiles verified against the real agents. `AGENTS_MODULES` names the
//! node_modules folder that `scripts/install-agents.sh` fills (Codex CLI, opencode, Gemini CLI
//! core, dsh-agent-instructions); `.ci/run` always sets it. Each test builds seeded trees and
//! asks both the agent and `instructions-lsp effective --profile …` what loads.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::agents_modules as modules;
use crate::common::fake_api::FakeApi;
use crate::common::tree::Tree;
use serde_json::{Value, json};

/// `instructions-lsp effective --profile NAME` in `cwd`, with `HOME` set to `home`.
fn ours(profile: &str, home: &Path, cwd: &Path, args: &[String], env: &[(&str, &Path)]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_instructions-lsp"))
        .args(["effective", "--profile", profile])
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .output()
        .expect("run instructions-lsp");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The CLI ends a non-empty text with one newline of its own.
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let text = text.strip_suffix('\n').unwrap_or(&text).to_string();
    if !args.iter().any(|a| a == "--json") {
        return text;
    }
    // The agents name files by absolute path; ours are named from the project root, with their
    // `uri`: compared by the absolute path the `uri` names.
    let mut view: Value = serde_json::from_str(&text).expect("our JSON");
    for f in view["files"].as_array_mut().into_iter().flatten() {
        let absolute = instructions_lsp::paths::uri_to_path(f["uri"].as_str().unwrap_or("")).unwrap_or_default();
        f["path"] = Value::String(absolute.to_string_lossy().into_owned());
    }
    view.to_string()
}

/// Runs `tests/support/agents.mjs` on `cases` and returns each case's `text`.
fn node_texts(modules: &Path, cases: &[Value]) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/agents.mjs");
    let mut child = Command::new("node")
        .arg(script)
        .arg(modules)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node");
    let input = serde_json::to_vec(cases).expect("json");
    child.stdin.take().expect("stdin").write_all(&input).expect("write cases");
    let out = child.wait_with_output().expect("node output");
    assert!(out.status.success(), "agents.mjs failed: {}", String::from_utf8_lossy(&out.stderr));
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).expect("agents.mjs prints JSON");
    results.iter().map(|r| r["text"].as_str().unwrap_or_default().to_string()).collect()
}

/// The instruction message of `codex debug prompt-input`, or "" when Codex sends none.
/// `via_config`: the settings are in `home/config.toml` (the CLI gets no flag), else `-c` flags.
fn codex_says(codex: &str, home: &Path, cwd: &Path, max_bytes: u64, fallbacks: &[&str], via_config: bool) -> String {
    let list = format!(
        "project_doc_fallback_filenames=[{}]",
        fallbacks.iter().map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(",")
    );
    let flags = ["-c".to_string(), list, "-c".to_string(), format!("project_doc_max_bytes={max_bytes}")];
    let out = Command::new(codex)
        .args(if via_config { &flags[..0] } else { &flags[..] })
        .args(["debug", "prompt-input", "hi"])
        .current_dir(cwd)
        .env("CODEX_HOME", home)
        .env("HOME", home)
        .output()
        .expect("run codex");
    assert!(out.status.success(), "codex failed: {}", String::from_utf8_lossy(&out.stderr));
    let items: Value = serde_json::from_slice(&out.stdout).expect("codex prints JSON");
    for item in items.as_array().into_iter().flatten() {
        for c in item["content"].as_array().into_iter().flatten() {
            if let Some(text) = c["text"].as_str().filter(|t| t.contains("<INSTRUCTIONS>")) {
                return text.to_string();
            }
        }
    }
    String::new()
}

fn ours_codex(home: &Path, cwd: &Path, max_bytes: u64, fallbacks: &[&str], via_config: bool) -> String {
    let list = serde_json::to_string(fallbacks).expect("json");
    let args = [
        "--set".to_string(),
        format!("baselineMaxBytes={max_bytes}"),
        "--set".to_string(),
        format!("instructionFileCandidates={list}"),
    ];
    ours("codex", home, cwd, if via_config { &args[..0] } else { &args[..] }, &[("CODEX_HOME", home)])
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn the_codex_profile_matches_codex_debug_prompt_input() {
    let Some(modules) = modules() else { return };
    let codex = modules.join(".bin/codex").to_string_lossy().into_owned();
    let names = ["AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "GUIDE.md"];
    let texts = ["rules\n", "   \n", "", "ünïcödé rules 🎉\n", "a longer set of rules for this directory\n"];
    let mut rng = Rng(0x00C0_DE5E_ED00);
    for case in 0..30 {
        let (t, dirs) = seeded_chain_with(&mut rng, &names, &texts, 3, 3);
        let dir = dirs.last().expect("dirs").clone();
        if rng.below(2) == 0 {
            t.write("home/AGENTS.md", "global rules\n");
        }
        let max_bytes = [0, 7, 40, 95, 32_768][rng.below(5) as usize];
        let fallbacks: &[&str] = if rng.below(2) == 0 { &["CLAUDE.md", "GUIDE.md"] } else { &[] };
        // Every other case through `$CODEX_HOME/config.toml`, as a user sets them.
        let via_config = case % 2 == 1;
        if via_config {
            let names: Vec<String> = fallbacks.iter().map(|f| format!("  \"{f}\", # a fallback\n")).collect();
            let toml = format!(
                "model = \"gpt\"\nproject_doc_max_bytes = {max_bytes}\nproject_doc_fallback_filenames = [\n{}]\n\n[tui]\nproject_doc_max_bytes = 1\n",
                names.concat()
            );
            t.write("home/config.toml", toml);
        }
        let expected = codex_says(&codex, &t.home(), &dir, max_bytes, fallbacks, via_config);
        let got = ours_codex(&t.home(), &dir, max_bytes, fallbacks, via_config);
        assert_eq!(got, expected, "case {case}: budget {max_bytes}, fallbacks {fallbacks:?}, config.toml {via_config}");
    }
}

/// A seeded chain `r/d0/d1/…` with some of `names` in each directory, texts from `texts`.
fn seeded_chain(rng: &mut Rng, names: &[&str], texts: &[&str]) -> (Tree, Vec<PathBuf>) {
    seeded_chain_with(rng, names, texts, 2, 1)
}

/// [`seeded_chain`] with each name written one time in `one_in`, its text repeated up to
/// `max_repeat` times.
fn seeded_chain_with(
    rng: &mut Rng,
    names: &[&str],
    texts: &[&str],
    one_in: u64,
    max_repeat: u64,
) -> (Tree, Vec<PathBuf>) {
    let t = Tree::new();
    let depth = 1 + rng.below(4) as usize;
    let mut dir = t.root();
    let mut dirs = vec![dir.clone()];
    for d in 0..depth {
        dir = dir.join(format!("d{d}"));
        dirs.push(dir.clone());
    }
    std::fs::create_dir_all(&dir).expect("dirs");
    for d in &dirs {
        for name in names {
            if rng.below(one_in) == 0 {
                let text = texts[rng.below(texts.len() as u64) as usize];
                let text = if max_repeat > 1 { text.repeat(1 + rng.below(max_repeat) as usize) } else { text.into() };
                let path = d.join(name);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).expect("parent");
                }
                std::fs::write(path, text).expect("write");
            }
        }
    }
    (t, dirs)
}

#[test]
fn the_gemini_profile_matches_gemini_cli_core_memory_discovery() {
    let Some(modules) = modules() else { return };
    let texts = [
        "rules\n",
        "  \n",
        "",
        "ünïcödé 🎉 rules\n",
        "see @./notes.md please\n",
        "code `@./notes.md` is not an import\n```\n@./notes.md\n```\n",
        "escape @../../../../../../outside.md and @missing.md\n",
        "parent @../GEMINI.md\n",
        "email a@b.c and @ alone\n",
    ];
    let mut rng = Rng(0x6E5E_ED6E);
    let mut cases = Vec::new();
    let mut expected_ours = Vec::new();
    // context.fileName: not set, GEMINI.md with another name, one name without GEMINI.md (which
    // still loads), two names, a name repeated.
    let lists: [Option<&[&str]>; 6] = [
        None,
        Some(&["GEMINI.md", "AGENTS.md"]),
        Some(&["AGENTS.md"]),
        Some(&["AGENTS.md", "CLAUDE.md"]),
        Some(&["CLAUDE.md", " AGENTS.md ", "CLAUDE.md"]),
        Some(&["GEMINI.md"]),
    ];
    for case in 0..30 {
        let names = lists[rng.below(lists.len() as u64) as usize];
        // Files of every name, configured or not.
        let (t, dirs) = seeded_chain(&mut rng, &["GEMINI.md", "AGENTS.md", "CLAUDE.md"], &texts);
        for d in &dirs {
            if rng.below(2) == 0 {
                std::fs::write(d.join("notes.md"), "notes, then @./more.md\n").expect("notes");
                std::fs::write(d.join("more.md"), "more, then back to @./notes.md\n").expect("more");
            }
            // A CLAUDE.md that is a link to the AGENTS.md beside it: one file, loaded once.
            if d.join("AGENTS.md").exists() && rng.below(2) == 0 {
                let _ = std::fs::remove_file(d.join("CLAUDE.md"));
                std::os::unix::fs::symlink("AGENTS.md", d.join("CLAUDE.md")).expect("link");
            }
        }
        t.write("outside.md", "outside the project\n");
        if rng.below(2) == 0 {
            t.write("home/.gemini/GEMINI.md", "global gemini rules\n");
        }
        if rng.below(4) == 0 {
            std::fs::remove_dir_all(t.root().join(".git")).expect("no git");
        }
        let cwd = dirs[rng.below(dirs.len() as u64) as usize].clone();
        let deepest = dirs.last().expect("dirs");
        let touch = deepest.join("work.txt");
        std::fs::write(&touch, "x").expect("touch");
        // None, the deepest file, or a file half-way first and then the deepest one.
        let mid = dirs[rng.below(dirs.len() as u64) as usize].join("mid.txt");
        std::fs::write(&mid, "x").expect("mid");
        let touches: Vec<PathBuf> = match rng.below(3) {
            0 => Vec::new(),
            1 => vec![touch],
            _ => vec![mid, touch],
        };
        cases.push(json!({
            "kind": "gemini", "cwd": cwd, "home": t.home(), "names": names, "touches": touches,
        }));
        let mut args = Vec::new();
        if let Some(names) = names {
            args.extend(["--set".to_string(), format!("instructionFileCandidates={}", json!(names))]);
        }
        for f in &touches {
            args.extend(["--touch".to_string(), f.to_string_lossy().into_owned()]);
        }
        expected_ours.push((case, ours("gemini", &t.home(), &cwd, &args, &[]), t));
    }
    let theirs = node_texts(&modules, &cases);
    // The seeds reach the rules under test: imports, cycles, refusals and touches.
    for needle in
        ["<!-- Imported from: ./notes.md", "File already processed", "Path traversal attempt", "/d3/GEMINI.md"]
    {
        assert!(theirs.iter().any(|t| t.contains(needle)), "no case shows {needle}");
    }
    for ((case, got, _tree), want) in expected_ours.into_iter().zip(theirs) {
        assert_eq!(got, want, "case {case}: {}", cases[case]);
    }
}

/// A Gemini case: the working directory, `context.fileName` (`None`: not set), the touches.
type GeminiCase<'a> = (PathBuf, Option<&'a [&'a str]>, Vec<PathBuf>);

/// Gemini's view of `cases` against gemini-cli-core's; returns the agent's texts.
fn gemini_compare(modules: &Path, t: &Tree, cases: &[GeminiCase]) -> Vec<String> {
    let js: Vec<Value> = cases
        .iter()
        .map(|(cwd, names, touches)| json!({"kind": "gemini", "cwd": cwd, "home": t.home(), "names": names, "touches": touches}))
        .collect();
    let theirs = node_texts(modules, &js);
    for ((cwd, names, touches), want) in cases.iter().zip(&theirs) {
        let mut args = Vec::new();
        if let Some(names) = names {
            args.extend(["--set".to_string(), format!("instructionFileCandidates={}", json!(names))]);
        }
        for f in touches {
            args.extend(["--touch".to_string(), f.to_string_lossy().into_owned()]);
        }
        let got = ours("gemini", &t.home(), cwd, &args, &[]);
        assert_eq!(&got, want, "cwd {}, names {names:?}, touches {touches:?}\n{}", cwd.display(), listing(&t.path("")));
    }
    theirs
}

#[test]
fn gemini_loads_a_claude_md_linked_to_agents_md_once_even_lazily() {
    let Some(modules) = modules() else { return };
    // The common pattern: AGENTS.md, and CLAUDE.md a link to it, at the root and in a package.
    let t = Tree::new();
    t.write("r/AGENTS.md", "root rules\n");
    t.write("r/pkg/AGENTS.md", "package rules\n");
    t.write("r/pkg/src/main.ts", "x\n");
    for dir in ["r", "r/pkg"] {
        std::os::unix::fs::symlink("AGENTS.md", t.path(dir).join("CLAUDE.md")).expect("link");
    }
    let both: &[&str] = &["AGENTS.md", "CLAUDE.md"];
    let (root, pkg, main) = (t.root(), t.path("r/pkg"), t.path("r/pkg/src/main.ts"));
    let theirs = gemini_compare(
        &modules,
        &t,
        &[
            (root.clone(), Some(both), vec![main.clone()]),
            (pkg.clone(), Some(both), vec![main.clone()]),
            (root.clone(), Some(&["CLAUDE.md", "AGENTS.md"]), vec![main.clone(), pkg.join("CLAUDE.md")]),
        ],
    );
    // Each text once, whichever name it was met under.
    for text in &theirs {
        assert_eq!(text.matches("root rules").count(), 1, "{text}");
        assert_eq!(text.matches("package rules").count(), 1, "{text}");
    }
}

#[test]
fn gemini_context_file_names_add_to_gemini_md() {
    let Some(modules) = modules() else { return };
    let t = Tree::new();
    for (rel, text) in [
        ("r/GEMINI.md", "gemini root\n"),
        ("r/AGENTS.md", "agents root\n"),
        ("r/CONTEXT.md", "context root\n"),
        ("r/a/GEMINI.md", "gemini a\n"),
        ("r/a/CONTEXT.md", "context a\n"),
        ("r/a/AGENTS.md", "agents a\n"),
        ("r/a/b/work.txt", "x\n"),
        ("home/.gemini/GEMINI.md", "gemini global\n"),
        ("home/.gemini/AGENTS.md", "agents global\n"),
    ] {
        t.write(rel, text);
    }
    let work = vec![t.path("r/a/b/work.txt")];
    let lists: [Option<&[&str]>; 6] = [
        None,
        Some(&["AGENTS.md"]),
        Some(&["CONTEXT.md", "AGENTS.md"]),
        Some(&["AGENTS.md", "GEMINI.md", "CONTEXT.md"]),
        Some(&[]),
        Some(&["", "  "]),
    ];
    let cases: Vec<_> = lists.iter().map(|names| (t.root(), *names, work.clone())).collect();
    let theirs = gemini_compare(&modules, &t, &cases);
    // A configured AGENTS.md alone still loads every GEMINI.md.
    assert!(theirs[1].contains("gemini root") && theirs[1].contains("agents a"), "{}", theirs[1]);
}

#[test]
fn the_dsh_next_profile_matches_load_baseline_instructions() {
    let Some(modules) = modules() else { return };
    let texts = [
        "rules\n",
        "  rules  \n",
        "",
        "   \n",
        "ünïcödé 🎉 rules, a little longer than the others\n",
        "tries to close the frame </system-reminder> early\n",
        "a much longer set of rules for this directory, which takes a good part of a small budget\n",
    ];
    let names = ["AGENTS.md", "CLAUDE.md", "AGENTS.local.md", "CLAUDE.local.md"];
    let mut rng = Rng(0x00D5_4E87);
    let mut cases = Vec::new();
    let mut got = Vec::new();
    for case in 0..30 {
        let (t, dirs) = seeded_chain(&mut rng, &names, &texts);
        if rng.below(2) == 0 {
            t.write("home/.dsh/AGENTS.md", "global rules\n");
        }
        let cwd = dirs.last().expect("dirs").clone();
        let max_bytes = [0u64, 60, 300, 520, 800, 1500, 65536][rng.below(7) as usize];
        let dsh_home = t.home().join(".dsh");
        cases.push(
            json!({ "kind": "dsh-next", "cwd": cwd, "home": t.home(), "dshHome": dsh_home, "maxBytes": max_bytes }),
        );
        let args = ["--set".to_string(), format!("baselineMaxBytes={max_bytes}")];
        got.push((case, ours("dsh-next", &t.home(), &cwd, &args, &[("DSH_HOME", &dsh_home)]), t));
    }
    let theirs = node_texts(&modules, &cases);
    for needle in ["omitted", "truncated", "<\\/system-reminder>", "Instructions from: ~/.dsh/AGENTS.md"] {
        assert!(theirs.iter().any(|t| t.contains(needle)), "no case shows {needle}");
    }
    for ((case, got, _tree), want) in got.into_iter().zip(theirs) {
        assert_eq!(got, want, "case {case}: {}", cases[case]);
    }
}

/// What opencode's read tool attaches when reading `file` from `cwd`: the files, and the
/// `<system-reminder>` block ("" when none).
fn opencode_reads(opencode: &Path, t: &Tree, cwd: &Path, file: &Path) -> (Vec<String>, String) {
    let params = json!({ "filePath": file }).to_string();
    let out = opencode_in(opencode, t, cwd)
        .args(["--pure", "debug", "agent", "build", "--tool", "read", "--params", &params])
        .output()
        .expect("run opencode");
    assert!(out.status.success(), "opencode failed: {}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("opencode prints JSON");
    let loaded = v["result"]["metadata"]["loaded"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let output = v["result"]["output"].as_str().unwrap_or_default();
    let reminder = output.find("<system-reminder>").map(|i| output[i..].to_string()).unwrap_or_default();
    (loaded, reminder)
}

/// opencode in `cwd`, offline, with a private home and private XDG folders under the tree.
fn opencode_in(opencode: &Path, t: &Tree, cwd: &Path) -> Command {
    let xdg = t.path("xdg");
    let mut cmd = Command::new(opencode);
    cmd.current_dir(cwd)
        // opencode takes its directory from PWD when it is set.
        .env("PWD", cwd)
        .env("HOME", t.home())
        .env("XDG_DATA_HOME", xdg.join("data"))
        .env("XDG_CONFIG_HOME", xdg.join("config"))
        .env("XDG_CACHE_HOME", xdg.join("cache"))
        .env("XDG_STATE_HOME", xdg.join("state"))
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_SHARE", "1");
    cmd
}

#[test]
fn the_opencode_profile_matches_what_opencodes_read_tool_attaches() {
    let Some(modules) = modules() else { return };
    let opencode = modules.join(".bin/opencode");
    let texts = ["rules\n", "  \n", "", "ünïcödé 🎉 rules\n", "more rules\non two lines\n"];
    let names = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md", "AGENTS.local.md"];
    let mut rng = Rng(0x0C0D_E5EE);
    let mut attached = 0;
    for case in 0..10 {
        let (t, dirs) = seeded_chain(&mut rng, &names, &texts);
        let cwd = dirs[rng.below(dirs.len() as u64 - 1) as usize].clone();
        let file = dirs.last().expect("dirs").join("work.txt");
        std::fs::write(&file, "x\n").expect("file");
        let (loaded, reminder) = opencode_reads(&opencode, &t, &cwd, &file);
        let json =
            ours("opencode", &t.home(), &cwd, &["--json".into(), "--touch".into(), file.to_string_lossy().into()], &[]);
        let view: Value = serde_json::from_str(&json).expect("our JSON");
        let nested: Vec<String> = view["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["scope"] == "nested" && f["status"] == "loaded")
            .filter_map(|f| f["path"].as_str().map(str::to_string))
            .collect();
        assert_eq!(nested, loaded, "case {case}: files attached to a read of {}", file.display());
        attached += loaded.len();
        let text = view["text"].as_str().unwrap_or_default();
        let ours_reminder = text.find("<system-reminder>").map(|i| &text[i..]).unwrap_or_default();
        assert_eq!(ours_reminder, reminder, "case {case}");
    }
    assert!(attached >= 3, "the seeds attach too few files ({attached}) to test anything");
}

/// Every file below `dir` with its text, for failure messages (the agent's own state skipped).
fn listing(dir: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == "projects" || n == "plugins" || n == ".claude.json") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                out.push_str(&format!("{}: {text:?}\n", p.strip_prefix(dir).unwrap_or(&p).display()));
            }
        }
    }
    out
}

/// The stand-in Messages API (`tests/support/fake-anthropic.mjs`), as Claude Code and opencode
/// talk to it here.
fn fake_anthropic() -> FakeApi {
    FakeApi::start("fake-anthropic.mjs")
}

impl FakeApi {
    /// Runs `claude -p` in `cwd` (reading `read` first when given) and returns the instruction
    /// parts of the conversation: the start reminder, then each reminder the read added.
    fn claude_parts(&self, claude: &Path, home: &Path, cwd: &Path, read: Option<&Path>) -> Vec<String> {
        self.claude_touch_parts(claude, home, cwd, read, "")
    }

    /// [`Self::claude_parts`] with another tool than Read: `tool` is `write:` or `edit:`.
    fn claude_touch_parts(
        &self,
        claude: &Path,
        home: &Path,
        cwd: &Path,
        read: Option<&Path>,
        tool: &str,
    ) -> Vec<String> {
        let _ = std::fs::remove_file(&self.log);
        match read {
            Some(r) => std::fs::write(&self.target, format!("{tool}{}", r.display())).expect("target"),
            None => {
                let _ = std::fs::remove_file(&self.target);
            }
        }
        let out = self
            .claude(claude)
            .args(["-p", "hi", "--allowedTools", "Read,Write,Edit"])
            .current_dir(cwd)
            .env("HOME", home)
            .output()
            .expect("run claude");
        assert!(out.status.success(), "claude failed: {}", String::from_utf8_lossy(&out.stderr));
        let requests = self.requests("/v1/messages");
        let texts = |m: &Value| -> Vec<String> {
            match &m["content"] {
                Value::String(s) => vec![s.clone()],
                Value::Array(a) => a.iter().filter_map(|c| c["text"].as_str().map(str::to_string)).collect(),
                _ => Vec::new(),
            }
        };
        assert!(!requests.is_empty(), "claude sent no request");
        // The instructions at start open the conversation (a side request, if Claude Code ever
        // sends one, does not hold them).
        let mut parts: Vec<String> = requests
            .iter()
            .flat_map(|r| texts(&r["messages"][0]))
            .filter(|t| t.contains("Codebase and user instructions are shown below"))
            .take(1)
            .collect();
        if read.is_some() {
            // What the read added: reminders beside the tool result, then what a tool hook adds
            // (Claude Code's AGENTS.md support) in a message of its own.
            let last = requests
                .iter()
                .rev()
                .find(|r| r["messages"].to_string().contains("tool_result"))
                .expect("a request after the read");
            let messages = last["messages"].as_array().cloned().unwrap_or_default();
            let at = messages.iter().rposition(|m| m.to_string().contains("tool_result")).expect("the read's result");
            for t in messages[at..].iter().flat_map(texts) {
                if t.starts_with("<system-reminder>\nContents of") {
                    // Claude Code separates the reminders of one message with a newline.
                    parts.push(t.strip_suffix('\n').unwrap_or(&t).to_string());
                } else if t.starts_with("tool.call hook additional context: ") {
                    parts.push(t);
                }
            }
        }
        parts
    }
}

#[test]
fn the_claude_profile_matches_what_claude_code_sends() {
    let Some(modules) = modules() else { return };
    let claude = modules.join(".bin/claude");
    let api = fake_anthropic();
    let texts = [
        "rules\n",
        "",
        "  \n",
        "  padded rules  \n\n",
        "ünïcödé 🎉 rules\n",
        "see @./notes.md please\n",
        "code `@./notes.md` is no import\n",
        "outside @../../../../../../outside.md and @~/mine.md\n",
        "---\npaths: src/**/*.rs\n---\nonly for Rust files\n",
        "---\npaths:\n  - \"**/work.txt\"\n---\nonly for work files\n",
        "---\npaths: \"*.txt, d{0,1}/**\"\n---\nfor text files and d0, d1\n",
        "<!-- a note for maintainers -->\nrules after a comment\n\n<!--\nmore notes\n-->\n",
        "rules with an <!-- inline --> comment\r\n",
    ];
    let names = [
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        "CLAUDE.local.md",
        "AGENTS.md",
        ".claude/AGENTS.md",
        ".claude/rules/style.md",
    ];
    let mut rng = Rng(0x00C1_A0DF);
    let mut seen = String::new();
    for case in 0..32 {
        // Half the trees hold only AGENTS.md and rules: Claude Code falls back to AGENTS.md.
        let pool: &[&str] = if rng.below(2) == 0 { &names } else { &names[3..] };
        let (t, dirs) = seeded_chain(&mut rng, pool, &texts);
        for d in &dirs {
            if rng.below(3) != 0 {
                std::fs::write(d.join("notes.md"), "notes, then @./more.md\n").expect("notes");
                std::fs::write(d.join("more.md"), "more\n").expect("more");
            }
        }
        t.write("outside.md", "outside\n");
        t.write("home/mine.md", "mine\n");
        if rng.below(2) == 0 {
            t.write("home/.claude/CLAUDE.md", "global rules, see @~/mine.md\n");
        }
        if rng.below(4) == 0 {
            t.write("CLAUDE.md", "above the repository\n");
        }
        let cwd = dirs[rng.below(dirs.len() as u64 - 1) as usize].clone();
        let file = dirs.last().expect("dirs").join("work.txt");
        std::fs::write(&file, "x\n").expect("file");
        let read = (rng.below(3) != 0).then_some(file.as_path());
        let want = api.claude_parts(&claude, &t.home(), &cwd, read);
        let mut args = vec!["--json".to_string()];
        if let Some(r) = read {
            args.extend(["--touch".to_string(), r.to_string_lossy().into_owned()]);
        }
        let view: Value = serde_json::from_str(&ours("claude", &t.home(), &cwd, &args, &[])).expect("our JSON");
        let got: Vec<String> =
            view["parts"].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect();
        assert_eq!(got, want, "case {case}: cwd {}, read {read:?}\n{}", cwd.display(), listing(&t.path("")));
        seen.push_str(&want.join("\n"));
    }
    // The seeds reach the rules under test: both kinds of start, rules, imports, what a read adds.
    for needle in [
        "/CLAUDE.md (project instructions",
        "/AGENTS.md (project instructions",
        "CLAUDE.local.md (user's private project instructions",
        "/.claude/rules/style.md (project",
        "/notes.md (project instructions",
        "/home/mine.md (user's private global",
        "<system-reminder>\nContents of",
        "tool.call hook additional context: ",
        "rules after a comment",
        "only for work files\n\n</system-reminder>",
    ] {
        assert!(seen.contains(needle), "no case shows {needle:?}");
    }
}

/// Files with HTML comments in every shape tried against Claude Code 2.1.332: on their own
/// lines, indented, inline, several on a line, unclosed, multi-line, at the start and the end, in
/// fences, lists, quotes and HTML blocks, with CRLF and lone CR line endings.
const COMMENT_SHAPES: &[&str] = &[
    "before\n\n<!-- hidden -->\n\nafter\n",
    "text <!-- inline --> more\n",
    "<!-- at start -->\nrules\n",
    "rules\n<!-- at end -->",
    "one\n<!--\nmulti\n\nline\n-->\ntwo\n",
    "x\n\n   <!-- three -->\ny\n",
    "x\n\n    <!-- four -->\ny\n",
    "x\n\n<!-- c --> tail\ny\n",
    "x\n\n<!-- a --> <!-- b -->\ny\n",
    "x\n\n<!-- never closed\ny\n",
    "x\n```\n<!-- in fence -->\n```\ny\n",
    "x\n~~~\n<!-- in tilde -->\n~~~\ny\n",
    "x\r\n\r\n<!-- crlf -->\r\ny\r\n",
    "x <!-- in --> y\r\nz\r\n",
    "para\n<!-- right after -->\nnext\n",
    "- item\n  <!-- in item -->\n- two\n",
    "> quote\n> <!-- in quote -->\n",
    "x\n\n\t<!-- tab -->\ny\n",
    "<!-- only a comment -->\n",
    "<div>\n<!-- in div -->\n</div>\n\nz\n",
    "# Title <!-- h -->\nz\n",
    "<!--\nc\n--> after close\nz\n",
    "x\n\n<!-->\ny\n",
    "x\n\n<!--->\ny\n",
    "a\n\n<!-- c -->\n\n\nb\n",
    "a\n\n<!-- c -->  \n  \nb\n",
    "- item\n<!-- c -->\n- two\n",
    "> quote\n<!-- c -->\nz\n",
    "a\n```\ncode\n<!-- c -->\n",
    "a <!--\nmulti\n--> b\n",
    "para\n    <!-- c -->\nz\n",
    "<!-- c -->\n---\nz\n",
    "<!-- a -->\n<!-- b -->\nz\n",
    "- a\n\n<!-- c -->\n\n- b\n",
    "1. item\n<!-- c -->\nz\n",
    "---\ntitle: x\n---\n<!-- c -->\nz\n",
    "# H\n<!-- c -->\nz\n",
    "````\n<!-- c -->\n```\n````\nz\n",
    "  ```\n<!-- c -->\n  ```\nz\n",
    "x\n\n<!-- outer <!-- inner --> rest -->\nz\n",
    "x\r\r<!-- c -->\rz\r",
    "z\n\n<!-- end -->",
    "<!-- a\nb -->c\nz\n",
    "<span>x</span>\n<!-- c -->\nz\n",
    "<!-- c --><div>\nz\n",
    "    code\n<!-- c -->\nz\n",
    "x\n\n<!--\tc\t-->\t\nz\n",
    "[a]: http://x\n<!-- c -->\nz\n",
];

#[test]
fn claude_hides_html_comments_that_stand_as_blocks_like_claude_code() {
    let Some(modules) = modules() else { return };
    let claude = modules.join(".bin/claude");
    let api = fake_anthropic();
    let compare = |t: &Tree, read: Option<&Path>| {
        let want = api.claude_parts(&claude, &t.home(), &t.root(), read);
        let mut args = vec!["--json".to_string()];
        if let Some(r) = read {
            args.extend(["--touch".to_string(), r.to_string_lossy().into_owned()]);
        }
        let view: Value = serde_json::from_str(&ours("claude", &t.home(), &t.root(), &args, &[])).expect("our JSON");
        let got: Vec<String> =
            view["parts"].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect();
        assert_eq!(got, want, "read {read:?}\n{}", listing(&t.path("")));
        want.join("\n")
    };
    // Every shape as a rule loaded at start (texts trimmed), and as a rule a read loads (texts as
    // they are), with a CLAUDE.md, its import and the user's own file.
    let t = Tree::new();
    for (i, shape) in COMMENT_SHAPES.iter().enumerate() {
        t.write(&format!("r/.claude/rules/s{i:02}.md"), shape);
        t.write(&format!("r/sub/.claude/rules/s{i:02}.md"), shape);
    }
    t.write("r/CLAUDE.md", "<!-- maintainers: keep this short -->\n# Rules\n\nsee @notes.md\n<!-- @hidden.md -->\n");
    t.write("r/notes.md", "notes\n\n<!-- a note on notes -->\n");
    t.write("r/hidden.md", "never imported\n");
    t.write("r/sub/CLAUDE.md", "\n<!-- lazy -->\nsub rules\n\n<!-- end -->\n");
    t.write("home/.claude/CLAUDE.md", "<!--\nmy own notes\n-->\nglobal rules\n");
    let work = t.write("r/sub/work.txt", "x\n");
    let seen = compare(&t, None) + &compare(&t, Some(&work));
    assert!(seen.contains("text <!-- inline --> more") && !seen.contains("<!-- hidden -->"), "{seen}");
    // AGENTS.md, at start and through the read's tool hook.
    let t = Tree::new();
    t.write("r/AGENTS.md", "<!-- generated, do not edit -->\nagents rules\n\n<!-- x --> kept\n");
    t.write("r/sub/AGENTS.md", "sub agents\r\n<!-- crlf -->\r\n");
    let work = t.write("r/sub/work.txt", "x\n");
    let seen = compare(&t, Some(&work));
    assert!(seen.contains("tool.call hook additional context") && !seen.contains("generated"), "{seen}");
}

#[test]
fn claude_loads_rules_with_paths_when_a_read_reaches_a_matching_file_like_claude_code() {
    let Some(modules) = modules() else { return };
    let claude = modules.join(".bin/claude");
    let api = fake_anthropic();
    let compare = |t: &Tree, cwd: &Path, read: Option<&Path>| -> (String, Value) {
        let want = api.claude_parts(&claude, &t.home(), cwd, read);
        let mut args = vec!["--json".to_string()];
        if let Some(r) = read {
            args.extend(["--touch".to_string(), r.to_string_lossy().into_owned()]);
        }
        let view: Value = serde_json::from_str(&ours("claude", &t.home(), cwd, &args, &[])).expect("our JSON");
        let got: Vec<String> =
            view["parts"].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect();
        assert_eq!(got, want, "cwd {}, read {read:?}\n{}", cwd.display(), listing(&t.path("")));
        (want.join("\n"), view)
    };
    // Every form of `paths:` tried: a glob, a YAML list, a flow list, commas, braces, `*.ts`, a
    // file name, an anchored path, a directory, `./`, a negation, another case, `**` alone, an
    // empty key, globs that never match; rules of a nested folder (relative to it) and the
    // user's own (relative to the working directory).
    let t = Tree::new();
    for (rel, text) in [
        ("r/CLAUDE.md", "root\n"),
        ("r/.claude/rules/api.md", "---\npaths: src/api/**\n---\napi rule\n"),
        ("r/.claude/rules/list.md", "---\npaths:\n  - \"src/api/*.ts\"\n  - docs/**\n---\nlist rule\n"),
        ("r/.claude/rules/comma.md", "---\npaths: src/api/*.ts, other/**\n---\ncomma rule\n"),
        ("r/.claude/rules/brace.md", "---\npaths: \"src/{api,web}/*.ts\"\n---\nbrace rule\n"),
        ("r/.claude/rules/rel.md", "---\npaths: api/**\n---\nrel rule\n"),
        ("r/.claude/rules/ts.md", "---\npaths: \"**/*.ts\"\n---\nts rule\n"),
        ("r/.claude/rules/never.md", "---\npaths: nothing/**\n---\nnever rule\n"),
        ("r/.claude/rules/star.md", "---\npaths: \"*.ts\"\n---\nstar rule\n"),
        ("r/.claude/rules/base.md", "---\npaths: x.ts\n---\nbase rule\n"),
        ("r/.claude/rules/slash.md", "---\npaths: /src/api/x.ts\n---\nslash rule\n"),
        ("r/.claude/rules/dir.md", "---\npaths: src/api\n---\ndir rule\n"),
        ("r/.claude/rules/dot.md", "---\npaths: ./src/api/x.ts\n---\ndot rule\n"),
        ("r/.claude/rules/neg.md", "---\npaths: [\"src/**\", \"!src/api/**\"]\n---\nneg rule\n"),
        ("r/.claude/rules/flow.md", "---\npaths: [src/api/x.ts]\n---\nflow rule\n"),
        ("r/.claude/rules/case.md", "---\npaths: src/API/X.ts\n---\ncase rule\n"),
        ("r/.claude/rules/all.md", "---\npaths: \"**\"\n---\nall rule\n"),
        ("r/.claude/rules/empty.md", "---\npaths:\n---\nempty paths rule\n"),
        ("r/.claude/rules/sub/deep.md", "---\npaths: src/**\n---\nrule in a sub-folder\n"),
        ("r/src/CLAUDE.md", "src claude\n"),
        ("r/src/.claude/rules/n1.md", "---\npaths: api/**\n---\nnested rule, relative to src\n"),
        ("r/src/.claude/rules/n2.md", "---\npaths: src/api/**\n---\nnested rule, relative to the root\n"),
        ("r/src/.claude/rules/n3.md", "plain nested rule\n"),
        ("home/.claude/rules/g.md", "---\npaths: src/api/**\n---\nglobal rule with paths\n"),
        ("home/.claude/rules/g2.md", "---\npaths: api/**\n---\nglobal rule relative to the cwd\n"),
        ("r/src/api/x.ts", "code\n"),
        ("r/src/api/y.md", "notes\n"),
        ("r/docs/guide.md", "guide\n"),
    ] {
        t.write(rel, text);
    }
    let (root, src) = (t.root(), t.path("r/src"));
    let x = t.path("r/src/api/x.ts");
    let (start, view) = compare(&t, &root, None);
    assert!(start.contains("all rule") && start.contains("empty paths rule") && !start.contains("api rule"), "{start}");
    let waiting: Vec<&Value> =
        view["files"].as_array().into_iter().flatten().filter(|f| f["status"] == "waiting").collect();
    assert!(waiting.iter().any(|f| f["globs"] == json!(["src/api/**"])), "{view}");
    let (read, _) = compare(&t, &root, Some(&x));
    assert!(read.contains("<system-reminder>\nContents of") && read.contains("api rule"), "{read}");
    compare(&t, &root, Some(&t.path("r/src/api/y.md")));
    compare(&t, &root, Some(&t.path("r/docs/guide.md")));
    // From a working directory below: the root's rules are still relative to the root, the
    // user's to the working directory.
    compare(&t, &src, Some(&x));
    // A write (of a new file, too) and an edit wake the same rules as a read.
    for (tool, file) in [("write:", t.path("r/src/api/new.ts")), ("edit:", x.clone())] {
        let want = api.claude_touch_parts(&claude, &t.home(), &root, Some(&file), tool);
        let args = ["--json".to_string(), "--touch".to_string(), file.to_string_lossy().into_owned()];
        let view: Value = serde_json::from_str(&ours("claude", &t.home(), &root, &args, &[])).expect("our JSON");
        let got: Vec<String> =
            view["parts"].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect();
        assert_eq!(got, want, "{tool} {}", file.display());
        assert!(want.join("\n").contains("api rule"), "{tool}: {want:?}");
    }
}

/// Found by the seeded trees (seed 0x00C1_A0DF, case 3): when no CLAUDE file with text loaded at
/// start, a read adds the `AGENTS.md` of each directory on its way unless that directory has its
/// own CLAUDE file, even when the read loads a CLAUDE file deeper down.
#[test]
fn claude_reads_add_the_agents_md_of_directories_without_a_claude_file() {
    let Some(modules) = modules() else { return };
    let claude = modules.join(".bin/claude");
    let api = fake_anthropic();
    let t = Tree::new();
    t.write("r/AGENTS.md", "root agents\n");
    t.write("r/d0/AGENTS.md", "a0\n");
    t.write("r/d0/d1/CLAUDE.md", "c1\n");
    t.write("r/d0/d1/AGENTS.md", "a1\n");
    let work = t.write("r/d0/d1/work.txt", "x\n");
    let want = api.claude_parts(&claude, &t.home(), &t.root(), Some(&work));
    assert!(want.iter().any(|p| p.contains("additional context: Contents of") && p.contains("a0")), "{want:?}");
    let args = ["--json".to_string(), "--touch".to_string(), work.to_string_lossy().into_owned()];
    let view: Value = serde_json::from_str(&ours("claude", &t.home(), &t.root(), &args, &[])).expect("our JSON");
    let got: Vec<String> =
        view["parts"].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect();
    assert_eq!(got, want);
}

/// uv's pattern: a root `CLAUDE.md` that only imports `AGENTS.md`, in a workspace of package
/// roots without files of their own. `claude -p` started in a crate gets the `CLAUDE.md` without
/// the import, as our view of that package root says (and at the root, the import); a mention in
/// prose that names no file is no import for either.
#[test]
fn claude_in_a_package_root_skips_the_roots_import_like_claude_code() {
    let Some(modules) = modules() else { return };
    let claude = modules.join(".bin/claude");
    let api = fake_anthropic();
    let t = Tree::new();
    t.write("r/AGENTS.md", "# uv\n- run the tests\n");
    t.write("r/CLAUDE.md", "@AGENTS.md\nThanks to @neongreen, for the rules.\n");
    t.write("r/Cargo.toml", "[workspace]\n");
    t.write("r/crates/uv/Cargo.toml", "[package]\n");
    t.write("r/crates/uv/src/lib.rs", "\n");
    let crate_dir = t.path("r/crates/uv");
    let in_crate = claude_compare(&api, &claude, &t, &crate_dir, None);
    assert!(in_crate.contains("@AGENTS.md") && !in_crate.contains("run the tests"), "{in_crate}");
    let at_root = claude_compare(&api, &claude, &t, &t.root(), None);
    assert!(at_root.contains("run the tests"), "{at_root}");
    let view: Value =
        serde_json::from_str(&ours("claude", &t.home(), &crate_dir, &["--json".to_string()], &[])).expect("JSON");
    let root = t.root();
    let statuses: Vec<(String, String)> = view["files"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            let path = Path::new(f["path"].as_str().unwrap_or(""));
            let shown = path.strip_prefix(&root).unwrap_or(path).to_string_lossy().into_owned();
            (shown, f["status"].as_str().unwrap_or("").to_string())
        })
        .collect();
    assert!(statuses.contains(&("CLAUDE.md".to_string(), "loaded".to_string())), "{view:#}");
    assert!(statuses.contains(&("AGENTS.md".to_string(), "outside".to_string())), "{view:#}");
    assert!(!statuses.iter().any(|(p, _)| p.contains("neongreen")), "{view:#}");
}

/// Claude Code loads a file once, by its path: a rule that `CLAUDE.md` imports is not loaded
/// again as a rule, at start or on a read, nor is a rule with `paths:` imported at start loaded
/// again by a read that matches it.
#[test]
fn claude_loads_a_rule_its_claude_md_imports_once_like_claude_code() {
    let Some(modules) = modules() else { return };
    let claude = modules.join(".bin/claude");
    let api = fake_anthropic();
    let t = Tree::new();
    t.write("r/CLAUDE.md", "# Root\n\n@.claude/rules/style.md\nand @.claude/rules/py.md\n");
    t.write("r/.claude/rules/style.md", "style rule\n");
    t.write("r/.claude/rules/other.md", "other rule\n");
    t.write("r/.claude/rules/py.md", "---\npaths: \"**/*.py\"\n---\npy rule\n");
    t.write("r/sub/CLAUDE.md", "sub @.claude/rules/r.md\n");
    t.write("r/sub/.claude/rules/r.md", "sub rule\n");
    let work = t.write("r/sub/work.txt", "x\n");
    let py = t.write("r/sub/a.py", "x\n");
    let root = t.root();
    let mut seen = claude_compare(&api, &claude, &t, &root, None);
    seen += &claude_compare(&api, &claude, &t, &root, Some(&work));
    seen += &claude_compare(&api, &claude, &t, &root, Some(&py));
    for needle in ["style rule", "other rule", "py rule", "sub rule"] {
        assert!(seen.contains(needle), "{needle:?} never loads: {seen}");
    }
    // Each file is listed once, as the import it loaded as.
    let args = ["--json".to_string(), "--touch".to_string(), py.to_string_lossy().into_owned()];
    let view: Value = serde_json::from_str(&ours("claude", &t.home(), &root, &args, &[])).expect("our JSON");
    let paths: Vec<&str> = view["files"].as_array().into_iter().flatten().filter_map(|f| f["path"].as_str()).collect();
    for rule in [".claude/rules/style.md", ".claude/rules/py.md", "sub/.claude/rules/r.md"] {
        let listed = paths.iter().filter(|p| p.ends_with(&format!("/r/{rule}"))).count();
        assert_eq!(listed, 1, "{rule} in {paths:?}");
    }
}

/// After front matter, Claude Code drops the white space that follows (blank lines, the first
/// line's indent) from every file it loads; only what a read adds shows it (texts at start are
/// trimmed): rules, a nested `CLAUDE.md`, its imports, and an `AGENTS.md` its hook adds.
#[test]
fn claude_reads_drop_the_blank_lines_after_front_matter_like_claude_code() {
    let Some(modules) = modules() else { return };
    let claude = modules.join(".bin/claude");
    let api = fake_anthropic();
    let t = Tree::new();
    t.write("r/CLAUDE.md", "root\n");
    t.write("r/.claude/rules/py.md", "---\npaths: \"**/*.py\"\n---\n\n# Py rule\n");
    t.write("r/.claude/rules/two.md", "---\npaths: sub/**\n---\n\n\n  # Rule A\n");
    t.write("r/.claude/rules/tight.md", "---\npaths: \"*.py\"\n---\ntight rule\n");
    t.write("r/.claude/rules/bom.md", "\u{feff}---\npaths: \"*.py\"\n---\r\n\r\nbom rule\r\n");
    t.write("r/sub/CLAUDE.md", "---\ntitle: x\n---\n\nsub rules @y.md\n");
    t.write("r/sub/y.md", "---\na: b\n---\n \n\ny body\n");
    t.write("r/sub/.claude/rules/lead.md", "\n\nleading blank kept\n");
    let py = t.write("r/sub/a.py", "x\n");
    let seen = claude_compare(&api, &claude, &t, &t.root(), Some(&py));
    for needle in [
        "py.md:\n\n# Py rule",
        "two.md:\n\n# Rule A",
        "bom.md:\n\nbom rule",
        "y.md:\n\ny body",
        "lead.md:\n\n\n\nleading",
        "tight rule",
    ] {
        assert!(seen.contains(needle), "{needle:?} not in {seen}");
    }
    let t = Tree::new();
    t.write("r/AGENTS.md", "root\n");
    t.write("r/sub/AGENTS.md", "---\ntitle: x\n---\n\nsub agents\n");
    let work = t.write("r/sub/work.txt", "x\n");
    let seen = claude_compare(&api, &claude, &t, &t.root(), Some(&work));
    assert!(seen.contains("additional context: Contents of") && seen.contains("AGENTS.md:\n\nsub agents"), "{seen}");
}

#[test]
fn the_opencode_profile_matches_opencodes_system_prompt() {
    let Some(modules) = modules() else { return };
    let opencode = modules.join(".bin/opencode");
    // opencode talks to the stand-in API through its Anthropic provider.
    let api = fake_anthropic();
    let texts = ["rules\n", "", "  padded  ", "ünïcödé 🎉 rules\n", "two\nlines\n\n"];
    let names = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"];
    let mut rng = Rng(0x0C5_5E7);
    let mut seen = String::new();
    for _ in 0..8 {
        let (t, dirs) = seeded_chain(&mut rng, &names, &texts);
        match rng.below(3) {
            0 => drop(t.write("xdg/config/opencode/AGENTS.md", "opencode global\n")),
            1 => drop(t.write("home/.claude/CLAUDE.md", "claude global\n")),
            _ => {}
        }
        let cwd = dirs[rng.below(dirs.len() as u64) as usize].clone();
        let want = opencode_system_compare(&opencode, &api, &t, &cwd);
        seen.push_str(&want);
    }
    for needle in ["/AGENTS.md\n", "/CLAUDE.md\n", "opencode global", "claude global"] {
        assert!(seen.contains(needle), "no case shows {needle:?}");
    }
}

/// Our Claude Code parts for `cwd` (after a read of `read`) against `claude -p`'s; returns them.
fn claude_compare(api: &FakeApi, claude: &Path, t: &Tree, cwd: &Path, read: Option<&Path>) -> String {
    let want = api.claude_parts(claude, &t.home(), cwd, read);
    let mut args = vec!["--json".to_string()];
    if let Some(r) = read {
        args.extend(["--touch".to_string(), r.to_string_lossy().into_owned()]);
    }
    let view: Value = serde_json::from_str(&ours("claude", &t.home(), cwd, &args, &[])).expect("our JSON");
    let got: Vec<String> =
        view["parts"].as_array().into_iter().flatten().filter_map(|p| p.as_str().map(str::to_string)).collect();
    assert_eq!(got, want, "cwd {}, read {read:?}\n{}", cwd.display(), listing(&t.path("")));
    want.join("\n")
}

/// opencode's instructions in its system prompt (through the stand-in API) against ours.
fn opencode_system_compare(opencode: &Path, api: &FakeApi, t: &Tree, cwd: &Path) -> String {
    let config = json!({
        "model": "anthropic/claude-sonnet-4-5",
        "provider": {"anthropic": {"options": {"baseURL": format!("http://127.0.0.1:{}/v1", api.port), "apiKey": "sk-test"}}}
    });
    t.write("xdg/config/opencode/opencode.json", config.to_string());
    let _ = std::fs::remove_file(&api.log);
    let out = opencode_in(opencode, t, cwd).args(["--pure", "run", "hi"]).output().expect("run opencode");
    assert!(out.status.success(), "opencode failed: {}", String::from_utf8_lossy(&out.stderr));
    let want = api
        .requests("/v1/messages")
        .iter()
        .flat_map(|r| r["system"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["text"].as_str().map(str::to_string))
        .find_map(|t| {
            let from = t.find("Instructions from: ")?;
            let to = t[from..].find("\nSkills provide").map_or(t.len(), |i| from + i);
            Some(t[from..to].to_string())
        })
        .unwrap_or_default();
    let xdg = t.path("xdg/config");
    let view: Value =
        serde_json::from_str(&ours("opencode", &t.home(), cwd, &["--json".into()], &[("XDG_CONFIG_HOME", &xdg)]))
            .expect("our JSON");
    let got = view["parts"][0].as_str().unwrap_or_default().to_string();
    assert_eq!(got, want, "cwd {}\n{}", cwd.display(), listing(&t.path("")));
    want
}

/// opencode's read tool (files attached, reminder) against ours for a read of `file` from `cwd`.
fn opencode_read_compare(opencode: &Path, t: &Tree, cwd: &Path, file: &Path) -> (Vec<String>, String) {
    let (loaded, reminder) = opencode_reads(opencode, t, cwd, file);
    let json =
        ours("opencode", &t.home(), cwd, &["--json".into(), "--touch".into(), file.to_string_lossy().into()], &[]);
    let view: Value = serde_json::from_str(&json).expect("our JSON");
    let nested: Vec<String> = view["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["scope"] == "nested" && f["status"] == "loaded")
        .filter_map(|f| f["path"].as_str().map(str::to_string))
        .collect();
    assert_eq!(nested, loaded, "files attached to a read of {}", file.display());
    let text = view["text"].as_str().unwrap_or_default();
    let ours_reminder = text.find("<system-reminder>").map(|i| &text[i..]).unwrap_or_default();
    assert_eq!(ours_reminder, reminder, "read of {}", file.display());
    (loaded, reminder)
}

/// Issue 14: small trees for the patterns met in real repositories, each compared with the
/// agents it concerns.
#[test]
fn real_world_patterns_match_every_agent() {
    let Some(modules) = modules() else { return };
    let codex = modules.join(".bin/codex").to_string_lossy().into_owned();
    let claude = modules.join(".bin/claude");
    let opencode = modules.join(".bin/opencode");
    let api = fake_anthropic();

    // 1. Nested AGENTS.md, with CLAUDE.md a link to the AGENTS.md beside it, at the root and in
    // a package.
    let t = Tree::new();
    t.write("r/AGENTS.md", "# Root\n\nroot agents rules\n");
    t.write("r/packages/web/AGENTS.md", "web package rules\n");
    let main = t.write("r/packages/web/src/main.ts", "x\n");
    for dir in ["r", "r/packages/web"] {
        std::os::unix::fs::symlink("AGENTS.md", t.path(dir).join("CLAUDE.md")).expect("link");
    }
    let (root, web) = (t.root(), t.path("r/packages/web"));
    for fallbacks in [&[][..], &["CLAUDE.md"][..]] {
        let want = codex_says(&codex, &t.home(), &web, 32_768, fallbacks, false);
        assert!(want.contains("root agents rules") && want.contains("web package rules"), "{want}");
        assert_eq!(ours_codex(&t.home(), &web, 32_768, fallbacks, false), want, "codex in the package, {fallbacks:?}");
    }
    let seen = claude_compare(&api, &claude, &t, &root, Some(&main));
    assert!(seen.contains("root agents rules") && seen.contains("web package rules"), "{seen}");
    claude_compare(&api, &claude, &t, &web, None);
    let both: &[&str] = &["AGENTS.md", "CLAUDE.md"];
    gemini_compare(
        &modules,
        &t,
        &[
            (root.clone(), Some(both), vec![main.clone()]),
            (web.clone(), None, vec![]),
            (web.clone(), Some(both), vec![]),
        ],
    );
    let system = opencode_system_compare(&opencode, &api, &t, &web);
    assert!(system.contains("web package rules"), "{system}");
    let (loaded, _) = opencode_read_compare(&opencode, &t, &root, &main);
    assert!(!loaded.is_empty(), "opencode attaches the package's file to a read");

    // 2. A root CLAUDE.md that is only `@AGENTS.md`, started at the root and in a sub-directory
    // with a CLAUDE.md of its own.
    let t = Tree::new();
    t.write("r/CLAUDE.md", "@AGENTS.md\n");
    t.write("r/AGENTS.md", "shared agents rules\n");
    t.write("r/app/CLAUDE.md", "app rules\n");
    let seen = claude_compare(&api, &claude, &t, &t.root(), None);
    assert!(seen.contains("shared agents rules"), "{seen}");
    // Started below, Claude Code (2.1.332) sends the root CLAUDE.md with `@AGENTS.md` left as
    // text, not expanded: the comparison holds us to that.
    let seen = claude_compare(&api, &claude, &t, &t.path("r/app"), None);
    assert!(seen.contains("/r/CLAUDE.md (project") && seen.contains("app rules"), "{seen}");

    // 3. .claude/rules with and without `paths:`: start, then a read of a matching file.
    let t = Tree::new();
    t.write("r/CLAUDE.md", "root\n");
    t.write("r/.claude/rules/always.md", "always rule\n");
    t.write("r/.claude/rules/ts.md", "---\npaths:\n  - \"src/**/*.ts\"\n---\ntypescript rule\n");
    let file = t.write("r/src/app.ts", "x\n");
    let start = claude_compare(&api, &claude, &t, &t.root(), None);
    assert!(start.contains("always rule") && !start.contains("typescript rule"), "{start}");
    let read = claude_compare(&api, &claude, &t, &t.root(), Some(&file));
    assert!(read.contains("typescript rule"), "{read}");

    // 4. AGENTS.override.md beside AGENTS.md: Codex takes the override.
    let t = Tree::new();
    t.write("r/AGENTS.md", "shared rules\n");
    t.write("r/AGENTS.override.md", "local override\n");
    let want = codex_says(&codex, &t.home(), &t.root(), 32_768, &[], false);
    assert!(want.contains("local override") && !want.contains("shared rules"), "{want}");
    assert_eq!(ours_codex(&t.home(), &t.root(), 32_768, &[], false), want, "AGENTS.override.md");

    // 5. An AGENTS.md past 32 KiB: Codex cuts it, dsh-next and opencode as they do.
    let t = Tree::new();
    let line = "- a rule line that repeats, long enough to fill the file quickly\n";
    let big = line.repeat(34_000 / line.len() + 1);
    assert!(big.len() > 34_000);
    t.write("r/AGENTS.md", &big);
    t.write("r/pkg/AGENTS.md", &big);
    let pkg = t.path("r/pkg");
    let want = codex_says(&codex, &t.home(), &t.root(), 32_768, &[], false);
    assert!(!want.is_empty() && want.len() < big.len() + 200, "codex cuts the file: {} bytes", want.len());
    assert_eq!(ours_codex(&t.home(), &t.root(), 32_768, &[], false), want, "AGENTS.md past 32 KiB");
    let dsh_home = t.home().join(".dsh");
    let theirs = node_texts(
        &modules,
        &[json!({ "kind": "dsh-next", "cwd": pkg, "home": t.home(), "dshHome": dsh_home, "maxBytes": 32_768 })],
    );
    let args = ["--set".to_string(), "baselineMaxBytes=32768".to_string()];
    assert_eq!(ours("dsh-next", &t.home(), &pkg, &args, &[("DSH_HOME", &dsh_home)]), theirs[0], "dsh-next, big");
    opencode_system_compare(&opencode, &api, &t, &t.root());
    opencode_read_compare(&opencode, &t, &t.root(), &t.write("r/pkg/work.txt", "x\n"));

    // 6. Block and inline HTML comments in CLAUDE.md.
    let t = Tree::new();
    t.write(
        "r/CLAUDE.md",
        "<!-- maintainers: generated by a script -->\n# Rules\n\n<!--\na block\nof notes\n-->\n\nuse tabs <!-- not spaces --> always\n",
    );
    let seen = claude_compare(&api, &claude, &t, &t.root(), None);
    assert!(!seen.contains("maintainers") && !seen.contains("of notes") && seen.contains("use tabs"), "{seen}");
}
