//! Agent profiles (issue 9): what one coding agent actually loads, as data plus one small
//! strategy per rule, never an `if profile == …` in discovery or rendering.
//!
//! Each profile names the agent release it mirrors; the README has the rules with their
//! sources. Every profile is compared with the real agent by `tests/agents.rs` (Claude Code
//! through a local stand-in of its API).

mod codex_config;
mod dshnext;
pub mod imports;
pub mod read;

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use read::{READ_CAP, read_capped};

/// How a candidate file counts as present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A file or a symlink, by `lstat` (Codex).
    Lstat,
    /// Anything at the path, symlinks followed (opencode's `existsSafe`).
    Exists,
    /// A regular file, symlinks followed (`stat().isFile()`).
    StatFile,
    /// Readable, symlinks followed (`access(R_OK)`; a directory passes, then fails to read).
    Readable,
}

/// Which of the candidate files count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Per directory, the first present candidate; later ones are shadowed by it.
    First(Probe),
    /// Per directory, every present candidate, in candidate order.
    All(Probe),
    /// The first candidate name present in any directory of the walk, in all of them; every
    /// other name is shadowed (opencode: one `AGENTS.md` anywhere hides every `CLAUDE.md`).
    FirstNameAnywhere(Probe),
    /// Per directory, every file of the profile's `layers` in order (Claude Code).
    Layers,
}

/// One kind of file a directory may hold, with what it does to the others (Claude Code).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// Relative to the directory: a file, or the folder of a [`LayerKind::Rules`] layer.
    pub path: &'static str,
    pub kind: LayerKind,
    pub role: Role,
    /// How the agent describes such a file to the model.
    pub label: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerKind {
    File,
    /// Every `*.md` below the folder, sub-folders included, in directory order; a rule whose
    /// front matter has `paths:` applies only to matching files and does not load at start.
    Rules,
}

/// What a layer's file does to the others.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Role {
    /// Loads; one with text anywhere on the walk hides every `Fallback` file.
    Primary,
    /// Loads only when no `Primary` file with text has loaded (at start, or by the same read).
    Fallback,
    /// Loads, whatever the others.
    #[default]
    Neutral,
}

/// Where the walk up from the working directory stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Root {
    /// At the nearest directory holding `.git` (a file or a directory); without one, the
    /// working directory alone. `check_fs_root`: whether `/` itself is checked for `.git`.
    GitOrCwd { check_fs_root: bool },
    /// At the nearest directory holding one of these markers, else the working directory.
    Markers(Vec<String>),
    /// At the nearest directory holding `.git`; without one, at `/` (opencode's worktree).
    GitOrFsRoot,
    /// Just below `/`, whatever the markers (Claude Code).
    BelowFsRoot,
}

/// The order of the project files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    RootFirst,
    CwdFirst,
    /// Deduplicated by file identity, then sorted by path (Gemini's `unique.sort()`).
    Sorted,
}

/// How the user-global files are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalRule {
    /// The first file whose text is not blank (Codex).
    FirstNonEmpty,
    /// Every present file.
    All(Probe),
    /// The files of the first group that has any (opencode).
    FirstGroup,
    /// Every present file of `global`, a directory taken as a rules folder, each labelled by
    /// `global_labels` (Claude Code: managed, then user).
    Labelled,
}

/// Where files reached by a touch come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nested {
    None,
    /// From the touched file's directory up, `pick` per directory, skipping files already
    /// loaded. `upto_root`: up to the project root (Gemini); else up to, not including, the
    /// working directory. `deepest_first`: the order of one touch's files.
    Walk {
        pick: Pick,
        upto_root: bool,
        deepest_first: bool,
    },
}

/// `@path` import directives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Imports {
    None,
    /// Replaced inline (Gemini).
    Inline,
    /// Listed after their importer, `@~/` allowed (Claude Code).
    Listed,
}

/// How the byte budget cuts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Budget {
    /// No budget.
    None,
    /// One budget shared root-first: each file is read up to what remains (the crossing file is
    /// cut mid-character if need be, decoded lossily); files empty after trimming are dropped and
    /// cost nothing; no marker says anything was cut (Codex).
    SharedRootFirst { max_bytes: u64 },
    /// dsh-agent-instructions: files over `max_source_bytes` are skipped; the rendered block
    /// must fit `max_bytes`, dropping broader files first, then cutting the most specific one.
    Block { max_bytes: u64, max_source_bytes: u64 },
}

/// How the loaded texts become the agent's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Join {
    /// `# AGENTS.md instructions for <cwd>` and `<INSTRUCTIONS>` around the global text, the
    /// separator `--- project-doc ---`, and the project texts joined by blank lines (Codex).
    CodexInstructions,
    /// `--- Context from: <path> ---` sections, trimmed, per category (Gemini).
    GeminiContext,
    /// `Instructions from: <path>` entries in the system prompt (global first, then the project
    /// files nearest first), joined by a newline; files reached by a touch in a
    /// `<system-reminder>` after the read (opencode).
    OpencodeInstructions,
    /// A `<system-reminder>` block of `Instructions from: <path relative to the root>` sections
    /// (dsh-agent-instructions); the global file is shown as `global_display`.
    DshReminder { global_display: String },
    /// Claude Code: one `<system-reminder>` of `Contents of <path> (<label>):` sections (texts
    /// trimmed) at start, then one `<system-reminder>` per file a read loads (text as is).
    ClaudeReminders,
}

/// One agent's loading rules.
#[derive(Clone, Debug)]
pub struct AgentProfile {
    pub name: &'static str,
    /// The agent release these rules mirror.
    pub mirrors: &'static str,
    /// Per directory, in precedence order (may hold a relative path like `.claude/CLAUDE.md`).
    pub candidates: Vec<String>,
    /// User-global files, in groups (see [`GlobalRule`]).
    pub global: Vec<Vec<PathBuf>>,
    pub global_rule: GlobalRule,
    pub pick: Pick,
    pub root: Root,
    pub order: Order,
    pub nested: Nested,
    pub imports: Imports,
    pub budget: Budget,
    pub join: Join,
    /// A file whose text trims to nothing is dropped (and costs nothing).
    pub drop_blank: bool,
    /// The home directory `@~/` imports resolve against.
    pub home: Option<PathBuf>,
    /// For [`Pick::Layers`]: at start, and on a read (Claude Code orders them differently).
    pub layers: Vec<Layer>,
    pub lazy_layers: Vec<Layer>,
    /// For [`GlobalRule::Labelled`]: the label of each global path, in the same order.
    pub global_labels: Vec<&'static str>,
    /// YAML front matter (`---` … `---` at the very top) is metadata, not text (Claude Code).
    pub strip_front_matter: bool,
}

