//! What the links of a side name inside its revision: an agent that reads `AGENTS.md` linked to
//! `docs/INSTRUCTIONS` reads that file, which the skeleton would otherwise leave out (its name
//! keeps no text), so the link would dangle and a change of the text said nothing. Links are
//! followed as the system follows them (relative to the directory holding the link, through
//! other links), in the revision's tree: one that leaves the tree (`..` above its root, an
//! absolute target), names `.git`, dangles or loops (more than [`HOPS_MAX`] links) names nothing,
//! and nothing outside the tree is read.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gix::ObjectId;

use super::objects::{Body, Objects, Visits};

/// The most links one path is followed through (Linux's `MAXSYMLINKS`): past it, a loop.
const HOPS_MAX: usize = 40;

/// Where a side's entries are read from.
pub(super) enum Source<'a> {
    /// A revision's tree, from the object database.
    Tree { repo: &'a gix::Repository, objects: &'a Objects, root: ObjectId },
    /// The working tree, from the disk.
    Disk(&'a Path),
}

/// An entry of a side, to read.
#[derive(Clone)]
pub(super) enum At {
    Object(ObjectId),
    Disk(PathBuf),
}

/// What an entry is, its link not followed.
enum Node {
    Dir(At),
    File(At),
    Link(String),
}

/// A file of the side that a link makes an agent read: its path from the root (`/` between
/// names), and where to read it.
pub(super) type Linked = (String, At);

