//! How the agents match a rule's patterns to paths: Claude Code's gitignore lines and VS Code's
//! globs, compiled once per rule (`RuleMatcher`) over the one-pass sets of `globs.rs`; and how a
//! rule's written globs become the ones matched (commas, braces, bounds).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::chain::model::profile::GlobStyle;
use crate::chain::model::view::Scope;
use crate::chain::patterns::globs::{Line, RuleSet};

/// A glob as Claude Code matches it: without a trailing `/**` (`src/**` is `src`, which the
/// gitignore-style match takes with all below it).
pub(crate) fn as_matched(glob: &str) -> &str {
    glob.strip_suffix("/**").unwrap_or(glob)
}

/// `s` split at commas outside `{…}`, each part trimmed, empty ones dropped.
pub(crate) fn split_outside_braces(s: &str) -> Vec<String> {
    let (mut out, mut part, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut part));
                continue;
            }
            _ => {}
        }
        part.push(c);
    }
    out.push(part);
    out.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

/// The most globs one rule keeps: each touch matches every waiting rule, so a folder of rules
/// with thousands of globs each would cost seconds per touch. Claude Code keeps up to 1,000.
const RULE_GLOBS_MAX: usize = 100;

/// The most bytes one rule's globs hold together: each view compiles every waiting rule's globs,
/// and a hundred globs of 6 KiB each (brace groups in front of long names) took a folder of rules
/// to minutes and hundreds of MB.
const RULE_GLOB_BYTES_MAX: usize = 16 * 1024;

/// A rule's first globs: at most [`RULE_GLOBS_MAX`] of them and [`RULE_GLOB_BYTES_MAX`] bytes
/// together; the rest are ignored. The first is always kept (it is at most a rule's 64 KiB or a
/// brace group's bounded expansion): a rule with globs never becomes one without, which would
/// load at start.
pub(crate) fn bounded_globs(globs: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut bytes = 0;
    globs
        .into_iter()
        .take(RULE_GLOBS_MAX)
        .enumerate()
        .take_while(|(i, g)| {
            bytes += g.len();
            *i == 0 || bytes <= RULE_GLOB_BYTES_MAX
        })
        .map(|(_, g)| g)
        .collect()
}

/// The most globs one pattern's braces expand to: `{a,b}{c,d}…` grows exponentially.
const BRACE_MAX: usize = 1_000;

/// The most bytes one pattern's expansions hold together: 16,000 alternatives in front of 32 KiB
/// would otherwise make a thousand 32 KiB globs (a gigabyte once compiled) from one 64 KiB rule.
const BRACE_BYTES_MAX: usize = 64 * 1024;

/// `src/{api,web}/*.ts` as `src/api/*.ts` and `src/web/*.ts`: the first `{…}` without nesting,
/// again until none is left. A group whose expansion would pass [`BRACE_MAX`] globs or
/// [`BRACE_BYTES_MAX`] bytes stays as written (and matches as written, braces and all).
pub(crate) fn expand_braces(glob: &str) -> Vec<String> {
    let (mut out, mut todo) = (Vec::new(), vec![glob.to_string()]);
    let mut bytes = glob.len();
    while let Some(g) = todo.pop() {
        let open = g.find('{');
        let close = open.and_then(|o| g[o..].find('}').map(|c| o + c));
        let (Some(o), Some(c)) = (open, close) else {
            out.push(g);
            continue;
        };
        let alternatives = || g[o + 1..c].split(',').map(str::trim);
        let around = g.len() - (c + 1 - o);
        let (count, grown) = alternatives().fold((0, 0), |(n, b), alt| (n + 1, b + around + alt.len()));
        let fits = out.len() + todo.len() + count <= BRACE_MAX && bytes - g.len() + grown <= BRACE_BYTES_MAX;
        if c == o + 1 || !fits {
            out.push(g);
            continue;
        }
        bytes = bytes - g.len() + grown;
        for alt in alternatives() {
            todo.push(format!("{}{alt}{}", &g[..o], &g[c + 1..]));
        }
    }
    out
}