impl AgentProfile {
    /// The rules most profiles share, for the struct-update syntax: nothing global, no layers,
    /// no imports, no budget, front matter kept, blank files dropped.
    fn base(home: Option<PathBuf>) -> Self {
        Self {
            name: "",
            mirrors: "",
            candidates: Vec::new(),
            global: Vec::new(),
            global_rule: GlobalRule::All(Probe::StatFile),
            pick: Pick::All(Probe::StatFile),
            root: Root::GitOrCwd { check_fs_root: false },
            order: Order::RootFirst,
            nested: Nested::None,
            imports: Imports::None,
            budget: Budget::None,
            join: Join::CodexInstructions,
            drop_blank: true,
            home,
            layers: Vec::new(),
            lazy_layers: Vec::new(),
            global_labels: Vec::new(),
            strip_front_matter: false,
        }
    }
}

/// Where a file of an agent's chain comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Global,
    Project,
    Nested,
    Import,
}

/// What the agent does with a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Loaded,
    /// Cut by the budget; `includedBytes` says where.
    Truncated,
    /// Left out by the budget.
    Omitted,
    /// Blank, so left out.
    Empty,
    /// Loses to another file (`by`).
    Shadowed,
    Unreadable,
    /// Too large to load.
    Oversized,
    /// The same trimmed text as an earlier file of its directory.
    Duplicate,
    /// An import already on the import chain: not loaded again.
    Cycle,
    /// An import past the depth limit.
    TooDeep,
    /// An import refused because it is outside the project root.
    Outside,
    /// A link (the file, or a directory on its way) whose target is outside the project: the
    /// agent would follow it; this tool does not read it.
    LinkedOutside,
    /// Not read: the view already read its [`read::VIEW_READ_CAP`].
    Capped,
    /// `@imports` that expand past [`imports::EXPANSION_CAP`]: the agent itself would build a
    /// context this large (or fail); not mirrored.
    Runaway,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Loaded => "loaded",
            Status::Truncated => "truncated",
            Status::Omitted => "omitted",
            Status::Empty => "empty",
            Status::Shadowed => "shadowed",
            Status::Unreadable => "unreadable",
            Status::Oversized => "oversized",
            Status::Duplicate => "duplicate",
            Status::Cycle => "cycle",
            Status::TooDeep => "too-deep",
            Status::Outside => "outside",
            Status::LinkedOutside => "linked-outside",
            Status::Capped => "capped",
            Status::Runaway => "runaway",
        }
    }

    /// Whether some of the file reaches the agent.
    pub fn reaches(self) -> bool {
        matches!(self, Status::Loaded | Status::Truncated)
    }
}

/// What an agent gets from one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentFile {
    pub path: PathBuf,
    pub scope: Scope,
    pub bytes: u64,
    pub included_bytes: u64,
    pub status: Status,
    /// The file that shadows this one, or that imports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<PathBuf>,
    /// How the agent describes the file (Claude Code), and its layer's role.
    #[serde(skip)]
    pub label: Option<&'static str>,
    #[serde(skip)]
    pub role: Role,
    /// 0 for what loads at start, else the number of the touch (the read) that loads it.
    #[serde(skip)]
    pub batch: u32,
}

impl AgentFile {
    pub fn new(path: PathBuf, scope: Scope, status: Status) -> Self {
        Self { path, scope, bytes: 0, included_bytes: 0, status, by: None, label: None, role: Role::Neutral, batch: 0 }
    }

    pub fn by(mut self, other: &Path) -> Self {
        self.by = Some(other.to_path_buf());
        self
    }

    pub fn size(mut self, bytes: u64, included: u64) -> Self {
        self.bytes = bytes;
        self.included_bytes = included;
        self
    }
}

/// What an agent gets in a directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentView {
    pub profile: &'static str,
    pub mirrors: &'static str,
    pub files: Vec<AgentFile>,
    /// The text the agent puts in its context (its `parts` joined by a blank line); empty when
    /// nothing loads.
    pub text: String,
    /// The separate messages or blocks the agent adds, in order.
    pub parts: Vec<String>,
    /// What the budget is, in words, when the profile has one (for messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
}

/// The agent profile names, in the order `compare` shows them.
pub const NAMES: &[&str] = &["codex", "claude", "gemini", "opencode", "dsh-next"];

/// Every name an agent profile looks for in a directory (a change to one may change what an
/// agent loads).
pub const FILE_NAMES: &[&str] = &[
    "AGENTS.md",
    "AGENTS.override.md",
    "AGENTS.local.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    "CONTEXT.md",
    ".claude",
];

/// Where the agents keep their user-global files, read from the environment once.
#[derive(Clone, Debug, Default)]
pub struct AgentEnv {
    pub home: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
    pub dsh_home: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub opencode_config_dir: Option<PathBuf>,
    pub opencode_no_claude: bool,
}

impl AgentEnv {
    pub fn from_process() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let flag = |k: &str| std::env::var(k).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        Self {
            home: var("HOME"),
            codex_home: var("CODEX_HOME"),
            dsh_home: std::env::var("DSH_HOME").ok().filter(|v| !v.trim().is_empty()).map(PathBuf::from),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            opencode_config_dir: var("OPENCODE_CONFIG_DIR"),
            opencode_no_claude: flag("OPENCODE_DISABLE_CLAUDE_CODE_PROMPT"),
        }
    }

    /// The process's variables, but the home directories of `env` (the server's, which tests
    /// point at a private home).
    pub fn with_home(env: &crate::chain::settings::Env) -> Self {
        Self {
            home: env.home.clone(),
            dsh_home: env.dsh_home.as_ref().filter(|v| !v.trim().is_empty()).map(PathBuf::from),
            ..Self::from_process()
        }
    }

    fn home_join(&self, rel: &str) -> PathBuf {
        self.home.as_deref().unwrap_or(Path::new("~")).join(rel)
    }
}

/// What a caller may change of a profile: `baselineMaxBytes` and `instructionFileCandidates`.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// The byte budget (Codex's `project_doc_max_bytes`, dsh-agent-instructions' `maxBytes`).
    pub max_bytes: Option<u64>,
    /// File names: Codex's fallbacks, Gemini's `context.fileName`, dsh-agent-instructions'
    /// `instructionFileCandidates`.
    pub candidates: Option<Vec<String>>,
}

