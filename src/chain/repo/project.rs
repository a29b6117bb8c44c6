//! The project an agent works in: its base (the nearest folder holding `.git`, where the agents
//! stop looking up) and the walk of its files as the agents' searches make it.

use std::path::{Path, PathBuf};

use crate::chain::repo::memo::{real_path, stat};

/// Whether `dir` holds `.git` (a folder, or the file of a worktree): where the agents stop.
pub(crate) fn has_git(dir: &Path) -> bool {
    stat(&crate::paths::join(dir, ".git")).is_some()
}

/// The directory the project's links must stay in: the project folder of `cwd` (see
/// [`crate::chain::confine::project_folder`]).
pub(crate) fn project_base(cwd: &Path) -> PathBuf {
    crate::chain::confine::project_folder_by(cwd, has_git, real_path).to_path_buf()
}

/// The walk of the repository below `base`, as the agents' file searches see it: `.gitignore`
/// honoured, hidden files kept, `.git` and `node_modules` skipped.
pub(crate) fn project_walk(base: &Path) -> ignore::WalkBuilder {
    crate::chain::confine::walker(base, |e| e.file_name() != ".git" && e.file_name() != "node_modules")
}

/// At most `limit` entries of [`project_walk`], in the order of their paths.
pub(crate) fn project_entries(base: &Path, limit: usize) -> Vec<ignore::DirEntry> {
    crate::chain::confine::entries(&mut project_walk(base), limit)
}

/// Whether a walk's entry is a file, or a link to one (an attached path may be a link).
pub(crate) fn is_file_entry(e: &ignore::DirEntry) -> bool {
    e.file_type().is_some_and(|t| t.is_file() || (t.is_symlink() && e.path().is_file()))
}
