//! The project's configuration file, `instructions-lsp.toml`: found as `typos`, `ruff` or
//! `rust-analyzer` find theirs, in the directory asked about or the nearest ancestor, stopping at
//! the project root (the nearest directory holding `.git`); `.instructions-lsp.toml` is accepted
//! too, for repositories that hide tool files. Read, checked (what its keys may hold is in
//! [`super::config_keys`]), merged from a folder up, what its `exclude` leaves out, and a file
//! that cannot be used as a finding. Which agents it names is [`super::targets`]'s business.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::agents::{self, Overrides};
use super::config_keys::{
    ACCEPT_GLOBS_MAX, ACCEPT_MAX, EXCLUDE_MAX, PATTERN_MAX, STARTS_MAX, accept_pattern, is_glob, start_pattern,
};
use super::lint::Code;

/// The names of the project configuration file, in the order they are looked for.
pub const CONFIG_NAMES: &[&str] = &["instructions-lsp.toml", ".instructions-lsp.toml"];

/// The keys of an agent's table (see [`AgentConfig`]).
pub const AGENT_KEYS: &[&str] = &["max-bytes", "file-names", "settings"];

/// The largest configuration file read.
pub const CONFIG_MAX_BYTES: u64 = 256 * 1024;

/// One agent's table in the configuration file.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AgentConfig {
    /// The agent's byte budget (Codex's `project_doc_max_bytes`, dsh-agent-instructions'
    /// `maxBytes`).
    pub max_bytes: Option<u64>,
    /// The agent's file names (Codex: its fallback names; Gemini CLI: `context.fileName`;
    /// dsh-agent-instructions: `instructionFileCandidates`).
    pub file_names: Option<Vec<String>>,
    /// Editor settings (Copilot: VS Code's `chat.*` switches, see
    /// [`agents::COPILOT_SETTINGS`]), winning over the workspace's `.vscode/settings.json`.
    pub settings: Option<BTreeMap<String, serde_json::Value>>,
}

/// Every key but `agents`, `starts` and `accept` is an agent's table (checked after parsing).
#[derive(Debug, Deserialize)]
struct RawConfig {
    agents: Option<Vec<String>>,
    starts: Option<Vec<String>>,
    accept: Option<BTreeMap<String, Vec<String>>>,
    exclude: Option<Vec<String>>,
    #[serde(flatten)]
    tables: BTreeMap<String, toml::Value>,
}

/// A parsed `instructions-lsp.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectConfig {
    pub path: PathBuf,
    /// The agents named by `agents = [...]`, in the order given; `None` when the key is absent
    /// (the agents are then detected, with the tables' settings applied).
    pub agents: Option<Vec<String>>,
    pub settings: BTreeMap<String, AgentConfig>,
    /// `starts = ["services/*", "tools/cli"]`: folders where agents are started, as globs
    /// relative to the file's directory (checked: relative, no `..`, valid globs).
    pub starts: Vec<String>,
    /// `[accept]` `"docs/old/CLAUDE.md" = ["shadowed"]`: findings accepted for the files a
    /// pattern (relative to the file's directory) names, by code (checked: known codes, valid
    /// globs).
    pub accept: BTreeMap<String, Vec<String>>,
    /// `exclude = ["vendor/", "tests/fixtures/**"]`: folders and files left out of detection, of
    /// the places agents start and of the check, as `.gitignore` lines relative to the file's
    /// directory.
    pub exclude: Vec<String>,
}

impl ProjectConfig {
    /// The overrides the configuration gives one agent.
    pub fn overrides(&self, agent: &str) -> Overrides {
        let c = self.settings.get(agent).cloned().unwrap_or_default();
        let editor = c.settings.iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect();
        Overrides { max_bytes: c.max_bytes, candidates: c.file_names, editor }
    }
}

/// The nearest configuration file from `dir` upwards, stopping at the project root (the nearest
/// directory holding `.git`, included); `None` when there is none on the way.
pub fn find_config(dir: &Path) -> Option<PathBuf> {
    for d in dir.ancestors() {
        if let Some(p) = config_in(d) {
            return Some(p);
        }
        if super::confine::holds_git(d) {
            return None;
        }
    }
    None
}

/// The configuration file of `dir` itself, by the first of [`CONFIG_NAMES`] it holds.
pub fn config_in(dir: &Path) -> Option<PathBuf> {
    CONFIG_NAMES.iter().map(|n| dir.join(n)).find(|p| p.is_file())
}

