//! Linux's inotify, used directly: one descriptor, a watch per directory, and the directory of
//! each watch kept once, shared with the server's own set of watched directories. The `notify`
//! package kept two maps of owned paths besides ours: for a repository of 20,000 directories,
//! 5 MB of a server's memory. Only what can change a file is asked for (no opens, reads or
//! closes without writing), so the server's own reads raise no event at all.

use std::collections::HashMap;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use super::Raw;

/// What is asked of the kernel for each directory: its entries made, removed, renamed, written,
/// or their metadata changed; the directory itself removed or renamed.
const MASK: u32 = libc::IN_ATTRIB
    | libc::IN_CLOSE_WRITE
    | libc::IN_CREATE
    | libc::IN_DELETE
    | libc::IN_DELETE_SELF
    | libc::IN_MODIFY
    | libc::IN_MOVE_SELF
    | libc::IN_MOVED_FROM
    | libc::IN_MOVED_TO
    | libc::IN_ONLYDIR;

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

type Watches = Arc<Mutex<HashMap<i32, Dirs>>>;

pub(super) struct Inotify {
    fd: Arc<OwnedFd>,
    watches: Watches,
    /// Written to (or closed) when the watcher goes: the reading thread then ends.
    wake: OwnedFd,
}

fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

impl Inotify {
    /// An inotify descriptor and the thread that reads its events into `raw`.
    pub(super) fn start(raw: mpsc::Sender<Raw>) -> Result<Self, String> {
        // SAFETY: plain system calls; each descriptor they return is owned exactly once below.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        if fd < 0 {
            return Err(os_error("inotify_init1"));
        }
        // SAFETY: `fd` was just returned by the kernel and is owned by nothing else.
        let fd = Arc::new(unsafe { OwnedFd::from_raw_fd(fd) });
        let mut pipe = [0; 2];
        // SAFETY: `pipe` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(os_error("pipe2"));
        }
        // SAFETY: both ends were just made and are owned by nothing else.
        let (woken, wake) = unsafe { (OwnedFd::from_raw_fd(pipe[0]), OwnedFd::from_raw_fd(pipe[1])) };
        let watches: Watches = Arc::default();
        let (reading, dirs) = (fd.clone(), watches.clone());
        std::thread::Builder::new()
            .name("watch-inotify".into())
            .spawn(move || read_events(&reading, &woken, &dirs, &raw))
            .map_err(|e| format!("cannot start file watching: {e}"))?;
        Ok(Self { fd, watches, wake })
    }

    /// Watches `dir`; its watch descriptor, which [`Inotify::unwatch`] takes back.
    pub(super) fn watch(&self, dir: &Arc<Path>) -> Result<i32, String> {
        let c = CString::new(dir.as_os_str().as_bytes()).map_err(|_| "a path with a NUL byte".to_string())?;
        // SAFETY: a valid descriptor and a NUL-terminated path that outlives the call.
        let wd = unsafe { libc::inotify_add_watch(self.fd.as_raw_fd(), c.as_ptr(), MASK) };
        if wd < 0 {
            return Err(std::io::Error::last_os_error().to_string());
        }
        let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
        match watches.remove(&wd) {
            None => {
                watches.insert(wd, Dirs::One(dir.clone()));
            }
            Some(dirs) => {
                let mut all = dirs.as_slice().to_vec();
                if !all.iter().any(|d| d == dir) {
                    all.push(dir.clone());
                }
                watches.insert(wd, if all.len() == 1 { Dirs::One(all.remove(0)) } else { Dirs::Many(all) });
            }
        }
        Ok(wd)
    }

    /// `dir`, watched as `wd`, is named from now on by this allocation of its path.
    pub(super) fn rekey(&self, dir: &Arc<Path>, wd: i32) {
        let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
        match watches.get_mut(&wd) {
            Some(Dirs::One(d)) if d == dir => *d = dir.clone(),
            Some(Dirs::Many(all)) => {
                for d in all.iter_mut().filter(|d| *d == dir) {
                    *d = dir.clone();
                }
            }
            _ => {}
        }
    }

    /// Stops watching `dir` (watched as `wd`); the watch itself goes with its last directory.
    pub(super) fn unwatch(&self, dir: &Path, wd: i32) {
        let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
        let Some(dirs) = watches.remove(&wd) else { return };
        let left: Vec<Arc<Path>> = dirs.as_slice().iter().filter(|d| &***d != dir).cloned().collect();
        match left.len() {
            0 => {
                // SAFETY: a valid descriptor; a watch already gone only makes the call fail.
                unsafe { libc::inotify_rm_watch(self.fd.as_raw_fd(), wd) };
            }
            1 => {
                watches.insert(wd, Dirs::One(left[0].clone()));
            }
            _ => {
                watches.insert(wd, Dirs::Many(left));
            }
        }
    }
}

