//! The trees and blobs of a diff's two revisions, read from the object database once for both:
//! most of a history's directories and files are the same on both sides, and each read of a
//! loose object maps and unmaps it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use gix::ObjectId;
use gix::objs::tree::EntryMode;

/// The largest blob kept for the other side once read (instruction files are far smaller).
const BLOB_KEPT_MAX: usize = 256 * 1024;

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
    fn tree(&self, repo: &gix::Repository, oid: ObjectId) -> Result<Arc<[Item]>, String> {
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

    fn slot<T: ?Sized>(map: &Mutex<HashMap<ObjectId, Slot<T>>>, oid: ObjectId) -> Slot<T> {
        map.lock().unwrap_or_else(|e| e.into_inner()).entry(oid).or_default().clone()
    }

    /// Hands `each` every entry below the tree `root`, breadth first (a directory's entries
    /// before what is in its subdirectories), with its path from the root (`/` between names).
    /// Names that are not UTF-8 are left out, with everything below them. Of the entries of one
    /// tree that share a name (git never writes such a tree, but a crafted one can hold a file
    /// and a link `AGENTS.md`), the first is handed over and the others to `twice`, with
    /// everything below them: a checkout takes one of them. A tree that cannot be read is said
    /// by `unread` (the tree's path, the error).
    pub(super) fn each_entry<E>(
        &self,
        repo: &gix::Repository,
        root: ObjectId,
        mut each: impl FnMut(&str, &Item) -> Result<(), E>,
        mut twice: impl FnMut(&str),
        unread: impl Fn(&str, String) -> E,
    ) -> Result<(), E> {
        let mut queue: VecDeque<(String, ObjectId)> = VecDeque::from([(String::new(), root)]);
        while let Some((dir, oid)) = queue.pop_front() {
            let items = self.tree(repo, oid).map_err(|e| unread(if dir.is_empty() { "." } else { &dir }, e))?;
            let mut names: HashSet<&[u8]> = HashSet::with_capacity(if items.len() > 1 { items.len() } else { 0 });
            for item in items.iter() {
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
