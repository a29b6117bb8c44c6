//! The skeleton of one side of a diff: the files of a revision (or the working tree) whose text
//! an agent or this tool may read, laid out in a scratch directory, and what it leaves out.

use std::collections::{BTreeSet, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::chain::agents;
use crate::chain::settings::Settings;
use crate::paths;
use crate::session::check;

use super::Revision;
use super::objects;
use super::scratch::LayOut;

/// The file names whose text the skeleton keeps besides those of [`keeps_text`]'s rules: every
/// agent's and the engine's instruction file names.
pub(super) fn kept_names(settings: &Settings) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = settings.all_names().map(str::to_string).collect();
    names.extend(agents::FILE_NAMES.iter().map(|s| s.to_string()));
    names.extend(crate::chain::targets::CONFIG_NAMES.iter().map(|s| s.to_string()));
    names
}

/// Whether the skeleton keeps a file's text: instruction files, anything in a hidden folder or
/// hidden itself (`.github/`, `.claude/`, `.cursorrules`, `.gitignore`), Markdown and text an
/// import may name, and settings (`.json`, `.toml`, `.yaml`). Other files (sources) are kept
/// empty: their names are what rules' globs match.
fn keeps_text(rel: &Path, names: &BTreeSet<String>) -> bool {
    const EXTENSIONS: &[&str] = &["md", "mdc", "markdown", "txt", "toml", "json", "jsonc", "yaml", "yml"];
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    names.contains(name)
        || rel.components().any(|c| c.as_os_str().to_str().is_some_and(|s| s.starts_with('.')))
        || rel
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// A path of the repository as a relative path with normal components only; `None` for one
/// that would leave the skeleton (`..`, absolute) or names `.git`.
fn safe_rel(path: &str) -> Option<PathBuf> {
    let p = Path::new(path);
    let ok = p.components().all(|c| matches!(c, Component::Normal(n) if n != ".git"));
    ok.then(|| p.to_path_buf())
}

/// Lays out `rev` as a skeleton in `into` (see the module's documentation), with an empty
/// `.git` so that the agents find the project's root there, and returns what it leaves out:
/// the files whose text no agent reads and the directories that hold nothing kept, which the
/// side's listing of the repository names instead (see [`check::walk_with`]). Writing them
/// would cost more than the rest of the diff.
pub(super) fn materialize(
    repo: &gix::Repository,
    objects: &objects::Objects,
    workdir: &Path,
    rev: &Revision,
    into: &Path,
    names: &BTreeSet<String>,
) -> Result<Vec<check::Unwritten>, LayOut> {
    // Writing the skeleton failed: another scratch directory may do.
    let io = |p: &Path, e: std::io::Error| LayOut::Scratch(format!("{}: {e}", p.display()));
    std::fs::create_dir_all(into.join(".git")).map_err(|e| io(into, e))?;
    // (Paths relative to the root, with `/`: as the listing takes them.)
    let mut unwritten_dirs: Vec<String> = Vec::new();
    let mut unwritten_files: Vec<String> = Vec::new();
    // The directories made on the disk (those something kept went in).
    let mut made: HashSet<String> = HashSet::new();
    let mut links: Vec<(PathBuf, String)> = Vec::new();
    let mut linked: HashSet<PathBuf> = HashSet::new();
    let mut place = |rel: &Path, slashed: &str, kind: Entry, data: &dyn Fn() -> Result<Arc<[u8]>, String>| {
        // Nothing is written through a link the skeleton holds: a crafted tree can name both a
        // link `a` and entries below `a/`, which would land wherever the link points.
        if !linked.is_empty() && rel.ancestors().any(|a| linked.contains(a)) {
            return Ok(());
        }
        match kind {
            Entry::Dir => unwritten_dirs.push(slashed.to_string()),
            Entry::File if !keeps_text(rel, names) => unwritten_files.push(slashed.to_string()),
            Entry::File | Entry::Link => {
                // A directory is made when something kept goes in it.
                let path = into.join(rel);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
                }
                made.extend(slashed.match_indices('/').map(|(i, _)| slashed[..i].to_string()));
                let bytes = data()?;
                if kind == Entry::File {
                    std::fs::write(&path, bytes).map_err(|e| io(&path, e))?;
                } else {
                    let target = String::from_utf8_lossy(&bytes).into_owned();
                    link(&target, &path).map_err(|e| io(&path, e))?;
                    linked.insert(rel.to_path_buf());
                    links.push((rel.to_path_buf(), target));
                }
            }
        }
        Ok::<(), LayOut>(())
    };
    match rev {
        Revision::Commit(spec) => {
            let id = repo
                .rev_parse_single(spec.as_str())
                .map_err(|e| format!("{spec}: not a revision of this repository ({e})"))?;
            let tree = id
                .object()
                .map_err(|e| format!("{spec}: {e}"))?
                .peel_to_tree()
                .map_err(|e| format!("{spec}: not a commit or a tree ({e})"))?;
            objects.each_entry(
                repo,
                tree.id,
                |path, item| {
                    let Some(rel) = safe_rel(path) else { return Ok(()) };
                    let kind = if item.mode.is_tree() || item.mode.is_commit() {
                        Entry::Dir
                    } else if item.mode.is_link() {
                        Entry::Link
                    } else {
                        Entry::File
                    };
                    let data = || -> Result<Arc<[u8]>, String> {
                        objects.blob(repo, item.oid).map_err(|err| format!("{spec}: {}: {err}", rel.display()))
                    };
                    // (A crafted name can hold `/`: the path is then said as the disk has it.)
                    if path.split('/').all(|c| !c.is_empty() && c != ".") {
                        place(&rel, path, kind, &data)
                    } else {
                        place(&rel, &paths::slash_join(&rel), kind, &data)
                    }
                },
                |dir, e| LayOut::Other(format!("{spec}: cannot read its tree at {dir} ({e})")),
            )?;
        }
        Revision::WorkingTree => {
            let walker = ignore::WalkBuilder::new(workdir)
                .hidden(false)
                .require_git(false)
                .filter_entry(|e| e.file_name() != ".git")
                .build();
            for entry in walker.flatten() {
                let Ok(rel) = entry.path().strip_prefix(workdir) else { continue };
                let Some(rel) = rel.to_str().and_then(safe_rel) else { continue };
                if rel.as_os_str().is_empty() {
                    continue;
                }
                let Some(t) = entry.file_type() else { continue };
                let kind = if t.is_dir() {
                    Entry::Dir
                } else if t.is_symlink() {
                    Entry::Link
                } else {
                    Entry::File
                };
                let path = entry.path().to_path_buf();
                let data = || -> Result<Arc<[u8]>, String> {
                    let read = |e: std::io::Error| format!("{}: {e}", path.display());
                    if kind == Entry::Link {
                        let target = std::fs::read_link(&path).map_err(read)?;
                        Ok(target.to_string_lossy().as_bytes().into())
                    } else {
                        std::fs::read(&path).map(Arc::from).map_err(read)
                    }
                };
                place(&rel, &paths::slash_join(&rel), kind, &data)?;
            }
        }
    }
    let mut out: Vec<check::Unwritten> = Vec::with_capacity(unwritten_dirs.len() + unwritten_files.len());
    // A directory something kept went in is on the disk: the walk lists it.
    out.extend(unwritten_dirs.into_iter().filter(|d| !made.contains(d)).map(|d| (d, true)));
    // A link to a left-out file dangles in the skeleton: it is listed as the file it names.
    // (The listing sorts what it is given.)
    let left_out: HashSet<&str> =
        if links.is_empty() { Default::default() } else { unwritten_files.iter().map(String::as_str).collect() };
    for (rel, target) in &links {
        let named = rel.parent().map(|p| paths::slash_join(&paths::normalize(&p.join(target))));
        if named.is_some_and(|n| left_out.contains(n.as_str())) {
            out.push((paths::slash_join(rel), false));
        }
    }
    out.extend(unwritten_files.into_iter().map(|f| (f, false)));
    Ok(out)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    Dir,
    File,
    Link,
}

/// A symbolic link at `path` to `target`, as git stores it; where links cannot be made, a file
/// holding the target's name (as git does with `core.symlinks` off).
fn link(target: &str, path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, path)
    }
    #[cfg(not(unix))]
    {
        std::fs::write(path, target)
    }
}