/// The profile called `name`, or `None` for a name that is not an agent profile.
pub fn profile(name: &str, env: &AgentEnv, o: &Overrides) -> Option<AgentProfile> {
    let names = |default: &[&str]| -> Vec<String> {
        match &o.candidates {
            Some(c) => c.clone(),
            None => default.iter().map(|s| s.to_string()).collect(),
        }
    };
    Some(match name {
        "codex" => {
            // `--set` overrides `$CODEX_HOME/config.toml`, which overrides Codex's defaults.
            let home = env.codex_home.clone().unwrap_or_else(|| env.home_join(".codex"));
            let config = codex_config::read(&home);
            let fallbacks = o.candidates.clone().or(config.fallbacks).unwrap_or_default();
            codex(&home, o.max_bytes.or(config.max_bytes), &fallbacks)
        }
        "claude" => {
            const PROJECT: &str = "project instructions, checked into the codebase";
            const LOCAL: &str = "user's private project instructions, not checked in";
            let layer = |path, kind, role, label| Layer { path, kind, role, label };
            let layers = [
                layer("CLAUDE.md", LayerKind::File, Role::Primary, PROJECT),
                layer(".claude/CLAUDE.md", LayerKind::File, Role::Primary, PROJECT),
                layer(".claude/rules", LayerKind::Rules, Role::Neutral, PROJECT),
                layer("AGENTS.md", LayerKind::File, Role::Fallback, PROJECT),
                layer(".claude/AGENTS.md", LayerKind::File, Role::Fallback, PROJECT),
                layer("CLAUDE.local.md", LayerKind::File, Role::Primary, LOCAL),
            ];
            AgentProfile {
                name: "claude",
                mirrors: "Claude Code 2.1.332",
                candidates: Vec::new(),
                global: vec![vec![
                    PathBuf::from("/etc/claude-code/CLAUDE.md"),
                    env.home_join(".claude/CLAUDE.md"),
                    env.home_join(".claude/rules"),
                ]],
                global_labels: vec![
                    "organization-managed policy instructions",
                    "user's private global instructions for all projects",
                    "user's private global instructions for all projects",
                ],
                strip_front_matter: true,
                global_rule: GlobalRule::Labelled,
                pick: Pick::Layers,
                // The same layers, ordered as Claude Code loads them at start and on a read.
                layers: layers.to_vec(),
                lazy_layers: [0, 1, 5, 2, 3, 4].map(|i| layers[i].clone()).to_vec(),
                root: Root::BelowFsRoot,
                order: Order::RootFirst,
                nested: Nested::Walk { pick: Pick::Layers, upto_root: false, deepest_first: false },
                imports: Imports::Listed,
                budget: Budget::None,
                join: Join::ClaudeReminders,
                drop_blank: true,
                ..AgentProfile::base(env.home.clone())
            }
        }
        "gemini" => {
            let candidates = names(&["GEMINI.md"]);
            let global = vec![candidates.iter().map(|n| env.home_join(".gemini").join(n)).collect()];
            AgentProfile {
                name: "gemini",
                mirrors: "Gemini CLI core 0.61.0",
                candidates,
                global,
                global_rule: GlobalRule::All(Probe::Readable),
                pick: Pick::All(Probe::Readable),
                root: Root::GitOrCwd { check_fs_root: true },
                order: Order::Sorted,
                nested: Nested::Walk { pick: Pick::All(Probe::Readable), upto_root: true, deepest_first: false },
                imports: Imports::Inline,
                budget: Budget::None,
                join: Join::GeminiContext,
                drop_blank: true,
                ..AgentProfile::base(env.home.clone())
            }
        }
        "opencode" => {
            let mut candidates = vec!["AGENTS.md".to_string()];
            if !env.opencode_no_claude {
                candidates.push("CLAUDE.md".into());
            }
            candidates.push("CONTEXT.md".into());
            let mut global = Vec::new();
            if let Some(dir) = &env.opencode_config_dir {
                global.push(vec![dir.join("AGENTS.md")]);
            }
            let config = env.xdg_config_home.clone().unwrap_or_else(|| env.home_join(".config"));
            global.push(vec![config.join("opencode/AGENTS.md")]);
            if !env.opencode_no_claude {
                global.push(vec![env.home_join(".claude/CLAUDE.md")]);
            }
            AgentProfile {
                name: "opencode",
                mirrors: "opencode 1.18.33",
                candidates,
                global,
                global_rule: GlobalRule::FirstGroup,
                pick: Pick::FirstNameAnywhere(Probe::Exists),
                root: Root::GitOrFsRoot,
                order: Order::CwdFirst,
                nested: Nested::Walk { pick: Pick::First(Probe::Exists), upto_root: false, deepest_first: true },
                imports: Imports::None,
                budget: Budget::None,
                join: Join::OpencodeInstructions,
                drop_blank: false,
                ..AgentProfile::base(env.home.clone())
            }
        }
        "dsh-next" => {
            let default_home = env.home_join(".dsh");
            let home = env.dsh_home.clone().map(|h| imports::resolve(Path::new("/"), &h.to_string_lossy()));
            let home = match home {
                Some(h) if h.is_absolute() => h,
                _ => default_home.clone(),
            };
            let global_display = if home == default_home { "~/.dsh/AGENTS.md" } else { "$DSH_HOME/AGENTS.md" };
            let mut candidates = names(&["AGENTS.md", "CLAUDE.md"]);
            candidates.retain(|c| !matches!(c.as_str(), "" | "." | "..") && !c.contains(['/', '\\']));
            candidates.extend(["AGENTS.local.md".to_string(), "CLAUDE.local.md".to_string()]);
            AgentProfile {
                name: "dsh-next",
                mirrors: "dsh-agent-instructions 0.1.0-rc.8",
                candidates,
                global: vec![vec![home.join("AGENTS.md")]],
                global_rule: GlobalRule::All(Probe::StatFile),
                pick: Pick::All(Probe::StatFile),
                root: Root::Markers(vec![".git".into()]),
                order: Order::RootFirst,
                nested: Nested::Walk { pick: Pick::All(Probe::StatFile), upto_root: false, deepest_first: false },
                imports: Imports::None,
                budget: Budget::Block { max_bytes: o.max_bytes.unwrap_or(65536), max_source_bytes: 1024 * 1024 },
                join: Join::DshReminder { global_display: global_display.into() },
                drop_blank: false,
                ..AgentProfile::base(env.home.clone())
            }
        }
        _ => return None,
    })
}

