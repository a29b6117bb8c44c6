//! Finding the files: which counts as present, the directories of the walk up from the working
//! directory, the files a [`Pick`] takes from them, rules folders and their front matter, links
//! out of the project, where a touch's walk starts, and a file's identity.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::chain::model::profile::{AgentProfile, LayerKind, Pick, Probe, Root};
use crate::chain::model::view::{AgentFile, Scope, Status};
use crate::chain::patterns::rule::as_matched;
use crate::chain::repo::memo::{lstat_file_or_link as stat_l, stat};
use crate::chain::repo::project::{has_git, project_base};
use crate::chain::text::front_matter::{claude_front_matter, front_matter_globs};
use crate::chain::text::read::read_capped;

pub(crate) fn present(probe: Probe, path: &Path) -> bool {
    match probe {
        Probe::Lstat => stat_l(path).unwrap_or(false),
        Probe::Exists => stat(path).is_some(),
        Probe::StatFile => crate::chain::repo::memo::is_file(path),
        Probe::Readable => match stat(path) {
            Some(m) if m.is_dir => fs::read_dir(path).is_ok(),
            Some(m) if m.is_file => crate::chain::repo::memo::opens(path),
            // A FIFO or a device passes `access(R_OK)`; it is never opened here, and fails to read.
            Some(_) => true,
            None => false,
        },
    }
}

/// The directories of the walk, root first.
pub(crate) fn walk_dirs(root: &Root, cwd: &Path) -> Vec<PathBuf> {
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
pub(crate) fn pick_files(profile: &AgentProfile, pick: Pick, dirs: &[PathBuf], scope: Scope) -> Vec<AgentFile> {
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
pub(crate) fn rule_files(dir: &Path, scope: Scope) -> Vec<AgentFile> {
    // A project's rules folder that leads out of the project is named, never listed: its
    // target's names, front matter and sizes are not the project's to show. (The user's own
    // global folders may link anywhere.)
    // (Most folders have none: one remembered stat says so.)
    if !crate::chain::repo::memo::is_dir(dir) {
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
        let real = crate::chain::repo::memo::real_path(path).ok()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        real.to_string_lossy().to_lowercase().hash(&mut h);
        Some((0, h.finish()))
    }
}

/// Marks the files of `files[from..]` that are links (or lie below a directory link) whose
/// target is outside `base`: the agent would read them, but they are not the project's to show
/// (a rule linked to `~/.ssh/id_rsa`, say). `by` names the target. The user's own global files
/// are theirs to link anywhere.
pub(crate) fn mark_linked_outside(files: &mut [AgentFile], from: usize, base: &Path) {
    for f in files.iter_mut().skip(from) {
        if f.scope == Scope::Global || !matches!(f.status, Status::Loaded | Status::Waiting | Status::Shadowed) {
            continue;
        }
        let Ok(real) = crate::chain::repo::memo::real_path(&f.path) else { continue };
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
pub(crate) fn outside(path: &Path, base: &Path) -> Option<PathBuf> {
    let base = crate::chain::repo::memo::real_path(base).unwrap_or_else(|_| base.to_path_buf());
    let real = crate::chain::repo::memo::real_path(path).ok()?;
    (!real.starts_with(&base)).then_some(real)
}

/// Where the walk of a touch starts: the touched directory, or the touched file's directory,
/// or the nearest of their ancestors that exists, so a made-up path costs nothing.
pub(crate) fn touch_start(t: &Path) -> Option<PathBuf> {
    let is_dir = |d: &Path| stat(d).is_some_and(|m| m.is_dir);
    let start = if is_dir(t) { t } else { t.parent()? };
    start.ancestors().find(|d| is_dir(d)).map(Path::to_path_buf)
}
