//! The one confinement rule for what a repository may make instructions-lsp read, and the one
//! way a repository's tree is walked.
//!
//! - A path a repository writes is resolved (links, `..`, `/proc/self/root`) before it is
//!   opened; one that [`leaves_project`] is not opened, listed or measured, and nothing under
//!   `/proc`, `/sys` or `/dev` ([`is_special`]) is read at all.
//! - Every walk of a tree starts from [`walker`]: `.gitignore` files count from the
//!   repository's root down, as git counts them (never one in a folder above the repository),
//!   and a folder whose ignore file is not a regular file (a FIFO named `.gitignore` would block
//!   the walk forever) is left out with everything below it.

use std::fs;
use std::path::{Path, PathBuf};

/// Linux's shared memory file system: ordinary files kept in memory, under `/dev` but no device.
pub const SHARED_MEMORY: &str = "/dev/shm";

/// A path nothing reads: kernel and device files, whatever their type says (`/proc` files
/// claim to be empty regular files). Files in [`SHARED_MEMORY`] are read as any file is (only a
/// regular file is ever opened): `diff` lays out its revisions there.
pub fn is_special(real: &Path) -> bool {
    ["/proc", "/sys", "/dev"].iter().any(|p| real.starts_with(p)) && !real.starts_with(SHARED_MEMORY)
}

/// Whether the file at `path` may be read (`access(R_OK)`, as Gemini CLI asks), without opening
/// it: a link out of the project is never opened to answer.
#[cfg(unix)]
pub fn readable(path: &Path) -> bool {
    rustix::fs::access(path, rustix::fs::Access::READ_OK).is_ok()
}

/// Whether the file at `path` opens for reading (elsewhere there is no `access` that says it).
#[cfg(not(unix))]
pub fn readable(path: &Path) -> bool {
    open_regular(path).is_ok()
}

/// Opens a file for reading without blocking on a FIFO swapped in after the stat.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        const O_NONBLOCK: i32 = 0o4000;
        options.custom_flags(O_NONBLOCK);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// Whether `dir` holds `.git` (a folder, a worktree's file, or a link): a project root.
pub fn holds_git(dir: &Path) -> bool {
    dir.join(".git").symlink_metadata().is_ok()
}

/// The nearest folder at or above `dir` holding `.git`.
pub fn git_root(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|d| holds_git(d))
}

/// The folder of the project `dir` is in: the nearest folder at or above it holding `.git`
/// (without one, `dir`), unless a link led there: a folder holding `.git` whose real location
/// lies outside a repository above it (`.claude -> ~/other-repo`) is that repository's link to
/// somewhere else, and the repository above is the project. Then a link cannot make another
/// repository part of this one.
pub fn project_folder(dir: &Path) -> &Path {
    project_folder_by(dir, holds_git, real_location)
}

/// [`project_folder`] with the caller's own ways to ask whether a folder holds `.git` and where
/// a path really is (a view's memo of the file system).
pub fn project_folder_by<'a>(
    dir: &'a Path,
    holds_git: impl Fn(&Path) -> bool,
    real_location: impl Fn(&Path) -> std::io::Result<PathBuf>,
) -> &'a Path {
    let real = |p: &Path| real_location(p).unwrap_or_else(|_| p.to_path_buf());
    let git_root = |d: &'a Path| d.ancestors().find(|a| holds_git(a));
    let Some(mut project) = git_root(dir) else { return dir };
    let mut base: Option<PathBuf> = None;
    let mut above = project.parent();
    while let Some(outer) = above.and_then(git_root) {
        let inner = base.get_or_insert_with(|| real(project));
        let outer_real = real(outer);
        if !inner.starts_with(&outer_real) {
            project = outer;
            *inner = outer_real;
        }
        above = outer.parent();
    }
    project
}

/// The real location of `path` when the path leads out of the project it is written in (see
/// [`project_folder`]), through a link to it or to a folder on its way, or into `/proc`, `/sys`
/// or `/dev`. `None` for a path that stays inside, and for one that does not resolve (nothing
/// is there to read).
pub fn leaves_project(path: &Path) -> Option<PathBuf> {
    let parent = path.parent()?;
    let project = project_folder(parent);
    let base = fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    leaves(path, &base)
}

/// The real location of `path` when it lies outside `base` (a real path) or is special;
/// `None` when it stays inside or does not resolve.
pub fn leaves(path: &Path, base: &Path) -> Option<PathBuf> {
    let real = real_location(path).ok()?;
    (is_special(&real) || !real.starts_with(base)).then_some(real)
}

/// Where `path` really is (links resolved). On Linux one lookup that opens nothing for reading
/// (`O_PATH`, so a FIFO does not block and no content is reachable) and the kernel's name for
/// it, instead of a `readlink` per name on the way; elsewhere `fs::canonicalize`.
pub fn real_location(path: &Path) -> std::io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        let handle = fs::OpenOptions::new().read(true).custom_flags(libc::O_PATH).open(path)?;
        if let Ok(real) = fs::read_link(format!("/proc/self/fd/{}", handle.as_raw_fd()))
            && real.is_absolute()
        {
            return Ok(real);
        }
    }
    fs::canonicalize(path)
}

/// The ignore files a walk reads in each folder: git's own. (ripgrep's `.ignore` is not read: a
/// check of each folder for it would cost as much again, for files few repositories hold.)
const IGNORE_FILES: [&str; 1] = [".gitignore"];

/// Whether the ignore files of `dir` can be read without blocking, and are the project's: each
/// is absent (or cannot be looked at: the walk says so itself), a regular file or a folder (an
/// error, not a wait), or a link to a file that stays in the project.
fn ignore_files_readable(dir: &Path) -> bool {
    IGNORE_FILES.iter().all(|name| ignore_file_readable(&dir.join(name)))
}

