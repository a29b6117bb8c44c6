//! The trees and blobs of a diff's two revisions, read from the object database once for both:
//! most of a history's directories and files are the same on both sides, and each read of a
//! loose object maps and unmaps it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use gix::ObjectId;

use crate::chain::agents;
use gix::objs::tree::EntryMode;

/// The largest blob kept for the other side once read (instruction files are far smaller).
const BLOB_KEPT_MAX: usize = 256 * 1024;

/// The most of one file any agent reads (an engine's `maxFileBytes` at its largest; the agents'
/// profiles read less): a larger blob or file is laid out by its size alone.
pub(super) const BODY_READ_MAX: u64 = crate::chain::settings::MAX_FILE_BYTES_CAP;

/// What a file of a revision holds, as the layout writes it.
pub(super) enum Body {
    Bytes(Arc<[u8]>),
    /// Larger than any agent reads: laid out as a sparse file of this size, its bytes never
    /// read (a 1 GiB blob costs a header read, not a gigabyte of memory).
    Size(u64),
}

impl Body {
    /// Writes the body as a new file at `path`.
    pub(super) fn write_new(&self, path: &std::path::Path) -> std::io::Result<()> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
        match self {
            Body::Bytes(bytes) => file.write_all(bytes),
            Body::Size(n) => file.set_len(*n),
        }
    }

    /// The bytes, when they were read.
    pub(super) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Body::Bytes(b) => Some(b),
            Body::Size(_) => None,
        }
    }
}

/// One entry of a tree: its name, mode and object.
pub(super) struct Item {
    pub name: Vec<u8>,
    pub mode: EntryMode,
    pub oid: ObjectId,
}

/// What reading one object came to (the same for every side that asks).
type Slot<T> = Arc<OnceLock<Result<Arc<T>, String>>>;

/// The objects read so far, shared by the threads that lay out the sides: the first to ask for
/// an object reads it, and another asking meanwhile waits for that read.
#[derive(Default)]
pub(super) struct Objects {
    trees: Mutex<HashMap<ObjectId, Slot<[Item]>>>,
    blobs: Mutex<HashMap<ObjectId, Slot<[u8]>>>,
}

impl Objects {
    /// The entries of the tree `oid`.
    pub(super) fn tree(&self, repo: &gix::Repository, oid: ObjectId) -> Result<Arc<[Item]>, String> {
        let slot = Self::slot(&self.trees, oid);
        slot.get_or_init(|| {
            let tree = repo.find_tree(oid).map_err(|e| e.to_string())?;
            let decoded = tree.decode().map_err(|e| e.to_string())?;
            let items: Vec<Item> = decoded
                .entries
                .iter()
                .map(|e| Item { name: e.filename.to_vec(), mode: e.mode, oid: e.oid.to_owned() })
                .collect();
            Ok(items.into())
        })
        .clone()
    }

    /// The bytes of the blob `oid`. One larger than [`BLOB_KEPT_MAX`] is not kept for the other
    /// side (a revision of large settings files would stay in memory whole).
    pub(super) fn blob(&self, repo: &gix::Repository, oid: ObjectId) -> Result<Arc<[u8]>, String> {
        let slot = Self::slot(&self.blobs, oid);
        let data =
            slot.get_or_init(|| repo.find_blob(oid).map(|b| Arc::from(&b.data[..])).map_err(|e| e.to_string())).clone();
        if data.as_ref().is_ok_and(|d| d.len() > BLOB_KEPT_MAX) {
            self.blobs.lock().unwrap_or_else(|e| e.into_inner()).remove(&oid);
        }
        data
    }

    /// What the blob `oid` holds, as a layout writes it: its bytes, or only its size when it is
    /// larger than any agent reads ([`Body::Size`]); the size comes from the object's header,
    /// so such a blob is never inflated.
    pub(super) fn body(&self, repo: &gix::Repository, oid: ObjectId) -> Result<Body, String> {
        let size = repo.find_header(oid).map_err(|e| e.to_string())?.size();
        if size > BODY_READ_MAX {
            return Ok(Body::Size(size));
        }
        self.blob(repo, oid).map(Body::Bytes)
    }

    fn slot<T: ?Sized>(map: &Mutex<HashMap<ObjectId, Slot<T>>>, oid: ObjectId) -> Slot<T> {
        map.lock().unwrap_or_else(|e| e.into_inner()).entry(oid).or_default().clone()
    }