/// Reads and checks a configuration file; the error says what was wrong, and where.
pub fn load_config(path: &Path) -> Result<ProjectConfig, String> {
    parse_config(path, &read_config(path)?)
}

/// The text of the configuration file at `path`, as every reader takes it: at most
/// [`CONFIG_MAX_BYTES`] of UTF-8, never through a link out of the project (its text, which a
/// parse error would quote, is never read). The error says what was wrong.
pub fn read_config(path: &Path) -> Result<String, String> {
    let shown = path.display();
    if let Some(real) = super::confine::leaves_project(path) {
        return Err(format!("{shown} is a link to {}, outside the project: not read", real.display()));
    }
    let (data, size) =
        agents::read_capped(path, CONFIG_MAX_BYTES + 1).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if size > CONFIG_MAX_BYTES {
        return Err(format!("{shown} is {size} bytes; a configuration file is at most {CONFIG_MAX_BYTES}"));
    }
    String::from_utf8(data).map_err(|_| format!("{shown} is not UTF-8"))
}

/// Checks `text` as the configuration file at `path`; the error says what was wrong, and where.
pub fn parse_config(path: &Path, text: &str) -> Result<ProjectConfig, String> {
    let shown = path.display();
    let raw: RawConfig = toml::from_str(text).map_err(|e| format!("{shown}: {}", e.to_string().trim_end()))?;
    let known = |n: &str| agents::NAMES.contains(&n);
    let expected = agents::NAMES.join(", ");
    let meant = |word: &str, among: &[&'static str]| {
        crate::chain::words::closest(word, among.iter().copied())
            .map_or(String::new(), |m| format!("; did you mean `{m}`?"))
    };
    if let Some(list) = &raw.agents
        && let Some(bad) = list.iter().find(|n| !known(n))
    {
        return Err(format!(
            "{shown}: `agents` names `{bad}`, which is not an agent; expected some of {expected}{}",
            meant(bad, agents::NAMES)
        ));
    }
    let starts = raw.starts.as_deref().unwrap_or_default();
    if starts.len() > STARTS_MAX {
        return Err(format!("{shown}: `starts` holds {} patterns; at most {STARTS_MAX}", starts.len()));
    }
    for pattern in starts {
        start_pattern(pattern).map_err(|why| format!("{shown}: `starts` holds `{pattern}`, {why}"))?;
    }
    let accept = raw.accept.unwrap_or_default();
    if accept.len() > ACCEPT_MAX {
        return Err(format!("{shown}: [accept] names {} patterns; at most {ACCEPT_MAX}", accept.len()));
    }
    let codes: Vec<&'static str> = Code::ALL.iter().filter(|c| **c != Code::BadConfig).map(|c| c.name()).collect();
    let globs = accept.keys().filter(|p| is_glob(p)).count();
    if globs > ACCEPT_GLOBS_MAX {
        return Err(format!(
            "{shown}: [accept] names {globs} patterns with wildcards; at most {ACCEPT_GLOBS_MAX} (name files by their paths)"
        ));
    }
    for (pattern, list) in &accept {
        accept_pattern(pattern).map_err(|why| format!("{shown}: [accept] `{pattern}` {why}"))?;
        if list.iter().any(|c| c == Code::BadConfig.name()) {
            return Err(format!(
                "{shown}: [accept]: `badConfig` (for `{pattern}`) cannot be accepted: a configuration that cannot be used is always said"
            ));
        }
        if let Some(bad) = list.iter().find(|c| !codes.contains(&c.as_str())) {
            return Err(format!(
                "{shown}: [accept]: `{bad}` (for `{pattern}`) is no finding's code{}",
                meant(bad, &codes)
            ));
        }
    }
    let exclude = raw.exclude.unwrap_or_default();
    if exclude.len() > EXCLUDE_MAX {
        return Err(format!("{shown}: `exclude` holds {} patterns; at most {EXCLUDE_MAX}", exclude.len()));
    }
    for pattern in &exclude {
        if pattern.len() > PATTERN_MAX {
            return Err(format!(
                "{shown}: `exclude` holds a pattern of {} bytes; a pattern is at most {PATTERN_MAX}",
                pattern.len()
            ));
        }
        let mut one = ignore::gitignore::GitignoreBuilder::new(path.parent().unwrap_or(Path::new("/")));
        let bad = pattern.contains('\n') || pattern.starts_with("../") || pattern.contains("/../");
        if bad || one.add_line(None, pattern).is_err() {
            return Err(format!(
                "{shown}: `exclude` holds `{pattern}`, which is no `.gitignore` line below the file's folder"
            ));
        }
    }
    // The patterns with wildcards as the one set they are matched with: one that `globset` cannot
    // build together would otherwise leave the whole table unused.
    let mut set = globset::GlobSetBuilder::new();
    for pattern in accept.keys().filter(|p| is_glob(p)) {
        set.add(accept_pattern(pattern)?);
    }
    set.build().map_err(|e| format!("{shown}: [accept]: its patterns cannot be matched together: {e}"))?;
    let mut settings = BTreeMap::new();
    for (name, value) in raw.tables {
        if !known(&name) {
            return Err(format!(
                "{shown}: unknown key `{name}`; expected `agents = [...]`, `starts = [...]`, `exclude = [...]`, `[accept]` and tables named after agents ({expected}){}",
                meant(&name, &[agents::NAMES, &["agents", "starts", "exclude", "accept"]].concat())
            ));
        }
        let table: AgentConfig = value.try_into().map_err(|e: toml::de::Error| {
            let said = e.to_string();
            // serde's "unknown field `max-byte`, expected one of …": the key meant.
            let hint = said
                .split_once("unknown field `")
                .and_then(|(_, rest)| rest.split_once('`'))
                .map_or(String::new(), |(key, _)| meant(key, AGENT_KEYS));
            format!("{shown}: [{name}]: {}{hint}", said.trim_end())
        })?;
        if let Some(bad) = table.file_names.iter().flatten().find(|n| !is_file_name(n)) {
            return Err(format!(
                "{shown}: [{name}] file-names: `{bad}` is not a file name (no `/`, `\\`, `.` or `..`)"
            ));
        }
        if let Some(keys) = &table.settings {
            let known = |k: &str| name == "copilot" && agents::COPILOT_SETTINGS.contains(&k);
            if let Some(bad) = keys.keys().find(|k| !known(k)) {
                return Err(format!(
                    "{shown}: [{name}] settings: `{bad}` is not a setting this profile reads (copilot reads {}){}",
                    agents::COPILOT_SETTINGS.join(", "),
                    if name == "copilot" { meant(bad, agents::COPILOT_SETTINGS) } else { String::new() }
                ));
            }
        }
        settings.insert(name, table);
    }
    Ok(ProjectConfig {
        path: path.to_path_buf(),
        agents: raw.agents,
        settings,
        starts: raw.starts.unwrap_or_default(),
        accept,
        exclude,
    })
}

