//! The front matter of rule files as each agent reads it, key by key: a key the agent does not
//! know (with the key it most likely misspells), a value of a type it discards, a value it does
//! not know; each placed at the key or value at fault, with a safe fix where one exists.
//!
//! The keys each agent reads, per kind of file:
//! - Copilot (VS Code's prompt-file validator, `PromptValidator`): an instructions file reads
//!   `name`, `description`, `applyTo` (one string) and `excludeAgent` (a string or a list);
//!   a `.claude/rules` file reads `description` and `paths`.
//! - Cursor: a `.mdc` rule reads `description`, `globs` and `alwaysApply`.
//! - Claude Code: a `.claude/rules` file reads `paths` (`description` is Copilot's, which reads
//!   the same files, and passes unremarked).

use std::path::Path;

use crate::chain::model::env::in_claude_rules;
use crate::chain::model::fix::Fix;
use crate::chain::model::view::{RuleProblem, RuleProblemKind};
use crate::chain::text::front_matter::front_matter;
use crate::chain::text::read::read_capped;
use crate::chain::words::closest;

/// The values of `excludeAgent` GitHub knows: the agents a file can be kept from.
const EXCLUDE_AGENTS: &[&str] = &["code-review", "coding-agent"];

/// The kind of rule file an agent reads at `path`, in words, and the keys it reads there.
fn schema(agent: &str, path: &Path) -> Option<(&'static str, &'static [&'static str])> {
    let name = path.file_name()?.to_str()?;
    match agent {
        "copilot" if name.ends_with(".instructions.md") => {
            Some(("an instructions file", &["name", "description", "applyTo", "excludeAgent"]))
        }
        "copilot" if in_claude_rules(path) => Some(("a `.claude/rules` file", &["description", "paths"])),
        "cursor" if name.ends_with(".mdc") => Some(("a rule", &["description", "globs", "alwaysApply"])),
        "claude" if in_claude_rules(path) => Some(("a rule", &["paths", "description"])),
        _ => None,
    }
}

/// The front-matter keys `agent` reads in the file at `path`, when it reads any (for completion).
pub fn keys_for(agent: &str, path: &Path) -> Option<&'static [&'static str]> {
    schema(agent, path).map(|(_, keys)| keys)
}

/// The values `agent` knows for the front-matter key `key`, when they are a few words.
pub fn values_for(agent: &str, key: &str) -> &'static [&'static str] {
    match (agent, key) {
        ("copilot", "excludeAgent") => EXCLUDE_AGENTS,
        ("cursor", "alwaysApply") => &["true", "false"],
        _ => &[],
    }
}

/// A top-level entry of front matter, with its place in the file (byte offsets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub key: String,
    pub key_at: (usize, usize),
    pub value: Value,
    /// From the key to the end of its value (its last item's line, without the line break).
    pub whole: (usize, usize),
}

/// A value of front matter, as far as the agents tell values apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    /// A string (quotes removed), with the bytes it is written at.
    Scalar(String, (usize, usize)),
    /// A list, flow (`[a, b]`) or block (`- a` lines): its items.
    List(Vec<(String, (usize, usize))>),
    /// A map (indented `key: value` lines).
    Map,
    /// Nothing.
    Empty,
}

