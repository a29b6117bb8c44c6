//! Which directories a view depends on: every directory whose listing or files can change what
//! [`crate::chain::agents::load()`] answers, so a caller that watches them all may remember the view until one
//! of them changes.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::chain::loader::find::file_key;
use crate::chain::model::profile::{AgentProfile, LayerKind, Pick};
use crate::chain::model::view::AgentView;

/// The most directories a rules folder adds (a huge tree, or links to itself, ends the walk; the
/// view then depends on more than is returned, see [`dirs_read`]).
const RULES_DIRS_MAX: usize = 4_096;
const RULES_MAX_DEPTH: usize = 16;

/// The directories `view` (of `profile`, after the `touched` files) read or would read when
/// something appeared: every ancestor of the working directory (a root marker or `.git` made
/// above moves the walk), the directories between it and each touch, the folders a candidate
/// or layer names (`.claude/`) and every folder below a rules folder, the directories of the
/// user-global files and of every file the view lists (imports, the files that shadow or import
/// them). A directory that does not exist stands for its nearest existing ancestor, where its
/// creation shows. `None` when a rules folder is too large to list every directory: the view
/// then cannot be remembered safely.
pub fn dirs_read(profile: &AgentProfile, view: &AgentView, touched: &[PathBuf]) -> Option<BTreeSet<PathBuf>> {
    // An agent whose pick searches its own way knows what it read (Copilot).
    if let Some(own) = profile.deps {
        return own(profile, view, touched);
    }
    // Otherwise an agent's own pick searches where it likes: no set of directories is enough.
    if matches!(profile.pick, Pick::Own(_)) || profile.rule_files.is_some() {
        return None;
    }
    let walk = walked_dirs(view, touched);
    let mut out = BTreeSet::new();
    let mut rules = Vec::new();
    for dir in &walk {
        out.insert(dir.clone());
        for name in &profile.candidates {
            // Most candidates are plain names, in `dir` itself; `.claude/CLAUDE.md` is not.
            match dir.join(name).parent() {
                Some(parent) if parent != dir.as_path() => {
                    out.insert(existing(parent));
                }
                _ => {}
            }
        }
        for layer in profile.layers.iter().chain(&profile.lazy_layers) {
            let path = dir.join(layer.path);
            if let Some(parent) = path.parent() {
                out.insert(existing(parent));
            }
            if layer.kind == LayerKind::Rules {
                rules.push(path);
            }
        }
    }
    for path in profile.global.iter().flatten() {
        if let Some(parent) = path.parent() {
            out.insert(existing(parent));
        }
        // A global path that is a folder is a rules folder (Claude Code's `~/.claude/rules`).
        rules.push(path.clone());
    }
    listed_dirs(view, &mut out);
    let mut seen = HashSet::new();
    for dir in rules {
        if crate::chain::repo::memo::is_dir(&dir) && !below(&dir, 0, &mut seen, &mut out) {
            return None;
        }
    }
    Some(out)
}

/// The directories a walk from the working directory of `view` reads: every ancestor (a root
/// marker or `.git` made above moves the walk) and the directories between it and each touch.
pub(crate) fn walked_dirs(view: &AgentView, touched: &[PathBuf]) -> Vec<PathBuf> {
    let cwd = &view.cwd;
    let mut walk: Vec<PathBuf> = cwd.ancestors().map(Path::to_path_buf).collect();
    for t in touched {
        let t = crate::chain::repo::memo::real_path(t).unwrap_or_else(|_| t.clone());
        walk.extend(t.ancestors().skip(1).take_while(|d| d.starts_with(cwd)).map(Path::to_path_buf));
    }
    walk
}

/// The folder of every file `view` lists, and of the files that shadow or import them.
pub(crate) fn listed_dirs(view: &AgentView, out: &mut BTreeSet<PathBuf>) {
    for f in &view.files {
        for p in std::iter::once(&f.path).chain(f.by.as_ref()) {
            if let Some(parent) = p.parent() {
                out.insert(existing(parent));
            }
        }
    }
}

/// `dir` when it exists, else its nearest existing ancestor.
pub(crate) fn existing(dir: &Path) -> PathBuf {
    dir.ancestors().find(|d| crate::chain::repo::memo::is_dir(d)).unwrap_or(dir).to_path_buf()
}

/// Adds `dir` and every directory below it (links followed, each directory once); false past
/// [`RULES_DIRS_MAX`].
pub(crate) fn below(dir: &Path, depth: usize, seen: &mut HashSet<(u64, u64)>, out: &mut BTreeSet<PathBuf>) -> bool {
    let Some(key) = file_key(dir) else { return true };
    if !seen.insert(key) {
        return true;
    }
    if seen.len() > RULES_DIRS_MAX {
        return false;
    }
    out.insert(dir.to_path_buf());
    let Ok(entries) = fs::read_dir(dir) else { return true };
    for entry in entries.flatten() {
        let path = entry.path();
        if depth < RULES_MAX_DEPTH && crate::chain::repo::memo::is_dir(&path) && !below(&path, depth + 1, seen, out) {
            return false;
        }
    }
    true
}
