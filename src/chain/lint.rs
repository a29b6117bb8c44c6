//! Findings (the diagnostics of docs/protocol.md) as plain data with byte spans, so the CLI
//! prints them as `line:col` and the language server maps them to LSP positions.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use super::model::fix::{Change, ConfigChange, Fix};

use super::discover::ChainFile;
use super::discover::SkippedFile;
use super::render::{Rendered, escapes};
use super::settings::{Frame, Settings};
use super::source::{SkipDetail, SkipReason};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
            Self::Information => "info",
            Self::Hint => "hint",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    Shadowed,
    Omitted,
    Truncated,
    TooLarge,
    InvalidUtf8,
    Symlink,
    FrameEscape,
    Empty,
    Duplicate,
    /// An agent profile of `profiles` cuts or leaves out this file.
    AgentCut,
    /// An agent profile of `profiles` ignores this file for another one.
    AgentIgnored,
    /// A link (or a directory link on the way) that leads an agent out of the project.
    LinkOutside,
    /// `check` cannot read a directory of the tree, so what it holds is not checked.
    UnreadableDirectory,
    /// No agent the repository is checked for reads this file (each loads another instead).
    NotRead,
    /// A rule an agent never attaches as written: a glob that matches no file, front matter
    /// that does not parse, a Cursor rule with nothing that attaches it.
    AgentRule,
    /// A pattern of a rule that attaches by its other patterns matches no file.
    DeadPattern,
    /// An agent gets this file's text twice (through a link, or a copy).
    AttachedTwice,
    /// An agent started in a subdirectory does not load this file, which an instruction file
    /// imports from outside that directory (Claude Code in non-interactive runs).
    ImportOutside,
    /// An `@` mention that looks like a file (an import of Claude Code or Gemini CLI) names
    /// none: the agent loads nothing for it.
    MissingImport,
    /// A front-matter key or value an agent reads otherwise than meant: a misspelt key, a value
    /// of a type it discards, a value it does not know.
    FrontMatter,
    /// A front-matter key an agent does not read, and no misspelling of one it does.
    UnknownKey,
    /// `instructions-lsp.toml` cannot be used (it does not parse, or names an unknown agent or
    /// key): the agents are detected instead.
    BadConfig,
}

