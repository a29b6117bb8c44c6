//! What `diff` answers: the changes to each agent's view, grouped by directory, in the shapes the
//! CLI prints and serialises.

use serde::Serialize;

use crate::chain::agents::{self, Status};
use crate::chain::lint::Severity;

/// Everything a change does to the agents.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    pub base: String,
    pub head: String,
    /// The profiles compared: on both sides, the agents either side is written for (or those
    /// named on the command line).
    pub agents: Vec<String>,
    /// Which agents each side is written for, and why, in `check`'s words.
    pub checked_for: CheckedFor,
    /// The instruction files an agent reads on either side whose text changed.
    pub files: Vec<FileChange>,
    /// Directories that change the same way for one agent, most directories first.
    pub groups: Vec<Group>,
    /// Places where agents start only on the head side, or only on the base side.
    pub added_dirs: Vec<String>,
    pub removed_dirs: Vec<String>,
    /// Findings whose file, code and agent only the head side has, only the base side, or both
    /// with other words (a cut that moves).
    pub new_findings: Vec<Found>,
    pub gone_findings: Vec<Found>,
    pub changed_findings: Vec<Found>,
    /// What laying out the sides skipped, and why (a crafted tree naming one file twice).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Diff {
    /// Whether no agent's view and no finding changes.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
            && self.new_findings.is_empty()
            && self.gone_findings.is_empty()
            && self.changed_findings.is_empty()
            && self.added_dirs.is_empty()
            && self.removed_dirs.is_empty()
    }

    /// Whether the head side has a finding at or above `threshold` the base side has not.
    pub fn has_new(&self, threshold: Severity) -> bool {
        self.new_findings.iter().any(|f| f.level <= threshold)
    }
}

#[derive(Debug, Serialize)]
pub struct CheckedFor {
    pub base: String,
    pub head: String,
}

/// An instruction file whose text changed: its size on each side (`None`: not there).
#[derive(Debug, Serialize)]
pub struct FileChange {
    pub path: String,
    pub before: Option<u64>,
    pub after: Option<u64>,
}

/// One agent, the directories where it starts that change alike, and how.
#[derive(Debug, Serialize)]
pub struct Group {
    pub agent: &'static str,
    pub dirs: Vec<DirBytes>,
    pub changes: Vec<Change>,
}

/// What an agent started in a directory receives on each side, in bytes.
#[derive(Debug, Serialize)]
pub struct DirBytes {
    pub dir: String,
    pub before: usize,
    pub after: usize,
    /// `dir` stands for a class of folders (see [`crate::session::starts::Class`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<ClassOf>,
}

/// The folders a view from one of them stands for: every folder below `below` without the
/// agent's `own` file of its own, `packageRoots` package roots and `named` folders `starts`
/// names among them. Their view differs from `below`'s (Claude Code's imports from outside the
/// folder it starts in).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassOf {
    pub below: String,
    pub package_roots: usize,
    pub named: usize,
    pub own: String,
}

/// A file as a change names it: relative to the directory where the agent starts when it lies
/// in that directory (`own`: each package's own `AGENTS.md` is the same change), else from the
/// repository's root.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Place {
    pub path: String,
    pub own: bool,
}

/// What the agent does with a file on one side.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    pub status: String,
    /// The file's size and how much of it the agent gets; `None` where a change says it of each
    /// directory's own file (each has its own size: the directories still change alike).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub included_bytes: Option<u64>,
    /// The file it loses to, or that imports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// `by` is named from the directory where the agent starts: each directory's own file.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_own: bool,
    /// The globs a rule attaches by, and how many files of the repository they match.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub globs: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matching: Option<usize>,
    /// The agent's budget, when it cuts or leaves the file out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
}

impl State {
    /// The same without the sizes.
    pub(super) fn without_sizes(&self) -> Self {
        Self { bytes: None, included_bytes: None, ..self.clone() }
    }

    /// How the agent treats a file it does not load, whatever its size.
    pub(super) fn treatment(&self) -> (&str, Option<&String>, bool, &[String], Option<usize>) {
        (&self.status, self.by.as_ref(), self.by_own, &self.globs, self.matching)
    }

    pub(super) fn reaches(&self) -> bool {
        self.status == Status::Loaded.as_str() || self.status == Status::Truncated.as_str()
    }
}

/// One change of one agent's view in one directory.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Change {
    /// The file no longer reaches the agent; `after` is what the agent does with it now.
    Leaves { file: Place, before: State, after: Option<State> },
    /// The file reaches the agent now (whole or cut); `before` is what the agent did with it.
    Enters { file: Place, before: Option<State>, after: State },
    /// The file reaches the agent on both sides, with other bytes or another cut.
    Resized { file: Place, before: State, after: State },
    /// The file does not reach the agent on either side, and the agent treats it otherwise (a
    /// rule that waits for other files, a file now shadowed by another).
    Treated { file: Place, before: Option<State>, after: Option<State> },
    /// The same files, with other text.
    Text,
}

impl Change {
    /// The change as directories that change alike share it: a directory's own file that
    /// reaches the agent on both sides said without its sizes.
    pub(super) fn without_own_sizes(&self) -> Change {
        match self {
            Change::Resized { file, before, after } if file.own && before.status == after.status => {
                Change::Resized { file: file.clone(), before: before.without_sizes(), after: after.without_sizes() }
            }
            other => other.clone(),
        }
    }
}

/// A finding on one side, placed in its file.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub severity: &'static str,
    #[serde(skip)]
    pub level: Severity,
    pub code: &'static str,
    pub agent: Option<&'static str>,
    pub message: String,
}

/// A profile as people read it: the agent's name ("Claude Code"), or the engine's own (`dsh`).
pub fn profile_name(profile: &str) -> &str {
    if agents::NAMES.contains(&profile) { agents::display_name(profile) } else { profile }
}