/// Whether a touch of `target` wakes a rule with `globs` (see [`RuleMatcher`]): Claude Code
/// matches them as gitignore lines (the `ignore` package: case-insensitive, a directory matching
/// takes all below it) against `target` relative to `base`, the directory holding the rule's
/// `.claude` (the working directory for the user's own rules); a target outside `base` matches
/// nothing.
#[cfg(test)]
pub(crate) fn rule_matches(globs: &[String], base: &Path, target: &Path) -> bool {
    RuleMatcher::new(GlobStyle::Gitignore, globs).is_some_and(|m| m.matches(base, target))
}

/// A rule's globs, compiled once per rule: a view's touches all use them. Both match as the
/// agents' packages do (the `ignore` package's gitignore lines, case ignored; VS Code's globs),
/// with the one-pass sets of `globs.rs`, which the rule searches use too (and whose tests hold
/// them to those packages).
pub(crate) enum RuleMatcher {
    /// Each line's directory-only and `!` marks, and the lines' globs.
    Gitignore {
        lines: Vec<(bool, bool)>,
        set: RuleSet,
    },
    VsCode(RuleSet),
}

impl RuleMatcher {
    pub(crate) fn new(style: GlobStyle, globs: &[String]) -> Option<Self> {
        let none = HashSet::new();
        match style {
            GlobStyle::Gitignore => {
                // A line the package refuses matches nothing.
                let lines: Vec<Line> = globs.iter().filter_map(|g| Line::parse(as_matched(g))).collect();
                let patterns: Vec<&str> = lines.iter().map(|l| l.pattern.as_str()).collect();
                let set = RuleSet::new(&patterns, &Line::glob, &none)?;
                Some(Self::Gitignore { lines: lines.iter().map(|l| (l.dir_only, l.whitelist)).collect(), set })
            }
            GlobStyle::VsCode => {
                // (A pattern VS Code's matcher would not parse matches nothing here either.)
                let patterns: Vec<String> = globs.iter().map(|g| vscode_pattern(g)).collect();
                RuleSet::new(&patterns, &vscode_glob, &none).map(Self::VsCode)
            }
        }
    }

    /// Whether `target` (a real path) matches; `base` is where gitignore-style globs start.
    pub(crate) fn matches(&self, base: &Path, target: &Path) -> bool {
        let mut hits = Vec::new();
        match self {
            Self::Gitignore { lines, set } => globs_match(lines, set, base, target, &mut hits),
            Self::VsCode(set) => {
                set.matches_into(&crate::paths::slash_join(target), &mut hits);
                !hits.is_empty()
            }
        }
    }
}

/// The patterns that attach a file whatever is attached (VS Code's `applyTo`), so that no rule
/// checks them against the repository's files.
pub(crate) fn is_wildcard(pattern: &str) -> bool {
    matches!(pattern.trim(), "**" | "**/*" | "*")
}

/// A glob as VS Code's matcher reads it: `*` and `?` stay within one folder name; letter case
/// ignored (`fold`), or not for a pattern already in lower case (see `globs.rs`).
pub(crate) fn vscode_glob(pattern: &str, fold: bool) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern).case_insensitive(fold).literal_separator(true).build()
}

/// An `applyTo` pattern as VS Code matches it: trimmed, `**/` in front unless it starts with
/// `/` or `**/`.
pub(crate) fn vscode_pattern(glob: &str) -> String {
    let g = glob.trim();
    if g.starts_with('/') || g.starts_with("**/") { g.to_string() } else { format!("**/{g}") }
}

/// [`RuleMatcher::matches`] for gitignore-style globs.
fn globs_match(lines: &[(bool, bool)], set: &RuleSet, base: &Path, target: &Path, hits: &mut Vec<usize>) -> bool {
    let Ok(rel) = target.strip_prefix(base) else { return false };
    if rel.as_os_str().is_empty() {
        return false;
    }
    // As the package does: the last line that matches a path decides (a directory-only line
    // only for a directory), and a matching parent directory decides; else the path itself.
    let mut matched = |path: &str, is_dir: bool| {
        set.matches_into(path, hits);
        let last = hits.iter().rev().map(|&h| lines[h]).find(|(dir_only, _)| is_dir || !dir_only);
        last.is_some_and(|(_, whitelist)| !whitelist)
    };
    let rel = crate::paths::slash_join(rel);
    memchr::memchr_iter(b'/', rel.as_bytes()).any(|slash| matched(&rel[..slash], true)) || matched(&rel, false)
}