impl Code {
    /// Every code, in the order of the diagnostics table (docs/protocol.md).
    pub const ALL: &'static [Code] = &[
        Self::Shadowed,
        Self::Omitted,
        Self::Truncated,
        Self::TooLarge,
        Self::InvalidUtf8,
        Self::Symlink,
        Self::FrameEscape,
        Self::Empty,
        Self::Duplicate,
        Self::AgentCut,
        Self::AgentIgnored,
        Self::AgentRule,
        Self::DeadPattern,
        Self::AttachedTwice,
        Self::NotRead,
        Self::ImportOutside,
        Self::MissingImport,
        Self::FrontMatter,
        Self::UnknownKey,
        Self::BadConfig,
        Self::UnreadableDirectory,
        Self::LinkOutside,
    ];

    /// What the code means, in one sentence (the diagnostics table's "when").
    pub fn summary(self) -> &'static str {
        match self {
            Self::Shadowed => "An earlier candidate wins in this directory, so this file is never read.",
            Self::Omitted => "The file is dropped whole from a block by the budget.",
            Self::Truncated => "The budget cuts the file: agents never see the rest.",
            Self::TooLarge => "The file is over the size a chain loads.",
            Self::InvalidUtf8 => "The file is not valid UTF-8.",
            Self::Symlink => "A link skipped by the symlinks policy.",
            Self::FrameEscape => "A literal closing tag or marker that rendering escapes.",
            Self::Empty => "The file is empty or white space only.",
            Self::Duplicate => "The same text as another file on the same chain.",
            Self::AgentCut => "An agent cuts the file, leaves it out, or finds it too large.",
            Self::AgentIgnored => "An agent ignores the file: it loads another name instead.",
            Self::AgentRule => {
                "A rule the agent never attaches as written (globs that match nothing, bad front matter)."
            }
            Self::DeadPattern => "One pattern of a rule matches no file of the repository.",
            Self::AttachedTwice => "An agent gets this file's text twice (a link, a copy).",
            Self::NotRead => "No agent the repository is written for reads this file by any route.",
            Self::ImportOutside => {
                "An agent started in a subdirectory does not load this file, which an instruction file imports from outside it."
            }
            Self::MissingImport => "An `@` import names no file: the agent loads nothing for it.",
            Self::FrontMatter => {
                "A front-matter key or value the agent reads otherwise than meant (misspelt, of the wrong type)."
            }
            Self::UnknownKey => "A front-matter key the agent does not read at all.",
            Self::BadConfig => "The project configuration cannot be used; the agents are detected instead.",
            Self::UnreadableDirectory => "A directory of the tree cannot be read, so what it holds is not checked.",
            Self::LinkOutside => "An agent would follow this link out of the project.",
        }
    }

    /// Whether findings of this code are about one token of a file (an import, a key) rather
    /// than the file: each is said apart, beside what else is said of the file.
    pub fn at_token(self) -> bool {
        matches!(self, Self::MissingImport | Self::FrontMatter | Self::UnknownKey)
    }

    /// The code whose [`Code::name`] is `name`.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Shadowed => "shadowed",
            Self::Omitted => "omitted",
            Self::Truncated => "truncated",
            Self::TooLarge => "tooLarge",
            Self::InvalidUtf8 => "invalidUtf8",
            Self::Symlink => "symlink",
            Self::FrameEscape => "frameEscape",
            Self::Empty => "empty",
            Self::Duplicate => "duplicate",
            Self::AgentCut => "agentCut",
            Self::AgentIgnored => "agentIgnored",
            Self::LinkOutside => "linkOutside",
            Self::UnreadableDirectory => "unreadableDirectory",
            Self::NotRead => "notRead",
            Self::AgentRule => "agentRule",
            Self::ImportOutside => "importOutside",
            Self::MissingImport => "missingImport",
            Self::FrontMatter => "frontMatter",
            Self::UnknownKey => "unknownKey",
            Self::BadConfig => "badConfig",
            Self::DeadPattern => "deadPattern",
            Self::AttachedTwice => "attachedTwice",
        }
    }

    pub fn severity(self) -> Severity {
        match self {
            Self::Shadowed
            | Self::Omitted
            | Self::Truncated
            | Self::Symlink
            | Self::AgentCut
            | Self::LinkOutside
            | Self::UnreadableDirectory
            | Self::NotRead
            | Self::AgentRule
            | Self::AttachedTwice
            | Self::ImportOutside
            | Self::MissingImport
            | Self::FrontMatter => Severity::Warning,
            Self::AgentIgnored | Self::DeadPattern | Self::UnknownKey => Severity::Information,
            Self::TooLarge | Self::InvalidUtf8 | Self::BadConfig => Severity::Error,
            Self::FrameEscape => Severity::Information,
            Self::Empty | Self::Duplicate => Severity::Hint,
        }
    }
}

/// Where in a file a finding applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Span {
    /// The first line (whatever its length turns out to be).
    FirstLine,
    /// A byte range of the content.
    Bytes { start: usize, end: usize },
    /// From a byte offset to the end of the content.
    ToEnd { start: usize },
}

impl Span {
    /// The byte range within `text`, clamped to it.
    pub fn byte_range(self, text: &[u8]) -> (usize, usize) {
        let len = text.len();
        match self {
            Span::FirstLine => (0, text.iter().position(|&b| b == b'\n').unwrap_or(len)),
            Span::Bytes { start, end } => (start.min(len), end.min(len)),
            Span::ToEnd { start } => (start.min(len), len),
        }
    }
}

/// Another file a finding points at (the winner of a shadowed file, the twin of a duplicate).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Related {
    pub path: PathBuf,
    pub message: String,
}

/// One diagnostic of one file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Finding {
    pub path: PathBuf,
    pub code: Code,
    pub span: Span,
    pub message: String,
    pub related: Option<Related>,
    /// The agent profile the finding is about (`codex`, …); `None` for the engine's own.
    pub agent: Option<&'static str>,
    /// A safe change that mends it, when there is one.
    pub fix: Option<Fix>,
}

/// The replacements of `fixes` (those of one file) that a fix of everything applies together to
/// `text`: inside it, at character boundaries, none overlapping one taken before it (the first
/// of two fixes of one place wins), the same replacement once; last first, so that each applies
/// without moving the others.
pub fn fix_all<'a>(fixes: impl IntoIterator<Item = &'a Fix>, text: &str) -> Vec<(usize, usize, &'a str)> {
    let mut edits: Vec<(usize, usize, &str)> = Vec::new();
    for fix in fixes {
        let Change::Replace { start, end, text: with } = &fix.change else { continue };
        let (start, end) = (*start, *end);
        let fits = start <= end && end <= text.len() && text.is_char_boundary(start) && text.is_char_boundary(end);
        if fits && !edits.iter().any(|(s, e, _)| (start < *e && *s < end) || (start == *s && end == *e)) {
            edits.push((start, end, with));
        }
    }
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    edits
}

