//! The listing of a repository that a walk builds as it goes: every file and directory below
//! the repository's base, by relative path, until there are too many to list.

use std::path::{Path, PathBuf};

use super::repo::{REPO_ENTRIES, RepoIndex};
use super::walk::is_file_entry;

/// A listing of the repository made from a walk of it made for another purpose (`check`'s), which
/// sees more than the agents' searches: `node_modules` is left out here.
pub struct RepoListing {
    base: PathBuf,
    files: Option<Vec<Box<str>>>,
    dirs: Vec<Box<str>>,
    entries: usize,
}

impl RepoListing {
    /// A listing of the walk of `root`, when `root` is a whole repository (the nearest directory
    /// holding `.git`, as a real path): a walk of less cannot stand for the repository.
    pub fn of(root: &Path) -> Option<Self> {
        let base = super::read::real_path(root).ok()?;
        let whole = super::walk::project_base(&base) == base && super::walk::has_git(&base);
        whole.then(|| Self::at(base))
    }

    /// An empty listing of the same repository, for one thread of a parallel walk.
    pub fn empty_like(&self) -> Self {
        Self::at(self.base.clone())
    }

    /// Takes in the listing another thread of the same walk made: too many entries together
    /// leave the repository unlisted, as one walk would.
    pub fn merge(&mut self, other: Self) {
        self.entries += other.entries;
        match (self.files.as_mut(), other.files) {
            (Some(files), Some(more)) if self.entries <= REPO_ENTRIES => {
                files.extend(more);
                self.dirs.extend(other.dirs);
            }
            _ => {
                self.files = None;
                self.dirs = Vec::new();
            }
        }
    }

    /// Adds an entry of the walk (of the path it was made for).
    pub fn add(&mut self, e: &ignore::DirEntry) {
        let Some(files) = self.files.as_mut() else { return };
        let rel = entry_rel(e);
        if rel.components().any(|c| c.as_os_str() == ".git" || c.as_os_str() == "node_modules") {
            return;
        }
        self.entries += 1;
        if self.entries > REPO_ENTRIES {
            self.files = None;
            return;
        }
        if rel.as_os_str().is_empty() {
            return;
        }
        if is_file_entry(e) {
            files.push(crate::paths::slash_join(rel).into_boxed_str());
        } else if e.file_type().is_some_and(|t| t.is_dir()) {
            self.dirs.push(crate::paths::slash_join(rel).into_boxed_str());
        }
    }

    /// Adds an entry that is in the repository but not on the disk the walk read (`rel`, with
    /// `/` between its names, relative to the base): `diff` lays out only the files whose text
    /// an agent reads, and names the others here.
    pub fn add_unwritten(&mut self, rel: &str, is_dir: bool) {
        let Some(files) = self.files.as_mut() else { return };
        if rel.is_empty() || rel.split('/').any(|c| c == ".git" || c == "node_modules") {
            return;
        }
        self.entries += 1;
        if self.entries > REPO_ENTRIES {
            self.files = None;
            return;
        }
        if is_dir {
            self.dirs.push(rel.into());
        } else {
            files.push(rel.into());
        }
    }

    /// The index of what was added.
    pub fn finish(self) -> RepoIndex {
        let walked = self.files.is_some().then_some(self.dirs);
        RepoIndex::of(self.base, self.files, walked)
    }

    /// An empty listing of the repository at the real path `base`.
    pub(super) fn at(base: PathBuf) -> Self {
        Self { base, files: Some(Vec::new()), dirs: Vec::new(), entries: 0 }
    }

    /// Whether the repository is still small enough to list.
    pub(super) fn is_listed(&self) -> bool {
        self.files.is_some()
    }
}

/// The path of the walk's entry `e` below the walk's root: the root is the entry's ancestor
/// `depth` levels up.
///
/// (Cutting it out of the path's text as a string instead saved a twentieth of a check's
/// instructions, but left the server on the 200,000-directory tree with 15 MB more resident: its
/// walk's threads then kept the listing's 100,000 names in allocator arenas they no longer
/// trimmed. The listing needs a compact store of its own before that can come back.)
fn entry_rel(e: &ignore::DirEntry) -> &Path {
    let root = e.path().ancestors().nth(e.depth()).unwrap_or(e.path());
    e.path().strip_prefix(root).unwrap_or(e.path())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository's listing names its files and directories below its base with `/`, and
    /// leaves out `.git` and `node_modules` with everything below them, however the walk's root
    /// is spelled.
    #[test]
    fn a_listing_names_what_the_walk_saw_below_the_base() {
        let dir = tempfile::tempdir().expect("tempdir");
        for d in ["a b/ü", "x/y/z", ".git/objects", "web/node_modules/pkg"] {
            std::fs::create_dir_all(dir.path().join(d)).expect("mkdir");
            std::fs::write(dir.path().join(d).join("f.md"), "x").expect("write");
        }
        let spelled = format!("{}/", dir.path().display());
        for root in [dir.path().to_path_buf(), PathBuf::from(&spelled), dir.path().join("x/../x/..")] {
            let Some(mut listing) = RepoListing::of(&root) else { panic!("{} is a whole repository", root.display()) };
            for e in ignore::WalkBuilder::new(&root).hidden(false).ignore(false).git_ignore(false).build().flatten() {
                listing.add(&e);
            }
            let mut files: Vec<&str> = listing.files.iter().flatten().map(|f| &**f).collect();
            files.sort();
            assert_eq!(files, ["a b/ü/f.md", "x/y/z/f.md"], "{}", root.display());
            let mut dirs: Vec<&str> = listing.dirs.iter().map(|d| &**d).collect();
            dirs.sort();
            assert_eq!(dirs, ["a b", "a b/ü", "web", "x", "x/y", "x/y/z"], "{}", root.display());
        }
    }
}
