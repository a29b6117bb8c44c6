//! The listing of a repository that a walk builds as it goes: every file and directory below
//! the repository's base, by relative path, until there are too many to list.

use std::path::{Path, PathBuf};

use crate::chain::repo::project::is_file_entry;

/// Paths, `/`-separated, one after another in one text: a listing of 100,000 names is a few
/// allocations, not 100,000 (which the walk's threads made in arenas of their own, and kept
/// resident once the names were gone).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Names {
    text: String,
    /// Where each name ends in `text`.
    ends: Vec<u32>,
}

impl Names {
    /// Adds `name`; false (and nothing added) when the text would pass 4 GiB.
    pub fn push(&mut self, name: &str) -> bool {
        let Ok(end) = u32::try_from(self.text.len() + name.len()) else { return false };
        self.text.push_str(name);
        self.ends.push(end);
        true
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The `i`th name.
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    pub fn iter(&self) -> NamesIter<'_> {
        self.into_iter()
    }

    /// Adds the names of `other`; false (and nothing added) when the text would pass 4 GiB.
    pub fn append(&mut self, other: &Names) -> bool {
        let Ok(shift) = u32::try_from(self.text.len()) else { return false };
        if u32::try_from(self.text.len() + other.text.len()).is_err() {
            return false;
        }
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|e| e + shift));
        true
    }

    /// The names in byte order.
    pub fn sorted(self) -> Names {
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_unstable_by(|&a, &b| self.get(a).cmp(self.get(b)));
        let mut out = Names { text: String::with_capacity(self.text.len()), ends: Vec::with_capacity(self.len()) };
        for i in order {
            out.push(self.get(i));
        }
        out
    }

    /// Where `name` is, as `slice::binary_search` says, in names kept in byte order.
    pub fn binary_search(&self, name: &str) -> Result<usize, usize> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = low + (high - low) / 2;
            match self.get(mid).cmp(name) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(low)
    }
}

impl<'a> IntoIterator for &'a Names {
    type Item = &'a str;
    type IntoIter = NamesIter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        NamesIter { names: self, next: 0, start: 0 }
    }
}

/// The names of a [`Names`], in order.
pub(crate) struct NamesIter<'a> {
    names: &'a Names,
    next: usize,
    start: usize,
}

impl<'a> Iterator for NamesIter<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let end = *self.names.ends.get(self.next)? as usize;
        let name = &self.names.text[std::mem::replace(&mut self.start, end)..end];
        self.next += 1;
        Some(name)
    }
}

impl<'a> FromIterator<&'a str> for Names {
    fn from_iter<I: IntoIterator<Item = &'a str>>(names: I) -> Self {
        let mut out = Names::default();
        for n in names {
            out.push(n);
        }
        out
    }
}

/// A listing of the repository made from a walk of it made for another purpose (`check`'s), which
/// sees more than the agents' searches: `node_modules` is left out here.
pub struct RepoListing {
    base: PathBuf,
    files: Option<Names>,
    dirs: Names,
    entries: usize,
}

impl RepoListing {
    /// A listing of the walk of `root`, when `root` is a whole repository (the nearest directory
    /// holding `.git`, as a real path): a walk of less cannot stand for the repository.
    pub fn of(root: &Path) -> Option<Self> {
        let base = crate::chain::repo::memo::real_path(root).ok()?;
        let whole =
            crate::chain::repo::project::project_base(&base) == base && crate::chain::repo::project::has_git(&base);
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
        let kept = match (self.files.as_mut(), other.files) {
            (Some(files), Some(more)) => {
                self.entries <= REPO_ENTRIES && files.append(&more) && self.dirs.append(&other.dirs)
            }
            _ => false,
        };
        if !kept {
            self.files = None;
            self.dirs = Names::default();
        }
    }

