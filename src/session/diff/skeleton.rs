//! The skeleton of one side of a diff: the files of a revision (or the working tree) whose text
//! an agent or this tool may read, laid out in a scratch directory, and what it leaves out.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use crate::chain::agents;
use crate::chain::settings::Settings;
use crate::paths;
use crate::session::check;

use super::objects::Body;
use super::revision::Revision;
use super::scratch::LayOut;
use super::{follow, mentions, objects};

/// The file names whose text the skeleton keeps besides those of [`keeps`]'s rules: every
/// agent's file names (those of its configuration too) and the engine's, and this tool's
/// configuration file.
pub(super) fn kept_names(settings: &Settings) -> BTreeSet<String> {
    let mut names = check::checked_names(settings, &agents::AgentEnv::from_process());
    names.extend(crate::chain::config::CONFIG_NAMES.iter().map(|s| s.to_string()));
    names
}

/// Whether the skeleton holds a file as an empty stand-in: a project manifest in a folder where
/// agents may start, which makes that folder a package root (see [`crate::session::starts`]) by
/// its name alone; its text is read only when something an agent reads names it.
fn stands_in(rel: &Path) -> bool {
    use crate::session::starts;
    rel.file_name().and_then(|n| n.to_str()).is_some_and(starts::is_manifest)
        && rel.parent().is_some_and(starts::startable)
}

/// What the skeleton keeps of a file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Keep {
    /// Its text: an agent reads it by its name or folder.
    Text,
    /// Its text when something kept names it (see [`mentions`]), else its name: Markdown, text
    /// and settings outside the agents' folders, which an import may name.
    Mentioned,
    /// Its name: sources, whose names are what rules' globs match.
    Name,
}