/// Codex: `AGENTS.override.md`, `AGENTS.md`, then `fallbacks`; `$CODEX_HOME` (else
/// `~/.codex`) for the global file; `project_doc_max_bytes` (32768 by default).
pub fn codex(codex_home: &Path, max_bytes: Option<u64>, fallbacks: &[String]) -> AgentProfile {
    let mut candidates = vec!["AGENTS.override.md".to_string(), "AGENTS.md".to_string()];
    for f in fallbacks {
        if !f.is_empty() && !candidates.contains(f) {
            candidates.push(f.clone());
        }
    }
    AgentProfile {
        name: "codex",
        mirrors: "Codex CLI 0.171.0",
        candidates,
        global: vec![vec![codex_home.join("AGENTS.override.md"), codex_home.join("AGENTS.md")]],
        global_rule: GlobalRule::FirstNonEmpty,
        pick: Pick::First(Probe::Lstat),
        root: Root::GitOrCwd { check_fs_root: false },
        order: Order::RootFirst,
        nested: Nested::None,
        imports: Imports::None,
        budget: Budget::SharedRootFirst { max_bytes: max_bytes.unwrap_or(32 * 1024) },
        join: Join::CodexInstructions,
        drop_blank: true,
        ..AgentProfile::base(None)
    }
}

fn present(probe: Probe, path: &Path) -> bool {
    match probe {
        Probe::Lstat => fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file() || m.file_type().is_symlink()),
        Probe::Exists => fs::metadata(path).is_ok(),
        Probe::StatFile => fs::metadata(path).is_ok_and(|m| m.is_file()),
        Probe::Readable => match fs::metadata(path) {
            Ok(m) if m.is_dir() => fs::read_dir(path).is_ok(),
            Ok(m) if m.is_file() => crate::chain::source::open_regular(path).is_ok(),
            // A FIFO or a device passes `access(R_OK)`; it is never opened here, and fails to read.
            Ok(_) => true,
            Err(_) => false,
        },
    }
}

fn has_git(dir: &Path) -> bool {
    fs::metadata(dir.join(".git")).is_ok()
}

/// The directories of the walk, root first.
fn walk_dirs(root: &Root, cwd: &Path) -> Vec<PathBuf> {
    let ancestors: Vec<&Path> = cwd.ancestors().collect();
    let upto = |i: usize| ancestors[..=i].iter().rev().map(|p| p.to_path_buf()).collect::<Vec<_>>();
    let last = ancestors.len() - 1;
    match root {
        Root::GitOrCwd { check_fs_root } => {
            let stop = ancestors.iter().position(|d| (*check_fs_root || d.parent().is_some()) && has_git(d));
            stop.map_or_else(|| vec![cwd.to_path_buf()], upto)
        }
        Root::Markers(markers) => {
            let stop = ancestors.iter().position(|d| markers.iter().any(|m| fs::metadata(d.join(m)).is_ok()));
            stop.map_or_else(|| vec![cwd.to_path_buf()], upto)
        }
        Root::GitOrFsRoot => upto(ancestors.iter().position(|d| has_git(d)).unwrap_or(last)),
        Root::BelowFsRoot => upto(last.saturating_sub(1)),
    }
}

/// The files `pick` takes from `dirs` (in the order given), with the shadowed ones.
fn pick_files(profile: &AgentProfile, pick: Pick, dirs: &[PathBuf], scope: Scope) -> Vec<AgentFile> {
    let names = &profile.candidates;
    let mut out = Vec::new();
    match pick {
        Pick::Layers => {
            let layers = if scope == Scope::Nested { &profile.lazy_layers } else { &profile.layers };
            for dir in dirs {
                for layer in layers {
                    let path = dir.join(layer.path);
                    let found = match layer.kind {
                        LayerKind::File if present(Probe::StatFile, &path) => vec![path],
                        LayerKind::File => Vec::new(),
                        LayerKind::Rules => rules_files(&path),
                    };
                    for p in found {
                        let mut f = AgentFile::new(p, scope, Status::Loaded);
                        f.label = Some(layer.label);
                        f.role = layer.role;
                        out.push(f);
                    }
                }
            }
        }
        Pick::First(probe) | Pick::All(probe) => {
            for dir in dirs {
                let mut winner: Option<PathBuf> = None;
                for name in names {
                    let path = dir.join(name);
                    if !present(probe, &path) {
                        continue;
                    }
                    match (&winner, pick) {
                        (Some(w), Pick::First(_)) => {
                            let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                            out.push(AgentFile::new(path, scope, Status::Shadowed).by(w).size(bytes, 0));
                        }
                        _ => {
                            winner.get_or_insert_with(|| path.clone());
                            out.push(AgentFile::new(path, scope, Status::Loaded));
                        }
                    }
                }
            }
        }
        Pick::FirstNameAnywhere(probe) => {
            let mut won: Option<PathBuf> = None;
            for name in names {
                let found: Vec<PathBuf> = dirs.iter().map(|d| d.join(name)).filter(|p| present(probe, p)).collect();
                match &won {
                    Some(w) => {
                        for path in found {
                            let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                            out.push(AgentFile::new(path, scope, Status::Shadowed).by(w).size(bytes, 0));
                        }
                    }
                    None if !found.is_empty() => {
                        won = found.last().cloned();
                        out.extend(found.into_iter().map(|p| AgentFile::new(p, scope, Status::Loaded)));
                    }
                    None => {}
                }
            }
        }
    }
    out
}

/// The most entries one rules folder walk looks at, and the most rules it takes: a folder of
/// links to itself, or a huge tree, ends the walk instead of the server.
const RULES_WALK_ENTRIES: usize = 10_000;
const RULES_MAX: usize = 1_000;
/// Rules folders nest at most this deep.
const RULES_MAX_DEPTH: usize = 16;

/// The rules of a rules folder: every `*.md` below it, sub-folders included, depth first in
/// directory order (as `readdir` returns them); rules whose front matter names `paths:` apply
/// only to matching files and are left out. Directory links are followed, but every directory
/// is walked once (by file identity), so links back up the tree add nothing.
fn rules_files(dir: &Path) -> Vec<PathBuf> {
    struct Walk {
        seen: HashSet<(u64, u64)>,
        entries: usize,
        out: Vec<PathBuf>,
    }
    fn walk(dir: &Path, depth: usize, w: &mut Walk) {
        let Some(key) = file_key(dir) else { return };
        if !w.seen.insert(key) {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            w.entries += 1;
            if w.entries > RULES_WALK_ENTRIES || w.out.len() >= RULES_MAX {
                return;
            }
            let path = entry.path();
            let Ok(meta) = fs::metadata(&path) else { continue };
            if meta.is_dir() {
                if depth < RULES_MAX_DEPTH {
                    walk(&path, depth + 1, w);
                }
            } else if meta.is_file() && path.extension().is_some_and(|e| e == "md") && !conditional(&path) {
                w.out.push(path);
            }
        }
    }
    let mut w = Walk { seen: HashSet::new(), entries: 0, out: Vec::new() };
    walk(dir, 0, &mut w);
    w.out
}

