//! The agents a repository is written for: named in a checked-in `instructions-lsp.toml`, else
//! detected from the instruction files it holds. `check`, `compare`, the editor's diagnostics
//! and hovers follow them unless a flag or a setting names profiles explicitly.
//!
//! The file is found as `typos`, `ruff` or `rust-analyzer` find theirs: in the directory asked
//! about or the nearest ancestor, stopping at the project root (the nearest directory holding
//! `.git`). `.instructions-lsp.toml` is accepted too, for repositories that hide tool files.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::agents::{self, Overrides};
use super::config::{CONFIG_NAMES, Exclusions, ProjectConfig, resolved_config};

/// The agents whose files these are (in the order of [`agents::NAMES`]), with the files that gave
/// each away. `paths` are file or directory paths found in the repository, relative to its root
/// with `/` (or bare names); of each kind of evidence the shallowest is said, by its path.
pub fn detect<'a>(paths: impl IntoIterator<Item = &'a str>) -> (Vec<&'static str>, Vec<String>) {
    let mut agents_found: Vec<&'static str> = Vec::new();
    // Per kind of evidence, the shallowest path that shows it.
    let mut evidence: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for path in paths {
        let name = path.rsplit('/').next().unwrap_or(path);
        let Some((agents, kind)) = agents_of(name) else { continue };
        // A plain file by its path; a folder of them (`.github/instructions/`) by the folder's.
        let shown = match kind.strip_suffix('/') {
            Some(folder) if name == folder => format!("{path}/"),
            Some(_) => match path.rfind(kind.as_str()) {
                Some(at) => path[..at + kind.len()].to_string(),
                None => kind.clone(),
            },
            None if kind.contains('/') && !path.contains('/') => kind.clone(),
            None => path.to_string(),
        };
        let depth = shown.trim_end_matches('/').matches('/').count();
        let e = evidence.entry(kind).or_insert_with(|| (depth, shown.clone()));
        if (depth, &shown) < (e.0, &e.1) {
            *e = (depth, shown);
        }
        for a in agents {
            if !agents_found.contains(a) {
                agents_found.push(a);
            }
        }
    }
    agents_found.sort_by_key(|a| agents::NAMES.iter().position(|n| n == a));
    let mut evidence: Vec<String> = evidence.into_values().map(|(_, shown)| shown).collect();
    evidence.sort();
    (agents_found, evidence)
}

/// The agents whose file `name` is, and how the evidence is shown; `None` for a name no agent
/// reads. Copilot's instructions files and Cursor's rules go by their endings, since their
/// folders (`instructions`, `rules`) have common names.
fn agents_of(name: &str) -> Option<(&'static [&'static str], String)> {
    let found: (&'static [&'static str], &str) = match name {
        "AGENTS.md" | "AGENTS.override.md" => (&["codex", "opencode"], name),
        "CLAUDE.md" | "CLAUDE.local.md" => (&["claude"], name),
        ".claude" => (&["claude"], ".claude/"),
        "GEMINI.md" => (&["gemini"], name),
        "copilot-instructions.md" => (&["copilot"], ".github/copilot-instructions.md"),
        n if n.ends_with(".instructions.md") => (&["copilot"], ".github/instructions/"),
        ".cursorrules" => (&["cursor"], name),
        n if n.ends_with(".mdc") => (&["cursor"], ".cursor/rules/"),
        _ => return None,
    };
    Some((found.0, found.1.to_string()))
}

/// The most entries [`names_below`] looks at.
pub const WALK_ENTRIES: usize = 20_000;

/// The names of the instruction files (and `.claude` folders) below `root`, honouring
/// `.gitignore`, looking at [`WALK_ENTRIES`] entries at most: what [`detect`] reads in a
/// repository. Shallow entries come first: the root's own files always count, however many
/// files the folders beside them hold.
pub fn names_below(root: &Path) -> std::collections::BTreeSet<String> {
    names_within(root, WALK_ENTRIES)
}

/// The first two passes of [`names_below`] only: the root's entries and the next level's, which
/// name the agents of most repositories at a fraction of a whole walk's cost (the language
/// server starts with them and walks the rest in the background).
pub fn names_near(root: &Path) -> std::collections::BTreeSet<String> {
    names_passes(root, WALK_ENTRIES, &[Some(1), Some(2)])
}