    /// Hands `each` every entry below the tree `root`, breadth first (a directory's entries
    /// before what is in its subdirectories), with its path from the root (`/` between names).
    /// Names that are not UTF-8 are left out, with everything below them. Of the entries of one
    /// tree that share a name (git never writes such a tree, but a crafted one can hold a file
    /// and a link `AGENTS.md`), the first is handed over and the others to `twice`, with
    /// everything below them: a checkout takes one of them. Each entry is taken from `visits`;
    /// a tree that cannot be read, or one that holds more than `visits` allows, is said by
    /// `fail`.
    pub(super) fn each_entry<E>(
        &self,
        repo: &gix::Repository,
        root: ObjectId,
        visits: &mut Visits,
        mut each: impl FnMut(&str, &Item) -> Result<(), E>,
        mut twice: impl FnMut(&str),
        fail: impl Fn(String) -> E,
    ) -> Result<(), E> {
        let mut queue: VecDeque<(String, ObjectId)> = VecDeque::from([(String::new(), root)]);
        while let Some((dir, oid)) = queue.pop_front() {
            let items = self.tree(repo, oid).map_err(|e| {
                fail(format!("cannot read its tree at {} ({e})", if dir.is_empty() { "." } else { &dir }))
            })?;
            let mut names: HashSet<&[u8]> = HashSet::with_capacity(if items.len() > 1 { items.len() } else { 0 });
            for item in items.iter() {
                visits.take(dir.len() + usize::from(!dir.is_empty()) + item.name.len()).map_err(&fail)?;
                // A name that is not UTF-8 (and all below it) is left out.
                let Ok(name) = std::str::from_utf8(&item.name) else { continue };
                let path = if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
                if items.len() > 1 && !names.insert(&item.name) {
                    twice(&path);
                    continue;
                }
                each(&path, item)?;
                if item.mode.is_tree() {
                    queue.push_back((path, item.oid));
                }
            }
        }
        Ok(())
    }
}

/// The most entries of its revision's tree one side of a diff visits: ten times what a
/// repository's listing names ([`agents::REPO_ENTRIES`]; past it a check still works, without
/// the listing), and more than twice the files of the largest public monorepos. A tree that names
/// one subtree twice at each of 23 levels holds 16 million entries in 1.5 KB of objects.
pub(super) const TREE_ENTRIES_MAX: usize = 10 * agents::REPO_ENTRIES;

/// The most bytes the paths of those entries may add up to: 268 bytes an entry at the most
/// entries (real paths average under 100), and what bounds the memory the paths take when a
/// crafted tree nests its entries deep below long names.
pub(super) const TREE_PATH_BYTES_MAX: usize = 256 << 20;

/// What is left to visit of a side's tree ([`TREE_ENTRIES_MAX`], [`TREE_PATH_BYTES_MAX`]).
pub(super) struct Visits {
    entries: usize,
    path_bytes: usize,
}

impl Default for Visits {
    fn default() -> Self {
        Self { entries: TREE_ENTRIES_MAX, path_bytes: TREE_PATH_BYTES_MAX }
    }
}

const WHY: &str = "a tree can name one subtree many times over, a few bytes for millions of paths";

fn too_many_entries() -> String {
    format!("its tree holds more than {TREE_ENTRIES_MAX} entries, more than diff lays out ({WHY})")
}

fn too_many_path_bytes() -> String {
    format!(
        "the paths of its tree add up to more than {} MiB, more than diff lays out ({WHY})",
        TREE_PATH_BYTES_MAX >> 20
    )
}

impl Visits {
    /// Takes one entry whose path is `path_bytes` long; what was wrong when none is left.
    pub(super) fn take(&mut self, path_bytes: usize) -> Result<(), String> {
        if self.entries == 0 {
            return Err(too_many_entries());
        }
        let Some(left) = self.path_bytes.checked_sub(path_bytes) else { return Err(too_many_path_bytes()) };
        self.entries -= 1;
        self.path_bytes = left;
        Ok(())
    }
}

impl Objects {
    /// Whether the tree `root` fits in [`Visits`]' bounds, worked out from its distinct trees
    /// alone (each read once, its entries and their paths' bytes remembered), so that a tree
    /// that names one subtree millions of times is refused at once, before anything of it is laid
    /// out. Counts as [`Objects::each_entry`] visits: every entry, below those it goes into.
    pub(super) fn fits(&self, repo: &gix::Repository, root: ObjectId) -> Result<(), String> {
        let (entries, bytes) = self.size(repo, root)?;
        if entries > TREE_ENTRIES_MAX as u64 {
            return Err(too_many_entries());
        }
        if bytes > TREE_PATH_BYTES_MAX as u64 {
            return Err(too_many_path_bytes());
        }
        Ok(())
    }