/// A rule whose front matter has a `paths:` key.
fn conditional(path: &Path) -> bool {
    let Ok((data, _)) = read_capped(path, 64 * 1024) else { return false };
    let text = String::from_utf8_lossy(&data);
    front_matter(&text).is_some_and(|(meta, _)| meta.lines().any(|l| l.starts_with("paths:")))
}

/// The front matter of `text` and what follows it: a first line `---`, then lines up to a line
/// `---`; `None` when the text does not open with one or never closes it.
pub fn front_matter(text: &str) -> Option<(&str, &str)> {
    let first = text.find('\n')?;
    if text[..first].trim_end() != "---" {
        return None;
    }
    let mut at = first + 1;
    while at <= text.len() {
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        if text[at..end].trim_end() == "---" {
            return Some((&text[first + 1..at], text.get(end + 1..).unwrap_or("")));
        }
        if end == text.len() {
            break;
        }
        at = end + 1;
    }
    None
}

/// The text of `file` decoded lossily, its size recorded; `None` (and the status `oversized` or
/// `unreadable`) when it is larger than `cap` or cannot be read.
fn read_into(file: &mut AgentFile, cap: u64) -> Option<String> {
    // A file known to be too large is not read at all.
    if let Ok(meta) = fs::metadata(&file.path) {
        if meta.is_file() && meta.len() > cap {
            file.bytes = meta.len();
            file.status = Status::Oversized;
            return None;
        }
    }
    match read_capped(&file.path, cap.saturating_add(1)) {
        Ok((_, size)) if size > cap => {
            file.bytes = size;
            file.status = Status::Oversized;
            None
        }
        Ok((data, size)) => {
            file.bytes = size;
            Some(String::from_utf8_lossy(&data).into_owned())
        }
        Err(e) => {
            file.status = if read::is_capped(&e) { Status::Capped } else { Status::Unreadable };
            None
        }
    }
}

/// A whole file as UTF-8 (up to [`READ_CAP`]), as Rust's `read_to_string` reads it.
fn read_string(path: &Path) -> io::Result<String> {
    let (data, _) = read_capped(path, READ_CAP)?;
    String::from_utf8(data).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// JavaScript's `String.prototype.trim`: Unicode white space and U+FEFF, but not U+0085.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}')
}

/// A file of the chain with the text the agent takes from it.
struct Entry {
    file: AgentFile,
    text: String,
}

/// A file's identity (device and inode), links followed; elsewhere than Unix, a hash of its
/// canonical path.
pub fn file_key(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        use std::hash::{Hash, Hasher};
        let real = fs::canonicalize(path).ok()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        real.to_string_lossy().to_lowercase().hash(&mut h);
        Some((0, h.finish()))
    }
}

/// What the agent of `profile` loads working in `cwd`, after reading the `touched` files.
/// Every read is charged to one budget of [`read::VIEW_READ_CAP`] bytes.
pub fn load(profile: &AgentProfile, cwd: &Path, touched: &[PathBuf]) -> AgentView {
    read::with_budget(read::VIEW_READ_CAP, || load_within_budget(profile, cwd, touched))
}

/// The directory the project's links must stay in: the nearest ancestor of `cwd` holding
/// `.git`, else `cwd` (both real paths).
fn project_base(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|d| has_git(d)).unwrap_or(cwd).to_path_buf()
}

/// Marks the files of `files[from..]` that are links (or lie below a directory link) whose
/// target is outside `base`: the agent would read them, but they are not the project's to show
/// (a rule linked to `~/.ssh/id_rsa`, say). `by` names the target. The user's own global files
/// are theirs to link anywhere.
fn mark_linked_outside(files: &mut [AgentFile], from: usize, base: &Path) {
    for f in files.iter_mut().skip(from) {
        if f.scope == Scope::Global || f.status != Status::Loaded {
            continue;
        }
        let Ok(real) = fs::canonicalize(&f.path) else { continue };
        if real != f.path && !real.starts_with(base) {
            f.status = Status::LinkedOutside;
            f.by = Some(real);
        }
    }
}

/// Where the walk of a touch starts: the touched directory, or the touched file's directory,
/// or the nearest of their ancestors that exists, so a made-up path costs nothing.
fn touch_start(t: &Path) -> Option<PathBuf> {
    let start = if t.is_dir() { t } else { t.parent()? };
    start.ancestors().find(|d| d.is_dir()).map(Path::to_path_buf)
}