/// The configuration that decides for `dir`: every configuration file from `dir` up to the
/// project root, merged nearest first: the agents of the nearest file that names them, and for
/// each agent the table of the nearest file that has one. So a package's file that only gives
/// Codex a budget keeps the agents the repository names, wherever the package is checked from.
/// `None` without any file; an error names the file that cannot be used.
pub fn resolved_config(dir: &Path) -> Result<Option<ProjectConfig>, String> {
    let mut merged: Option<ProjectConfig> = None;
    for path in config_files(dir) {
        let config = load_config(&path)?;
        match merged.as_mut() {
            None => merged = Some(config),
            Some(m) => {
                if m.agents.is_none() && config.agents.is_some() {
                    m.agents = config.agents;
                    // Where the agents are named is what `check` says they come from.
                    m.path = config.path.clone();
                }
                for (agent, table) in config.settings {
                    m.settings.entry(agent).or_insert(table);
                }
            }
        }
    }
    Ok(merged)
}

/// The configuration files that decide for `dir`, nearest first: from `dir` up to the project
/// root (the folder holding `.git`), one per folder that has one.
pub fn config_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut here = Some(dir.to_path_buf());
    while let Some(d) = here.take() {
        let Some(path) = find_config(&d) else { break };
        // On upwards, past this file's directory, unless it is the project root.
        let holder = path.parent().unwrap_or(&d);
        if !super::confine::holds_git(holder) {
            here = holder.parent().map(Path::to_path_buf);
        }
        out.push(path);
    }
    out
}

/// A plain file name: what a repository may name as an instruction file, never a path that
/// leads elsewhere.
fn is_file_name(n: &str) -> bool {
    !matches!(n, "" | "." | "..") && !n.contains(['/', '\\'])
}

/// What happens when the configuration file cannot be used, for its messages.
pub const DETECTED_INSTEAD: &str = "the agents are detected from the files instead";

