//! Linux's inotify through the `inotify` crate (the safe binding `notify` itself uses): one
//! descriptor, a watch per directory, and the directory of each watch kept once, shared with the
//! server's own set of watched directories. `notify` kept two maps of owned paths besides ours:
//! for a repository of 20,000 directories, 5 MB of a server's memory. Only what can change a file
//! is asked for (no opens, reads or closes without writing), so the server's own reads raise no
//! event at all.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use inotify::{EventMask, WatchDescriptor, WatchMask, Watches};
use rustix::event::{PollFd, PollFlags};

use super::raw::Raw;

/// What is asked of the kernel for each directory: its entries made, removed, renamed, written,
/// or their metadata changed; the directory itself removed or renamed.
fn mask() -> WatchMask {
    WatchMask::ATTRIB
        | WatchMask::CLOSE_WRITE
        | WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::DELETE_SELF
        | WatchMask::MODIFY
        | WatchMask::MOVE_SELF
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::ONLYDIR
}

/// The directories of one watch: two paths of one directory (through a link) share a watch.
enum Dirs {
    One(Arc<Path>),
    Many(Vec<Arc<Path>>),
}

impl Dirs {
    fn as_slice(&self) -> &[Arc<Path>] {
        match self {
            Dirs::One(d) => std::slice::from_ref(d),
            Dirs::Many(all) => all,
        }
    }
}

/// Each watch by its number, with its descriptor (to remove it) and its directories.
type Map = HashMap<i32, (WatchDescriptor, Dirs)>;

/// The watches, and the crate's handle that adds and removes them.
struct Table {
    handle: Watches,
    map: Map,
}

pub(super) struct Inotify {
    table: Arc<Mutex<Table>>,
    /// Written to when the watcher goes: the reading thread then ends.
    wake: OwnedFd,
}

impl Inotify {
    /// An inotify descriptor and the thread that reads its events into `raw`.
    pub(super) fn start(raw: mpsc::Sender<Raw>) -> Result<Self, String> {
        let inotify = inotify::Inotify::init().map_err(|e| format!("inotify_init1: {e}"))?;
        let (woken, wake) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| format!("pipe2: {e}"))?;
        let table = Arc::new(Mutex::new(Table { handle: inotify.watches(), map: Map::new() }));
        let reading = table.clone();
        std::thread::Builder::new()
            .name("watch-inotify".into())
            .spawn(move || read_events(inotify, &woken, &reading, &raw))
            .map_err(|e| format!("cannot start file watching: {e}"))?;
        Ok(Self { table, wake })
    }

    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Watches `dir`; the number of its watch, which [`Inotify::unwatch`] takes back.
    pub(super) fn watch(&self, dir: &Arc<Path>) -> Result<i32, String> {
        let mut table = self.table();
        let wd = table.handle.add(&**dir, mask()).map_err(|e| e.to_string())?;
        let id = wd.get_watch_descriptor_id();
        match table.map.remove(&id) {
            None => {
                table.map.insert(id, (wd, Dirs::One(dir.clone())));
            }
            Some((wd, dirs)) => {
                let mut all = dirs.as_slice().to_vec();
                if !all.iter().any(|d| d == dir) {
                    all.push(dir.clone());
                }
                table.map.insert(id, (wd, if all.len() == 1 { Dirs::One(all.remove(0)) } else { Dirs::Many(all) }));
            }
        }
        Ok(id)
    }

    /// `dir`, watched as `id`, is named from now on by this allocation of its path.
    pub(super) fn rekey(&self, dir: &Arc<Path>, id: i32) {
        match self.table().map.get_mut(&id) {
            Some((_, Dirs::One(d))) if d == dir => *d = dir.clone(),
            Some((_, Dirs::Many(all))) => {
                for d in all.iter_mut().filter(|d| *d == dir) {
                    *d = dir.clone();
                }
            }
            _ => {}
        }
    }

    /// Stops watching `dir` (watched as `id`); the watch itself goes with its last directory.
    pub(super) fn unwatch(&self, dir: &Path, id: i32) {
        let mut table = self.table();
        let Some((wd, dirs)) = table.map.remove(&id) else { return };
        let left: Vec<Arc<Path>> = dirs.as_slice().iter().filter(|d| &***d != dir).cloned().collect();
        match left.len() {
            // A watch the kernel dropped already only makes the call fail.
            0 => drop(table.handle.remove(wd)),
            1 => drop(table.map.insert(id, (wd, Dirs::One(left[0].clone())))),
            _ => drop(table.map.insert(id, (wd, Dirs::Many(left)))),
        }
    }
}

impl Drop for Inotify {
    fn drop(&mut self) {
        let _ = rustix::io::write(&self.wake, &[1]);
    }
}