    /// The entries of the tree `root` and the bytes of their paths, as [`Objects::fits`] counts.
    fn size(&self, repo: &gix::Repository, root: ObjectId) -> Result<(u64, u64), String> {
        // Per tree: its entries, and the bytes of their paths from the tree.
        let mut sizes: HashMap<ObjectId, (u64, u64)> = HashMap::new();
        let mut stack = vec![(root, false)];
        while let Some((oid, ready)) = stack.pop() {
            if sizes.contains_key(&oid) {
                continue;
            }
            let items = self.tree(repo, oid).map_err(|e| format!("cannot read its tree ({e})"))?;
            let mut names: HashSet<&[u8]> = HashSet::new();
            let below = items.iter().filter(|item| {
                item.mode.is_tree() && std::str::from_utf8(&item.name).is_ok() && names.insert(&item.name)
            });
            if !ready {
                stack.push((oid, true));
                stack.extend(below.filter(|item| !sizes.contains_key(&item.oid)).map(|item| (item.oid, false)));
                continue;
            }
            let mut entries = items.len() as u64;
            let mut bytes: u64 = items.iter().map(|item| item.name.len() as u64).sum();
            for item in below {
                let (e, b) = sizes.get(&item.oid).copied().unwrap_or_default();
                entries = entries.saturating_add(e);
                bytes = bytes.saturating_add(e.saturating_mul(item.name.len() as u64 + 1)).saturating_add(b);
            }
            sizes.insert(oid, (entries, bytes));
        }
        Ok(sizes.get(&root).copied().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree is visited while its entries and the bytes of their paths fit in what is left;
    /// past either, the walk stops and says which.
    #[test]
    fn a_tree_past_its_entries_or_path_bytes_stops_the_walk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = gix::init(dir.path()).expect("init");
        let entry = |kind: gix::objs::tree::EntryKind, name: &str, oid: ObjectId| gix::objs::tree::Entry {
            mode: kind.into(),
            filename: name.into(),
            oid,
        };
        let tree = |entry| repo.write_object(gix::objs::Tree { entries: vec![entry] }).expect("tree").detach();
        // Nine 200-byte names, one below the other, and a file: 10 entries, 10,846 bytes of paths.
        let blob = repo.write_blob(b"x").expect("blob").detach();
        let mut oid = tree(entry(gix::objs::tree::EntryKind::Blob, "f", blob));
        for _ in 0..9 {
            oid = tree(entry(gix::objs::tree::EntryKind::Tree, &"n".repeat(200), oid));
        }
        let walk = |mut visits: Visits| {
            let mut seen = 0;
            let done = Objects::default().each_entry(
                &repo,
                oid,
                &mut visits,
                |_, _| {
                    seen += 1;
                    Ok(())
                },
                |_| {},
                |e| e,
            );
            (seen, done)
        };
        assert_eq!(walk(Visits { entries: 10, path_bytes: 10_846 }), (10, Ok(())));
        let (seen, done) = walk(Visits { entries: 9, path_bytes: usize::MAX });
        assert_eq!(seen, 9);
        assert!(done.is_err_and(|e| e.starts_with("its tree holds more than 1000000 entries")));
        let (seen, done) = walk(Visits { entries: 10, path_bytes: 10_000 });
        assert_eq!(seen, 9);
        assert!(done.is_err_and(|e| e.starts_with("the paths of its tree add up to more than 256 MiB")));
        // Worked out from the distinct trees, the same count; a tree that names one subtree twice
        // at each of 23 levels (16 million entries) is refused without a walk.
        let objects = Objects::default();
        assert_eq!(objects.size(&repo, oid), Ok((10, 10_846)));
        assert_eq!(objects.fits(&repo, oid), Ok(()));
        let mut bomb = tree(entry(gix::objs::tree::EntryKind::Blob, "f", blob));
        for _ in 0..23 {
            let twice = |name: &str| entry(gix::objs::tree::EntryKind::Tree, name, bomb);
            bomb = repo.write_object(gix::objs::Tree { entries: vec![twice("a"), twice("b")] }).expect("tree").detach();
        }
        assert_eq!(objects.size(&repo, bomb).map(|(e, _)| e), Ok(3 * (1 << 23) - 2));
        assert!(objects.fits(&repo, bomb).is_err_and(|e| e.starts_with("its tree holds more than 1000000 entries")));
    }
}
