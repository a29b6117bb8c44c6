//! The file system as one run's views see it. Views started in a thousand directories of one
//! tree ask the same questions of the same paths (is the root's `AGENTS.md` there, what is this
//! directory's real path, what does this file hold): inside a scope ([`with_memo`], which
//! `repo::cache::with_cache` opens) each is asked of the disk once and its answer kept; outside
//! one, every question goes to the disk.
//!
//! A scope takes the files as unchanging while it lasts: a server opens one per pass, `check`
//! one per run.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Something worked out of a file, of the type its kind says.
type Derived = Arc<dyn std::any::Any + Send + Sync>;

/// What the file system said in one scope.
#[derive(Default)]
pub(crate) struct FsMemo {
    /// What the file system said of each path probed, links followed (`stat`) or not (`lstat`):
    /// views started in a thousand directories of one tree probe the same ancestors' names.
    stats: Mutex<PathMap<Option<Stat>>>,
    lstats: Mutex<PathMap<Option<bool>>>,
    /// Whether a file opened for reading (Gemini's `access(R_OK)`: every view from every
    /// directory probes the root's file again).
    opens: Mutex<PathMap<bool>>,
    /// Real paths worked out (see [`real_path`]).
    reals: Mutex<PathMap<PathBuf>>,
    /// What a view worked out of one file or folder (a rule's front matter, the files Copilot
    /// never finds), by what and where (see [`remembered`]).
    derived: Mutex<HashMap<&'static str, PathMap<Derived>>>,
    /// The bytes of the files read, as read (see [`read_before`]), and their total.
    reads: Mutex<(PathMap<Arc<Read>>, usize)>,
}

thread_local! {
    static MEMO: RefCell<Option<Arc<FsMemo>>> = const { RefCell::new(None) };
    /// The real paths resolved while the view on this thread is computed (see [`real_path`]);
    /// `None` outside a view.
    static REAL: RefCell<Option<HashMap<PathBuf, PathBuf>>> = const { RefCell::new(None) };
}

/// The scope's memo on this thread, if any.
fn current() -> Option<Arc<FsMemo>> {
    MEMO.with(|c| c.borrow().clone())
}

/// Runs `f` with the questions it asks on this thread answered from `memo`; the scope before is
/// restored after.
pub(crate) fn with_memo<T>(memo: &Arc<FsMemo>, f: impl FnOnce() -> T) -> T {
    scoped(&MEMO, memo.clone(), f)
}

/// Runs `f`, the computation of one view, with real paths remembered for it alone (see
/// [`real_path`]); what was remembered before is restored after (views may nest).
pub(crate) fn with_view_paths<T>(f: impl FnOnce() -> T) -> T {
    scoped(&REAL, HashMap::new(), f)
}

/// Runs `f` with the thread-local `key` set to `value`; what it held before is restored after,
/// also when `f` panics (scopes nest).
pub(crate) fn scoped<V: 'static, T>(
    key: &'static std::thread::LocalKey<RefCell<Option<V>>>,
    value: V,
    f: impl FnOnce() -> T,
) -> T {
    struct Restore<V: 'static>(&'static std::thread::LocalKey<RefCell<Option<V>>>, Option<V>);
    impl<V: 'static> Drop for Restore<V> {
        fn drop(&mut self) {
            let before = self.1.take();
            self.0.with(|c| *c.borrow_mut() = before);
        }
    }
    let _restore = Restore(key, key.with(|c| c.borrow_mut().replace(value)));
    f()
}

/// The memo's hash: the check of a large tree looks up paths hundreds of thousands of times,
/// and SipHash over `Path`'s components was a tenth of its time. Keys are the paths' bytes, so
/// `a//b` and `a/b` are two keys: a miss, never a wrong answer.
pub(crate) type FastHash = foldhash::fast::RandomState;
pub(crate) type PathMap<V> = HashMap<OsString, V, FastHash>;

/// What `stat` says of a path that exists.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stat {
    pub is_file: bool,
    pub is_dir: bool,
    pub len: u64,
    /// The device and inode (on Unix).
    #[cfg_attr(not(unix), allow(dead_code))]
    pub key: (u64, u64),
}