fn load_within_budget(profile: &AgentProfile, cwd: &Path, touched: &[PathBuf]) -> AgentView {
    let cwd = fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let base = project_base(&cwd);
    let mut files: Vec<AgentFile> = Vec::new();

    // User-global files.
    let mut globals = Vec::new();
    match profile.global_rule {
        GlobalRule::FirstNonEmpty => {
            for path in profile.global.iter().flatten() {
                if !present(Probe::Lstat, path) {
                    continue;
                }
                globals.push(AgentFile::new(path.clone(), Scope::Global, Status::Loaded));
                if read_string(path).is_ok_and(|t| !t.trim().is_empty()) {
                    break;
                }
            }
        }
        GlobalRule::All(probe) => {
            for path in profile.global.iter().flatten().filter(|p| present(probe, p)) {
                globals.push(AgentFile::new(path.clone(), Scope::Global, Status::Loaded));
            }
        }
        GlobalRule::Labelled => {
            for (i, path) in profile.global.iter().flatten().enumerate() {
                let label = profile.global_labels.get(i).copied();
                let found = if path.is_dir() {
                    rules_files(path)
                } else if present(Probe::StatFile, path) {
                    vec![path.clone()]
                } else {
                    Vec::new()
                };
                for p in found {
                    let mut f = AgentFile::new(p, Scope::Global, Status::Loaded);
                    f.label = label;
                    globals.push(f);
                }
            }
        }
        GlobalRule::FirstGroup => {
            for group in &profile.global {
                let found: Vec<&PathBuf> = group.iter().filter(|p| present(Probe::Exists, p)).collect();
                if !found.is_empty() {
                    globals.extend(found.into_iter().map(|p| AgentFile::new(p.clone(), Scope::Global, Status::Loaded)));
                    break;
                }
            }
        }
    }

    // Project files.
    let dirs = walk_dirs(&profile.root, &cwd);
    let root = dirs.first().cloned().unwrap_or_else(|| cwd.clone());
    let mut project = pick_files(profile, profile.pick, &dirs, Scope::Project);
    mark_linked_outside(&mut project, 0, &base);
    hide_fallbacks(&mut project, 0, profile.drop_blank);
    match profile.order {
        Order::RootFirst => {}
        Order::CwdFirst => {
            let (mut won, lost): (Vec<_>, Vec<_>) = project.into_iter().partition(|f| f.status != Status::Shadowed);
            won.reverse();
            won.extend(lost);
            project = won;
        }
        Order::Sorted => {
            let mut seen = HashSet::new();
            project.retain(|f| f.status == Status::Shadowed || file_key(&f.path).is_none_or(|k| seen.insert(k)));
            project.sort_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
        }
    }
    files.extend(globals);
    files.extend(project);

    // Files reached by touches.
    if let Nested::Walk { pick, upto_root, deepest_first } = profile.nested {
        for (n, t) in touched.iter().enumerate() {
            let t = fs::canonicalize(t).unwrap_or_else(|_| t.clone());
            if !t.starts_with(&cwd) || t == cwd {
                continue;
            }
            let Some(start) = touch_start(&t) else { continue };
            let stop = if upto_root { &root } else { &cwd };
            let mut walk: Vec<PathBuf> = start
                .ancestors()
                .take_while(|d| d.starts_with(stop) && (upto_root || *d != cwd.as_path()))
                .map(Path::to_path_buf)
                .collect();
            walk.reverse();
            let mut found = pick_files(profile, pick, &walk, Scope::Nested);
            if deepest_first {
                found.reverse();
            }
            let first_new = files.len();
            for mut f in found {
                // Each file once (already loaded, or already met on an earlier touch), and never
                // the touched file itself.
                if f.path != t && !files.iter().any(|k| k.path == f.path) {
                    f.batch = u32::try_from(n + 1).unwrap_or(u32::MAX);
                    files.push(f);
                }
            }
            mark_linked_outside(&mut files, first_new, &base);
            hide_fallbacks(&mut files, first_new, profile.drop_blank);
        }
    }

    let budget_words = match profile.budget {
        Budget::None => None,
        Budget::SharedRootFirst { max_bytes } => Some(format!("{} shared budget", size_words(max_bytes))),
        Budget::Block { max_bytes, .. } => Some(format!("{} budget", size_words(max_bytes))),
    };
    let (files, parts) = match &profile.budget {
        Budget::SharedRootFirst { max_bytes } => codex_budget(&cwd, files, *max_bytes),
        Budget::Block { max_bytes, max_source_bytes } => {
            let global_display = match &profile.join {
                Join::DshReminder { global_display } => global_display.clone(),
                _ => String::new(),
            };
            dshnext::load(files, &root, &global_display, *max_bytes, *max_source_bytes)
        }
        Budget::None => unbudgeted(profile, &cwd, files),
    };
    let text = parts.join("\n\n");
    AgentView { profile: profile.name, mirrors: profile.mirrors, files, text, parts, budget: budget_words }
}

/// Fallback files (Claude Code's `AGENTS.md`) from `files[from..]` give way when a primary file
/// with text has loaded (anywhere in `files`): they are shadowed by the first one.
fn hide_fallbacks(files: &mut [AgentFile], from: usize, drop_blank: bool) {
    if !files.iter().skip(from).any(|f| f.role == Role::Fallback) {
        return;
    }
    let has_text = |f: &AgentFile| {
        read_capped(&f.path, READ_CAP).is_ok_and(|(d, _)| {
            let t = String::from_utf8_lossy(&d);
            if drop_blank { !js_trim(&t).is_empty() } else { !t.is_empty() }
        })
    };
    let primary = files.iter().find(|f| f.role == Role::Primary && f.status == Status::Loaded && has_text(f));
    let Some(primary) = primary.map(|f| f.path.clone()) else { return };
    for f in files.iter_mut().skip(from).filter(|f| f.role == Role::Fallback && f.status == Status::Loaded) {
        f.status = Status::Shadowed;
        f.by = Some(primary.clone());
    }
}

/// "32 KiB" for whole KiB, else "1000-byte".
pub fn size_words(bytes: u64) -> String {
    if bytes >= 1024 && bytes % 1024 == 0 { format!("{} KiB", bytes / 1024) } else { format!("{bytes}-byte") }
}

/// Reads every file whole (up to [`READ_CAP`]), resolves imports and joins.
fn unbudgeted(profile: &AgentProfile, cwd: &Path, files: Vec<AgentFile>) -> (Vec<AgentFile>, Vec<String>) {
    let mut entries: Vec<Entry> = Vec::new();
    let mut seen_imports: Vec<PathBuf> = Vec::new();
    for mut file in files {
        if file.status != Status::Loaded {
            entries.push(Entry { file, text: String::new() });
            continue;
        }
        let Some(mut text) = read_into(&mut file, READ_CAP) else {
            entries.push(Entry { file, text: String::new() });
            continue;
        };
        if profile.strip_front_matter {
            if let Some((_, body)) = front_matter(&text) {
                text = body.to_string();
            }
        }
        let blank = if profile.drop_blank { js_trim(&text).is_empty() } else { text.is_empty() };
        if blank {
            file.status = Status::Empty;
            entries.push(Entry { file, text: String::new() });
            continue;
        }
        file.included_bytes = file.bytes;
        let dir = file.path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
        match profile.imports {
            Imports::None => entries.push(Entry { file, text }),
            Imports::Inline => {
                let mut imported = Vec::new();
                let mut work = imports::Work::default();
                let Some(expanded) = imports::gemini_expand(&text, &dir, &file.path, &[], 0, &mut imported, &mut work)
                else {
                    file.status = Status::Runaway;
                    file.included_bytes = 0;
                    entries.push(Entry { file, text: String::new() });
                    continue;
                };
                entries.push(Entry { file, text: expanded });
                // Listed for the reader; their text is already inside the importer's.
                entries.extend(imported.into_iter().map(|file| Entry { file, text: String::new() }));
            }
            Imports::Listed => {
                seen_imports.push(file.path.clone());
                // A project file's imports must stay inside the working directory (Claude Code
                // asks before loading others, and loads none without asking); the user's own
                // files import from anywhere.
                let boundary = (file.scope != Scope::Global).then_some(cwd);
                let ctx = imports::ClaudeImports {
                    home: profile.home.as_deref(),
                    boundary,
                    label: file.label,
                    role: file.role,
                    steps: Default::default(),
                };
                let imported = ctx.resolve(&text, &dir, &file.path, 0, &mut seen_imports);
                let batch = file.batch;
                entries.push(Entry { file, text });
                entries.extend(imported.into_iter().map(|(mut file, text)| {
                    file.batch = batch;
                    Entry { file, text }
                }));
            }
        }
    }
    drop_repeating_fallbacks(&mut entries);
    let parts = join(profile, &entries);
    (entries.into_iter().map(|e| e.file).collect(), parts)
}