/// [`names_below`] looking at `limit` entries at most in each of three passes: the root's own
/// entries, then two levels, then the whole tree depth first. A folder of many thousand files
/// listed before the root's own files cannot hide them (nor the next level's, while it fits in
/// `limit`), and the work stays within three times `limit` (in practice the last pass: the
/// first two see few entries).
fn names_within(root: &Path, limit: usize) -> std::collections::BTreeSet<String> {
    names_passes(root, limit, &[Some(1), Some(2), None])
}

/// The names of the entries of one walk per depth of `depths` (`None`: the whole tree).
fn names_passes(root: &Path, limit: usize, depths: &[Option<usize>]) -> std::collections::BTreeSet<String> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut configs: std::collections::BTreeMap<PathBuf, PathBuf> = std::collections::BTreeMap::new();
    let excluded = std::sync::Arc::new(Exclusions::of(root));
    // The root's rule folders first (`.cursor/rules`, `.github/instructions`), whatever the
    // order of the walks below and however far they get: their files lie a level deeper than the
    // passes that fit in `limit` on a large tree. A walk from the root that enters only them, so
    // that links, `.gitignore` and `exclude` count as in every walk.
    let rule_folders = |depth: usize, name: &std::ffi::OsStr| match depth {
        1 => name == ".cursor" || name == ".github",
        2 => name == "rules" || name == "instructions",
        _ => true,
    };
    // Each pass: how deep it goes, and whether it enters only the rule folders.
    let passes = std::iter::once((Some(3), true)).chain(depths.iter().map(|&d| (d, false)));
    for (depth, only_rules) in passes {
        let excluded = excluded.clone();
        let mut walker = super::confine::walker(root, move |e| {
            let dir = e.file_type().is_some_and(|t| t.is_dir());
            e.file_name() != ".git"
                && e.file_name() != "node_modules"
                && (e.depth() == 0 || !excluded.excludes(e.path(), dir))
                && (!dir || !only_rules || rule_folders(e.depth(), e.file_name()))
        });
        walker.max_depth(depth);
        for entry in super::confine::entries(&mut walker, limit) {
            let Some(name) = entry.file_name().to_str() else { continue };
            if CONFIG_NAMES.contains(&name)
                && let Some(dir) = entry.path().parent()
            {
                configs.entry(dir.to_path_buf()).or_insert_with(|| entry.path().to_path_buf());
            }
            if !detect([name]).0.is_empty() && counts(root, entry.path(), name) {
                found.push(entry.into_path());
            }
        }
    }
    // A configuration file below the root leaves out folders below it too.
    let nested = Exclusions::with_nested(root, configs.iter().map(|(d, f)| (d.as_path(), f.as_path())));
    found
        .into_iter()
        .filter(|p| !nested.excludes_as_found(p))
        .filter_map(|p| p.strip_prefix(root).ok().map(crate::paths::slash_join))
        .collect()
}

/// Whether a file `name` at `path` below `root` shows what agents a repository is written for:
/// an `AGENTS.md`, `CLAUDE.md` or `GEMINI.md` inside an agent's configuration folder (a skill's
/// `.agents/x/AGENTS.md`, say) is a document of that folder, not one an agent loads as the
/// repository's instructions. Copilot's and Cursor's files live in such folders and count.
pub fn counts(root: &Path, path: &Path, name: &str) -> bool {
    const PLAIN: &[&str] = &["AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "CLAUDE.local.md", "GEMINI.md"];
    if !PLAIN.contains(&name) {
        return true;
    }
    let Some(dir) = path.parent() else { return true };
    !dir.strip_prefix(root).is_ok_and(|rel| {
        rel.components().any(|c| c.as_os_str().to_str().is_some_and(|n| agents::CONFIG_FOLDERS.contains(&n)))
    })
}

/// Where the selected agents come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Named by a configuration file.
    Config(PathBuf),
    /// Detected from these instruction file names.
    Detected(Vec<String>),
    /// Named by a flag or a setting (the text says which).
    Explicit(String),
}