/// `text` with `edits` (as [`fix_all`] gives them) applied.
pub fn apply(text: &str, edits: &[(usize, usize, &str)]) -> String {
    let mut out = text.to_string();
    for (start, end, with) in edits {
        out.replace_range(*start..*end, with);
    }
    out
}

impl Finding {
    pub fn severity(&self) -> Severity {
        self.code.severity()
    }
}

fn finding(path: &Path, code: Code, span: Span, message: String) -> Finding {
    Finding { path: path.to_path_buf(), code, span, message, related: None, agent: None, fix: None }
}

/// Findings for candidates that exist but do not load.
pub fn skip_findings(
    skipped: &[SkippedFile],
    settings: &Settings,
    heading_of: impl Fn(&Path) -> String,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in skipped {
        let f = match (s.reason, &s.detail) {
            (SkipReason::Shadowed, _) => {
                let winner = s.shadowed_by.as_deref().map(&heading_of).unwrap_or_default();
                let mut f = finding(
                    &s.path,
                    Code::Shadowed,
                    Span::FirstLine,
                    format!(
                        "shadowed by {winner}: agents load only the first loadable of {} in a directory, so this file is never read",
                        settings.candidates.join(", ")
                    ),
                );
                f.related = s
                    .shadowed_by
                    .clone()
                    .map(|path| Related { path, message: "the file that is loaded instead".into() });
                f
            }
            (SkipReason::Duplicate, _) => {
                let twin = s.shadowed_by.as_deref().map(&heading_of).unwrap_or_default();
                let mut f = finding(
                    &s.path,
                    Code::Duplicate,
                    Span::FirstLine,
                    format!("dropped: its trimmed content equals {twin} in the same directory (dedupeTrimmed)"),
                );
                f.related = s
                    .shadowed_by
                    .clone()
                    .map(|path| Related { path, message: "the file with the same content".into() });
                f
            }
            (SkipReason::Symlink, detail) => finding(
                &s.path,
                Code::Symlink,
                Span::FirstLine,
                format!("symlink{}: not loaded under the `symlinks: skip` policy", target_text(detail)),
            ),
            (SkipReason::OutsideRoot, detail) => finding(
                &s.path,
                Code::Symlink,
                Span::FirstLine,
                format!(
                    "symlink{}: its target leaves the project root, so `symlinks: {}` does not load it",
                    target_text(detail),
                    settings.symlinks.name()
                ),
            ),
            (SkipReason::TooLarge, detail) => {
                let size = match detail {
                    SkipDetail::Size(n) => crate::chain::words::bytes(*n),
                    _ => "the file".into(),
                };
                finding(
                    &s.path,
                    Code::TooLarge,
                    Span::FirstLine,
                    format!(
                        "{size} exceeds maxFileBytes ({}): this file is never loaded",
                        crate::chain::words::number(settings.max_file_bytes)
                    ),
                )
            }
            (SkipReason::ChainTooLarge, _) => finding(
                &s.path,
                Code::TooLarge,
                Span::FirstLine,
                format!(
                    "the more specific files of this chain fill the {} one chain loads: this file is never loaded",
                    crate::chain::words::size_words(crate::chain::discover::CHAIN_READ_CAP)
                ),
            ),
            (SkipReason::InvalidUtf8, detail) => {
                let at = match detail {
                    SkipDetail::InvalidAt(i) => *i,
                    _ => 0,
                };
                finding(
                    &s.path,
                    Code::InvalidUtf8,
                    Span::Bytes { start: at, end: at + 1 },
                    format!("invalid UTF-8 at byte {at}: this file is never loaded"),
                )
            }
            (SkipReason::NotAFile | SkipReason::Unreadable, _) => continue,
        };
        out.push(f);
    }
    out
}

fn target_text(detail: &SkipDetail) -> String {
    match detail {
        SkipDetail::Target(t) if !t.as_os_str().is_empty() => format!(" to {}", t.display()),
        _ => String::new(),
    }
}

/// Findings of a file's own content: `frameEscape` and `empty`.
pub fn content_findings(path: &Path, text: &str, frame: Frame) -> Vec<Finding> {
    let mut out = Vec::new();
    if text.trim().is_empty() {
        out.push(finding(
            path,
            Code::Empty,
            Span::FirstLine,
            "empty instruction file: agents get only its heading".into(),
        ));
    }
    for (literal, replacement) in escapes(frame) {
        for (start, _) in text.match_indices(literal) {
            out.push(finding(
                path,
                Code::FrameEscape,
                Span::Bytes { start, end: start + literal.len() },
                format!(
                    "`{literal}` is escaped to `{replacement}` in the `{}` frame, so agents see it altered",
                    frame.name()
                ),
            ));
        }
    }
    out
}