impl Drop for Inotify {
    fn drop(&mut self) {
        // SAFETY: one byte from a live buffer to the pipe's write end, which this value owns.
        let _ = unsafe { libc::write(self.wake.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
    }
}

/// Reads events until the watcher goes (a byte on `woken`), the receiver is gone or the
/// descriptor fails; each read's changes go out as one batch.
fn read_events(fd: &OwnedFd, woken: &OwnedFd, watches: &Watches, raw: &mpsc::Sender<Raw>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let mut fds = [
            libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: woken.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: `fds` holds two valid pollfd entries for the duration of the call.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            let _ = raw.send(Raw::Failed(os_error("poll")));
            return;
        }
        if fds[1].revents != 0 {
            return;
        }
        if fds[0].revents == 0 {
            continue;
        }
        // SAFETY: reads at most `buf.len()` bytes into `buf`.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if matches!(e.kind(), std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock) {
                continue;
            }
            let _ = raw.send(Raw::Failed(format!("reading inotify events: {e}")));
            return;
        }
        let (changed, overflowed) = {
            let mut watches = watches.lock().unwrap_or_else(|e| e.into_inner());
            parse(&buf[..n.unsigned_abs()], &mut watches)
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

/// The changed paths of a buffer of `inotify_event` records, and whether the kernel's queue
/// overflowed (events were lost). A watch the kernel dropped (its directory gone) is forgotten.
fn parse(mut bytes: &[u8], watches: &mut HashMap<i32, Dirs>) -> (Vec<PathBuf>, bool) {
    const HEADER: usize = 16;
    let field = |b: &[u8], at: usize| u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let (mut changed, mut overflowed) = (Vec::new(), false);
    while bytes.len() >= HEADER {
        let wd = field(bytes, 0) as i32;
        let mask = field(bytes, 4);
        let len = field(bytes, 12) as usize;
        let Some(name) = bytes.get(HEADER..HEADER + len) else { break };
        bytes = &bytes[HEADER + len..];
        if mask & libc::IN_Q_OVERFLOW != 0 {
            overflowed = true;
            continue;
        }
        if mask & libc::IN_IGNORED != 0 {
            watches.remove(&wd);
            continue;
        }
        let Some(dirs) = watches.get(&wd) else { continue };
        // The name is padded with NUL bytes to an aligned length.
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        for dir in dirs.as_slice() {
            changed.push(if name.is_empty() { dir.to_path_buf() } else { dir.join(std::ffi::OsStr::from_bytes(name)) });
        }
    }
    (changed, overflowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(wd: i32, mask: u32, name: &str) -> Vec<u8> {
        let padded = if name.is_empty() { 0 } else { (name.len() + 1).next_multiple_of(16) };
        let mut out = Vec::new();
        for v in [wd as u32, mask, 0, padded as u32] {
            out.extend_from_slice(&v.to_ne_bytes());
        }
        out.extend_from_slice(name.as_bytes());
        out.resize(16 + padded, 0);
        out
    }

    #[test]
    fn records_name_the_entries_of_each_directory_of_their_watch() {
        let (a, b): (Arc<Path>, Arc<Path>) = (Path::new("/r/a").into(), Path::new("/r/link").into());
        let mut watches = HashMap::from([(1, Dirs::Many(vec![a, b])), (2, Dirs::One(Path::new("/r").into()))]);
        let mut bytes = record(1, libc::IN_CLOSE_WRITE, "AGENTS.md");
        bytes.extend(record(2, libc::IN_DELETE_SELF, ""));
        bytes.extend(record(7, libc::IN_CREATE, "unknown-watch"));
        bytes.extend(record(2, libc::IN_IGNORED, ""));
        let (changed, overflowed) = parse(&bytes, &mut watches);
        let expected: Vec<PathBuf> = ["/r/a/AGENTS.md", "/r/link/AGENTS.md", "/r"].iter().map(PathBuf::from).collect();
        assert_eq!(changed, expected);
        assert!(!overflowed);
        assert!(!watches.contains_key(&2), "a watch the kernel dropped is forgotten");
        let (_, overflowed) = parse(&record(-1, libc::IN_Q_OVERFLOW, ""), &mut watches);
        assert!(overflowed);
        let cut = &record(1, libc::IN_CREATE, "x")[..20];
        assert_eq!(parse(cut, &mut watches), (Vec::new(), false), "a cut record is not read past its end");
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
        assert!(w.watches.lock().expect("lock").get(&wb).is_some_and(|d| d.as_slice() == [b.clone()]));
        w.unwatch(&b, wb);
        assert!(w.watches.lock().expect("lock").is_empty());
    }
}