/// What the skeleton keeps of the file `rel`: the text of instruction files (named in `names`,
/// also in another case, as Copilot finds `agents.md`; Copilot's and Cursor's kinds by their
/// endings) and of anything in a hidden folder or hidden itself (`.github/`, `.claude/`,
/// `.cursorrules`, `.gitignore`); Markdown, text and settings elsewhere when mentioned.
fn keeps(rel: &Path, names: &BTreeSet<String>) -> Keep {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let text = mentions::text_extension(name);
    if names.contains(name)
        || (text && names.iter().any(|n| n.eq_ignore_ascii_case(name)))
        || rel.components().any(|c| c.as_os_str().to_str().is_some_and(|s| s.starts_with('.')))
        || agents::is_agent_path(rel)
        || [".prompt.md", ".agent.md", ".chatmode.md"].iter().any(|e| name.ends_with(e))
    {
        Keep::Text
    } else if text {
        Keep::Mentioned
    } else {
        Keep::Name
    }
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
/// would cost more than the rest of the diff. With it, the warnings of the layout: the entries
/// it skips because another entry laid out the same path first.
pub(super) fn materialize(
    repo: &gix::Repository,
    objects: &objects::Objects,
    workdir: &Path,
    rev: &Revision,
    into: &Path,
    names: &BTreeSet<String>,
) -> Result<Laid, LayOut> {
    std::fs::create_dir_all(into.join(".git")).map_err(|e| LayOut::Scratch(format!("{}: {e}", into.display())))?;
    // (Paths relative to the root, with `/`: as the listing takes them.)
    let mut unwritten_dirs: Vec<String> = Vec::new();
    let mut unwritten_files: Vec<String> = Vec::new();
    let mut links: Vec<(PathBuf, String)> = Vec::new();
    let mut written =
        Written { into, rev, made: HashSet::new(), linked: HashSet::new(), skipped: Skipped::default(), bytes: 0 };
    let mut starts = Starts::default();
    let mut twice = Skipped::default();
    let mut visits = objects::Visits::default();
    // The files kept if mentioned, by their path with `/`, and what the kept texts mention.
    let mut deferred: HashMap<String, Deferred> = HashMap::new();
    let mut mentioned = mentions::Mentions::default();
    let mut place = |rel: &Path,
                     slashed: &str,
                     kind: Entry,
                     data: &dyn Fn() -> Result<Body, String>,
                     at: &dyn Fn() -> follow::At| {
        if written.through_link(rel) {
            return Ok(());
        }
        match kind {
            Entry::Dir => unwritten_dirs.push(slashed.to_string()),
            // A FIFO, a socket or a device of the working tree is never opened: named only.
            Entry::Special => unwritten_files.push(slashed.to_string()),
            Entry::File => match keeps(rel, names) {
                Keep::Name if stands_in(rel) => {
                    starts.count(rel, rev)?;
                    written.write(rel, slashed, |path| write_new(path, &[]))?;
                }
                Keep::Name => unwritten_files.push(slashed.to_string()),
                Keep::Mentioned => {
                    let stood_in = match stands_in(rel) {
                        true => {
                            starts.count(rel, rev)?;
                            written.write(rel, slashed, |path| write_new(path, &[]))?
                        }
                        false => false,
                    };
                    if !stood_in {
                        unwritten_files.push(slashed.to_string());
                    }
                    deferred.entry(slashed.to_string()).or_insert_with(|| Deferred {
                        rel: rel.to_path_buf(),
                        at: at(),
                        stood_in,
                    });
                }
                Keep::Text => {
                    starts.add(rel, names, rev)?;
                    let body = data()?;
                    written.count(&body)?;
                    if let Some(bytes) = body.bytes() {
                        mentioned.scan(slashed, bytes);
                    }
                    written.write(rel, slashed, |path| body.write_new(path))?;
                }
            },
            Entry::Link => {
                // (A link's text is a path: one past any agent's read is no link to lay out.)
                let body = data()?;
                let Some(target) = body.bytes().map(|b| String::from_utf8_lossy(b).into_owned()) else { return Ok(()) };
                if written.write(rel, slashed, |path| link(&target, path))? {
                    written.linked.insert(rel.to_path_buf());
                    links.push((rel.to_path_buf(), target));
                }
            }
        }
        Ok::<(), LayOut>(())
    };
    let mut root_tree = None;
    match rev {
        Revision::Commit(spec) => {
            let id = repo
                .rev_parse_single(spec.as_str())
                .map_err(|e| match matches!(repo.is_shallow(), Ok(true)) {
                    // A shallow clone's history stops at its boundary: `HEAD~1` of a clone made
                    // with `--depth 1` is not there to read.
                    true => format!(
                        "{spec}: not in this shallow clone, whose history stops at its boundary ({e}); fetch more of it (`git fetch --deepen=1`, or `--unshallow`)"
                    ),
                    false => format!("{spec}: not a revision of this repository ({e})"),
                })?;
            let tree = tree_of(id).map_err(|e| format!("{spec}: {e}"))?;
            objects.fits(repo, tree).map_err(|e| format!("{spec}: {e}"))?;
            root_tree = Some(tree);
            objects.each_entry(
                repo,
                tree,
                &mut visits,
                |path, item| {
                    let Some(rel) = safe_rel(path) else { return Ok(()) };
                    let kind = if item.mode.is_tree() || item.mode.is_commit() {
                        Entry::Dir
                    } else if item.mode.is_link() {
                        Entry::Link
                    } else {
                        Entry::File
                    };
                    let data = || -> Result<Body, String> {
                        objects.body(repo, item.oid).map_err(|err| format!("{spec}: {}: {err}", rel.display()))
                    };
                    let at = || follow::At::Object(item.oid);
                    // (A crafted name can hold `/`: the path is then said as the disk has it.)
                    if path.split('/').all(|c| !c.is_empty() && c != ".") {
                        place(&rel, path, kind, &data, &at)
                    } else {
                        place(&rel, &paths::slash_join(&rel), kind, &data, &at)
                    }
                },
                |path| {
                    twice.add(|| {
                        format!(
                            "{spec}: a tree names `{path}` twice: its first entry is laid out, the others are skipped"
                        )
                    })
                },
                |e| LayOut::Other(format!("{spec}: {e}")),
            )?;
        }
        Revision::WorkingTree => {
            for entry in follow::walk_of(workdir) {
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
                } else if t.is_file() {
                    Entry::File
                } else {
                    Entry::Special
                };
                let path = entry.path().to_path_buf();
                let data = || -> Result<Body, String> {
                    let read = |e: std::io::Error| format!("{}: {e}", path.display());
                    if kind == Entry::Link {
                        let target = std::fs::read_link(&path).map_err(read)?;
                        Ok(Body::Bytes(target.to_string_lossy().as_bytes().into()))
                    } else {
                        // (Without blocking on a FIFO swapped in since the walk listed a file.)
                        follow::disk_body(&path).map_err(read)
                    }
                };
                place(&rel, &paths::slash_join(&rel), kind, &data, &|| follow::At::Disk(path.clone()))?;
            }
        }
    }
    let source = match root_tree {
        Some(root) => follow::Source::Tree { repo, objects, root },
        None => follow::Source::Disk(workdir),
    };
    let label = rev.label();
    // The paths laid out after the walk, which its list of files left out names no more.
    let mut laid: HashSet<String> = HashSet::new();
    // What a link the skeleton holds makes an agent read, the agent follows it to: it is laid out
    // too when the skeleton left it out.
    if !links.is_empty() {
        let named: Vec<(String, String)> = links.iter().map(|(rel, t)| (paths::slash_join(rel), t.clone())).collect();
        let read = |path: &str| keeps(Path::new(path), names) != Keep::Name;
        let text = |path: &str| keeps(Path::new(path), names) == Keep::Text;
        let files = source
            .linked_files(&named, &read, &text, &mut visits)
            .map_err(|e| LayOut::Other(format!("{label}: {e}")))?;
        for (path, at) in files {
            let Some(rel) = safe_rel(&path).filter(|rel| !written.through_link(rel)) else { continue };
            let body = source.read(&at).map_err(|e| LayOut::Other(format!("{label}: {path}: {e}")))?;
            written.count(&body)?;
            if let Some(bytes) = body.bytes() {
                mentioned.scan(&path, bytes);
            }
            if deferred.get(&path).is_some_and(|d| d.stood_in) {
                continue;
            }
            deferred.remove(&path);
            if written.write(&rel, &path, |file| body.write_new(file))? {
                laid.insert(path);
            }
        }
    }
    // The files kept if mentioned that what the skeleton holds names, and those the files so
    // laid out name in turn (an import of an import). A name a settings file holds counts in
    // every folder, as a file name an agent is told to look for: such files count as
    // instruction files towards [`STARTS_MAX`].
    let mut work: Vec<String> = mentioned.paths.drain().filter(|p| deferred.contains_key(p)).collect();
    if !mentioned.names.is_empty() {
        for (path, d) in &deferred {
            if d.rel.file_name().and_then(|n| n.to_str()).is_some_and(|n| mentioned.names.contains(n)) {
                starts.count(&d.rel, rev)?;
                work.push(path.clone());
            }
        }
    }
    while let Some(path) = work.pop() {
        let Some(d) = deferred.remove(&path) else { continue };
        if written.through_link(&d.rel) {
            continue;
        }
        let body = source.read(&d.at).map_err(|e| LayOut::Other(format!("{label}: {path}: {e}")))?;
        written.count(&body)?;
        if let Some(bytes) = body.bytes() {
            mentioned.scan(&path, bytes);
            work.extend(mentioned.paths.drain().filter(|p| deferred.contains_key(p)));
        }
        if d.stood_in {
            // (The empty stand-in of a manifest gives way to its text.)
            let file = into.join(&d.rel);
            std::fs::remove_file(&file).map_err(|e| write_failed(rev, into, &file, e))?;
        }
        if written.write(&d.rel, &path, |file| body.write_new(file))? {
            laid.insert(path);
        }
    }
    if !laid.is_empty() {
        unwritten_files.retain(|f| !laid.contains(f));
    }
    let mut out: Vec<check::Unwritten> = Vec::with_capacity(unwritten_dirs.len() + unwritten_files.len());
    // A directory something kept went in is on the disk: the walk lists it.
    out.extend(unwritten_dirs.into_iter().filter(|d| !written.made.contains(d)).map(|d| (d, true)));
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
    let mut warnings = twice.said();
    warnings.extend(written.skipped.said());
    Ok(Laid { unwritten: out, warnings })
}