/// Claude Code drops a fallback file (or a file it imports) that repeats what is already there
/// (observed with 2.1.332): at start, when its trimmed text is that of a project rule, as when
/// `AGENTS.md` is also linked into `.claude/rules/`; on a read, when it is that of any project
/// file loaded at start. The user's own files do not count.
fn drop_repeating_fallbacks(entries: &mut [Entry]) {
    let texts = |rules_only: bool| -> HashSet<String> {
        entries
            .iter()
            .filter(|e| e.file.batch == 0 && e.file.scope != Scope::Global && e.file.status.reaches())
            .filter(|e| !rules_only || (e.file.scope == Scope::Project && is_rule(&e.file.path)))
            .map(|e| js_trim(&e.text).to_string())
            .collect()
    };
    let (rules, at_start) = (texts(true), texts(false));
    for e in entries.iter_mut().filter(|e| e.file.role == Role::Fallback && e.file.status.reaches()) {
        let seen = if e.file.batch == 0 { &rules } else { &at_start };
        if seen.contains(js_trim(&e.text)) {
            e.file.status = Status::Duplicate;
            e.file.included_bytes = 0;
        }
    }
}

/// A file inside a `.claude/rules` folder.
fn is_rule(path: &Path) -> bool {
    let parts: Vec<_> = path.components().map(|c| c.as_os_str()).collect();
    parts.windows(2).any(|w| w[0] == ".claude" && w[1] == "rules")
}