/// Reads events until the watcher goes (a byte on `woken`), the receiver is gone or the
/// descriptor fails; each read's changes go out as one batch.
fn read_events(mut inotify: inotify::Inotify, woken: &OwnedFd, table: &Mutex<Table>, raw: &mpsc::Sender<Raw>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let (ready, wake) = {
            let mut fds = [PollFd::new(&inotify, PollFlags::IN), PollFd::new(woken, PollFlags::IN)];
            match rustix::event::poll(&mut fds, None) {
                Ok(_) => (!fds[0].revents().is_empty(), !fds[1].revents().is_empty()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    let _ = raw.send(Raw::Failed(format!("poll: {e}")));
                    return;
                }
            }
        };
        if wake {
            return;
        }
        if !ready {
            continue;
        }
        let events = match inotify.read_events(&mut buf) {
            Ok(events) => events,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock) => continue,
            Err(e) => {
                let _ = raw.send(Raw::Failed(format!("reading inotify events: {e}")));
                return;
            }
        };
        let (changed, overflowed) = {
            let mut table = table.lock().unwrap_or_else(|e| e.into_inner());
            changes(events.map(|e| (e.wd.get_watch_descriptor_id(), e.mask, e.name)), &mut table.map)
        };
        let sent = if overflowed {
            raw.send(Raw::Rescan)
        } else if changed.is_empty() {
            Ok(())
        } else {
            raw.send(Raw::Changed(changed))
        };
        if sent.is_err() {
            return;
        }
    }
}

/// The changed paths of a read's events (each its watch's number, its mask and the entry's
/// name), and whether the kernel's queue overflowed (events were lost). A watch the kernel
/// dropped (its directory gone) is forgotten.
fn changes<'a>(
    events: impl Iterator<Item = (i32, EventMask, Option<&'a OsStr>)>,
    map: &mut Map,
) -> (Vec<PathBuf>, bool) {
    let (mut changed, mut overflowed) = (Vec::new(), false);
    for (id, mask, name) in events {
        if mask.contains(EventMask::Q_OVERFLOW) {
            overflowed = true;
            continue;
        }
        if mask.contains(EventMask::IGNORED) {
            map.remove(&id);
            continue;
        }
        let Some((_, dirs)) = map.get(&id) else { continue };
        for dir in dirs.as_slice() {
            changed.push(match name {
                Some(name) if !name.is_empty() => dir.join(name),
                _ => dir.to_path_buf(),
            });
        }
    }
    (changed, overflowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_name_the_entries_of_each_directory_of_their_watch() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (tx, _rx) = mpsc::channel();
        let w = Inotify::start(tx).expect("inotify");
        let (a, b): (Arc<Path>, Arc<Path>) = (dir.path().into(), dir.path().join("sub").into());
        std::fs::create_dir(&b).expect("mkdir");
        let (wa, wb) = (w.watch(&a).expect("watch"), w.watch(&b).expect("watch"));
        let mut table = w.table();
        let name = OsStr::new("AGENTS.md");
        let events = [
            (wa, EventMask::CLOSE_WRITE, Some(name)),
            (wb, EventMask::DELETE_SELF, None),
            (999, EventMask::CREATE, Some(OsStr::new("unknown-watch"))),
            (wb, EventMask::IGNORED, None),
        ];
        let (changed, overflowed) = changes(events.into_iter(), &mut table.map);
        assert_eq!(changed, vec![dir.path().join("AGENTS.md"), b.to_path_buf()]);
        assert!(!overflowed);
        assert!(!table.map.contains_key(&wb), "a watch the kernel dropped is forgotten");
        let (_, overflowed) = changes([(-1, EventMask::Q_OVERFLOW, None)].into_iter(), &mut table.map);
        assert!(overflowed);
    }

    #[test]
    fn two_paths_of_one_directory_share_a_watch_until_both_go() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real");
        std::fs::create_dir(&real).expect("mkdir");
        std::os::unix::fs::symlink(&real, dir.path().join("link")).expect("link");
        let (tx, _rx) = mpsc::channel();
        let w = Inotify::start(tx).expect("inotify");
        let (a, b): (Arc<Path>, Arc<Path>) = (real.as_path().into(), dir.path().join("link").into());
        let (wa, wb) = (w.watch(&a).expect("watch"), w.watch(&b).expect("watch"));
        assert_eq!(wa, wb, "one directory, one watch");
        w.unwatch(&a, wa);
        assert!(w.table().map.get(&wb).is_some_and(|(_, d)| d.as_slice() == [b.clone()]));
        w.unwatch(&b, wb);
        assert!(w.table().map.is_empty());
    }

    #[test]
    fn a_change_is_reported_and_the_thread_ends_with_the_watcher() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (tx, rx) = mpsc::channel();
        let w = Inotify::start(tx).expect("inotify");
        w.watch(&Arc::from(dir.path())).expect("watch");
        std::fs::write(dir.path().join("AGENTS.md"), "rules\n").expect("write");
        let got = rx.recv_timeout(std::time::Duration::from_secs(10)).expect("an event");
        assert!(matches!(&got, Raw::Changed(paths) if paths.contains(&dir.path().join("AGENTS.md"))));
        drop(w);
        // The reading thread ends (dropping its sender) instead of waiting for the next event.
        loop {
            match rx.recv_timeout(std::time::Duration::from_secs(10)) {
                Ok(_) => continue,
                Err(e) => {
                    assert_eq!(e, mpsc::RecvTimeoutError::Disconnected);
                    break;
                }
            }
        }
    }
}