/// A configuration that cannot be used, as a finding on its file for the editor: `problem` is
/// what [`load_config`] or [`Targets::resolve`] said (`<path>: <what>`). Placed where the
/// problem is: the line and column a parse error names, else the first `` `word` `` of the
/// message written in the file (an agent's name, a key), else the first line. `None` when the
/// problem names no configuration file.
pub fn config_finding(problem: &str, consequence: &str) -> Option<crate::chain::lint::Finding> {
    use crate::chain::lint::{Code, Finding, Span};
    let (path, what) = CONFIG_NAMES.iter().find_map(|name| {
        let at = problem.find(&format!("{name}: "))?;
        Some((PathBuf::from(&problem[..at + name.len()]), &problem[at + name.len() + 2..]))
    })?;
    let text = super::source::read_prefix(&path, CONFIG_MAX_BYTES);
    let line_start = |line: usize| -> Option<usize> {
        let mut at = 0;
        for _ in 1..line {
            at += memchr::memchr(b'\n', &text[at..])? + 1;
        }
        Some(at)
    };
    // "TOML parse error at line 1, column 10"
    let parsed = what.split_once("at line ").and_then(|(_, rest)| {
        let (line, rest) = rest.split_once(", column ")?;
        let column: usize = rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
        let start = line_start(line.trim().parse().ok()?)? + column.saturating_sub(1);
        let end = start + memchr::memchr(b'\n', text.get(start..)?).unwrap_or(text.len() - start);
        (start <= text.len()).then_some(Span::Bytes { start, end: end.max(start + 1).min(text.len()) })
    });
    // A value the message names (`claud` of `agents = ["claud"]`), else a key (`bogus`).
    let quoted = || {
        // (Not the name a "did you mean" offers: that one may well be in the file.)
        let said = what.split_once("; did you mean `").map_or(what, |(said, _)| said);
        let words: Vec<&str> = said.split('`').skip(1).step_by(2).filter(|w| !w.is_empty()).collect();
        let value = words.iter().find_map(|w| {
            let start = memchr::memmem::find(&text, format!("\"{w}\"").as_bytes())? + 1;
            Some(Span::Bytes { start, end: start + w.len() })
        });
        value.or_else(|| {
            words.iter().find_map(|w| {
                // A whole word: `claud` is not the start of `claude`.
                let word = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
                let start = memchr::memmem::find_iter(&text, w.as_bytes())
                    .find(|&at| (at == 0 || !word(text[at - 1])) && text.get(at + w.len()).is_none_or(|c| !word(*c)))?;
                Some(Span::Bytes { start, end: start + w.len() })
            })
        })
    };
    let first_line = what.lines().next().unwrap_or(what);
    let span = parsed.or_else(quoted).unwrap_or(Span::FirstLine);
    // "…; did you mean `claude`?": the word at the span becomes the one meant.
    let meant = first_line.rsplit_once("did you mean `").and_then(|(_, rest)| rest.split_once('`')).map(|(m, _)| m);
    let fix = match (span, meant) {
        // Only over a word that misspells the one meant (the file may have changed since).
        (Span::Bytes { start, end }, Some(m))
            if text
                .get(start..end)
                .and_then(|w| std::str::from_utf8(w).ok())
                .is_some_and(|w| crate::chain::words::closest(w, [m]).is_some()) =>
        {
            Some(crate::chain::lint::Fix::replace(format!("Write `{m}`"), start, end, m.to_string()))
        }
        _ => None,
    };
    Some(Finding {
        path,
        code: Code::BadConfig,
        span,
        message: format!("this configuration cannot be used: {}; {consequence}", first_line.trim_end_matches(':')),
        related: None,
        agent: None,
        fix,
    })
}

/// What the `exclude` patterns of the configuration files from a folder up to the project root
/// leave out, each file's patterns from its own folder.
#[derive(Default)]
pub struct Exclusions(Vec<ignore::gitignore::Gitignore>);

impl Exclusions {
    /// Those that decide for the folder `dir` (nothing when a file cannot be used: whoever checks
    /// it says why).
    pub fn of(dir: &Path) -> Self {
        let mut out = Exclusions(Vec::new());
        for path in config_files(dir) {
            out.add_file(&path);
        }
        out
    }