/// The agents to check for, with their settings and where they come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Targets {
    pub agents: Vec<String>,
    pub config: Option<ProjectConfig>,
    pub source: Source,
}

impl Targets {
    /// The configuration of `dir` (see [`find_config`]) or, without one, the agents whose files
    /// `names` holds. A configuration that cannot be used is an error.
    pub fn resolve<'a>(dir: &Path, names: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let config = resolved_config(dir)?;
        let (detected, evidence) = detect(names);
        Ok(match config {
            Some(c) if c.agents.is_some() => {
                let agents = c.agents.clone().unwrap_or_default();
                Self { agents, source: Source::Config(c.path.clone()), config: Some(c) }
            }
            config => Self {
                agents: detected.iter().map(|s| s.to_string()).collect(),
                source: Source::Detected(evidence),
                config,
            },
        })
    }

    /// The overrides the configuration gives `agent` (none without a configuration).
    pub fn overrides(&self, agent: &str) -> Overrides {
        self.config.as_ref().map(|c| c.overrides(agent)).unwrap_or_default()
    }

    /// One line for every output: which agents, and why ("checking for Claude Code, Codex:
    /// detected from AGENTS.md, CLAUDE.md; set them in instructions-lsp.toml"). `verb` is the
    /// command's ("check", "compare", "show").
    pub fn describe(&self, verb: &str) -> String {
        let names: Vec<&str> = self.agents.iter().map(|a| agents::display_name(a)).collect();
        let mut out = String::new();
        if names.is_empty() {
            let _ = write!(out, "no agent to {verb} for: no instruction file of an agent was found");
        } else {
            let _ = write!(out, "{}ing for {}", verb.strip_suffix('e').unwrap_or(verb), names.join(", "));
        }
        match &self.source {
            Source::Config(path) => {
                // Named from its project root, as every view names files.
                let root = path.ancestors().skip(1).find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok());
                let shown = root.and_then(|r| path.strip_prefix(r).ok()).unwrap_or(path);
                let _ = write!(out, ": named in {}", shown.display());
            }
            Source::Detected(evidence) => {
                if !evidence.is_empty() {
                    let _ = write!(out, ": detected from {}", evidence.join(", "));
                }
                let _ = write!(out, "; set them in {}", CONFIG_NAMES[0]);
            }
            Source::Explicit(how) => {
                let _ = write!(out, " ({how})");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shallow_names_win_when_the_walk_runs_out_of_entries() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for folder in ["a", "b", "c"] {
            std::fs::create_dir_all(root.join(folder).join("deep")).expect("dirs");
            for i in 0..20 {
                std::fs::write(root.join(folder).join(format!("f{i}")), "").expect("file");
                std::fs::write(root.join(folder).join("deep").join(format!("f{i}")), "").expect("file");
            }
        }
        std::fs::write(root.join("AGENTS.md"), "").expect("agents");
        std::fs::write(root.join("b/CLAUDE.md"), "").expect("claude");
        std::fs::write(root.join("c/deep/GEMINI.md"), "").expect("gemini");
        // 4 entries at the root, 64 one level down, 61 below: a walk of 100 entries sees the
        // first two levels whole, whatever order the directories list their entries in; a walk
        // of 10 still sees the root's.
        let names = names_within(root, 100);
        // By their paths from the root, which detection names.
        assert!(names.contains("AGENTS.md") && names.contains("b/CLAUDE.md"), "{names:?}");
        assert!(names_within(root, 10).contains("AGENTS.md"));
        assert!(names_within(root, 1000).contains("c/deep/GEMINI.md"));
        // The root's rule folders of Cursor and Copilot, a level below what a short walk sees
        // whole, are found however the walk runs out (a large tree's server missed Cursor).
        std::fs::create_dir_all(root.join(".cursor/rules")).expect("dirs");
        std::fs::create_dir_all(root.join(".github/instructions")).expect("dirs");
        std::fs::write(root.join(".cursor/rules/ts.mdc"), "").expect("rule");
        std::fs::write(root.join(".github/instructions/ts.instructions.md"), "").expect("rule");
        let names = names_within(root, 10);
        assert!(
            names.contains(".cursor/rules/ts.mdc") && names.contains(".github/instructions/ts.instructions.md"),
            "{names:?}"
        );
        assert_eq!(detect(names.iter().map(String::as_str)).0, ["codex", "opencode", "copilot", "cursor"]);
        // That walk keeps the rule every walk keeps: a `.cursor` linked out of the project is
        // not followed, and a folder `.gitignore` leaves out is not listed.
        let outside = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(outside.path().join("rules")).expect("dirs");
        std::fs::write(outside.path().join("rules/x.mdc"), "").expect("rule");
        std::fs::remove_dir_all(root.join(".cursor")).expect("rm");
        std::os::unix::fs::symlink(outside.path(), root.join(".cursor")).expect("link");
        std::fs::create_dir_all(root.join(".git")).expect("git");
        std::fs::write(root.join(".gitignore"), ".github/\n").expect("ignore");
        let names = names_within(root, 10);
        assert!(!names.iter().any(|n| n.starts_with(".cursor") || n.starts_with(".github")), "{names:?}");
    }

    /// Detection names, of each kind of file, the shallowest by its path.
    #[test]
    fn detection_names_the_files_it_used_by_their_paths() {
        let (agents, evidence) = detect([
            "pkg/deep/AGENTS.md",
            "AGENTS.md",
            "x/y/CLAUDE.md",
            "b/.github/instructions/u.instructions.md",
            "a/.github/instructions/t.instructions.md",
            "z/.claude",
            "copilot-instructions.md",
        ]);
        assert_eq!(agents, ["codex", "claude", "opencode", "copilot"]);
        assert_eq!(
            evidence,
            [".github/copilot-instructions.md", "AGENTS.md", "a/.github/instructions/", "x/y/CLAUDE.md", "z/.claude/"]
        );
    }

    #[test]
    fn plain_instruction_names_inside_agent_folders_do_not_count() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join(".agents/skills/x")).expect("dirs");
        std::fs::write(root.join(".agents/skills/x/AGENTS.md"), "a skill").expect("skill");
        std::fs::create_dir_all(root.join(".github")).expect("github");
        std::fs::write(root.join(".github/copilot-instructions.md"), "copilot").expect("copilot");
        let names = names_below(root);
        assert!(!names.iter().any(|n| n.ends_with("AGENTS.md")), "{names:?}");
        assert!(names.contains(".github/copilot-instructions.md"), "{names:?}");
        std::fs::write(root.join("AGENTS.md"), "rules").expect("root");
        assert!(names_below(root).contains("AGENTS.md"));
    }

    #[test]
    fn detection_maps_files_to_the_agents_that_read_them() {
        let (agents, evidence) = detect(["AGENTS.md", "README.md", "CLAUDE.md", "AGENTS.md"]);
        assert_eq!(agents, ["codex", "claude", "opencode"]);
        assert_eq!(evidence, ["AGENTS.md", "CLAUDE.md"]);
        let (agents, evidence) = detect([".claude", "GEMINI.md"]);
        assert_eq!(agents, ["claude", "gemini"]);
        assert_eq!(evidence, [".claude/", "GEMINI.md"]);
        assert!(detect(["README.md"]).0.is_empty());
        let (agents, evidence) = detect(["copilot-instructions.md", "go.instructions.md", "api.mdc", ".cursorrules"]);
        assert_eq!(agents, ["copilot", "cursor"]);
        assert_eq!(
            evidence,
            [".cursor/rules/", ".cursorrules", ".github/copilot-instructions.md", ".github/instructions/"]
        );
    }

    #[test]
    fn without_agents_a_config_still_gives_settings_to_detected_agents() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join(".git")).expect("git");
        std::fs::write(dir.path().join("instructions-lsp.toml"), "[codex]\nmax-bytes = 100\n").expect("write");
        let t = Targets::resolve(dir.path(), ["AGENTS.md"]).expect("targets");
        assert_eq!(t.agents, ["codex", "opencode"]);
        assert_eq!(t.overrides("codex").max_bytes, Some(100));
        assert_eq!(
            t.describe("check"),
            "checking for Codex, opencode: detected from AGENTS.md; set them in instructions-lsp.toml"
        );
    }
}