/// The directory a rule's globs are relative to: the one holding its `.claude` (or `.cursor`),
/// else (the user's own rules) `cwd`.
pub(crate) fn rule_base(rule: &Path, scope: Scope, cwd: &Path) -> PathBuf {
    if scope != Scope::Global {
        let found = rule.ancestors().find(|d| {
            d.file_name().is_some_and(|n| n == "rules")
                && d.parent().is_some_and(|p| p.file_name().is_some_and(|n| n == ".claude" || n == ".cursor"))
        });
        if let Some(base) = found.and_then(Path::parent).and_then(Path::parent) {
            return base.to_path_buf();
        }
    }
    cwd.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::text::front_matter::front_matter_globs;

    #[test]
    fn a_rules_globs_are_bounded_in_count_and_bytes_but_never_all_dropped() {
        let huge = "x".repeat(RULE_GLOB_BYTES_MAX + 1);
        assert_eq!(bounded_globs([huge.clone(), "src/**".into()]), [huge], "the first stays, alone");
        let many: Vec<String> = (0..500).map(|i| format!("src/{i}/**")).collect();
        assert_eq!(bounded_globs(many.clone()).len(), RULE_GLOBS_MAX);
        let long: Vec<String> = (0..50).map(|i| format!("{i}{}", "y".repeat(1_000))).collect();
        let kept = bounded_globs(long);
        assert!(
            kept.iter().map(String::len).sum::<usize>() <= RULE_GLOB_BYTES_MAX && kept.len() == 16,
            "{}",
            kept.len()
        );
    }

    #[test]
    fn paths_are_a_string_or_a_list_split_at_commas_with_braces_expanded() {
        let globs = |meta: &str| -> Vec<String> {
            let mut g = front_matter_globs(meta, "paths", |_| true);
            g.sort();
            g
        };
        assert_eq!(globs("paths: src/**\n"), ["src/**"]);
        assert_eq!(globs("paths: a/*.ts, b\n"), ["a/*.ts", "b"]);
        assert_eq!(globs("name: x\npaths:\n  - a\n  - 'b/{c,d}'\nother: y\n"), ["a", "b/c", "b/d"]);
        assert_eq!(globs("paths: [a, \"b\"]\n"), ["a", "b"]);
        assert!(globs("paths:\n").is_empty());
        assert!(globs("path: a\n").is_empty());
        // Exponential braces stop growing.
        assert!(expand_braces(&"{a,b}".repeat(30)).len() <= BRACE_MAX);
        // One group of 16,000 alternatives in front of 32 KiB: bounded in bytes, not only count.
        let bomb = format!("{{{}}}{}", vec!["a"; 16_000].join(","), "x".repeat(32 * 1024));
        let globs = expand_braces(&bomb);
        assert!(globs.iter().map(String::len).sum::<usize>() <= BRACE_BYTES_MAX.max(bomb.len()), "{}", globs.len());
        assert_eq!(globs, [bomb], "a group past the bound stays as written");
    }

    #[test]
    fn globs_match_as_gitignore_lines_relative_to_the_base() {
        let base = Path::new("/p");
        let m = |globs: &[&str], target: &str| {
            rule_matches(&globs.iter().map(|s| s.to_string()).collect::<Vec<_>>(), base, Path::new(target))
        };
        assert!(m(&["src/api/**"], "/p/src/api/x.ts"));
        assert!(m(&["api/**"], "/p/src/api/x.ts"));
        assert!(m(&["*.ts"], "/p/src/api/x.ts"));
        assert!(m(&["/src/api/x.ts"], "/p/src/api/x.ts"));
        assert!(m(&["src/API/X.ts"], "/p/src/api/x.ts"));
        assert!(m(&["src/**", "!src/api/**"], "/p/src/api/x.ts"));
        assert!(!m(&["./src/api/x.ts"], "/p/src/api/x.ts"));
        assert!(!m(&["src/api/**"], "/elsewhere/src/api/x.ts"));
        assert!(!m(&["nothing/**"], "/p/src/api/x.ts"));
        assert!(!m(&["[", "**/"], "/p/x.ts"));
    }
}