    /// Adds what the configuration file at `path` leaves out, below its folder: a file found
    /// below the folder [`Exclusions::of`] was asked for (nothing when it cannot be used).
    pub fn add_file(&mut self, path: &Path) {
        let Some(holder) = path.parent() else { return };
        if let Ok(c) = load_config(path) {
            self.add_lines(holder, &c.exclude);
        }
    }

    /// What one configuration file's `exclude` `lines` leave out below its folder, `holder`.
    pub fn of_lines(holder: &Path, lines: &[String]) -> Self {
        let mut out = Exclusions::default();
        out.add_lines(holder, lines);
        out
    }

    fn add_lines(&mut self, holder: &Path, lines: &[String]) {
        if lines.is_empty() {
            return;
        }
        let mut b = ignore::gitignore::GitignoreBuilder::new(holder);
        for line in lines {
            let _ = b.add_line(None, line);
        }
        self.0.extend(b.build().ok());
    }

    /// [`Exclusions::of`] `root`, with the `exclude` of `configs` (configuration files found below
    /// it, by the folder holding each) too: each file's own folder decides, unless a file nearer
    /// the root leaves that folder out.
    pub fn with_nested<'a>(root: &Path, configs: impl IntoIterator<Item = (&'a Path, &'a Path)>) -> Self {
        let mut out = Self::of(root);
        let mut configs: Vec<(&Path, &Path)> = configs.into_iter().filter(|(d, _)| *d != root).collect();
        // Shallower folders first: a file in a folder left out has no say.
        configs.sort_by_key(|(d, _)| d.components().count());
        for (dir, file) in configs {
            if dir.starts_with(root) && !out.excludes(dir, true) {
                out.add_file(file);
            }
        }
        out
    }

    /// Whether `path` (a directory when `dir`), or a folder above it, is left out.
    pub fn excludes(&self, path: &Path, dir: bool) -> bool {
        self.0.iter().any(|g| path.starts_with(g.path()) && g.matched_path_or_any_parents(path, dir).is_ignore())
    }

    /// [`Exclusions::excludes`] of `path` as what it is on disk: a name found by a walk may be a
    /// folder's (`.claude`), which a folder-only pattern (`.claude/`) matches as one.
    pub fn excludes_as_found(&self, path: &Path) -> bool {
        self.excludes(path, std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::config_keys::config_schema;
    use crate::chain::targets::Targets;

    #[test]
    fn the_nearest_config_wins_and_the_search_stops_at_the_project_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).expect("git");
        std::fs::create_dir_all(root.join("crates/x/src")).expect("dirs");
        std::fs::write(dir.path().join("instructions-lsp.toml"), "agents = [\"gemini\"]").expect("outside");
        assert_eq!(find_config(&root.join("crates/x/src")), None, "the search stops at the project root");
        std::fs::write(root.join(".instructions-lsp.toml"), "agents = [\"codex\"]").expect("root");
        std::fs::write(root.join("crates/instructions-lsp.toml"), "agents = [\"claude\"]").expect("crates");
        assert_eq!(find_config(&root.join("crates/x/src")), Some(root.join("crates/instructions-lsp.toml")));
        assert_eq!(find_config(&root), Some(root.join(".instructions-lsp.toml")));
        let t = Targets::resolve(&root.join("crates/x"), ["AGENTS.md"]).expect("targets");
        assert_eq!(t.agents, ["claude"]);
        assert_eq!(t.describe("check"), "checking for Claude Code: named in crates/instructions-lsp.toml");
    }

    #[test]
    fn a_config_gives_agents_their_settings_and_bad_ones_say_what_and_where() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("instructions-lsp.toml");
        std::fs::write(
            &p,
            "agents = [\"codex\", \"gemini\"]\n\n[codex]\nmax-bytes = 4096\nfile-names = [\"CLAUDE.md\"]\n",
        )
        .expect("write");
        let c = load_config(&p).expect("config");
        assert_eq!(c.agents.as_deref(), Some(&["codex".to_string(), "gemini".to_string()][..]));
        assert_eq!(c.overrides("codex").max_bytes, Some(4096));
        assert_eq!(c.overrides("codex").candidates, Some(vec!["CLAUDE.md".to_string()]));
        assert_eq!(c.overrides("gemini").max_bytes, None);
        let bad = |text: &str| {
            std::fs::write(&p, text).expect("write");
            load_config(&p).expect_err("a bad config")
        };
        assert!(bad("agents = [\"copilot-x\"]").contains("`agents` names `copilot-x`, which is not an agent"));
        assert!(bad("[claud]\nmax-bytes = 1").contains("unknown key `claud`"));
        assert!(bad("[codex]\nmax_bytes = 1").contains("[codex]"));
        assert!(bad("[gemini]\nfile-names = [\"../../.ssh/id_rsa\"]").contains("is not a file name"));
        assert!(bad("agents = [").contains("line 1"));
    }

    /// A misspelt agent, table or key is said with the name meant, placed at the word as
    /// written (a whole word: `claud` is not the start of `claude`), with a fix that writes it.
    #[test]
    fn a_misspelt_name_in_the_configuration_is_placed_and_fixed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("instructions-lsp.toml");
        for (text, word, meant) in [
            ("agents = [\"codex\", \"claud\"]\n", "claud", "claude"),
            ("agents = [\"claude\"]\n[claud]\nmax-bytes = 1\n", "claud", "claude"),
            ("agents = [\"codex\"]\n[codex]\nmax-byte = 1\n", "max-byte", "max-bytes"),
            ("[accept]\n\"docs/a.md\" = [\"shadow\"]\n", "shadow", "shadowed"),
        ] {
            std::fs::write(&path, text).expect("write");
            let problem = load_config(&path).expect_err(text);
            assert!(problem.ends_with(&format!("; did you mean `{meant}`?")), "{problem}");
            let f = config_finding(&problem, DETECTED_INSTEAD).expect("finding");
            let crate::chain::lint::Span::Bytes { start, end } = f.span else { panic!("{:?}", f.span) };
            assert_eq!(&text[start..end], word, "{text}");
            let fix = f.fix.expect("fix");
            assert_eq!(fix.title, format!("Write `{meant}`"));
            assert_eq!(fix.change, crate::chain::lint::Change::Replace { start, end, text: meant.to_string() });
        }
    }

    /// `[accept]` names files below the configuration's folder and codes findings have.
    #[test]
    fn accepted_findings_name_known_codes_and_files_below() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("instructions-lsp.toml");
        let c =
            parse_config(&path, "[accept]\n\"docs/**/CLAUDE.md\" = [\"shadowed\", \"agentCut\"]\n").expect("config");
        assert_eq!(c.accept.get("docs/**/CLAUDE.md"), Some(&vec!["shadowed".to_string(), "agentCut".to_string()]));
        // Files named by their paths cost nothing to match: a thousand of them are fine.
        let paths: String = (0..1000).map(|i| format!("\"d{i}/CLAUDE.md\" = [\"shadowed\"]\n")).collect();
        assert!(parse_config(&path, &format!("[accept]\n{paths}")).is_ok());
        let many_globs: String =
            format!("[accept]\n{}", (0..101).map(|i| format!("\"d{i}/*.md\" = [\"shadowed\"]\n")).collect::<String>());
        let long = format!("[accept]\n\"{}\" = [\"shadowed\"]\n", "a".repeat(1025));
        for (text, said) in [
            ("[accept]\n\"../x.md\" = [\"shadowed\"]\n", "[accept] `../x.md` leaves the configuration's folder"),
            ("[accept]\n\"/etc/x\" = [\"shadowed\"]\n", "[accept] `/etc/x` is not a file below"),
            ("[accept]\n\"a.md\" = [\"nope\"]\n", "[accept]: `nope` (for `a.md`) is no finding's code"),
            ("[accept]\n\"a.md\" = \"shadowed\"\n", "invalid type"),
            ("[accept]\n\"a.md\" = [\"badConfig\"]\n", "`badConfig` (for `a.md`) cannot be accepted"),
            (&many_globs, "[accept] names 101 patterns with wildcards; at most 100"),
            (&long, "is 1025 bytes long; a pattern is at most 1024"),
        ] {
            let e = parse_config(&path, text).expect_err(text);
            assert!(e.contains(said), "{e}");
        }
    }

    /// The published schema is the one made from the names the configuration is checked against.
    #[test]
    fn the_published_schema_says_what_the_configuration_may_hold() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/instructions-lsp.schema.json");
        let published: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("schema")).expect("json");
        let made = config_schema();
        assert_eq!(published, made, "regenerate it: {}", serde_json::to_string_pretty(&made).unwrap_or_default());
        let agent_keys: Vec<&str> = made["properties"]["copilot"]["properties"]
            .as_object()
            .expect("table")
            .keys()
            .map(String::as_str)
            .collect();
        let mut expected = AGENT_KEYS.to_vec();
        expected.sort();
        assert_eq!(agent_keys, expected);
    }
}
