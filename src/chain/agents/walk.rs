//! Finding the files: which counts as present, the directories of the walk up from the working
//! directory, the files a [`Pick`] takes from them, rules folders and their front matter, links
//! out of the project, where a touch's walk starts, and a file's identity.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::globs::{Line, RuleSet};
use super::profile::{AgentProfile, FrontMatter, GlobStyle, LayerKind, Pick, Probe, Root};
use super::read::read_capped;
use super::repo::{lstat_file_or_link as stat_l, stat};
use super::view::{AgentFile, Scope, Status};

pub(super) fn present(probe: Probe, path: &Path) -> bool {
    match probe {
        Probe::Lstat => stat_l(path).unwrap_or(false),
        Probe::Exists => stat(path).is_some(),
        Probe::StatFile => super::repo::is_file(path),
        Probe::Readable => match stat(path) {
            Some(m) if m.is_dir => fs::read_dir(path).is_ok(),
            Some(m) if m.is_file => super::repo::opens(path),
            // A FIFO or a device passes `access(R_OK)`; it is never opened here, and fails to read.
            Some(_) => true,
            None => false,
        },
    }
}

pub(super) fn has_git(dir: &Path) -> bool {
    stat(&crate::paths::join(dir, ".git")).is_some()
}

/// The directories of the walk, root first.
pub(super) fn walk_dirs(root: &Root, cwd: &Path) -> Vec<PathBuf> {
    let ancestors: Vec<&Path> = cwd.ancestors().collect();
    let upto = |i: usize| ancestors[..=i].iter().rev().map(|p| p.to_path_buf()).collect::<Vec<_>>();
    let last = ancestors.len() - 1;
    match root {
        Root::GitOrCwd { check_fs_root } => {
            let stop = ancestors.iter().position(|d| (*check_fs_root || d.parent().is_some()) && has_git(d));
            stop.map_or_else(|| vec![cwd.to_path_buf()], upto)
        }
        Root::Markers(markers) => {
            let stop = ancestors.iter().position(|d| markers.iter().any(|m| stat(&d.join(m)).is_some()));
            stop.map_or_else(|| vec![cwd.to_path_buf()], upto)
        }
        Root::GitOrFsRoot => upto(ancestors.iter().position(|d| has_git(d)).unwrap_or(last)),
        Root::BelowFsRoot => upto(last.saturating_sub(1)),
    }
}