/// [`ignore_files_readable`] for one ignore file at `path`.
fn ignore_file_readable(path: &Path) -> bool {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => true,
        Ok(m) if m.file_type().is_symlink() => {
            fs::metadata(path).is_ok_and(|m| m.is_file()) && leaves_project(path).is_none()
        }
        Ok(m) => m.is_dir(),
        // Absent, or a folder that cannot be read: the walk reports that itself.
        Err(_) => true,
    }
}

/// A walk of the tree at `root` as every part of instructions-lsp takes it, with `keep` the
/// caller's own filter of entries: hidden files kept (unless the caller says otherwise),
/// `.gitignore` honoured from the repository's root down (in a folder that is no git repository,
/// the tree's own ignore files only), and a folder whose ignore files cannot be read safely
/// ([`ignore_files_readable`]) left out with everything below it.
pub fn walker(root: &Path, keep: impl Fn(&ignore::DirEntry) -> bool + Send + Sync + 'static) -> ignore::WalkBuilder {
    let mut b = ignore::WalkBuilder::new(root);
    b.hidden(false).ignore(false);
    let git = git_root(root).map(Path::to_path_buf);
    // In a repository, git's own rule: ignore files from its root down, none above it. Outside
    // one, the tree's own files (none of the folders above it). From the repository's root,
    // there is nothing above to read (and no folder below needs asking whether it holds `.git`).
    let below_root = git.as_deref().is_some_and(|g| g != root);
    b.require_git(below_root).parents(below_root);
    // The `ignore` crate would read the exclude file of every repository the walk meets, through
    // the `.git` files (`gitdir:`) and `commondir` files they name, wherever those lead: a FIFO
    // there blocks, `/dev/zero` fills the memory. Only the repository's own, read here.
    b.git_exclude(false);
    let exclude = git.as_deref().and_then(git_exclude);
    // The folders from the repository's root down to `root`, whose files the walk reads first.
    let mut above = root.ancestors().take_while(|d| git.as_ref().is_some_and(|g| d.starts_with(g)) || *d == root);
    if !above.all(ignore_files_readable) {
        b.git_ignore(false);
    }
    b.filter_entry(move |e| {
        let dir = e.file_type().is_some_and(|t| t.is_dir());
        let excluded = || exclude.as_ref().is_some_and(|x| x.matched(e.path(), dir).is_ignore());
        keep(e) && (e.depth() == 0 || !(dir && !ignore_files_readable(e.path()) || excluded()))
    });
    b
}

/// The `.git/info/exclude` of the repository at `git`, when its `.git` is a folder (a worktree's
/// or submodule's `.git` file leads elsewhere) and the file is a regular file in the project.
/// (Checked as the walk goes, it ranks below the `.gitignore` files, as in git, except that a
/// `.gitignore` cannot take back what it excludes.)
fn git_exclude(git: &Path) -> Option<ignore::gitignore::Gitignore> {
    let exclude = git.join(".git/info/exclude");
    let plain = fs::symlink_metadata(git.join(".git")).is_ok_and(|m| m.is_dir())
        && fs::metadata(&exclude).is_ok_and(|m| m.is_file())
        && leaves_project(&exclude).is_none();
    if !plain {
        return None;
    }
    let mut b = ignore::gitignore::GitignoreBuilder::new(git);
    // A line that is no pattern is left out, as git leaves it.
    let _ = b.add(&exclude);
    b.build().ok().filter(|x| !x.is_empty())
}

/// Walks `builder`'s tree on every core, each thread adding the entries it meets to a part of
/// its own (`make` makes one, `visit` adds an entry and says whether to go on); the parts, once
/// every thread is done. Every walk here is parallel: the `ignore` crate's one-thread walk reads
/// the ignore files of a folder even when the filter leaves the folder out (so a FIFO named
/// `.gitignore` would block it), its parallel walk does not.
pub fn walk_parts<P: Send>(
    builder: &mut ignore::WalkBuilder,
    make: impl Fn() -> P + Sync,
    visit: impl Fn(&mut P, ignore::DirEntry) -> bool + Sync,
) -> Vec<P> {
    let (tx, rx) = std::sync::mpsc::channel::<P>();
    /// One thread's part, sent back when the thread is done with it.
    struct Part<P> {
        part: Option<P>,
        tx: std::sync::mpsc::Sender<P>,
    }
    impl<P> Drop for Part<P> {
        fn drop(&mut self) {
            if let Some(p) = self.part.take() {
                let _ = self.tx.send(p);
            }
        }
    }
    builder.build_parallel().run(|| {
        let mut part = Part { part: Some(make()), tx: tx.clone() };
        let visit = &visit;
        Box::new(move |entry| {
            let (Ok(e), Some(p)) = (entry, part.part.as_mut()) else { return ignore::WalkState::Continue };
            if visit(p, e) { ignore::WalkState::Continue } else { ignore::WalkState::Quit }
        })
    });
    drop(tx);
    rx.into_iter().collect()
}

/// At most `limit` entries of `builder`'s walk (errors left out), in the order of their paths
/// (a folder before what it holds, names compared as bytes).
pub fn entries(builder: &mut ignore::WalkBuilder, limit: usize) -> Vec<ignore::DirEntry> {
    let seen = std::sync::atomic::AtomicUsize::new(0);
    let parts = walk_parts(builder, Vec::new, |part, e| {
        if seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= limit {
            return false;
        }
        part.push(e);
        true
    });
    let mut all: Vec<ignore::DirEntry> = parts.into_iter().flatten().collect();
    all.sort_by(|a, b| a.path().cmp(b.path()));
    all
}