/// The entries of `text`'s front matter; empty when it has none.
pub(crate) fn entries(text: &str) -> Vec<Entry> {
    let Some((meta, _)) = front_matter(text) else { return Vec::new() };
    let base = meta.as_ptr() as usize - text.as_ptr() as usize;
    // Each line with its offset in the file, without its line break.
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut at = base;
    for line in meta.split_inclusive('\n') {
        lines.push((at, line.trim_end_matches(['\n', '\r'])));
        at += line.len();
    }
    let unquote = |v: &str, at: usize| -> (String, (usize, usize)) {
        let t = v.trim();
        let start = at + (v.len() - v.trim_start().len());
        let quoted =
            t.len() >= 2 && ((t.starts_with('"') && t.ends_with('"')) || (t.starts_with('\'') && t.ends_with('\'')));
        let inner = if quoted { &t[1..t.len() - 1] } else { t };
        (inner.to_string(), (start, start + t.len()))
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (line_at, line) = lines[i];
        i += 1;
        if line.trim().is_empty() || line.starts_with([' ', '\t', '#', '-']) {
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else { continue };
        let key_at = (line_at, line_at + key.len());
        let rest_at = line_at + key.len() + 1;
        let mut end = line_at + line.len();
        let trimmed = rest.trim();
        let value = if trimmed.is_empty() {
            // A block below: `- item` lines (indented or not), or indented `key: value` lines.
            let mut items = Vec::new();
            let mut map = false;
            while let Some(&(next_at, next)) = lines.get(i) {
                let t = next.trim_start();
                let indented = next.starts_with([' ', '\t']);
                if t.is_empty() || t.starts_with('#') {
                    i += 1;
                    continue;
                }
                if let Some(item) = t.strip_prefix('-').filter(|r| r.is_empty() || r.starts_with([' ', '\t'])) {
                    let item_at = next_at + (next.len() - t.len()) + 1;
                    items.push(unquote(item, item_at));
                } else if indented {
                    map = true;
                } else {
                    break;
                }
                end = next_at + next.len();
                i += 1;
            }
            match (items.is_empty(), map) {
                (false, _) => Value::List(items),
                (true, true) => Value::Map,
                (true, false) => Value::Empty,
            }
        } else if trimmed.starts_with('[') && trimmed.ends_with(']') {
            let open = rest_at + (rest.len() - rest.trim_start().len());
            let inner = &trimmed[1..trimmed.len() - 1];
            let mut items = Vec::new();
            let mut at = open + 1;
            for part in inner.split(',') {
                if !part.trim().is_empty() {
                    items.push(unquote(part, at));
                }
                at += part.len() + 1;
            }
            Value::List(items)
        } else if trimmed.starts_with('{') {
            Value::Map
        } else {
            let (s, span) = unquote(rest, rest_at);
            Value::Scalar(s, span)
        };
        out.push(Entry { key: key.to_string(), key_at, value, whole: (line_at, end) });
    }
    out
}

/// The entries of the front matter of the file at `path` (its first 64 KiB, which must be
/// UTF-8 for the places to be right). Parsed again at each ask, not kept: a repository of
/// thousands of rules of a hundred patterns each would hold them all for the run.
fn entries_of(path: &Path) -> Vec<Entry> {
    let text = read_capped(path, 64 * 1024).ok().and_then(|(d, _)| String::from_utf8(d).ok());
    text.as_deref().map(entries).unwrap_or_default()
}

/// Bytes to replace, and what with.
pub(crate) type Cut = (usize, usize, String);

/// Where the front matter of the file at `path` writes `pattern` under `key` (one item of a
/// list, or one part of a string of patterns separated by commas), and the edit that drops it:
/// the bytes to replace and what with. `None` when it is not written there as such (a pattern
/// made by expanding braces).
pub(crate) fn pattern_at(path: &Path, key: &str, pattern: &str) -> Option<((usize, usize), Cut)> {
    let entries = entries_of(path);
    let e = entries.iter().find(|e| e.key == key)?;
    match &e.value {
        Value::Scalar(s, (start, end)) => {
            // The parts as written, between commas, each with its place in the file.
            let inner = start + (end - start - s.len()) / 2;
            let mut at = 0;
            let parts: Vec<(usize, &str)> = s
                .split(',')
                .map(|p| {
                    let here = at;
                    at += p.len() + 1;
                    (here, p)
                })
                .collect();
            let i = parts.iter().position(|(_, p)| p.trim() == pattern)?;
            let (offset, part) = parts[i];
            let lead = part.len() - part.trim_start().len();
            let span = (inner + offset + lead, inner + offset + lead + pattern.len());
            // Dropped with the comma before it (after it, for the first part).
            let cut = match i {
                0 => {
                    (inner, parts.get(1).map_or(inner + s.len(), |(o, p)| inner + o + (p.len() - p.trim_start().len())))
                }
                _ => (inner + offset - 1, inner + offset + part.len()),
            };
            Some((span, (cut.0, cut.1, String::new())))
        }
        Value::List(items) => {
            let (_, span) = items.iter().find(|(s, _)| s == pattern)?;
            let text = read_capped(path, 64 * 1024).ok().and_then(|(d, _)| String::from_utf8(d).ok())?;
            let line_start = text[..span.0].rfind('\n').map_or(0, |i| i + 1);
            let block = text[line_start..span.0].trim().starts_with('-');
            let cut = if block {
                // The item's whole line.
                let line_end = text[span.1..].find('\n').map_or(text.len(), |i| span.1 + i + 1);
                (line_start, line_end)
            } else {
                // A flow list: the item with the comma after it (before it, for the last).
                let after = text[span.1..].trim_start();
                if after.starts_with(',') {
                    let comma = span.1 + (text[span.1..].len() - after.len());
                    let next = comma + 1 + (text[comma + 1..].len() - text[comma + 1..].trim_start().len());
                    (span.0, next)
                } else {
                    let before = text[..span.0].trim_end();
                    (if before.ends_with(',') { before.len() - 1 } else { span.0 }, span.1)
                }
            };
            Some((*span, (cut.0, cut.1, String::new())))
        }
        Value::Map | Value::Empty => None,
    }
}

/// What `agent` misreads in the front matter of the file at `path`.
pub(crate) fn problems(agent: &'static str, path: &Path) -> Vec<RuleProblem> {
    let Some((kind, keys)) = schema(agent, path) else { return Vec::new() };
    let who = crate::chain::model::names::display_name(agent);
    let entries = entries_of(path);
    let mut out = Vec::new();
    let problem = |kind: RuleProblemKind, at: (usize, usize), message: String, fix: Option<Fix>| RuleProblem {
        at: Some(at),
        fix,
        ..RuleProblem::new(path.to_path_buf(), kind, message)
    };
    for e in entries.iter() {
        if !keys.contains(&e.key.as_str()) {
            let known = keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
            let meant = closest(&e.key, keys.iter().copied()).filter(|m| !entries.iter().any(|o| o.key == *m));
            let (hint, fix) = match meant {
                Some(m) => (
                    format!("; did you mean `{m}`?"),
                    Some(Fix::replace(format!("Rename `{}` to `{m}`", e.key), e.key_at.0, e.key_at.1, m.to_string())),
                ),
                None => (String::new(), None),
            };
            let message = format!("{who} does not read `{}` in {kind} (it reads {known}){hint}", e.key);
            let kind = if meant.is_some() { RuleProblemKind::FrontMatter } else { RuleProblemKind::UnknownKey };
            out.push(problem(kind, e.key_at, message, fix));
            continue;
        }
        match (agent, e.key.as_str(), &e.value) {
            ("copilot", "applyTo", Value::List(items)) => {
                let joined = items.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>().join(", ");
                let quoted = if joined.contains('"') { format!("'{joined}'") } else { format!("\"{joined}\"") };
                let fix = Fix::replace(
                    "Join the `applyTo` list into one string".into(),
                    e.whole.0,
                    e.whole.1,
                    format!("applyTo: {quoted}"),
                );
                let message = format!(
                    "{who} discards `applyTo` written as a list: it takes one string of patterns separated by \
                     commas (`applyTo: {quoted}`), so it never attaches this file by path"
                );
                out.push(problem(RuleProblemKind::Never, e.key_at, message, Some(fix)));
            }
            ("copilot", "applyTo" | "description" | "name", Value::Map) => {
                let message = format!("{who} reads `{}` only as a string: this one is ignored", e.key);
                out.push(problem(RuleProblemKind::FrontMatter, e.key_at, message, None));
            }
            ("copilot", "excludeAgent", Value::Map) => {
                let message = format!("{who} reads `excludeAgent` as a string or a list: this one is ignored");
                out.push(problem(RuleProblemKind::FrontMatter, e.key_at, message, None));
            }
            ("cursor", "alwaysApply", Value::Scalar(v, at)) if !matches!(v.as_str(), "true" | "false") => {
                let message = format!(
                    "{who} applies this rule always only when `alwaysApply` is `true`; `{v}` counts as `false`"
                );
                let fix = v
                    .eq_ignore_ascii_case("true")
                    .then(|| Fix::replace("Write `true`".into(), at.0, at.1, "true".into()));
                out.push(problem(RuleProblemKind::FrontMatter, *at, message, fix));
            }
            _ => {}
        }
        if agent == "copilot" && e.key == "excludeAgent" {
            let values: Vec<(String, (usize, usize))> = match &e.value {
                Value::Scalar(s, at) => vec![(s.clone(), *at)],
                Value::List(items) => items.clone(),
                Value::Map | Value::Empty => Vec::new(),
            };
            for (v, at) in values.iter().filter(|(v, _)| !EXCLUDE_AGENTS.contains(&v.as_str())) {
                let meant = closest(v, EXCLUDE_AGENTS.iter().copied());
                let hint = meant.map_or(String::new(), |m| format!("; did you mean `{m}`?"));
                let fix = meant.map(|m| Fix::replace(format!("Write `{m}`"), at.0, at.1, m.to_string()));
                let message = format!(
                    "{who} knows `code-review` and `coding-agent` as values of `excludeAgent`: `{v}` keeps this file from no agent{hint}"
                );
                out.push(problem(RuleProblemKind::FrontMatter, *at, message, fix));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each entry's key, value and whole are where the text has them: scalars, flow and block
    /// lists, maps.
    #[test]
    fn entries_are_placed_where_the_text_writes_them() {
        let text = "---\napplyTo:\n  - 'src/**'\n  - \"test/**\"\nglob: *.ts, [a]\nmeta:\n  k: v\nlist: [a, \"b\"]\n---\nbody\n";
        let e = entries(text);
        let at = |span: (usize, usize)| &text[span.0..span.1];
        assert_eq!(e.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(), ["applyTo", "glob", "meta", "list"]);
        assert_eq!(at(e[0].key_at), "applyTo");
        assert_eq!(at(e[0].whole), "applyTo:\n  - 'src/**'\n  - \"test/**\"");
        let Value::List(items) = &e[0].value else { panic!("{:?}", e[0].value) };
        assert_eq!(
            items.iter().map(|(s, span)| (s.as_str(), at(*span))).collect::<Vec<_>>(),
            [("src/**", "'src/**'"), ("test/**", "\"test/**\"")]
        );
        assert!(matches!(&e[1].value, Value::Scalar(s, span) if s == "*.ts, [a]" && at(*span) == "*.ts, [a]"));
        assert_eq!(e[2].value, Value::Map);
        let Value::List(items) = &e[3].value else { panic!("{:?}", e[3].value) };
        assert_eq!(
            items.iter().map(|(s, span)| (s.as_str(), at(*span))).collect::<Vec<_>>(),
            [("a", "a"), ("b", "\"b\"")]
        );
        assert!(entries("no front matter\n").is_empty());
    }

    /// A dead pattern is found where it is written, and dropping it leaves the others as they
    /// were: in a string, a flow list and a block list.
    #[test]
    fn a_pattern_is_found_where_written_and_dropped_cleanly() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.mdc");
        for (text, pattern, dropped) in [
            ("---\nglobs: src/**, dead/**, b\n---\n", "dead/**", "---\nglobs: src/**, b\n---\n"),
            ("---\nglobs: \"dead/**, src/**\"\n---\n", "dead/**", "---\nglobs: \"src/**\"\n---\n"),
            ("---\nglobs: src/**,dead\n---\n", "dead", "---\nglobs: src/**\n---\n"),
            ("---\nglobs: [a, 'dead', c]\n---\n", "dead", "---\nglobs: [a, c]\n---\n"),
            ("---\nglobs: [a, dead]\n---\n", "dead", "---\nglobs: [a]\n---\n"),
            ("---\nglobs:\n  - a\n  - dead\nx: y\n---\n", "dead", "---\nglobs:\n  - a\nx: y\n---\n"),
        ] {
            std::fs::write(&path, text).expect("write");
            let (span, (start, end, with)) = pattern_at(&path, "globs", pattern).expect(text);
            assert_eq!(&text[span.0..span.1].trim_matches(['\'', '"']), &pattern, "{text}");
            assert_eq!(format!("{}{with}{}", &text[..start], &text[end..]), dropped, "{text}");
        }
    }

    fn problems_of(agent: &'static str, name: &str, text: &str) -> Vec<RuleProblem> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        problems(agent, &path)
    }

    /// A misspelt key gets the key meant and a fix that renames it; a stranger is named without
    /// a fix; an `applyTo` list is a rule never attached, fixed by joining it.
    #[test]
    fn misspelt_keys_and_list_patterns_are_said_at_the_key_with_their_fix() {
        let text = "---\nglob: src/**\nalwaysapply: true\ntitle: x\n---\nrule\n";
        let p = problems_of("cursor", "r.mdc", text);
        let said: Vec<(&str, &str, Option<&str>)> = p
            .iter()
            .map(|p| {
                (
                    &text[p.at.expect("at").0..p.at.expect("at").1],
                    p.message.as_str(),
                    p.fix.as_ref().map(|f| f.title.as_str()),
                )
            })
            .collect();
        assert_eq!(said[0].0, "glob");
        assert!(said[0].1.ends_with("did you mean `globs`?"), "{}", said[0].1);
        assert_eq!(said[0].2, Some("Rename `glob` to `globs`"));
        assert_eq!(said[1].2, Some("Rename `alwaysapply` to `alwaysApply`"));
        assert_eq!(
            said[2],
            ("title", "Cursor does not read `title` in a rule (it reads `description`, `globs`, `alwaysApply`)", None)
        );
        let kinds: Vec<RuleProblemKind> = p.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [RuleProblemKind::FrontMatter, RuleProblemKind::FrontMatter, RuleProblemKind::UnknownKey]);

        let text = "---\napplyTo:\n  - src/**\n  - test/**\nexcludeAgent: code_review\n---\nrule\n";
        let p = problems_of("copilot", "a.instructions.md", text);
        assert_eq!(p[0].kind, RuleProblemKind::Never);
        let Some(Fix { change: crate::chain::model::fix::Change::Replace { start, end, text: with }, .. }) = &p[0].fix
        else {
            panic!("{:?}", p[0].fix)
        };
        let fixed = format!("{}{with}{}", &text[..*start], &text[*end..]);
        assert_eq!(fixed, "---\napplyTo: \"src/**, test/**\"\nexcludeAgent: code_review\n---\nrule\n");
        assert!(p[1].message.ends_with("did you mean `code-review`?"), "{}", p[1].message);
        // The same key in a file the agent reads no keys of, or for another agent: nothing.
        assert!(problems_of("copilot", "AGENTS.md", text).is_empty());
        assert!(problems_of("codex", "a.instructions.md", text).is_empty());
        assert!(problems_of("claude", ".claude/rules/r.md", "---\npaths: [a]\ndescription: d\n---\n").is_empty());
    }
}
