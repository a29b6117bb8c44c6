//! What a profile produces: the files of an agent's chain with what the agent does with each
//! ([`Status`]), and the text it puts in its context ([`AgentView`]).

use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where a file of an agent's chain comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Global,
    Project,
    Nested,
    Import,
}

/// What the agent does with a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
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
    /// Not read: the view already read its [`crate::chain::text::read::VIEW_READ_CAP`].
    Capped,
    /// A rule that loads only when a touch reaches a file matching its `globs` (Claude Code's
    /// `paths:` front matter); no touch has yet.
    Waiting,
    /// Never attached on its own: the agent is told the file exists (its path, its
    /// description) and reads it when it judges it relevant (Copilot's instructions without
    /// `applyTo`, Cursor's agent-requested rules, nested `AGENTS.md` Copilot lists).
    OnRequest,
    /// Attached only when the user names it (a Cursor rule with neither `alwaysApply`, `globs`
    /// nor `description`).
    Manual,
    /// `@imports` that expand past [`crate::chain::text::imports::EXPANSION_CAP`]: the agent itself would build a
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
            Status::Waiting => "waiting",
            Status::Runaway => "runaway",
            Status::OnRequest => "on-request",
            Status::Manual => "manual",
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
    /// The globs a [`Status::Waiting`] rule waits for (as the agent reads them), also once a
    /// touch loaded it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub globs: Vec<String>,
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
        Self {
            path,
            scope,
            bytes: 0,
            included_bytes: 0,
            status,
            by: None,
            globs: Vec::new(),
            label: None,
            role: Role::Neutral,
            batch: 0,
        }
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

/// A file of the chain with the text the agent takes from it, as an agent's join is given them.
pub struct Entry {
    pub file: AgentFile,
    pub text: String,
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
    /// Why the agent loads nothing, when it does ("none of GEMINI.md is on its way here, nor a
    /// global file of its own"): every edge says it beside an empty answer.
    #[serde(skip)]
    pub nothing: Option<String>,
    /// Whether the user-global file spends the budget (dsh-next) or not (Codex).
    #[serde(skip)]
    pub global_in_budget: bool,
    /// Where the agent works (a real path), for messages.
    #[serde(skip)]
    pub cwd: PathBuf,
    /// What an import must stay inside, in words ("its working directory"), for messages.
    #[serde(skip)]
    pub import_boundary: &'static str,
    /// Problems with rules the agent reads as written but never attaches as meant (a glob that
    /// matches no file, front matter that does not parse, a rule nothing attaches, a file the
    /// agent never finds, a text attached twice); findings of their own.
    #[serde(skip)]
    pub rule_problems: Vec<RuleProblem>,
    /// For each rule waiting for a touch: how many files of the repository its patterns match,
    /// and the first of them (for hovers: "for which files").
    #[serde(skip)]
    pub rule_reach: Vec<RuleReach>,
    /// The repository whose listing the view searched (its rules' patterns, Copilot's nested
    /// `AGENTS.md`), by its base: the view holds while no file is made or removed in it.
    #[serde(skip)]
    pub repository: Option<PathBuf>,
}

/// How many files of the repository a waiting rule's patterns match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleReach {
    pub path: PathBuf,
    pub matching: usize,
    pub example: Option<PathBuf>,
}

/// One problem of an agent's rules, for one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleProblem {
    pub path: PathBuf,
    pub kind: RuleProblemKind,
    pub message: String,
    /// The other file a problem is about (the file a text repeats).
    pub other: Option<PathBuf>,
    /// The bytes of the file the problem is written at (a mention), when not its first line.
    pub at: Option<(usize, usize)>,
    /// A safe change that mends it.
    pub fix: Option<crate::chain::model::fix::Fix>,
}

/// How much a [`RuleProblem`] matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleProblemKind {
    /// The rule (or file) never reaches the agent as meant (`agentRule`, a warning).
    Never,
    /// The rule attaches, but one of its patterns matches no file (`deadPattern`, information).
    DeadPattern,
    /// The agent gets the same text twice (`attachedTwice`, a warning).
    AttachedTwice,
    /// An `@` mention that looks like a file names none (`missingImport`, a warning).
    MissingImport,
    /// A front-matter key or value the agent reads otherwise than meant: a misspelt key, a value
    /// of a type it discards or that it does not know (`frontMatter`, a warning).
    FrontMatter,
    /// A front-matter key the agent does not read, and no misspelling of one it does
    /// (`unknownKey`, information).
    UnknownKey,
}

impl RuleProblem {
    pub fn new(path: PathBuf, kind: RuleProblemKind, message: String) -> Self {
        Self { path, kind, message, other: None, at: None, fix: None }
    }
}