/// Findings that depend on a chain as a whole: `omitted`, `truncated` and `duplicate`.
/// `folder` names the session (or directory) whose agents get this block.
pub fn chain_findings(folder: &str, files: &[ChainFile], rendered: &Rendered, budget_bytes: i64) -> Vec<Finding> {
    let mut out = Vec::new();
    if !rendered.disabled {
        for &i in &rendered.omitted {
            let Some(f) = files.get(i) else { continue };
            out.push(finding(
                &f.path,
                Code::Omitted,
                Span::FirstLine,
                format!(
                    "omitted from the instructions of {folder}: the chain needs {} and the budget is {} (baselineMaxBytes); more specific files fill it first",
                    crate::chain::words::bytes(rendered.full_bytes as u64),
                    crate::chain::words::bytes(budget_bytes.max(0) as u64)
                ),
            ));
        }
        // A "truncation" that keeps every byte only swapped INTRO for COMPACT: nothing to flag.
        if let Some(t) = rendered.truncated.filter(|t| t.included_bytes < t.original_bytes)
            && let Some(f) = files.get(t.index)
        {
            out.push(finding(
                    &f.path,
                    Code::Truncated,
                    Span::ToEnd { start: t.included_bytes },
                    format!(
                        "agents working in {folder} never see this part: the file is cut from {} to {} to fit the budget of {}",
                        crate::chain::words::number(t.original_bytes as u64),
                        crate::chain::words::bytes(t.included_bytes as u64),
                        crate::chain::words::bytes(budget_bytes.max(0) as u64)
                    ),
                ));
        }
    }
    let mut first_by_digest: HashMap<&str, &ChainFile> = HashMap::new();
    for f in files {
        match first_by_digest.get(f.file.sha256.as_str()) {
            Some(earlier) => {
                let mut d = finding(
                    &f.path,
                    Code::Duplicate,
                    Span::FirstLine,
                    format!(
                        "same content (SHA-256 {}…) as {} on the chain of {folder}: agents read it twice",
                        &f.file.sha256[..12],
                        earlier.heading
                    ),
                );
                d.related = Some(Related {
                    path: earlier.path.clone(),
                    message: "the earlier file with the same content".into(),
                });
                out.push(d);
            }
            None => {
                first_by_digest.insert(&f.file.sha256, f);
            }
        }
    }
    out
}

/// 1-based line and column (in characters) of a byte offset; offsets inside a character
/// or past the end are clamped.
pub fn line_col(text: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    // (Counted many bytes at a time: a cut 32 KiB into a file is placed in every view of it.)
    let line = memchr::memchr_iter(b'\n', before).count() + 1;
    let col = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_listed_once_with_a_sentence() {
        let names: std::collections::BTreeSet<&str> = Code::ALL.iter().map(|c| c.name()).collect();
        // As many as the diagnostics table of docs/protocol.md has rows.
        let table = include_str!("../../docs/protocol.md");
        let rows = table.lines().filter(|l| l.starts_with("| `") && l.contains("` | ")).count();
        assert_eq!((names.len(), Code::ALL.len()), (rows, rows));
        assert!(Code::ALL.iter().all(|c| c.summary().ends_with('.')));
    }

    #[test]
    fn line_col_counts_characters() {
        let text = "ab\n日本x".as_bytes();
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 3), (2, 1));
        assert_eq!(line_col(text, 9), (2, 3));
    }

    #[test]
    fn frame_escapes_are_found_at_each_occurrence() {
        let text = "x </workspace-context>\n<!-- project-instruction-files:path=a -->";
        let found = content_findings(Path::new("/r/AGENTS.md"), text, Frame::WorkspaceContext);
        let spans: Vec<_> = found.iter().map(|f| (f.code, f.span)).collect();
        assert_eq!(
            spans,
            [
                (Code::FrameEscape, Span::Bytes { start: 2, end: 22 }),
                (Code::FrameEscape, Span::Bytes { start: 23, end: 59 })
            ]
        );
        assert!(content_findings(Path::new("/r/AGENTS.md"), text, Frame::SystemReminder).is_empty());
        assert_eq!(content_findings(Path::new("/r/AGENTS.md"), " \n\t", Frame::SystemReminder)[0].code, Code::Empty);
    }
}