/// The parts of the agent's context, from the read files in order.
fn join(profile: &AgentProfile, entries: &[Entry]) -> Vec<String> {
    // Imports inlined into their importer add no text of their own.
    let live = |scope: Option<Scope>| {
        entries.iter().filter(move |e| {
            e.file.status.reaches()
                && !e.text.is_empty()
                && scope.is_none_or(|s| e.file.scope == s || (s == Scope::Project && e.file.scope == Scope::Import))
        })
    };
    match &profile.join {
        Join::GeminiContext => {
            let concat = |scope: Scope| {
                live(Some(scope))
                    .filter_map(|e| {
                        let t = js_trim(&e.text);
                        (!t.is_empty()).then(|| {
                            let p = e.file.path.display();
                            format!("--- Context from: {p} ---\n{t}\n--- End of Context from: {p} ---")
                        })
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n")
            };
            [concat(Scope::Global), concat(Scope::Project), concat(Scope::Nested)]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect()
        }
        Join::OpencodeInstructions => {
            let entry = |e: &Entry| format!("Instructions from: {}\n{}", e.file.path.display(), e.text);
            // Each file is an entry of the system prompt, and they are joined by a newline.
            let system: Vec<String> = entries
                .iter()
                .filter(|e| e.file.scope != Scope::Nested && e.file.status.reaches())
                .map(entry)
                .collect();
            let mut parts: Vec<String> = (!system.is_empty()).then(|| system.join("\n")).into_iter().collect();
            let nested: Vec<String> = entries
                .iter()
                .filter(|e| e.file.scope == Scope::Nested && e.file.status.reaches())
                .map(entry)
                .collect();
            if !nested.is_empty() {
                parts.push(format!("<system-reminder>\n{}\n</system-reminder>", nested.join("\n\n")));
            }
            parts
        }
        _ => {
            // Imports follow their importer, and load when it does: at start, or on a read.
            let mut at_start = Vec::new();
            let mut reads: std::collections::BTreeMap<u32, (Vec<String>, Vec<String>)> = Default::default();
            let mut batch = 0;
            for e in entries {
                if e.file.scope != Scope::Import {
                    batch = if e.file.scope == Scope::Nested { e.file.batch.max(1) } else { 0 };
                }
                if !e.file.status.reaches() || e.text.is_empty() {
                    continue;
                }
                let path = e.file.path.display();
                if batch == 0 {
                    let label = e.file.label.unwrap_or("instructions");
                    at_start.push(format!("Contents of {path} ({label}):\n\n{}", js_trim(&e.text)));
                } else if e.file.role == Role::Fallback {
                    // Claude Code's AGENTS.md support adds these through a tool hook.
                    reads.entry(batch).or_default().1.push(format!("Contents of {path}:\n\n{}", e.text));
                } else {
                    let reminder = format!("<system-reminder>\nContents of {path}:\n\n{}\n</system-reminder>", e.text);
                    reads.entry(batch).or_default().0.push(reminder);
                }
            }
            let mut parts = Vec::new();
            if !at_start.is_empty() {
                parts.push(format!(
                    "<system-reminder>\n{CLAUDE_INTRO}\n\n{}\n</system-reminder>",
                    at_start.join("\n\n")
                ));
            }
            for (_, (reminders, hooked)) in reads {
                parts.extend(reminders);
                if !hooked.is_empty() {
                    parts.push(format!("tool.call hook additional context: {}", hooked.join("\n")));
                }
            }
            parts
        }
    }
}

/// What Claude Code says before the instruction files it loads at start.
const CLAUDE_INTRO: &str = "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.";

/// Codex's shared root-first budget, and its message.
fn codex_budget(cwd: &Path, files: Vec<AgentFile>, max_bytes: u64) -> (Vec<AgentFile>, Vec<String>) {
    let mut out = Vec::new();
    let mut global_text = None;
    let mut parts: Vec<String> = Vec::new();
    let mut remaining = max_bytes;
    let mut shadowed = Vec::new();
    for mut file in files {
        if file.status == Status::Shadowed {
            shadowed.push(file);
            continue;
        }
        if file.scope == Scope::Global {
            match read_string(&file.path) {
                Ok(text) => {
                    file.bytes = text.len() as u64;
                    if text.trim().is_empty() {
                        file.status = Status::Empty;
                    } else {
                        file.included_bytes = file.bytes;
                        global_text = Some(text.trim().to_string());
                    }
                }
                Err(_) => file.status = Status::Unreadable,
            }
            out.push(file);
            continue;
        }
        file.bytes = fs::metadata(&file.path).map(|m| m.len()).unwrap_or(0);
        if remaining == 0 {
            file.status = Status::Omitted;
            out.push(file);
            continue;
        }
        match read_capped(&file.path, remaining) {
            Ok((data, size)) => {
                let text = String::from_utf8_lossy(&data).into_owned();
                let included = data.len() as u64;
                file.bytes = size;
                file.status = if text.trim().is_empty() {
                    Status::Empty
                } else if included < size {
                    Status::Truncated
                } else {
                    Status::Loaded
                };
                if file.status != Status::Empty {
                    parts.push(text);
                    remaining = remaining.saturating_sub(included);
                    file.included_bytes = included;
                }
            }
            Err(_) => file.status = Status::Unreadable,
        }
        out.push(file);
    }
    out.extend(shadowed);
    let docs = (!parts.is_empty()).then(|| parts.join("\n\n"));
    // The heading names the directory only when project docs were found (observed with
    // `codex debug prompt-input`).
    let heading = match &docs {
        Some(_) => format!("# AGENTS.md instructions for {}", cwd.display()),
        None => "# AGENTS.md instructions".to_string(),
    };
    let body = match (global_text, docs) {
        (Some(g), Some(d)) => Some(format!("{g}\n\n--- project-doc ---\n\n{d}")),
        (Some(g), None) => Some(g),
        (None, Some(d)) => Some(d),
        (None, None) => None,
    };
    let parts = body.map(|b| format!("{heading}\n\n<INSTRUCTIONS>\n{b}\n</INSTRUCTIONS>")).into_iter().collect();
    (out, parts)
}

/// The line (1-based) of the first byte an agent does not get of a truncated file, as the file
/// is on disk now.
pub fn cut_line(file: &AgentFile) -> usize {
    let text = crate::chain::source::read_prefix(&file.path, file.included_bytes);
    crate::chain::lint::line_col(&text, file.included_bytes as usize).0
}

/// One sentence on what `view`'s agent does with `file` when it does not get it whole, naming
/// the line where a cut falls; `None` when the agent gets the file whole.
/// `name` shows a path (relative to the folder, say).
pub fn explain(view: &AgentView, file: &AgentFile, name: impl Fn(&Path) -> String) -> Option<String> {
    let agent = display_name(view.profile);
    let spent: Vec<String> = view
        .files
        .iter()
        .take_while(|f| f.path != file.path)
        .filter(|f| f.status.reaches() && f.included_bytes > 0)
        .map(|f| name(&f.path))
        .collect();
    let budget = view.budget.clone().unwrap_or_else(|| "budget".into());
    let by = if spent.is_empty() { String::new() } else { format!(" spent by {}", spent.join(", ")) };
    match file.status {
        Status::Truncated => {
            let line = cut_line(file);
            Some(format!(
                "{agent} cuts this file at line {line}, after {} of {} bytes ({budget}{by})",
                file.included_bytes, file.bytes
            ))
        }
        Status::Omitted => Some(format!("{agent} leaves this file out ({budget}{by})")),
        Status::Shadowed => Some(format!(
            "{agent} ignores this file: it loads {} instead",
            file.by.as_deref().map(&name).unwrap_or_default()
        )),
        Status::Oversized => Some(format!("{agent} does not load this file: it is too large ({} bytes)", file.bytes)),
        Status::Duplicate => Some(format!("{agent} drops this file: its text repeats a file it already loads")),
        Status::LinkedOutside => Some(format!(
            "{agent} would load this link's target {}, outside the project; instructions-lsp does not read it",
            file.by.as_deref().map(|p| p.display().to_string()).unwrap_or_default()
        )),
        Status::Capped => Some(format!(
            "{agent} would load this file, but this view already read {} (instructions-lsp's cap for one agent); not read",
            size_words(read::VIEW_READ_CAP)
        )),
        Status::Runaway => Some(format!(
            "{agent} inlines this file's @imports again wherever they appear, past {} in all; not mirrored (the agent itself would build a context this large or fail)",
            size_words(imports::EXPANSION_CAP)
        )),
        _ => None,
    }
}

/// What the agent profile `name` does differently with the files of a chain in `cwd`: what it
/// cuts, leaves out or ignores, as findings (`agentCut`, `agentIgnored`). Agents read the disk,
/// so these follow saved files. Paths in messages are relative to the project root (`.git`).
pub fn findings(name: &str, env: &AgentEnv, cwd: &Path, touched: &[PathBuf]) -> Vec<crate::chain::lint::Finding> {
    use crate::chain::lint::{Code, Finding, Related, Span};
    let Some(profile) = profile(name, env, &Overrides::default()) else { return Vec::new() };
    let view = load(&profile, cwd, touched);
    let cwd_real = fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let base = cwd_real.ancestors().find(|d| has_git(d)).unwrap_or(&cwd_real).to_path_buf();
    let show = |p: &Path| match p.strip_prefix(&base) {
        Ok(rel) if !rel.as_os_str().is_empty() => crate::paths::slash_join(rel),
        _ => p.display().to_string(),
    };
    let mut out = Vec::new();
    for f in &view.files {
        let Some(message) = explain(&view, f, show) else { continue };
        let cut = matches!(
            f.status,
            Status::Truncated | Status::Omitted | Status::Oversized | Status::Capped | Status::Runaway
        );
        let code = match f.status {
            Status::LinkedOutside => Code::LinkOutside,
            _ if cut => Code::AgentCut,
            _ => Code::AgentIgnored,
        };
        out.push(Finding {
            path: f.path.clone(),
            code,
            span: if f.status == Status::Truncated {
                Span::ToEnd { start: f.included_bytes as usize }
            } else {
                Span::FirstLine
            },
            message,
            related: f.by.as_ref().filter(|_| f.status != Status::LinkedOutside).map(|p| Related {
                path: p.clone(),
                message: format!("{} loads this file", display_name(view.profile)),
            }),
        });
    }
    out
}

/// How an agent is called in messages.
pub fn display_name(profile: &str) -> &'static str {
    match profile {
        "codex" => "Codex",
        "claude" => "Claude Code",
        "gemini" => "Gemini CLI",
        "opencode" => "opencode",
        "dsh-next" => "DeepSeek Harness (next)",
        _ => "The agent",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_spends_one_budget_root_first_and_says_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("repo");
        fs::create_dir_all(repo.join(".git")).expect("git");
        fs::create_dir_all(repo.join("pkg/deep")).expect("dirs");
        fs::write(repo.join("AGENTS.md"), "root rules, quite a few of them").expect("write");
        fs::write(repo.join("pkg/AGENTS.md"), "   ").expect("write");
        fs::write(repo.join("pkg/deep/CLAUDE.md"), "fallback deep").expect("write");
        let home = dir.path().join("home");
        fs::create_dir_all(&home).expect("home");
        fs::write(home.join("AGENTS.md"), "global rules").expect("write");
        let profile = codex(&home, Some(40), &["CLAUDE.md".to_string()]);
        let view = load(&profile, &repo.join("pkg/deep"), &[]);
        let cwd = fs::canonicalize(repo.join("pkg/deep")).expect("canonical");
        assert_eq!(
            view.text,
            format!(
                "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nglobal rules\n\n--- project-doc ---\n\nroot rules, quite a few of them\n\nfallback \n</INSTRUCTIONS>",
                cwd.display()
            )
        );
        let statuses: Vec<&str> = view.files.iter().map(|f| f.status.as_str()).collect();
        assert_eq!(statuses, ["loaded", "loaded", "empty", "truncated"]);
        assert_eq!(view.files[3].included_bytes, 9);
    }
}