/// A side laid out: what its skeleton leaves out, and what the layout warns of.
pub(super) struct Laid {
    pub unwritten: Vec<check::Unwritten>,
    pub warnings: Vec<String>,
}

/// Whether `rel` (relative, with `/`; `.` for the root) is a directory of the skeleton in `root`
/// by directories alone: a revision's link (to a folder outside, say) is no folder an agent is
/// started in here, and nothing is read through it. With `make`, the names missing on the way
/// are made in turn (a directory of the revision the layout left out, as it held nothing kept,
/// so that an agent can be started there); nothing is made through a link or below a file.
pub(super) fn laid_dir(root: &Path, rel: &str, make: bool) -> bool {
    if rel == "." {
        return true;
    }
    let Some(rel) = safe_rel(rel) else { return false };
    let mut at = root.to_path_buf();
    rel.components().all(|name| {
        at.push(name);
        match std::fs::symlink_metadata(&at) {
            Ok(m) => m.is_dir(),
            Err(_) => make && std::fs::create_dir(&at).is_ok(),
        }
    })
}

/// What a layout wrote of the skeleton in `into`.
struct Written<'a> {
    into: &'a Path,
    rev: &'a Revision,
    /// The directories made (those something kept went in), relative, with `/`.
    made: HashSet<String>,
    /// The links written.
    linked: HashSet<PathBuf>,
    /// The paths it could not write.
    skipped: Skipped,
    /// The bytes of the files written (see [`LAYOUT_BYTES_MAX`]).
    bytes: u64,
}

