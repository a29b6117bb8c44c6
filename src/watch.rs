//! Non-recursive watches on exactly the directories that matter, debounced, with only the
//! events that can change what a file holds: opening or reading a file is not a change (the
//! server's own reads would otherwise come back as events, forever).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc::UnboundedSender;

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

/// A set of watched directories that follows the sessions.
pub struct DirWatcher {
    watcher: RecommendedWatcher,
    watched: BTreeSet<PathBuf>,
    /// Every existing directory asked for is watched (no failure, e.g. no exhausted limit).
    complete: bool,
    warned: bool,
    /// Counts the calls of [`DirWatcher::set`] that added a watch: an answer computed while it
    /// did not move read no directory before its watch was in place.
    epoch: u64,
}

/// Collects raw events for [`DEBOUNCE`] after the first one, then sends them as one batch.
fn debounce(raw: mpsc::Receiver<notify::Result<Event>>, tx: UnboundedSender<WatchEvent>) {
    loop {
        let Ok(first) = raw.recv() else { return };
        let deadline = Instant::now() + DEBOUNCE;
        let mut paths: BTreeSet<PathBuf> = BTreeSet::new();
        let mut rescan = false;
        let mut take = |result: notify::Result<Event>| match result {
            Ok(event) if event.need_rescan() => rescan = true,
            Ok(event) if is_change(&event.kind) => paths.extend(event.paths),
            Ok(_) => {}
            Err(e) => {
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
    /// Starts a watcher whose debounced changes go to `tx`.
    pub fn new(tx: UnboundedSender<WatchEvent>) -> Result<Self, String> {
        let (raw_tx, raw_rx) = mpsc::channel();
        let watcher = notify::recommended_watcher(move |result: notify::Result<Event>| {
            let _ = raw_tx.send(result);
        })
        .map_err(|e| format!("cannot start file watching: {e}"))?;
        std::thread::Builder::new()
            .name("watch-debounce".into())
            .spawn(move || debounce(raw_rx, tx))
            .map_err(|e| format!("cannot start file watching: {e}"))?;
        Ok(Self { watcher, watched: BTreeSet::new(), complete: true, warned: false, epoch: 0 })
    }

    /// Watches exactly `dirs` (non-recursively): new ones are added, old ones dropped. When an
    /// existing directory cannot be watched (e.g. the inotify limit is exhausted) the watcher is
    /// incomplete: requests then re-walk the disk, the client is asked to report changes, and
    /// one warning is logged.
    pub fn set(&mut self, dirs: BTreeSet<PathBuf>) {
        let mut failures = Vec::new();
        let mut added = false;
        let gone: Vec<PathBuf> = self.watched.difference(&dirs).cloned().collect();
        for dir in gone {
            let _ = self.watcher.unwatch(&dir);
            self.watched.remove(&dir);
        }
        for dir in dirs {
            if self.watched.contains(&dir) || !dir.is_dir() {
                continue;
            }
            match self.watcher.watch(&dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(dir);
                    added = true;
                }
                Err(e) => failures.push(format!("{}: {e}", dir.display())),
            }
        }
        self.complete = failures.is_empty();
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

    /// Whether every directory that should be watched is.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Whether `dir` is watched.
    pub fn watches(&self, dir: &std::path::Path) -> bool {
        self.watched.contains(dir)
    }

    /// Moves whenever a watch is added (see the field).
    pub fn epoch(&self) -> u64 {
        self.epoch
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
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("AGENTS.md");
        std::fs::write(&file, "rules").expect("write");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut w = DirWatcher::new(tx).expect("watcher");
        w.set([dir.path().to_path_buf()].into_iter().collect());
        for _ in 0..20 {
            let _ = std::fs::read(&file).expect("read");
        }
        std::thread::sleep(DEBOUNCE * 4);
        assert!(rx.try_recv().is_err(), "reads are not changes");
        std::fs::write(&file, "new rules").expect("write");
        let mut got = None;
        for _ in 0..200 {
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
}
