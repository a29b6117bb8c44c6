//! Non-recursive watches on exactly the directories that matter, debounced, with only the
//! events that can change what a file holds: opening or reading a file is not a change (the
//! server's own reads would otherwise come back as events, forever).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime};

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc::UnboundedSender;

#[cfg(target_os = "linux")]
mod inotify;
mod raw;

use raw::Raw;

/// How long events settle before they are handled.
pub const DEBOUNCE: Duration = Duration::from_millis(30);

/// What the watcher reports.
#[derive(Debug, PartialEq, Eq)]
pub enum WatchEvent {
    /// These paths changed (created, written, removed, renamed, their metadata changed).
    Changed(Vec<PathBuf>),
    /// Events were lost (the kernel queue overflowed, or the watcher failed): everything
    /// watched must be looked at again.
    Rescan,
}

/// Whether an event can change what a path holds. Opens, reads and closes without writing are
/// not changes; a close after writing is.
pub fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// How often the polling watcher looks at the watched directories, when the system's watcher
/// cannot start (no inotify instance left) or [`POLL_VARIABLE`] asks for it.
pub const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// The environment variable that makes the server poll instead of using inotify: for file
/// systems whose changes inotify never sees (NFS, SSHFS, some container and WSL mounts).
pub const POLL_VARIABLE: &str = "INSTRUCTIONS_LSP_POLL";

/// A set of watched directories that follows the sessions.
pub struct DirWatcher {
    backend: Backend,
    /// Each directory watched, with the backend's handle of its watch.
    watched: BTreeMap<Arc<Path>, i32>,
    /// Directories asked for that did not exist then (see [`DirWatcher::add_made`]).
    missing: BTreeSet<Arc<Path>>,
    /// Every existing directory asked for is watched (no failure, e.g. no exhausted limit).
    complete: bool,
    warned: bool,
    /// Counts the calls of [`DirWatcher::set`] that added a watch: an answer computed while it
    /// did not move read no directory before its watch was in place.
    epoch: u64,
}

