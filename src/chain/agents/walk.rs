//! Finding the files: which counts as present, the directories of the walk up from the working
//! directory, the files a [`Pick`] takes from them, rules folders and their front matter, links
//! out of the project, where a touch's walk starts, and a file's identity.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::profile::{AgentProfile, LayerKind, Pick, Probe, Root};
use super::read::read_capped;
use super::view::{AgentFile, Scope, Status};

pub(super) fn present(probe: Probe, path: &Path) -> bool {
    match probe {
        Probe::Lstat => fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file() || m.file_type().is_symlink()),
        Probe::Exists => fs::metadata(path).is_ok(),
        Probe::StatFile => fs::metadata(path).is_ok_and(|m| m.is_file()),
        Probe::Readable => match fs::metadata(path) {
            Ok(m) if m.is_dir() => fs::read_dir(path).is_ok(),
            Ok(m) if m.is_file() => crate::chain::source::open_regular(path).is_ok(),
            // A FIFO or a device passes `access(R_OK)`; it is never opened here, and fails to read.
            Ok(_) => true,
            Err(_) => false,
        },
    }
}

pub(super) fn has_git(dir: &Path) -> bool {
    fs::metadata(dir.join(".git")).is_ok()
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
            let stop = ancestors.iter().position(|d| markers.iter().any(|m| fs::metadata(d.join(m)).is_ok()));
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
                    let path = dir.join(layer.path);
                    let found = match layer.kind {
                        LayerKind::File if present(Probe::StatFile, &path) => vec![path],
                        LayerKind::File => Vec::new(),
                        LayerKind::Rules => rules_files(&path),
                    };
                    for p in found {
                        let mut f = AgentFile::new(p, scope, Status::Loaded);
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
                    let path = dir.join(name);
                    if !present(probe, &path) {
                        continue;
                    }
                    match (&winner, pick) {
                        (Some(w), Pick::First(_)) => {
                            let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
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
        Pick::FirstNameAnywhere(probe) => {
            let mut won: Option<PathBuf> = None;
            for name in names {
                let found: Vec<PathBuf> = dirs.iter().map(|d| d.join(name)).filter(|p| present(probe, p)).collect();
                match &won {
                    Some(w) => {
                        for path in found {
                            let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                            out.push(AgentFile::new(path, scope, Status::Shadowed).by(w).size(bytes, 0));
                        }
                    }
                    None if !found.is_empty() => {
                        won = found.last().cloned();
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

/// The rules of a rules folder: every `*.md` below it, sub-folders included, depth first in
/// directory order (as `readdir` returns them); rules whose front matter names `paths:` apply
/// only to matching files and are left out. Directory links are followed, but every directory
/// is walked once (by file identity), so links back up the tree add nothing.
pub(super) fn rules_files(dir: &Path) -> Vec<PathBuf> {
    struct Walk {
        seen: HashSet<(u64, u64)>,
        entries: usize,
        out: Vec<PathBuf>,
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
            let Ok(meta) = fs::metadata(&path) else { continue };
            if meta.is_dir() {
                if depth < RULES_MAX_DEPTH {
                    walk(&path, depth + 1, w);
                }
            } else if meta.is_file() && path.extension().is_some_and(|e| e == "md") && !conditional(&path) {
                w.out.push(path);
            }
        }
    }
    let mut w = Walk { seen: HashSet::new(), entries: 0, out: Vec::new() };
    walk(dir, 0, &mut w);
    w.out
}

/// A rule whose front matter has a `paths:` key.
fn conditional(path: &Path) -> bool {
    let Ok((data, _)) = read_capped(path, 64 * 1024) else { return false };
    let text = String::from_utf8_lossy(&data);
    front_matter(&text).is_some_and(|(meta, _)| meta.lines().any(|l| l.starts_with("paths:")))
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

/// A file's identity (device and inode), links followed; elsewhere than Unix, a hash of its
/// canonical path.
pub fn file_key(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        use std::hash::{Hash, Hasher};
        let real = fs::canonicalize(path).ok()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        real.to_string_lossy().to_lowercase().hash(&mut h);
        Some((0, h.finish()))
    }
}

/// The directory the project's links must stay in: the nearest ancestor of `cwd` holding
/// `.git`, else `cwd` (both real paths).
pub(super) fn project_base(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|d| has_git(d)).unwrap_or(cwd).to_path_buf()
}

/// Marks the files of `files[from..]` that are links (or lie below a directory link) whose
/// target is outside `base`: the agent would read them, but they are not the project's to show
/// (a rule linked to `~/.ssh/id_rsa`, say). `by` names the target. The user's own global files
/// are theirs to link anywhere.
pub(super) fn mark_linked_outside(files: &mut [AgentFile], from: usize, base: &Path) {
    for f in files.iter_mut().skip(from) {
        if f.scope == Scope::Global || f.status != Status::Loaded {
            continue;
        }
        let Ok(real) = fs::canonicalize(&f.path) else { continue };
        if real != f.path && !real.starts_with(base) {
            f.status = Status::LinkedOutside;
            f.by = Some(real);
        }
    }
}

/// Where the walk of a touch starts: the touched directory, or the touched file's directory,
/// or the nearest of their ancestors that exists, so a made-up path costs nothing.
pub(super) fn touch_start(t: &Path) -> Option<PathBuf> {
    let start = if t.is_dir() { t } else { t.parent()? };
    start.ancestors().find(|d| d.is_dir()).map(Path::to_path_buf)
}