/// A file kept if mentioned: where it goes, where to read it, and whether the layout holds it
/// as an empty stand-in meanwhile (see [`stands_in`]).
struct Deferred {
    rel: PathBuf,
    at: follow::At,
    stood_in: bool,
}

/// The folders that hold an instruction file or a project manifest: where agents start (see
/// [`STARTS_MAX`]).
#[derive(Default)]
struct Starts(HashSet<PathBuf>);

impl Starts {
    /// Counts the folder of `rel` when its name is one of `names`.
    fn add(&mut self, rel: &Path, names: &BTreeSet<String>, rev: &Revision) -> Result<(), LayOut> {
        match rel.file_name().and_then(|n| n.to_str()) {
            Some(name) if names.contains(name) => self.count(rel, rev),
            _ => Ok(()),
        }
    }

    /// Counts the folder of `rel`; past [`STARTS_MAX`] folders, the revision is refused.
    fn count(&mut self, rel: &Path, rev: &Revision) -> Result<(), LayOut> {
        if self.0.insert(rel.parent().unwrap_or(Path::new("")).to_path_buf()) && self.0.len() > STARTS_MAX {
            return Err(LayOut::Other(format!(
                "{}: more than {} folders hold instruction files or project manifests, places where agents \
                 start (a tree can name one folder many times over); not compared",
                rev.label(),
                crate::chain::words::number(STARTS_MAX as u64)
            )));
        }
        Ok(())
    }
}

/// The most folders holding an instruction file or a project manifest that one revision may
/// have: each is a place where agents start, whose views are worked out (about a millisecond
/// each). A crafted tree names a folder with an `AGENTS.md` (or a `Cargo.toml`) hundreds of
/// thousands of times within its bound of entries; the largest real repositories hold a few
/// hundred.
const STARTS_MAX: usize = 10_000;

/// The most bytes of files one revision's layout writes. A tree can name one blob of up to
/// [`objects::BODY_READ_MAX`] bytes in thousands of places (a few bytes each in the
/// repository); the instruction files of a real revision hold a few megabytes.
const LAYOUT_BYTES_MAX: u64 = 256 << 20;

impl Written<'_> {
    /// Counts `body` against [`LAYOUT_BYTES_MAX`] before it is written: past it, the revision
    /// is refused.
    fn count(&mut self, body: &Body) -> Result<(), LayOut> {
        self.bytes += body.bytes().map_or(0, |b| b.len() as u64);
        if self.bytes > LAYOUT_BYTES_MAX {
            return Err(LayOut::Other(format!(
                "{}: its instruction files hold more than {} bytes (a tree can name one large file in many places); \
                 not laid out",
                self.rev.label(),
                crate::chain::words::number(LAYOUT_BYTES_MAX)
            )));
        }
        Ok(())
    }

    /// Whether `rel` lies below a link written: nothing is written through one (a crafted tree
    /// can name both a link `a` and entries below `a/`, which would land wherever it points).
    fn through_link(&self, rel: &Path) -> bool {
        !self.linked.is_empty() && rel.ancestors().any(|a| self.linked.contains(a))
    }

    /// Writes the entry `rel` (`slashed`: its path with `/`) with `write`, making the directories
    /// it goes in (a directory is made when something kept goes in it); whether it was written.
    /// Two entries can name one path, which the first takes: a crafted name holding `/` (`a/b`
    /// beside a directory `a` holding `b`), or names that differ only in case on a file system
    /// that does not tell them apart. That path, and one that no file system holds (a name too
    /// long), are skipped with a warning, as a checkout skips them.
    fn write(
        &mut self,
        rel: &Path,
        slashed: &str,
        write: impl FnOnce(&Path) -> std::io::Result<()>,
    ) -> Result<bool, LayOut> {
        let path = self.into.join(rel);
        let wrote = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| {
            self.made.extend(slashed.match_indices('/').map(|(i, _)| slashed[..i].to_string()));
            write(&path)
        });
        let label = || self.rev.label();
        match wrote {
            Ok(()) => return Ok(true),
            Err(e) if collides(&e) => self.skipped.add(|| {
                format!(
                    "{}: `{slashed}` is laid out already, by another entry that names the same file: this one is skipped",
                    label()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidFilename => {
                self.skipped.add(|| format!("{}: `{slashed}` cannot be laid out ({e}): it is skipped", label()))
            }
            Err(e) => return Err(write_failed(self.rev, self.into, &path, e)),
        }
        Ok(false)
    }
}

/// How many skipped entries of one kind a side's warnings name; the others are counted.
const SKIPPED_NAMED: usize = 10;

/// The entries a layout skips, as its warnings say them.
#[derive(Default)]
struct Skipped {
    said: Vec<String>,
    more: usize,
}

impl Skipped {
    fn add(&mut self, say: impl FnOnce() -> String) {
        if self.said.len() < SKIPPED_NAMED {
            self.said.push(say());
        } else {
            self.more += 1;
        }
    }

    /// The warnings, and one that counts those not said.
    fn said(mut self) -> Vec<String> {
        if self.more > 0 {
            self.said.push(format!("… and {} more entries skipped so", self.more));
        }
        self.said
    }
}

/// Why writing `path` of the skeleton in `into` failed. A scratch place that is full or refuses
/// is the place's fault: another may do. Anything else is the revision's (a name too long for
/// any file system): it fails the same in every place, and says the path in the repository.
fn write_failed(rev: &Revision, into: &Path, path: &Path, e: std::io::Error) -> LayOut {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::StorageFull
        | K::QuotaExceeded
        | K::FileTooLarge
        | K::ReadOnlyFilesystem
        | K::PermissionDenied
        | K::TooManyLinks
        | K::Unsupported
        | K::OutOfMemory => LayOut::Scratch(format!("{}: {e}", path.display())),
        _ => {
            let rel = paths::slash_join(path.strip_prefix(into).unwrap_or(path));
            LayOut::Other(format!("{}: cannot lay out `{rel}`: {e}", rev.label()))
        }
    }
}