/// Collects raw events for [`DEBOUNCE`] after the first one, then sends them as one batch.
fn debounce(raw: mpsc::Receiver<Raw>, tx: UnboundedSender<WatchEvent>) {
    loop {
        let Ok(first) = raw.recv() else { return };
        let deadline = Instant::now() + DEBOUNCE;
        let mut paths: BTreeSet<PathBuf> = BTreeSet::new();
        let mut rescan = false;
        let mut take = |raw: Raw| match raw {
            Raw::Changed(changed) => paths.extend(changed),
            Raw::Rescan => rescan = true,
            Raw::Failed(e) => {
                tracing::warn!("file watching: {e}; looking at every watched directory again");
                rescan = true;
            }
        };
        take(first);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match raw.recv_timeout(left) {
                Ok(result) => take(result),
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
        let sent = if rescan {
            tx.send(WatchEvent::Rescan)
        } else if !paths.is_empty() {
            tx.send(WatchEvent::Changed(paths.into_iter().collect()))
        } else {
            Ok(())
        };
        if sent.is_err() {
            return;
        }
    }
}

impl DirWatcher {
    /// Starts a watcher whose debounced changes go to `tx`: the system's (inotify), else one that
    /// polls, so that changes on disk are seen whatever the client can do (a client may not
    /// watch files for the server). Polls from the start when [`POLL_VARIABLE`] is `1`.
    pub fn new(tx: UnboundedSender<WatchEvent>) -> Result<Self, String> {
        Self::start(tx, std::env::var(POLL_VARIABLE).is_ok_and(|v| v == "1"))
    }

    /// [`DirWatcher::new`], polling from the start when `poll`.
    pub fn start(tx: UnboundedSender<WatchEvent>, poll: bool) -> Result<Self, String> {
        Self::start_with(tx, if poll { Kind::Polling } else { Kind::System })
    }

    /// [`DirWatcher::new`] with the backend `kind` (falling back to polling).
    fn start_with(tx: UnboundedSender<WatchEvent>, kind: Kind) -> Result<Self, String> {
        let (raw_tx, raw_rx) = mpsc::channel();
        let system = match kind {
            Kind::Polling => Err("polling asked for".to_string()),
            #[cfg(target_os = "linux")]
            Kind::System => inotify::Inotify::start(raw_tx.clone()).map(Backend::Inotify),
            #[cfg(not(target_os = "linux"))]
            Kind::System => notify_watcher(raw_tx.clone()),
            #[cfg(test)]
            Kind::Notify => notify_watcher(raw_tx.clone()),
        };
        let backend = match system {
            Ok(backend) => backend,
            Err(why) => {
                let poller = Poller::start(raw_tx).map_err(|e| format!("cannot start file watching: {e}"))?;
                tracing::warn!("file watching: {why}; looking for changes every {} s instead", POLL_INTERVAL.as_secs());
                Backend::Polling(poller)
            }
        };
        std::thread::Builder::new()
            .name("watch-debounce".into())
            .spawn(move || debounce(raw_rx, tx))
            .map_err(|e| format!("cannot start file watching: {e}"))?;
        Ok(Self {
            backend,
            watched: BTreeMap::new(),
            missing: BTreeSet::new(),
            complete: true,
            warned: false,
            epoch: 0,
        })
    }

    /// Whether changes are found by polling.
    pub fn polling(&self) -> bool {
        matches!(self.backend, Backend::Polling(_))
    }

    /// Watches exactly `dirs` (non-recursively): new ones are added, old ones dropped. When an
    /// existing directory cannot be watched (e.g. the inotify limit is exhausted) the watcher is
    /// incomplete: requests then re-walk the disk, the client is asked to report changes, and
    /// one warning is logged.
    pub fn set(&mut self, dirs: BTreeSet<Arc<Path>>) {
        let gone: Vec<(Arc<Path>, i32)> =
            self.watched.iter().filter(|(d, _)| !dirs.contains(*d)).map(|(d, h)| (d.clone(), *h)).collect();
        for (dir, handle) in gone {
            self.backend.unwatch(&dir, handle);
            self.watched.remove(&dir);
        }
        self.missing.retain(|d| dirs.contains(d));
        self.complete = true;
        self.add(dirs);
    }

    /// Watches `dirs` too, keeping what is watched: when the set only grows.
    pub fn add(&mut self, dirs: impl IntoIterator<Item = Arc<Path>>) {
        let mut failures = Vec::new();
        let mut added = false;
        for dir in dirs {
            if let Some((known, &handle)) = self.watched.get_key_value(&dir) {
                // The same directory from a newer listing: its path is kept once, the newer.
                if !Arc::ptr_eq(known, &dir) {
                    self.backend.rekey(&dir, handle);
                    self.watched.remove(&dir);
                    self.watched.insert(dir, handle);
                }
                continue;
            }
            if !dir.is_dir() {
                self.missing.insert(dir);
                continue;
            }
            match self.backend.watch(&dir) {
                Ok(handle) => {
                    self.missing.remove(&dir);
                    self.watched.insert(dir, handle);
                    added = true;
                }
                Err(e) => failures.push(format!("{}: {e}", dir.display())),
            }
        }
        self.complete = self.complete && failures.is_empty();
        if added {
            self.epoch += 1;
        }
        if !failures.is_empty() && !self.warned {
            self.warned = true;
            tracing::warn!(
                "cannot watch {} directories (first: {}); answering from the disk on every request, and asking the client to report changes",
                failures.len(),
                failures[0]
            );
        }
    }

    /// Watches the directories asked for before that have been made since: after a change on
    /// disk, instead of setting every directory again.
    pub fn add_made(&mut self) {
        let made: Vec<Arc<Path>> = self.missing.iter().filter(|d| d.is_dir()).cloned().collect();
        if !made.is_empty() {
            self.add(made);
        }
    }

    /// Whether every directory that should be watched is.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Whether `dir` is watched.
    pub fn watches(&self, dir: &std::path::Path) -> bool {
        self.watched.contains_key(dir)
    }

    /// Moves whenever a watch is added (see the field).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }
}

/// Which backend to start.
#[derive(Clone, Copy)]
enum Kind {
    /// Linux's inotify of our own, elsewhere the system's through the `notify` package.
    System,
    Polling,
    /// The `notify` package's backend, on Linux too (its tests).
    #[cfg(test)]
    Notify,
}

/// Who tells the watcher of changes: the kernel, or a thread that looks.
enum Backend {
    #[cfg(target_os = "linux")]
    Inotify(inotify::Inotify),
    #[cfg_attr(all(target_os = "linux", not(test)), allow(dead_code))]
    Notify(RecommendedWatcher),
    Polling(Poller),
}

/// The system's watcher through the `notify` package, its events as changes.
#[cfg_attr(all(target_os = "linux", not(test)), allow(dead_code))]
fn notify_watcher(raw: mpsc::Sender<Raw>) -> Result<Backend, String> {
    notify::recommended_watcher(move |result: notify::Result<Event>| {
        let event = match result {
            Ok(event) if event.need_rescan() => Raw::Rescan,
            Ok(event) if is_change(&event.kind) => Raw::Changed(event.paths),
            Ok(_) => return,
            Err(e) => Raw::Failed(e.to_string()),
        };
        let _ = raw.send(event);
    })
    .map(Backend::Notify)
    .map_err(|e| e.to_string())
}

impl Backend {
    /// Watches `dir`; the handle [`Backend::unwatch`] takes.
    fn watch(&mut self, dir: &Arc<Path>) -> Result<i32, String> {
        match self {
            #[cfg(target_os = "linux")]
            Backend::Inotify(w) => w.watch(dir),
            Backend::Notify(w) => w.watch(dir, RecursiveMode::NonRecursive).map(|()| 0).map_err(|e| e.to_string()),
            Backend::Polling(p) => p.watch(dir).map(|()| 0),
        }
    }

    /// `dir`, watched as `handle`, is from now on named by this allocation of its path.
    fn rekey(&mut self, dir: &Arc<Path>, handle: i32) {
        #[cfg(target_os = "linux")]
        if let Backend::Inotify(w) = self {
            w.rekey(dir, handle);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (dir, handle);
    }

    fn unwatch(&mut self, dir: &Path, handle: i32) {
        #[cfg(not(target_os = "linux"))]
        let _ = handle;
        match self {
            #[cfg(target_os = "linux")]
            Backend::Inotify(w) => w.unwatch(dir, handle),
            Backend::Notify(w) => {
                let _ = w.unwatch(dir);
            }
            Backend::Polling(p) => p.unwatch(dir),
        }
    }
}

/// What a directory held when last looked at: each entry's size, modification time (to the
/// nanosecond: a second is too coarse for an edit right after a look), inode and kind.
type Listing = BTreeMap<OsString, (u64, Option<SystemTime>, u64, bool)>;

/// Looks at the watched directories every [`POLL_INTERVAL`] and reports what differs from the
/// last look, in the form the kernel's events take; the thread ends with the watcher.
struct Poller {
    /// Each watched directory's last listing (`None`: it could not be read).
    dirs: Arc<Mutex<BTreeMap<PathBuf, Option<Listing>>>>,
}

fn listing(dir: &Path) -> Option<Listing> {
    let mut out = Listing::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        // An entry gone between the listing and its look is a change the next look sees.
        let Ok(meta) = entry.metadata() else { continue };
        out.insert(entry.file_name(), (meta.len(), meta.modified().ok(), inode(&meta), meta.is_dir()));
    }
    Some(out)
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> u64 {
    0
}

/// The paths that differ between two listings of `dir`: the entries added, removed or changed,
/// or the directory itself when it appeared or went.
fn differences(dir: &Path, before: &Option<Listing>, now: &Option<Listing>, out: &mut Vec<PathBuf>) {
    match (before, now) {
        (Some(b), Some(n)) => {
            for (name, meta) in n {
                if b.get(name) != Some(meta) {
                    out.push(dir.join(name));
                }
            }
            out.extend(b.keys().filter(|name| !n.contains_key(*name)).map(|name| dir.join(name)));
        }
        (None, None) => {}
        _ => out.push(dir.to_path_buf()),
    }
}

impl Poller {
    fn start(raw: mpsc::Sender<Raw>) -> std::io::Result<Self> {
        let dirs: Arc<Mutex<BTreeMap<PathBuf, Option<Listing>>>> = Arc::default();
        let watched = Arc::downgrade(&dirs);
        std::thread::Builder::new().name("watch-poll".into()).spawn(move || {
            loop {
                std::thread::sleep(POLL_INTERVAL);
                let Some(dirs) = watched.upgrade() else { return };
                let list: Vec<PathBuf> = dirs.lock().unwrap_or_else(|e| e.into_inner()).keys().cloned().collect();
                let mut changed = Vec::new();
                for dir in list {
                    // Read without the lock: the server may set the watches meanwhile.
                    let now = listing(&dir);
                    let mut map = dirs.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(before) = map.get_mut(&dir) {
                        differences(&dir, before, &now, &mut changed);
                        *before = now;
                    }
                }
                if !changed.is_empty() && raw.send(Raw::Changed(changed)).is_err() {
                    return;
                }
            }
        })?;
        Ok(Self { dirs })
    }

    /// From now on: the listing is taken at once, so a change right after counts.
    fn watch(&self, dir: &Path) -> Result<(), String> {
        let now = listing(dir).ok_or_else(|| "cannot list the directory".to_string())?;
        self.dirs.lock().unwrap_or_else(|e| e.into_inner()).insert(dir.to_path_buf(), Some(now));
        Ok(())
    }

    fn unwatch(&self, dir: &Path) {
        self.dirs.lock().unwrap_or_else(|e| e.into_inner()).remove(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, ModifyKind, RemoveKind};

    #[test]
    fn opening_or_reading_a_file_is_not_a_change() {
        assert!(!is_change(&EventKind::Access(AccessKind::Open(AccessMode::Any))));
        assert!(!is_change(&EventKind::Access(AccessKind::Close(AccessMode::Read))));
        assert!(!is_change(&EventKind::Access(AccessKind::Read)));
        assert!(is_change(&EventKind::Access(AccessKind::Close(AccessMode::Write))));
        assert!(is_change(&EventKind::Modify(ModifyKind::Any)));
        assert!(is_change(&EventKind::Create(CreateKind::File)));
        assert!(is_change(&EventKind::Remove(RemoveKind::File)));
    }

    #[test]
    fn the_servers_own_reads_raise_no_event_and_a_write_does() {
        reads_are_quiet_and_a_write_is_reported(Kind::System, 200);
    }

    /// The `notify` package's backend, which other systems than Linux use, behaves the same.
    #[test]
    fn the_notify_backend_reports_a_write_and_no_read() {
        reads_are_quiet_and_a_write_is_reported(Kind::Notify, 200);
    }

    /// Without inotify (no instance left, or a network file system) the watcher polls, and a
    /// write is still reported, within a few polling intervals.
    #[test]
    fn a_polling_watcher_reports_a_write_too() {
        reads_are_quiet_and_a_write_is_reported(Kind::Polling, 100 * 3 * POLL_INTERVAL.as_secs() as usize);
    }

    fn arcs(dirs: &[&Path]) -> BTreeSet<Arc<Path>> {
        dirs.iter().map(|d| Arc::from(*d)).collect()
    }

    fn reads_are_quiet_and_a_write_is_reported(kind: Kind, tries: usize) {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("AGENTS.md");
        std::fs::write(&file, "rules").expect("write");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut w = DirWatcher::start_with(tx, kind).expect("watcher");
        assert_eq!(w.polling(), matches!(kind, Kind::Polling));
        w.set(arcs(&[dir.path()]));
        for _ in 0..20 {
            let _ = std::fs::read(&file).expect("read");
        }
        std::thread::sleep(DEBOUNCE * 4);
        assert!(rx.try_recv().is_err(), "reads are not changes");
        std::fs::write(&file, "new rules, longer").expect("write");
        let mut got = None;
        for _ in 0..tries {
            if let Ok(e) = rx.try_recv() {
                got = Some(e);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        match got {
            Some(WatchEvent::Changed(paths)) => assert!(paths.contains(&file), "{paths:?}"),
            other => panic!("expected the write to be reported, got {other:?}"),
        }
    }

    /// What the kernel says of a rename into the directory, a removal in it and of the
    /// directory itself reaches the server as the paths they name.
    #[test]
    fn renames_and_removals_are_reported_as_their_paths() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (watched, outside) = (dir.path().join("w"), dir.path().join("draft.md"));
        std::fs::create_dir(&watched).expect("mkdir");
        std::fs::write(watched.join("old.md"), "x").expect("write");
        std::fs::write(&outside, "x").expect("write");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut w = DirWatcher::start_with(tx, Kind::System).expect("watcher");
        w.set(arcs(&[&watched]));
        let until = |rx: &mut tokio::sync::mpsc::UnboundedReceiver<WatchEvent>, path: &Path| {
            for _ in 0..300 {
                match rx.try_recv() {
                    Ok(WatchEvent::Changed(paths)) if paths.iter().any(|p| p == path) => return true,
                    Ok(_) => {}
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
            false
        };
        std::fs::rename(&outside, watched.join("AGENTS.md")).expect("rename");
        assert!(until(&mut rx, &watched.join("AGENTS.md")), "a file renamed into it");
        std::fs::remove_file(watched.join("old.md")).expect("remove");
        assert!(until(&mut rx, &watched.join("old.md")), "a file removed");
        std::fs::remove_dir_all(&watched).expect("remove the directory");
        assert!(until(&mut rx, &watched), "the directory itself removed");
    }

    /// A directory asked for before it exists is watched once it is made and the watcher is told
    /// of a change on disk, without the whole set being set again; one no longer asked for is not.
    #[test]
    fn a_directory_asked_for_before_it_exists_is_watched_once_made() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (later, dropped) = (dir.path().join("later"), dir.path().join("dropped"));
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let mut w = DirWatcher::start(tx, false).expect("watcher");
        w.set(arcs(&[dir.path(), &later, &dropped]));
        assert!(w.watches(dir.path()) && !w.watches(&later));
        w.set(arcs(&[dir.path(), &later]));
        std::fs::create_dir(&later).expect("mkdir");
        std::fs::create_dir(&dropped).expect("mkdir");
        let epoch = w.epoch();
        w.add_made();
        assert!(w.watches(&later), "made since it was asked for");
        assert!(!w.watches(&dropped), "no longer asked for");
        assert!(w.epoch() > epoch, "a new watch moves the epoch");
    }
}