impl Source<'_> {
    /// The files that the links of the skeleton (`links`: each link's path from the root, and
    /// its target) make an agent read and that `kept` (whether the skeleton writes the text at a
    /// path as it lists it) leaves out: the file a link to a file names when the link's own path
    /// is one whose text an agent may `read` (`AGENTS.md` → `docs/INSTRUCTIONS`), and below a directory a link names, the files a
    /// path through the link keeps and the directory's own path does not (`.claude` →
    /// `config/claude`: everything in a hidden folder is kept), with the links there followed
    /// in turn. Each entry below such a directory is taken from `visits`.
    pub(super) fn linked_files(
        &self,
        links: &[(String, String)],
        read: &dyn Fn(&str) -> bool,
        kept: &dyn Fn(&str) -> bool,
        visits: &mut Visits,
    ) -> Result<Vec<Linked>, String> {
        // (The path an agent reads, the link's own path, its target.)
        let mut work: Vec<(String, String, String)> =
            links.iter().map(|(path, target)| (path.clone(), path.clone(), target.clone())).collect();
        let mut files = Vec::new();
        let mut taken: HashSet<String> = HashSet::new();
        // Each directory is gone through once: a link to `.` or to a folder above it is a loop.
        let mut expanded: HashSet<String> = HashSet::new();
        while let Some((read_as, at, target)) = work.pop() {
            let from = at.rsplit_once('/').map_or("", |(dir, _)| dir);
            match self.resolve(from, &target) {
                Some((real, Node::File(file))) => {
                    if read(&read_as) && !kept(&real) && taken.insert(real.clone()) {
                        files.push((real, file));
                    }
                }
                Some((real, Node::Dir(dir))) => {
                    // Only a hidden name keeps what a directory's own path does not.
                    if !hidden(&read_as) || hidden(&real) || !expanded.insert(real.clone()) {
                        continue;
                    }
                    self.each_below(&dir, visits, &mut |sub, node| {
                        let real_sub = if real.is_empty() { sub.to_string() } else { format!("{real}/{sub}") };
                        match node {
                            Node::File(file) if !kept(&real_sub) && taken.insert(real_sub.clone()) => {
                                files.push((real_sub, file));
                            }
                            Node::Link(target) => work.push((format!("{read_as}/{sub}"), real_sub, target)),
                            Node::File(_) | Node::Dir(_) => {}
                        }
                    })?;
                }
                Some((_, Node::Link(_))) | None => {}
            }
        }
        Ok(files)
    }

    /// The bytes of the file `at`.
    pub(super) fn read(&self, at: &At) -> Result<Body, String> {
        match (self, at) {
            (Source::Tree { repo, objects, .. }, At::Object(oid)) => objects.body(repo, *oid),
            (_, At::Disk(path)) => disk_body(path).map_err(|e| format!("{}: {e}", path.display())),
            (Source::Disk(_), At::Object(oid)) => Err(format!("{oid}: not on the disk")),
        }
    }

    /// The path from the root that `target`, a link's text, names from the directory `from`
    /// (`""`: the root), with what is there; links on the way followed. `None` when it names
    /// nothing inside the tree.
    fn resolve(&self, from: &str, target: &str) -> Option<(String, Node)> {
        if target.is_empty() || target.starts_with('/') {
            return None;
        }
        let mut pending: VecDeque<String> = from.split('/').chain(target.split('/')).map(str::to_string).collect();
        let mut names: Vec<String> = Vec::new();
        let mut dirs: Vec<At> = vec![self.root()];
        let mut hops = 0;
        while let Some(name) = pending.pop_front() {
            match name.as_str() {
                "" | "." => continue,
                ".." => {
                    // Above the root: out of the tree.
                    names.pop()?;
                    dirs.pop();
                    continue;
                }
                ".git" => return None,
                _ => {}
            }
            match self.child(dirs.last()?, &name)? {
                Node::Dir(at) => {
                    names.push(name);
                    dirs.push(at);
                }
                // (A file followed by more of a path, even `/`, is not a file: ENOTDIR.)
                Node::File(at) if pending.is_empty() => {
                    names.push(name);
                    return Some((names.join("/"), Node::File(at)));
                }
                Node::File(_) => return None,
                Node::Link(text) => {
                    hops += 1;
                    if hops > HOPS_MAX || text.is_empty() || text.starts_with('/') {
                        return None;
                    }
                    for part in text.split('/').rev() {
                        pending.push_front(part.to_string());
                    }
                }
            }
        }
        let dir = dirs.pop()?;
        Some((names.join("/"), Node::Dir(dir)))
    }

    fn root(&self) -> At {
        match self {
            Source::Tree { root, .. } => At::Object(*root),
            Source::Disk(workdir) => At::Disk(workdir.to_path_buf()),
        }
    }

    /// The entry `name` of the directory `dir`: of a tree, its first entry of that name (as the
    /// skeleton lays out the first); `None` when there is none, or it is a submodule (a checkout
    /// leaves it empty) or something other than a file, a directory or a link on the disk.
    fn child(&self, dir: &At, name: &str) -> Option<Node> {
        match (self, dir) {
            (Source::Tree { repo, objects, .. }, At::Object(tree)) => {
                let items = objects.tree(repo, *tree).ok()?;
                let item = items.iter().find(|i| i.name == name.as_bytes())?;
                node_of(repo, objects, item.mode, item.oid)
            }
            (Source::Disk(_), At::Disk(dir)) => {
                let path = dir.join(name);
                let meta = std::fs::symlink_metadata(&path).ok()?;
                if meta.file_type().is_symlink() {
                    let text = std::fs::read_link(&path).ok()?;
                    Some(Node::Link(text.to_string_lossy().into_owned()))
                } else if meta.is_dir() {
                    Some(Node::Dir(At::Disk(path)))
                } else if meta.is_file() {
                    Some(Node::File(At::Disk(path)))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// Hands `each` every entry below the directory `dir`, with its path from `dir`.
    fn each_below(&self, dir: &At, visits: &mut Visits, each: &mut dyn FnMut(&str, Node)) -> Result<(), String> {
        match (self, dir) {
            (Source::Tree { repo, objects, .. }, At::Object(tree)) => objects.each_entry(
                repo,
                *tree,
                visits,
                |path, item| {
                    if let Some(node) = node_of(repo, objects, item.mode, item.oid) {
                        each(path, node);
                    }
                    Ok(())
                },
                |_| {},
                |e| e,
            ),
            (Source::Disk(_), At::Disk(dir)) => {
                for entry in walk_of(dir) {
                    let Ok(rel) = entry.path().strip_prefix(dir) else { continue };
                    let (Some(rel), Some(name)) = (rel.to_str(), entry.file_name().to_str()) else { continue };
                    if rel.is_empty() {
                        continue;
                    }
                    let parent = entry.path().parent().map(|p| At::Disk(p.to_path_buf()));
                    if let Some(node) = parent.and_then(|p| self.child(&p, name)) {
                        each(&crate::paths::slash_join(Path::new(rel)), node);
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// The node of a tree's entry of `mode` and object `oid` (a link's text read).
fn node_of(repo: &gix::Repository, objects: &Objects, mode: gix::objs::tree::EntryMode, oid: ObjectId) -> Option<Node> {
    if mode.is_tree() {
        Some(Node::Dir(At::Object(oid)))
    } else if mode.is_link() {
        let text = objects.blob(repo, oid).ok()?;
        Some(Node::Link(String::from_utf8_lossy(&text).into_owned()))
    } else if mode.is_commit() {
        None
    } else {
        Some(Node::File(At::Object(oid)))
    }
}

/// A walk of the working tree's directory `dir` as the skeleton takes it: what `.gitignore` leaves,
/// hidden files too, `.git` left out, links not followed.
pub(super) fn walk_of(dir: &Path) -> Vec<ignore::DirEntry> {
    crate::chain::confine::entries(&mut crate::chain::confine::walker(dir, |e| e.file_name() != ".git"), usize::MAX)
}

/// Whether a path has a hidden name (`.claude/rules`): the skeleton keeps everything below one.
pub(super) fn hidden(path: &str) -> bool {
    path.split('/').any(|c| c.starts_with('.'))
}

/// A file of the working tree as a layout writes it: its bytes (never blocking on a FIFO), or
/// its size alone when it is larger than any agent reads.
pub(super) fn disk_body(path: &Path) -> std::io::Result<Body> {
    let mut file = crate::chain::confine::open_regular(path)?;
    let size = file.metadata()?.len();
    if size > super::objects::BODY_READ_MAX {
        return Ok(Body::Size(size));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, super::objects::BODY_READ_MAX), &mut bytes)?;
    Ok(Body::Bytes(Arc::from(bytes)))
}

#[cfg(test)]
mod tests {
    #[cfg_attr(not(unix), allow(unused_imports))]
    use super::*;

    /// A link's target is followed from the link's directory, through other links, to what it
    /// names inside the tree; what leaves the tree, loops, names `.git` or goes on past a file
    /// names nothing.
    #[cfg(unix)]
    #[test]
    fn a_target_names_what_the_system_would_inside_the_tree_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for d in ["docs", "pkg", ".git"] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        std::fs::write(root.join("docs/x"), "x").expect("write");
        std::fs::write(root.join(".git/config"), "").expect("write");
        for (target, link) in [("docs", "lnk"), ("../lnk/x", "pkg/via"), ("b", "a"), ("a", "b")] {
            std::os::unix::fs::symlink(target, root.join(link)).expect("symlink");
        }
        let source = Source::Disk(root);
        let file = |from: &str, target: &str| match source.resolve(from, target) {
            Some((path, Node::File(_))) => Some(path),
            _ => None,
        };
        assert_eq!(file("", "docs/x").as_deref(), Some("docs/x"));
        assert_eq!(file("pkg", "../docs/./x").as_deref(), Some("docs/x"));
        assert_eq!(file("", "pkg/via").as_deref(), Some("docs/x"));
        assert!(matches!(source.resolve("pkg", "../lnk"), Some((path, Node::Dir(_))) if path == "docs"));
        assert!(matches!(source.resolve("docs", ".."), Some((path, Node::Dir(_))) if path.is_empty()));
        for (from, target) in [
            ("", "../docs/x"),
            ("pkg", "../../x"),
            ("", "/etc/passwd"),
            ("", "a"),
            ("", "docs/x/"),
            ("", ".git/config"),
        ] {
            assert!(source.resolve(from, target).is_none(), "{from} → {target}");
        }
    }
}