/// The files `pick` takes from `dirs` (in the order given), with the shadowed ones.
pub(super) fn pick_files(profile: &AgentProfile, pick: Pick, dirs: &[PathBuf], scope: Scope) -> Vec<AgentFile> {
    let names = &profile.candidates;
    let mut out = Vec::new();
    match pick {
        Pick::Layers => {
            let layers = if scope == Scope::Nested { &profile.lazy_layers } else { &profile.layers };
            for dir in dirs {
                for layer in layers {
                    let path = crate::paths::join(dir, layer.path);
                    let found = match layer.kind {
                        LayerKind::File if present(Probe::StatFile, &path) => {
                            vec![AgentFile::new(path, scope, Status::Loaded)]
                        }
                        LayerKind::File => Vec::new(),
                        LayerKind::Rules => rule_files(&path, scope),
                    };
                    for mut f in found {
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
                    let path = crate::paths::join(dir, name);
                    if !present(probe, &path) {
                        continue;
                    }
                    match (&winner, pick) {
                        (Some(w), Pick::First(_)) => {
                            let bytes = stat(&path).map_or(0, |m| m.len);
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
        Pick::Own(pick) => out = pick(profile, dirs, scope),
        Pick::FirstNameAnywhere(probe) => {
            let mut won: Vec<PathBuf> = Vec::new();
            for name in names {
                let found: Vec<PathBuf> =
                    dirs.iter().map(|d| crate::paths::join(d, name)).filter(|p| present(probe, p)).collect();
                match won.last() {
                    Some(last) => {
                        for path in found {
                            let bytes = stat(&path).map_or(0, |m| m.len);
                            // What it loses to, in words: the winner beside it if there is one
                            // (a `CLAUDE.md` next to an `AGENTS.md`), else the nearest winner.
                            let w = won.iter().find(|w| w.parent() == path.parent()).unwrap_or(last);
                            out.push(AgentFile::new(path, scope, Status::Shadowed).by(w).size(bytes, 0));
                        }
                    }
                    None if !found.is_empty() => {
                        won = found.clone();
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

/// The rules of a rules folder as files of `scope`: those that always load first, then those
/// whose front matter names `paths:`, [`Status::Waiting`] with their globs (Claude Code loads
/// them when a touch reaches a matching file, after the others of their folder).
pub(super) fn rule_files(dir: &Path, scope: Scope) -> Vec<AgentFile> {
    // A project's rules folder that leads out of the project is named, never listed: its
    // target's names, front matter and sizes are not the project's to show. (The user's own
    // global folders may link anywhere.)
    // (Most folders have none: one remembered stat says so.)
    if !super::repo::is_dir(dir) {
        return Vec::new();
    }
    let base = (scope != Scope::Global).then(|| project_base(dir.parent().unwrap_or(dir)));
    if let Some(real) = base.as_deref().and_then(|b| outside(dir, b)) {
        return vec![AgentFile::new(dir.to_path_buf(), scope, Status::LinkedOutside).by(&real)];
    }
    let mut out = Vec::new();
    let mut waiting = Vec::new();
    for (p, rule) in rules_files(dir, base.as_deref()) {
        match rule {
            Rule::Always => out.push(AgentFile::new(p, scope, Status::Loaded)),
            Rule::Outside(real) => out.push(AgentFile::new(p, scope, Status::LinkedOutside).by(&real)),
            Rule::Waiting(globs) => {
                let bytes = stat(&p).map_or(0, |m| m.len);
                let mut f = AgentFile::new(p, scope, Status::Waiting).size(bytes, 0);
                f.globs = globs;
                waiting.push(f);
            }
        }
    }
    out.extend(waiting);
    out
}

/// A rule of a rules folder, as the walk finds it.
enum Rule {
    /// No `paths:`: it loads at start.
    Always,
    /// Its `paths:` globs: it waits for a touch that matches one.
    Waiting(Vec<String>),
    /// A link out of the project (its real location): named, never read.
    Outside(PathBuf),
}

/// The rules of a rules folder: every `*.md` below it, sub-folders included, depth first in
/// directory order (as `readdir` returns them), each with its `paths:` globs when it has some.
/// Directory links are followed, but every directory is walked once (by file identity), so links
/// back up the tree add nothing. With a project `base`, a link whose target lies outside it is
/// [`Rule::Outside`] (a file) or skipped (a folder), never opened or listed.
fn rules_files(dir: &Path, base: Option<&Path>) -> Vec<(PathBuf, Rule)> {
    struct Walk<'a> {
        seen: HashSet<(u64, u64)>,
        entries: usize,
        base: Option<&'a Path>,
        out: Vec<(PathBuf, Rule)>,
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
            let linked = entry.file_type().is_ok_and(|t| t.is_symlink());
            let leaves = if linked { w.base.and_then(|b| outside(&path, b)) } else { None };
            let Ok(meta) = fs::metadata(&path) else { continue };
            if meta.is_dir() {
                if depth < RULES_MAX_DEPTH && leaves.is_none() {
                    walk(&path, depth + 1, w);
                }
            } else if meta.is_file() && path.extension().is_some_and(|e| e == "md") {
                let rule = match leaves {
                    Some(real) => Rule::Outside(real),
                    None => rule_globs(&path).map_or(Rule::Always, Rule::Waiting),
                };
                w.out.push((path, rule));
            }
        }
    }
    let mut w = Walk { seen: HashSet::new(), entries: 0, base, out: Vec::new() };
    walk(dir, 0, &mut w);
    w.out
}

/// The globs of a rule whose front matter names `paths:`, as Claude Code 2.1.332 reads them (its
/// bundle, checked with `claude -p`): a string or a YAML list; each string split at commas
/// outside braces, trimmed, braces expanded; `None` when nothing is left or every glob is `**`
/// (the rule loads at start). The globs are kept as written, for messages; [`rule_matches`]
/// drops a trailing `/**` as the agent does.
fn rule_globs(path: &Path) -> Option<Vec<String>> {
    let (data, _) = read_capped(path, 64 * 1024).ok()?;
    let text = String::from_utf8_lossy(&data);
    let (meta, _) = claude_front_matter(&text)?;
    let globs = front_matter_globs(meta, "paths", |g| !as_matched(g).is_empty());
    (!globs.is_empty() && !globs.iter().all(|g| as_matched(g) == "**")).then_some(globs)
}

/// A file inside a `.claude/rules` folder: a rule whose patterns are `paths:` (Claude Code's, and
/// Copilot's for these files).
pub(super) fn in_claude_rules(path: &Path) -> bool {
    let parts: Vec<_> = path.components().map(|c| c.as_os_str()).collect();
    parts.windows(2).any(|w| w[0] == ".claude" && w[1] == "rules")
}

/// A glob as Claude Code matches it: without a trailing `/**` (`src/**` is `src`, which the
/// gitignore-style match takes with all below it).
pub(super) fn as_matched(glob: &str) -> &str {
    glob.strip_suffix("/**").unwrap_or(glob)
}

/// A rule's globs under the front matter key `key` (Claude Code's `paths`, Cursor's `globs`):
/// each string split at commas outside braces, braces expanded, those `keep` takes, bounded as
/// [`bounded_globs`] says.
pub(super) fn front_matter_globs(meta: &str, key: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
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
pub(super) fn yaml_strings(meta: &str, key: &str) -> Vec<String> {
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

/// `s` split at commas outside `{…}`, each part trimmed, empty ones dropped.
pub(super) fn split_outside_braces(s: &str) -> Vec<String> {
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
pub(super) fn bounded_globs(globs: impl IntoIterator<Item = String>) -> Vec<String> {
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
pub(super) fn expand_braces(glob: &str) -> Vec<String> {
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
pub(super) fn rule_matches(globs: &[String], base: &Path, target: &Path) -> bool {
    RuleMatcher::new(GlobStyle::Gitignore, globs).is_some_and(|m| m.matches(base, target))
}

/// A rule's globs, compiled once per rule: a view's touches all use them. Both match as the
/// agents' packages do (the `ignore` package's gitignore lines, case ignored; VS Code's globs),
/// with the one-pass sets of `globs.rs`, which the rule searches use too (and whose tests hold
/// them to those packages).
pub(super) enum RuleMatcher {
    /// Each line's directory-only and `!` marks, and the lines' globs.
    Gitignore {
        lines: Vec<(bool, bool)>,
        set: RuleSet,
    },
    VsCode(RuleSet),
}

impl RuleMatcher {
    pub(super) fn new(style: GlobStyle, globs: &[String]) -> Option<Self> {
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
    pub(super) fn matches(&self, base: &Path, target: &Path) -> bool {
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
pub(super) fn is_wildcard(pattern: &str) -> bool {
    matches!(pattern.trim(), "**" | "**/*" | "*")
}

/// A glob as VS Code's matcher reads it: `*` and `?` stay within one folder name; letter case
/// ignored (`fold`), or not for a pattern already in lower case (see `globs.rs`).
pub(super) fn vscode_glob(pattern: &str, fold: bool) -> Result<globset::Glob, globset::Error> {
    globset::GlobBuilder::new(pattern).case_insensitive(fold).literal_separator(true).build()
}

/// An `applyTo` pattern as VS Code matches it: trimmed, `**/` in front unless it starts with
/// `/` or `**/`.
pub(super) fn vscode_pattern(glob: &str) -> String {
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
pub(super) fn rule_base(rule: &Path, scope: Scope, cwd: &Path) -> PathBuf {
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
pub(super) fn without_front_matter(text: &str, mode: FrontMatter) -> &str {
    match mode {
        FrontMatter::Keep => text,
        FrontMatter::Strip => front_matter(text).map_or(text, |(_, body)| body),
        FrontMatter::StripWithSpace => {
            claude_front_matter(text).map_or(text, |(_, body)| super::read::js_trim_start(body))
        }
    }
}

/// Claude Code's [`front_matter`]: it drops a byte order mark before it looks for one (and keeps
/// the mark when there is none).
fn claude_front_matter(text: &str) -> Option<(&str, &str)> {
    front_matter(text.strip_prefix('\u{feff}').unwrap_or(text))
}

/// What keeps the front matter of `text` from parsing, in words, or `None` when it parses or
/// there is none. Not a YAML parser: a line must be blank, a `#` comment, `key: value` (a
/// quoted value closed on its line), a `- item` or an indented continuation; and a block that
/// opens must close.
pub(super) fn front_matter_problem(text: &str) -> Option<String> {
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
pub(super) fn yaml_scalar(meta: &str, key: &str) -> Option<String> {
    let line = meta.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')))?;
    let v = line.trim();
    if v.is_empty() || v.starts_with('[') {
        return None;
    }
    yaml_strings(meta, key).into_iter().next()
}

/// A file's identity (device and inode), links followed; elsewhere than Unix, a hash of its
/// canonical path.
pub fn file_key(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        stat(path).map(|m| m.key)
    }
    #[cfg(not(unix))]
    {
        use std::hash::{Hash, Hasher};
        let real = super::read::real_path(path).ok()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        real.to_string_lossy().to_lowercase().hash(&mut h);
        Some((0, h.finish()))
    }
}

/// The directory the project's links must stay in: the project folder of `cwd` (see
/// [`crate::chain::confine::project_folder`]).
pub(super) fn project_base(cwd: &Path) -> PathBuf {
    crate::chain::confine::project_folder_by(cwd, has_git, super::read::real_path).to_path_buf()
}

/// Marks the files of `files[from..]` that are links (or lie below a directory link) whose
/// target is outside `base`: the agent would read them, but they are not the project's to show
/// (a rule linked to `~/.ssh/id_rsa`, say). `by` names the target. The user's own global files
/// are theirs to link anywhere.
pub(super) fn mark_linked_outside(files: &mut [AgentFile], from: usize, base: &Path) {
    for f in files.iter_mut().skip(from) {
        if f.scope == Scope::Global || !matches!(f.status, Status::Loaded | Status::Waiting | Status::Shadowed) {
            continue;
        }
        let Ok(real) = super::read::real_path(&f.path) else { continue };
        if real != f.path && !real.starts_with(base) {
            // Nothing of it is shown, not even its size.
            (f.bytes, f.included_bytes) = (0, 0);
            if f.status != Status::Shadowed {
                f.status = Status::LinkedOutside;
                f.by = Some(real);
            }
        }
    }
}

/// The real location of `path` when it lies outside `base` (a link, a `..`, an absolute path a
/// repository's settings name): such a file is [`Status::LinkedOutside`], and never read.
pub(super) fn outside(path: &Path, base: &Path) -> Option<PathBuf> {
    let base = super::read::real_path(base).unwrap_or_else(|_| base.to_path_buf());
    let real = super::read::real_path(path).ok()?;
    (!real.starts_with(&base)).then_some(real)
}

/// The walk of the repository below `base`, as the agents' file searches see it: `.gitignore`
/// honoured, hidden files kept, `.git` and `node_modules` skipped.
pub(super) fn project_walk(base: &Path) -> ignore::WalkBuilder {
    crate::chain::confine::walker(base, |e| e.file_name() != ".git" && e.file_name() != "node_modules")
}

/// At most `limit` entries of [`project_walk`], in the order of their paths.
pub(super) fn project_entries(base: &Path, limit: usize) -> Vec<ignore::DirEntry> {
    crate::chain::confine::entries(&mut project_walk(base), limit)
}

/// Whether a walk's entry is a file, or a link to one (an attached path may be a link).
pub(super) fn is_file_entry(e: &ignore::DirEntry) -> bool {
    e.file_type().is_some_and(|t| t.is_file() || (t.is_symlink() && e.path().is_file()))
}

/// Where the walk of a touch starts: the touched directory, or the touched file's directory,
/// or the nearest of their ancestors that exists, so a made-up path costs nothing.
pub(super) fn touch_start(t: &Path) -> Option<PathBuf> {
    let is_dir = |d: &Path| stat(d).is_some_and(|m| m.is_dir);
    let start = if is_dir(t) { t } else { t.parent()? };
    start.ancestors().find(|d| is_dir(d)).map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

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