    /// Adds an entry of the walk (of the path it was made for).
    pub fn add(&mut self, e: &ignore::DirEntry) {
        if self.files.is_none() {
            return;
        }
        let rel = entry_rel(e);
        if rel.split('/').any(|c| c == ".git" || c == "node_modules") {
            return;
        }
        self.entries += 1;
        if self.entries > REPO_ENTRIES {
            self.files = None;
            return;
        }
        if rel.is_empty() {
            return;
        }
        let added = if is_file_entry(e) {
            self.files.as_mut().is_some_and(|files| files.push(&rel))
        } else if e.file_type().is_some_and(|t| t.is_dir()) {
            self.dirs.push(&rel)
        } else {
            true
        };
        if !added {
            self.files = None;
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
        let added = self.entries <= REPO_ENTRIES && if is_dir { self.dirs.push(rel) } else { files.push(rel) };
        if !added {
            self.files = None;
        }
    }

    /// What was added: the base, its files (`None` past the bound) and its directories.
    pub(crate) fn into_parts(self) -> (PathBuf, Option<Names>, Names) {
        (self.base, self.files, self.dirs)
    }

    /// An empty listing of the repository at the real path `base`.
    pub(crate) fn at(base: PathBuf) -> Self {
        Self { base, files: Some(Names::default()), dirs: Names::default(), entries: 0 }
    }

    /// Whether the repository is still small enough to list.
    pub(crate) fn is_listed(&self) -> bool {
        self.files.is_some()
    }
}

/// The path of the walk's entry `e` below the walk's root, `/`-separated: the root is the
/// entry's ancestor `depth` levels up, so the path is the entry's last `depth` names (cut out
/// of the path's bytes on Unix, where a name holds no `/`).
fn entry_rel(e: &ignore::DirEntry) -> std::borrow::Cow<'_, str> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = e.path().as_os_str().as_bytes();
        let mut at = bytes.len();
        for _ in 0..e.depth() {
            match memchr::memrchr(b'/', &bytes[..at]) {
                Some(slash) => at = slash,
                None => return String::from_utf8_lossy(bytes),
            }
        }
        let rel = if e.depth() == 0 { &[][..] } else { &bytes[at + 1..] };
        String::from_utf8_lossy(rel)
    }
    #[cfg(not(unix))]
    {
        let root = e.path().ancestors().nth(e.depth()).unwrap_or(e.path());
        crate::paths::slash_join(e.path().strip_prefix(root).unwrap_or(e.path())).into()
    }
}

/// The most entries (files and directories) the repository may hold for its files to be listed:
/// past it what a pattern matches is not known, and no pattern is said to match nothing.
pub const REPO_ENTRIES: usize = 100_000;

#[cfg(test)]
mod tests {
    use super::*;

    /// Names kept in one text come back as they were added, joined and sorted, and are found
    /// where a slice of them would be.
    #[test]
    fn names_in_one_text_are_the_names_added() {
        let mut a: Names = ["b/c", "", "a", "ü/x"].into_iter().collect();
        let b: Names = ["a/b", "z"].into_iter().collect();
        assert!(a.append(&b));
        assert_eq!(a.iter().collect::<Vec<_>>(), ["b/c", "", "a", "ü/x", "a/b", "z"]);
        assert_eq!((a.len(), a.get(3)), (6, "ü/x"));
        let sorted = a.sorted();
        let want = ["", "a", "a/b", "b/c", "z", "ü/x"];
        assert_eq!(sorted.iter().collect::<Vec<_>>(), want);
        for probe in ["", "a", "a/a", "b", "z", "zz", "ü/x", "ü/y"] {
            assert_eq!(sorted.binary_search(probe), want.binary_search(&probe), "{probe:?}");
        }
    }

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
            let mut files: Vec<&str> = listing.files.iter().flat_map(Names::iter).collect();
            files.sort();
            assert_eq!(files, ["a b/ü/f.md", "x/y/z/f.md"], "{}", root.display());
            let mut dirs: Vec<&str> = listing.dirs.iter().collect();
            dirs.sort();
            assert_eq!(dirs, ["a b", "a b/ü", "web", "x", "x/y", "x/y/z"], "{}", root.display());
        }
    }
}
