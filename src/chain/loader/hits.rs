//! What one pattern of a rule's front matter matches in the repository, for each agent that
//! reads the file: the hover on a glob (`applyTo`, `globs`, `paths`). Each agent matches as it
//! attaches the rule ([`GlobStyle`]): Copilot a `.claude/rules` file's `paths` as VS Code
//! patterns, Claude Code the same patterns as gitignore lines.

use std::path::{Path, PathBuf};

use crate::chain::model::env::in_claude_rules;
use crate::chain::model::profile::GlobStyle;
use crate::chain::model::view::Scope;
use crate::chain::patterns::rule::{is_wildcard, rule_base};
use crate::chain::repo::cache::index;
use crate::chain::repo::index::SearchKey;
use crate::chain::text::keys::{Value, entries};

/// A pattern as written, and what it matches for each agent.
#[derive(Debug, PartialEq, Eq)]
pub struct PatternHits {
    pub pattern: String,
    /// Where the file writes it (byte offsets).
    pub at: (usize, usize),
    /// The front-matter key it is written under.
    pub key: &'static str,
    /// Per agent, what the pattern reaches.
    pub agents: Vec<(&'static str, Reach)>,
}

/// What a pattern reaches.
#[derive(Debug, PartialEq, Eq)]
pub enum Reach {
    /// A wildcard (`**`, `*`): every file.
    Every,
    /// The repository is too large to list.
    Unlisted,
    /// The pattern is longer than [`PATTERN_MAX`]: not matched here.
    TooLong,
    /// How many files it matches, and the first few (in byte order).
    Files(usize, Vec<PathBuf>),
}

/// The longest pattern a hover matches against the repository, in bytes.
pub const PATTERN_MAX: usize = 1024;

/// The key that holds a rule's patterns in the file at `path`, and the agents of `agents` that
/// read it with their glob styles.
fn readers(path: &Path, agents: &[&str]) -> Option<(&'static str, Vec<(&'static str, GlobStyle)>)> {
    let name = path.file_name()?.to_str()?;
    let (key, all): (&'static str, &[(&'static str, GlobStyle)]) = if name.ends_with(".instructions.md") {
        ("applyTo", &[("copilot", GlobStyle::VsCode)])
    } else if name.ends_with(".mdc") {
        ("globs", &[("cursor", GlobStyle::Gitignore)])
    } else if in_claude_rules(path) {
        ("paths", &[("claude", GlobStyle::Gitignore), ("copilot", GlobStyle::VsCode)])
    } else {
        return None;
    };
    let read: Vec<_> = all.iter().filter(|(a, _)| agents.contains(a)).copied().collect();
    (!read.is_empty()).then_some((key, read))
}

/// The pattern written at byte `offset` of `text`, the front matter of the rule file at `path`,
/// with what it matches below `base` (the project's directory) for each of `agents` that reads
/// the file. `None` when `offset` is on no pattern.
pub fn hits_at(path: &Path, text: &str, offset: usize, agents: &[&str], base: &Path) -> Option<PatternHits> {
    let (key, readers) = readers(path, agents)?;
    let entry = entries(text).into_iter().find(|e| e.key == key)?;
    let written: Vec<(String, (usize, usize))> = match entry.value {
        Value::List(items) => items,
        // A string of patterns separated by commas (outside braces).
        Value::Scalar(s, (start, end)) => {
            let inner = start + (end - start - s.len()) / 2;
            split_outside_braces(&s)
                .into_iter()
                .map(|(at, part)| {
                    let lead = part.len() - part.trim_start().len();
                    let p = part.trim().to_string();
                    let from = inner + at + lead;
                    (p.clone(), (from, from + p.len()))
                })
                .collect()
        }
        _ => return None,
    };
    let (pattern, at) = written.into_iter().find(|(p, (s, e))| !p.is_empty() && *s <= offset && offset <= *e)?;
    let listed = index(base);
    let agents = readers
        .into_iter()
        .map(|(agent, style)| {
            if is_wildcard(&pattern) {
                return (agent, Reach::Every);
            }
            if pattern.len() > PATTERN_MAX {
                return (agent, Reach::TooLong);
            }
            let key =
                SearchKey { style, rule_dir: rule_base(path, Scope::Project, base), globs: vec![pattern.clone()] };
            let found = listed.search(std::slice::from_ref(&key)).and_then(|s| s.into_iter().next());
            (agent, found.map_or(Reach::Unlisted, |s| Reach::Files(s.matching, s.examples.clone())))
        })
        .collect();
    Some(PatternHits { pattern, at, key, agents })
}

/// `s` split at the commas outside `{…}`, each part with its offset.
fn split_outside_braces(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push((start, &s[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push((start, &s[start..]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_under_the_cursor_is_matched_as_each_reader_matches_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = crate::chain::repo::memo::real_path(dir.path()).expect("real");
        for f in [".git/HEAD", "src/a.rs", "src/b.rs", "src/deep/c.rs", "src/d.rs", "web/x.ts"] {
            let p = base.join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "x").expect("write");
        }
        let rule = base.join(".github/instructions/rs.instructions.md");
        let text = "---\napplyTo: \"src/*.rs, {web,app}/**\"\n---\nbody\n";
        let on = |needle: &str| text.find(needle).expect("written") + 1;
        let hits = hits_at(&rule, text, on("src/*.rs"), &["copilot"], &base).expect("a pattern");
        assert_eq!((hits.pattern.as_str(), hits.key), ("src/*.rs", "applyTo"));
        assert_eq!(&text[hits.at.0..hits.at.1], "src/*.rs");
        // VS Code's `*` stays within one folder: src/deep/c.rs is not matched.
        let files = ["src/a.rs", "src/b.rs", "src/d.rs"].map(|f| base.join(f)).to_vec();
        assert_eq!(hits.agents, vec![("copilot", Reach::Files(3, files))]);
        // A comma inside braces is no separator.
        let braces = hits_at(&rule, text, on("app}"), &["copilot"], &base).expect("the brace pattern");
        assert_eq!(braces.pattern, "{web,app}/**");
        assert!(matches!(braces.agents[0].1, Reach::Files(1, _)), "{braces:?}");
        // Off the patterns, or for an agent that does not read the file: nothing.
        assert_eq!(hits_at(&rule, text, 1, &["copilot"], &base), None);
        assert_eq!(hits_at(&rule, text, on("src/*.rs"), &["cursor"], &base), None);
        // A `.claude/rules` file: Claude Code and Copilot each match as they attach it.
        let claude = base.join(".claude/rules/r.md");
        let text = "---\npaths:\n  - \"*.rs\"\n---\n";
        let hits = hits_at(&claude, text, text.find("*.rs").expect("written"), &["claude", "copilot"], &base);
        let counts: Vec<_> = hits
            .expect("hits")
            .agents
            .into_iter()
            .map(|(a, r)| (a, if let Reach::Files(n, _) = r { n } else { 0 }))
            .collect();
        assert_eq!(counts, vec![("claude", 4), ("copilot", 4)]);
        let every = hits_at(&claude, "---\npaths: \"**\"\n---\n", 12, &["claude"], &base).expect("a wildcard");
        assert_eq!(every.agents, vec![("claude", Reach::Every)]);
    }
}