/// Whether writing failed because something is at the path (or on its way) already.
fn collides(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(e.kind(), K::AlreadyExists | K::NotADirectory | K::IsADirectory)
}

/// Writes a new file at `path`; one there already (a link above all: writing would follow it)
/// is an error.
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new().write(true).create_new(true).open(path)?.write_all(bytes)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Entry {
    Dir,
    File,
    Link,
    /// Neither of those (a FIFO, a socket, a device): a name, never read.
    Special,
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

/// The tree a revision names: a tree, a commit's, a tag's target's. Every object is decoded
/// through calls that return an error (gix's own `peel_to_tree` panics on a commit it cannot
/// parse: a corrupt object in a hostile history); a chain of tags ends after 64.
fn tree_of(id: gix::Id<'_>) -> Result<gix::ObjectId, String> {
    use gix::object::Kind;
    let mut object = id.object().map_err(|e| e.to_string())?;
    for _ in 0..64 {
        let next = match object.kind {
            Kind::Tree => return Ok(object.id),
            Kind::Blob => return Err("a file, not a commit or a tree".into()),
            Kind::Commit => {
                let commit = object.try_into_commit().map_err(|e| e.to_string())?;
                commit.tree_id().map_err(|e| format!("a commit that cannot be read ({e})"))?
            }
            Kind::Tag => {
                let tag = object.try_into_tag().map_err(|e| e.to_string())?;
                tag.target_id().map_err(|e| format!("a tag that cannot be read ({e})"))?
            }
        };
        object = next.object().map_err(|e| e.to_string())?;
    }
    Err("a chain of more than 64 tags".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    /// Only a scratch place that is full or refuses leaves the layout to the next place; what
    /// fails for the revision's own paths fails the same everywhere, and says the path in the
    /// repository (not the scratch directory's).
    #[test]
    fn only_a_full_or_refusing_place_is_the_scratch_places_fault() {
        let rev = Revision::Commit("crafted".into());
        let into = Path::new("/scratch/head");
        let path = into.join("a/b.md");
        for kind in [ErrorKind::StorageFull, ErrorKind::QuotaExceeded, ErrorKind::ReadOnlyFilesystem] {
            assert!(matches!(write_failed(&rev, into, &path, Error::from(kind)), LayOut::Scratch(_)), "{kind:?}");
        }
        for kind in [ErrorKind::InvalidInput, ErrorKind::NotFound] {
            match write_failed(&rev, into, &path, Error::from(kind)) {
                LayOut::Other(e) => assert!(e.starts_with("crafted: cannot lay out `a/b.md`: "), "{e}"),
                LayOut::Scratch(e) => panic!("{kind:?} retried in another place: {e}"),
            }
        }
        for kind in [ErrorKind::AlreadyExists, ErrorKind::NotADirectory, ErrorKind::IsADirectory] {
            assert!(collides(&Error::from(kind)), "{kind:?}");
        }
    }
}
