//! The rules an agent profile is made of: one small type per question (which file counts as
//! present, which ones count, where the walk stops, in what order, what a touch adds, imports,
//! the budget, the join), and [`AgentProfile`], one agent's answers. The answers themselves are
//! in each agent's file (`codex.rs`, `claude.rs`, …), and so is an agent's own way of picking,
//! cutting or joining: a function value here ([`Pick::Own`], [`Join::Own`], the cut of a
//! [`Budget`]), so that the loader calls it without naming the agent.

use std::path::{Path, PathBuf};

use crate::chain::model::view::{AgentFile, Entry, Role, RuleProblem, Scope};

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
#[derive(Clone, Copy, Debug)]
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
    /// The agent's own search, not by candidate names per directory, defined in its file: VS
    /// Code's chat instructions from the project root only (`copilot.rs`), Cursor's rules
    /// folders, `AGENTS.md` and `.cursorrules` (`cursor.rs`).
    Own(PickFn),
}

/// An agent's own pick: the files it takes from `dirs` (root first), with the shadowed ones.
pub type PickFn = fn(profile: &AgentProfile, dirs: &[PathBuf], scope: Scope) -> Vec<AgentFile>;

/// How a rule's globs meet a touched file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GlobStyle {
    /// As gitignore lines, relative to the directory holding the rule's `.claude` or `.cursor`
    /// (Claude Code; Cursor, whose matching is undocumented).
    #[default]
    Gitignore,
    /// As VS Code's `applyTo`: each pattern not starting with `/` or `**/` gets `**/` in front
    /// and is matched against the file's absolute path, case-insensitively, `*` within one
    /// segment (`computeAutomaticInstructions.ts`, `_matches`).
    VsCode,
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
    /// None here: the profile's [`Pick`] finds the user's own files too, as they depend on the
    /// workspace's settings (Copilot).
    ByPick,
}

/// Where files reached by a touch come from.
#[derive(Clone, Copy, Debug)]
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

/// How the byte budget cuts. A budget reads the files itself and joins what it keeps, so each
/// carries the agent's own cut, defined in its file.
#[derive(Clone, Debug)]
pub enum Budget {
    /// No budget: every file is read whole, with its imports, then the [`Join`] makes the message.
    None,
    /// One budget shared root-first: each file is read up to what remains (the crossing file is
    /// cut mid-character if need be, decoded lossily); files empty after trimming are dropped and
    /// cost nothing; no marker says anything was cut (Codex, `cut` in `codex.rs`).
    SharedRootFirst { max_bytes: u64, cut: SharedCut },
    /// dsh-agent-instructions: files over `max_source_bytes` are skipped; the rendered block
    /// must fit `max_bytes`, dropping broader files first, then cutting the most specific one
    /// (`fit` in `dshnext.rs`); the global file is shown as `global_display`.
    Block { max_bytes: u64, max_source_bytes: u64, global_display: String, fit: BlockFit },
}

/// What a budget's cut gives: the files, with what it did to each, and the message's parts.
pub type Cut = (Vec<AgentFile>, Vec<String>);

/// A [`Budget::SharedRootFirst`] cut: `files` read within `max_bytes` for an agent started in
/// `cwd`, and joined.
pub type SharedCut = fn(cwd: &Path, files: Vec<AgentFile>, max_bytes: u64) -> Cut;

/// A [`Budget::Block`] fit: `files` read (each up to `max_source` bytes), fitted to `max_bytes`
/// and joined, paths shown from the project `root` and the global file as `global_display`.
pub type BlockFit =
    fn(files: Vec<AgentFile>, root: &Path, global_display: &str, max_bytes: u64, max_source: u64) -> Cut;

/// How the files read whole become the agent's message (with [`Budget::None`]).
#[derive(Clone, Copy, Debug)]
pub enum Join {
    /// The budget joins what it keeps (Codex's `<INSTRUCTIONS>`, dsh-next's block): with no
    /// budget, nothing would.
    ByBudget,
    /// The agent's own join, defined in its file: Gemini's `--- Context from: <path> ---`
    /// sections, opencode's `Instructions from: <path>` entries, Claude Code's
    /// `<system-reminder>`s, VS Code's attachments and `<instructions>` list, Cursor's sections.
    Own(JoinFn),
}

/// What an agent adds once the touches are in, before anything is read (Copilot's referenced
/// files): `root` is the first directory of the walk.
pub type AfterTouchesFn = fn(profile: &AgentProfile, root: &std::path::Path, files: &mut Vec<AgentFile>);

/// An agent's own join: the parts of its context, from the files read, in order.
pub type JoinFn = fn(profile: &AgentProfile, entries: &[Entry]) -> Vec<String>;

