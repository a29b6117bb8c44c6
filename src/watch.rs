//! notify-debouncer-mini glue: non-recursive watches on exactly the directories that matter,
//! with debounced paths fed to the server.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use tokio::sync::mpsc::UnboundedSender;

/// How long events settle before they are handled.
pub const DEBOUNCE: Duration = Duration::from_millis(30);

/// A set of watched directories that follows the sessions.
pub struct DirWatcher {
    debouncer: Debouncer<RecommendedWatcher>,
    watched: BTreeSet<PathBuf>,
    /// Every existing directory asked for is watched (no failure, e.g. no exhausted limit).
    complete: bool,
    warned: bool,
}

impl DirWatcher {
    /// Starts a watcher whose debounced event paths go to `tx`.
    pub fn new(tx: UnboundedSender<Vec<PathBuf>>) -> Result<Self, String> {
        let debouncer = new_debouncer(DEBOUNCE, move |result: DebounceEventResult| match result {
            Ok(events) => {
                let _ = tx.send(events.into_iter().map(|e| e.path).collect());
            }
            Err(e) => tracing::warn!("file watching: {e}"),
        })
        .map_err(|e| format!("cannot start file watching: {e}"))?;
        Ok(Self { debouncer, watched: BTreeSet::new(), complete: true, warned: false })
    }

    /// Watches exactly `dirs` (non-recursively): new ones are added, old ones dropped. When an
    /// existing directory cannot be watched (e.g. the inotify limit is exhausted) the watcher is
    /// incomplete: requests then re-walk the disk, and one warning is logged.
    pub fn set(&mut self, dirs: BTreeSet<PathBuf>) {
        let mut failures = Vec::new();
        let gone: Vec<PathBuf> = self.watched.difference(&dirs).cloned().collect();
        for dir in gone {
            let _ = self.debouncer.watcher().unwatch(&dir);
            self.watched.remove(&dir);
        }
        for dir in dirs {
            if self.watched.contains(&dir) || !dir.is_dir() {
                continue;
            }
            match self.debouncer.watcher().watch(&dir, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(dir);
                }
                Err(e) => failures.push(format!("{}: {e}", dir.display())),
            }
        }
        self.complete = failures.is_empty();
        if !failures.is_empty() && !self.warned {
            self.warned = true;
            tracing::warn!(
                "cannot watch {} directories (first: {}); answering from the disk on every request instead",
                failures.len(),
                failures[0]
            );
        }
    }

    /// Whether every directory that should be watched is.
    pub fn is_complete(&self) -> bool {
        self.complete
    }
}