impl Stat {
    fn of(m: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        let key = {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let key = (0, 0);
        Self { is_file: m.is_file(), is_dir: m.is_dir(), len: m.len(), key }
    }
}

/// A file's bytes as one read took them: the first `limit` bytes, and the file's size.
pub(crate) struct Read {
    pub data: Vec<u8>,
    pub size: u64,
    pub limit: u64,
}

/// The most paths a scope remembers the file system's answer for, and the most bytes of files.
pub(crate) const STATS_MAX: usize = 262_144;
const READS_BYTES_MAX: usize = 64 << 20;

/// `stat` of `path` (links followed): the scope's answer, else the file system's.
pub(crate) fn stat(path: &Path) -> Option<Stat> {
    probed(|c| &c.stats, path, || std::fs::metadata(path).ok().map(|m| Stat::of(&m)))
}

/// Whether `path` itself (a link not followed) is a file or a link; `None` when it does not
/// exist. The scope's answer, else the file system's.
pub(crate) fn lstat_file_or_link(path: &Path) -> Option<bool> {
    probed(
        |c| &c.lstats,
        path,
        || std::fs::symlink_metadata(path).ok().map(|m| m.file_type().is_file() || m.file_type().is_symlink()),
    )
}

/// Whether `path` is a directory (links followed), as [`stat`] says.
pub(crate) fn is_dir(path: &Path) -> bool {
    stat(path).is_some_and(|m| m.is_dir)
}

/// Whether `path` is a regular file (links followed), as [`stat`] says.
pub(crate) fn is_file(path: &Path) -> bool {
    stat(path).is_some_and(|m| m.is_file)
}

/// Whether anything is at `path`, a link not followed (a dangling link is there), as
/// [`lstat_file_or_link`] says: what Node's `existsSync` after `lstat`, and the root markers, ask.
pub fn lstat_exists(path: &Path) -> bool {
    lstat_file_or_link(path).is_some()
}

/// Whether the regular file at `path` may be read ([`crate::chain::confine::readable`]): the
/// scope's answer, else the file system's.
pub(crate) fn opens(path: &Path) -> bool {
    probed(|c| &c.opens, path, || crate::chain::confine::readable(path))
}

/// What `probe` says of `path`, remembered in the scope's map `map` (at most [`STATS_MAX`]
/// paths); outside a scope, `probe` itself.
fn probed<V: Copy>(map: impl Fn(&FsMemo) -> &Mutex<PathMap<V>>, path: &Path, probe: impl FnOnce() -> V) -> V {
    let Some(cache) = current() else { return probe() };
    if let Some(v) = map(&cache).lock().unwrap_or_else(|e| e.into_inner()).get(path.as_os_str()) {
        return *v;
    }
    let v = probe();
    let mut known = map(&cache).lock().unwrap_or_else(|e| e.into_inner());
    if known.len() >= STATS_MAX {
        known.clear();
    }
    known.insert(path.as_os_str().to_owned(), v);
    v
}

/// What `f` works out of `path` (`what` names it): once per scope, else each time. Only for
/// what depends on nothing but the files at `path`, which a scope takes as unchanging.
pub(crate) fn remembered<T: Clone + Send + Sync + 'static>(
    what: &'static str,
    path: &Path,
    f: impl FnOnce() -> T,
) -> T {
    let Some(cache) = current() else { return f() };
    let known = cache
        .derived
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(what)
        .and_then(|m| m.get(path.as_os_str()).cloned());
    if let Some(v) = known.and_then(|v| v.downcast_ref::<T>().cloned()) {
        return v;
    }
    let v = f();
    let mut map = cache.derived.lock().unwrap_or_else(|e| e.into_inner());
    if map.values().map(HashMap::len).sum::<usize>() >= STATS_MAX {
        map.clear();
    }
    map.entry(what).or_default().insert(path.as_os_str().to_owned(), Arc::new(v.clone()));
    v
}

/// `fs::canonicalize`, remembered for the view being computed: a directory's real path is its
/// parent's plus its name unless it is a link, so each directory costs one `lstat` once per
/// view, where `canonicalize` costs a `readlink` per component per call (a chain 150 levels
/// deep made 2.5 million of them in one `check`). Outside a view, `fs::canonicalize` itself.
pub fn real_path(path: &Path) -> io::Result<PathBuf> {
    if REAL.with(|r| r.borrow().is_none()) {
        // Outside a view, but maybe inside a run whose views share what they work out.
        if let Some(real) = real_before(path) {
            return Ok(real);
        }
        let real = fs::canonicalize(path)?;
        keep_real(path, &real);
        return Ok(real);
    }
    if let Some(real) = REAL.with(|r| r.borrow().as_ref().and_then(|m| m.get(path).cloned())) {
        return Ok(real);
    }
    // Worked out by another view of the same run.
    if let Some(real) = real_before(path) {
        return Ok(real);
    }
    let simple = path.is_absolute()
        && path.file_name().is_some()
        && !path.components().any(|c| matches!(c, std::path::Component::ParentDir | std::path::Component::CurDir));
    let real = match path.parent().filter(|_| simple) {
        Some(parent) if !fs::symlink_metadata(path)?.file_type().is_symlink() => {
            let mut real = real_path(parent)?;
            real.push(path.file_name().unwrap_or_default());
            real
        }
        _ => fs::canonicalize(path)?,
    };
    REAL.with(|r| {
        if let Some(m) = r.borrow_mut().as_mut() {
            m.insert(path.to_path_buf(), real.clone());
        }
    });
    keep_real(path, &real);
    Ok(real)
}

/// The real path of `path` worked out earlier in the scope.
pub(crate) fn real_before(path: &Path) -> Option<PathBuf> {
    let cache = current()?;
    cache.reals.lock().unwrap_or_else(|e| e.into_inner()).get(path.as_os_str()).cloned()
}

/// Keeps the real path of `path`, for [`real_before`].
pub(crate) fn keep_real(path: &Path, real: &Path) {
    let Some(cache) = current() else { return };
    let mut map = cache.reals.lock().unwrap_or_else(|e| e.into_inner());
    if map.len() >= STATS_MAX {
        map.clear();
    }
    map.insert(path.as_os_str().to_owned(), real.to_path_buf());
}

/// The bytes of `path` a read of `limit` bytes took earlier in the scope, when it took at least
/// as many (or the whole file).
pub(crate) fn read_before(path: &Path, limit: u64) -> Option<Arc<Read>> {
    let cache = current()?;
    let reads = cache.reads.lock().unwrap_or_else(|e| e.into_inner());
    reads.0.get(path.as_os_str()).filter(|r| r.limit >= limit || r.data.len() as u64 == r.size).cloned()
}

/// Keeps what a read of `path` took, for [`read_before`].
pub(crate) fn keep_read(path: &Path, read: Read) {
    let Some(cache) = current() else { return };
    let mut reads = cache.reads.lock().unwrap_or_else(|e| e.into_inner());
    if reads.1 + read.data.len() > READS_BYTES_MAX {
        return;
    }
    reads.1 += read.data.len();
    reads.0.insert(path.as_os_str().to_owned(), Arc::new(read));
}