/// What becomes of [`Role::Fallback`] files, the agent's own rules (Claude Code's, in
/// `claude.rs`): only the agent that gives its files roles knows when one gives way.
#[derive(Clone, Copy, Debug)]
pub struct Fallbacks {
    /// Shadows the fallback files of `files[from..]` that give way to a primary file with text
    /// (blank or not as the profile's `drop_blank`).
    pub hide: fn(files: &mut [AgentFile], from: usize, drop_blank: bool),
    /// Marks as duplicates the fallback files whose text, once read, repeats another file's.
    pub drop_repeating: fn(entries: &mut [Entry]),
}

/// Rules attached by globs of their own, in files the agent tells by their name (Copilot's
/// `*.instructions.md` and their `applyTo`, Cursor's `*.mdc` and their `globs`): what
/// `rules.rs` checks, in the words the agent's users know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleFiles {
    /// How a rule file's name ends.
    pub suffix: &'static str,
    /// The front matter key that holds a rule's globs.
    pub globs_key: &'static str,
}

/// What an agent does with a file's YAML front matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrontMatter {
    /// It is text like the rest.
    Keep,
    /// It is metadata, not text: the text starts on the line after its closing `---` (Cursor).
    Strip,
    /// Metadata, and the white space after it goes too, blank lines and the first line's
    /// indent: Claude Code 2.1.332 cuts what its pattern `^---\s*\n([\s\S]*?)---\s*\n?`
    /// matches, whose `\s*` after the closing `---` runs over every blank line. Only the texts
    /// a read adds show it: the texts at start are trimmed anyway.
    StripWithSpace,
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
    /// What becomes of YAML front matter (`---` … `---` at the very top).
    pub front_matter: FrontMatter,
    /// A touch skips a file already loaded when it is the same file (device and inode, so a link
    /// to a loaded file counts: Gemini CLI), else when it has the same path.
    pub nested_by_identity: bool,
    /// HTML comments standing as blocks of their own are not text (Claude Code; see
    /// `comments.rs`).
    pub hide_block_comments: bool,
    /// How waiting rules' globs meet a touched file.
    pub glob_style: GlobStyle,
    /// The editor settings a profile reads (VS Code's `chat.*` switches), given by `--set` or
    /// the project configuration; they win over the workspace's `.vscode/settings.json`.
    pub editor_settings: std::collections::BTreeMap<String, serde_json::Value>,
    /// For files of [`Role::Fallback`]: when they give way (none: no file has that role).
    pub fallbacks: Option<Fallbacks>,
    /// The agent's glob-attached rule files, checked for what keeps them from attaching.
    pub rule_files: Option<RuleFiles>,
    /// The touches are the attached files of one request over the whole project (VS Code's): a
    /// touch anywhere below the root counts, not only below the working directory, and a rule it
    /// wakes keeps its place in the list instead of moving after what loaded before.
    pub one_request: bool,
    /// See [`AfterTouchesFn`].
    pub after_touches: Option<AfterTouchesFn>,
    /// What else is wrong with the agent's rules, as only it knows (Copilot: files VS Code never
    /// finds, a text attached twice), besides what `rules.rs` checks for every agent with
    /// [`RuleFiles`]; `base` is the project's directory.
    pub problems: Option<ProblemsFn>,
    /// The directories a view of an agent with its own pick read (see `deps.rs`), `None` when no
    /// set of directories is enough to remember it.
    pub deps: Option<DepsFn>,
}

/// See [`AgentProfile::problems`].
pub type ProblemsFn = fn(profile: &AgentProfile, files: &[AgentFile], base: &std::path::Path) -> Vec<RuleProblem>;

/// See [`AgentProfile::deps`].
pub type DepsFn = fn(
    profile: &AgentProfile,
    view: &crate::chain::model::view::AgentView,
    touched: &[std::path::PathBuf],
) -> Option<std::collections::BTreeSet<std::path::PathBuf>>;

impl AgentProfile {
    /// The rules most profiles share, for the struct-update syntax: nothing global, no layers,
    /// no imports, no budget, front matter kept, blank files dropped.
    pub(crate) fn base(home: Option<PathBuf>) -> Self {
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
            join: Join::ByBudget,
            drop_blank: true,
            home,
            layers: Vec::new(),
            lazy_layers: Vec::new(),
            global_labels: Vec::new(),
            front_matter: FrontMatter::Keep,
            nested_by_identity: false,
            hide_block_comments: false,
            glob_style: GlobStyle::Gitignore,
            editor_settings: Default::default(),
            fallbacks: None,
            rule_files: None,
            one_request: false,
            after_touches: None,
            problems: None,
            deps: None,
        }
    }
}
