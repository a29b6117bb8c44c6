//! The front matter of instruction and rule files (`---` lines around YAML at the top) as the
//! agents read it: found, stripped, its keys' strings and globs, and what makes it unreadable.
//! Enough YAML for front matter, not a YAML parser.

use crate::chain::model::profile::FrontMatter;
use crate::chain::patterns::rule::{bounded_globs, expand_braces, split_outside_braces};

/// A rule's globs under the front matter key `key` (Claude Code's `paths`, Cursor's `globs`):
/// each string split at commas outside braces, braces expanded, those `keep` takes, bounded as
/// [`bounded_globs`] says.
pub(crate) fn front_matter_globs(meta: &str, key: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    bounded_globs(
        yaml_strings(meta, key)
            .iter()
            .flat_map(|s| split_outside_braces(s))
            .flat_map(|g| expand_braces(&g))
            .filter(|g| keep(g)),
    )
}

/// The strings of the top-level YAML key `key`: a scalar, a flow list `[a, "b"]` or a block list
/// of `- a` lines; quotes removed. Enough YAML for front matter, not a YAML parser.
pub(crate) fn yaml_strings(meta: &str, key: &str) -> Vec<String> {
    let unquote = |v: &str| {
        let v = v.trim();
        let quoted =
            v.len() >= 2 && ((v.starts_with('"') && v.ends_with('"')) || (v.starts_with('\'') && v.ends_with('\'')));
        if quoted { v[1..v.len() - 1].to_string() } else { v.to_string() }
    };
    let mut lines = meta.lines();
    let Some(value) = lines.by_ref().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':'))) else {
        return Vec::new();
    };
    let value = value.trim();
    if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
        return inner.split(',').map(unquote).filter(|v| !v.is_empty()).collect();
    }
    if !value.is_empty() {
        return vec![unquote(value)];
    }
    lines
        .take_while(|l| l.starts_with([' ', '-']) || l.trim().is_empty())
        .filter_map(|l| l.trim_start().strip_prefix('-'))
        .map(unquote)
        .filter(|v| !v.is_empty())
        .collect()
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

/// The text of a file once `mode` has dealt with its front matter (see [`FrontMatter`]).
pub(crate) fn without_front_matter(text: &str, mode: FrontMatter) -> &str {
    match mode {
        FrontMatter::Keep => text,
        FrontMatter::Strip => front_matter(text).map_or(text, |(_, body)| body),
        FrontMatter::StripWithSpace => {
            claude_front_matter(text).map_or(text, |(_, body)| crate::chain::text::read::js_trim_start(body))
        }
    }
}

/// Claude Code's [`front_matter`]: it drops a byte order mark before it looks for one (and keeps
/// the mark when there is none).
pub(crate) fn claude_front_matter(text: &str) -> Option<(&str, &str)> {
    front_matter(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// What keeps the front matter of `text` from parsing, in words, or `None` when it parses or
/// there is none. Not a YAML parser: a line must be blank, a `#` comment, `key: value` (a
/// quoted value closed on its line), a `- item` or an indented continuation; and a block that
/// opens must close.
pub(crate) fn front_matter_problem(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let Some((meta, _)) = front_matter(text) else {
        return Some("its front matter opens with `---` but never closes".into());
    };
    for (i, line) in meta.lines().enumerate() {
        let t = line.trim_end();
        if t.trim().is_empty() || t.trim_start().starts_with('#') || t.starts_with([' ', '\t', '-']) {
            continue;
        }
        let Some((key, value)) = t.split_once(':') else {
            return Some(format!("line {} of its front matter is not `key: value`", i + 2));
        };
        let key_ok = !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
        let v = value.trim();
        let unclosed = |q: char| v.starts_with(q) && (v.len() < 2 || !v.ends_with(q));
        let unclosed_flow = v.starts_with('[') && !v.ends_with(']') || v.starts_with('{') && !v.ends_with('}');
        if !key_ok || unclosed('"') || unclosed('\'') || unclosed_flow {
            return Some(format!("line {} of its front matter does not parse: `{}`", i + 2, t.trim()));
        }
    }
    None
}

/// The first string of the top-level key `key` of front matter `meta`, when it is a scalar.
pub(crate) fn yaml_scalar(meta: &str, key: &str) -> Option<String> {
    let line = meta.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')))?;
    let v = line.trim();
    if v.is_empty() || v.starts_with('[') {
        return None;
    }
    yaml_strings(meta, key).into_iter().next()
}
