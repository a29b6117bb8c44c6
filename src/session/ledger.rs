//! The transition log's types and its persistence (docs/lifecycle.md): one JSON file per session,
//! named by the SHA-256 of the folder path, written atomically.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::chain::discover::ChainFile;
use crate::chain::source::{is_absence, sha256_hex};
use crate::paths::path_to_uri;

/// The format version of ledger files; another version is replaced by a fresh start.
pub const LEDGER_VERSION: u32 = 1;
/// How many batches a session keeps (in memory and on disk).
pub const LOG_LIMIT: usize = 256;

/// Why a batch was added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Reason {
    Baseline,
    Touch,
    Change,
    Config,
    Restart,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    Set,
    Replace,
    Remove,
}

/// One file's transition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub action: Action,
    pub scope: String,
    pub kind: String,
    pub uri: String,
    pub path: String,
    pub sha256: Option<String>,
    pub bytes: Option<u64>,
}

/// One entry of a session's log: the changes of one event and the block that announces them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Batch {
    pub seq: u64,
    pub reason: Reason,
    pub changes: Vec<Change>,
    pub text: String,
}

/// The `instructions/transitions` result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransitionsResult {
    pub folder: String,
    pub seq: u64,
    pub reset: bool,
    pub batches: Vec<Batch>,
}

/// A file the session's agent has been given, as it was given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Visible {
    pub path: PathBuf,
    pub heading: String,
    pub scope: String,
    pub kind: String,
    pub sha256: String,
    pub bytes: u64,
}

impl Visible {
    pub fn of(f: &ChainFile) -> Self {
        Self {
            path: f.path.clone(),
            heading: f.heading.clone(),
            scope: f.scope.name().into(),
            kind: f.kind.name().into(),
            sha256: f.file.sha256.clone(),
            bytes: f.file.bytes(),
        }
    }

    pub fn change(&self, action: Action) -> Change {
        let removed = action == Action::Remove;
        Change {
            action,
            scope: self.scope.clone(),
            kind: self.kind.clone(),
            uri: path_to_uri(&self.path),
            path: self.heading.clone(),
            sha256: (!removed).then(|| self.sha256.clone()),
            bytes: (!removed).then_some(self.bytes),
        }
    }
}

/// What persists of a session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    pub version: u32,
    pub folder: PathBuf,
    pub seq: u64,
    pub visible: Vec<Visible>,
    pub reached: Vec<PathBuf>,
    /// The nested files of each batch that delivered some, for `effective`'s nested blocks.
    pub groups: Vec<Vec<PathBuf>>,
    pub batches: Vec<Batch>,
    /// Files the budget kept out, with the digest they had then.
    #[serde(default)]
    pub pending: Vec<Pending>,
    /// The files touched, most recent last (at most [`super::TOUCHED_MAX`]): the agents' views
    /// match their rules' globs against them.
    #[serde(default)]
    pub touched: Vec<PathBuf>,
}

/// A file the budget kept out of its batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub path: PathBuf,
    pub sha256: String,
}

/// A ledger larger than this is not one of ours (ours hold at most [`LOG_LIMIT`] batches): it is
/// replaced, never read, so a huge or endless file in `stateDir` costs nothing.
pub const MAX_LEDGER_BYTES: u64 = 16 * 1024 * 1024;

/// The ledger file of a folder.
pub fn ledger_path(state_dir: &Path, folder: &Path) -> PathBuf {
    let key = sha256_hex(folder.as_os_str().as_encoded_bytes());
    state_dir.join(format!("{key}.json"))
}

/// Loads a folder's ledger: `Ok(None)` when there is none, `Err` (with what was wrong) when it
/// cannot be used and must be replaced by a fresh start.
pub fn load(state_dir: &Path, folder: &Path) -> Result<Option<Ledger>, String> {
    let path = ledger_path(state_dir, folder);
    let bytes = match read_state_file(&path, MAX_LEDGER_BYTES) {
        Ok(b) => b,
        Err(e) if is_absence(&e) => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not a ledger (corrupt JSON: {e})", path.display()))?;
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    if version != Some(u64::from(LEDGER_VERSION)) {
        return Err(format!(
            "{} has format version {version:?}; this server reads version {LEDGER_VERSION}",
            path.display()
        ));
    }
    let ledger: Ledger =
        serde_json::from_value(value).map_err(|e| format!("{} is not a valid ledger: {e}", path.display()))?;
    if ledger.folder != folder {
        return Err(format!("{} belongs to {}, not {}", path.display(), ledger.folder.display(), folder.display()));
    }
    checked(ledger).map(Some).map_err(|e| format!("{} {e}", path.display()))
}

/// The largest `seq` a ledger may hold: the largest integer every JSON client reads exactly
/// (2^53 - 1), far more batches than a session makes (one per event).
pub const MAX_SEQ: u64 = (1 << 53) - 1;

/// A ledger read from disk, made safe to continue from (a ledger is input: anyone able to write
/// in `stateDir` may have edited it).
///
/// A `seq` past [`MAX_SEQ`] (or a batch numbered past the ledger's `seq`) is corrupt, and the
/// session starts afresh, rather than saturating: a saturated `seq` would number every later batch
/// alike, so a client asking for the batches after it would never get them, while a fresh start
/// is one the transitions already handle (a client's `since` past the new `seq` gets a `reset`
/// baseline of the whole current state).
///
/// A reached scope is a directory strictly inside the folder, as a touch records it: one outside
/// (`../secret`, another absolute path, a path with `..` in it) would make the session read and
/// hand out files from there, so it is dropped, and said on stderr.
fn checked(mut ledger: Ledger) -> Result<Ledger, String> {
    if ledger.seq > MAX_SEQ {
        return Err(format!("has seq {}, past the {MAX_SEQ} a session can reach", ledger.seq));
    }
    if let Some(b) = ledger.batches.iter().find(|b| b.seq > ledger.seq) {
        return Err(format!("has a batch numbered {}, after its seq {}", b.seq, ledger.seq));
    }
    let folder = ledger.folder.clone();
    ledger.reached.retain(|dir| {
        let inside = dir.is_absolute()
            && crate::paths::normalize(dir) == *dir
            && crate::paths::starts_with(dir, &folder)
            && *dir != folder;
        if !inside {
            tracing::warn!(
                "{}: the ledger names `{}` as a reached scope, which is not inside the folder; dropped",
                folder.display(),
                dir.display()
            );
        }
        inside
    });
    Ok(ledger)
}

/// Reads a file of `stateDir`, which anyone able to write there may have replaced: a symlink is
/// not followed (it could lead to `/dev/zero` or another user's file), a FIFO or device never
/// blocks the open, and more than `max_bytes` is refused rather than buffered.
pub fn read_state_file(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| {
        // O_NOFOLLOW reports a symlink as ELOOP, which reads as "too many links": say what it is.
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return std::io::Error::other("it is a symlink, which a state file never is");
        }
        e
    })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > max_bytes {
        return Err(std::io::Error::other(format!(
            "{} bytes, more than the {max_bytes} a state file may hold",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    // The file may grow after the stat: never take more than the cap.
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(std::io::Error::other(format!("more than the {max_bytes} bytes a state file may hold")));
    }
    Ok(bytes)
}

/// Writes a ledger atomically: a temporary file in the same directory, then a rename, so a
/// reader (or a second server) never sees half a file.
pub fn save(state_dir: &Path, ledger: &Ledger) -> Result<(), String> {
    std::fs::create_dir_all(state_dir).map_err(|e| format!("cannot create {}: {e}", state_dir.display()))?;
    let path = ledger_path(state_dir, &ledger.folder);
    let json = serde_json::to_vec_pretty(ledger).map_err(|e| e.to_string())?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".ledger-")
        .suffix(".tmp")
        .tempfile_in(state_dir)
        .map_err(|e| format!("cannot write in {}: {e}", state_dir.display()))?;
    tmp.write_all(&json)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tmp.persist(&path).map_err(|e| format!("cannot replace {}: {}", path.display(), e.error))?;
    Ok(())
}

/// How long a writer thread idles before it ends (a new write starts another).
const WRITER_IDLE: std::time::Duration = std::time::Duration::from_secs(30);

/// Persists ledgers on a thread of its own, so that a batch never waits for the disk (ten
/// thousand folders at start are ten thousand fsyncs). Writes coalesce: the latest ledger of a
/// folder replaces one still waiting.
#[derive(Clone, Default)]
pub struct Writer {
    shared: std::sync::Arc<(std::sync::Mutex<WriterState>, std::sync::Condvar)>,
}

#[derive(Default)]
struct WriterState {
    /// By ledger file: the state directory and the ledger to write there.
    waiting: std::collections::HashMap<PathBuf, (PathBuf, Ledger)>,
    /// Taken by the thread and not yet on disk.
    writing: std::collections::HashMap<PathBuf, Ledger>,
    running: bool,
    /// Folders whose ledger could not be written (warned once until a write succeeds).
    warned: std::collections::HashSet<PathBuf>,
}

impl Writer {
    fn lock(&self) -> std::sync::MutexGuard<'_, WriterState> {
        // A panic while writing leaves the queue usable: keep writing.
        self.shared.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `ledger` for writing in `state_dir`.
    pub fn save(&self, state_dir: &Path, ledger: Ledger) {
        let file = ledger_path(state_dir, &ledger.folder);
        let mut st = self.lock();
        st.waiting.insert(file, (state_dir.to_path_buf(), ledger));
        if !st.running {
            let me = self.clone();
            let spawned = std::thread::Builder::new().name("ledger-writer".into()).spawn(move || me.run());
            match spawned {
                Ok(_) => st.running = true,
                Err(e) => {
                    // No thread: write here rather than not at all.
                    tracing::warn!("cannot start the ledger writer ({e}); writing on the protocol thread");
                    let batch: Vec<_> = st.waiting.drain().map(|(_, v)| v).collect();
                    drop(st);
                    for (dir, ledger) in batch {
                        self.write(&dir, &ledger);
                    }
                    return;
                }
            }
        }
        self.shared.1.notify_all();
    }

    /// The ledger of `folder` that is queued or being written, newer than what is on disk.
    pub fn pending(&self, state_dir: &Path, folder: &Path) -> Option<Ledger> {
        let file = ledger_path(state_dir, folder);
        let st = self.lock();
        st.waiting.get(&file).map(|(_, l)| l.clone()).or_else(|| st.writing.get(&file).cloned())
    }

    /// Waits until every queued ledger is on disk, or `limit` passed; true when all are.
    pub fn flush(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let mut st = self.lock();
        while !(st.waiting.is_empty() && st.writing.is_empty()) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            st = self.shared.1.wait_timeout(st, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        true
    }

    fn run(&self) {
        let mut st = self.lock();
        loop {
            if st.waiting.is_empty() {
                let (guard, timeout) = self.shared.1.wait_timeout(st, WRITER_IDLE).unwrap_or_else(|e| e.into_inner());
                st = guard;
                if timeout.timed_out() && st.waiting.is_empty() {
                    st.running = false;
                    return;
                }
                continue;
            }
            let batch: Vec<(PathBuf, (PathBuf, Ledger))> = st.waiting.drain().collect();
            st.writing = batch.iter().map(|(file, (_, l))| (file.clone(), l.clone())).collect();
            drop(st);
            for (_, (dir, ledger)) in &batch {
                self.write(dir, ledger);
            }
            st = self.lock();
            st.writing.clear();
            self.shared.1.notify_all();
        }
    }

    fn write(&self, state_dir: &Path, ledger: &Ledger) {
        let result = save(state_dir, ledger);
        let mut st = self.lock();
        match result {
            Ok(()) => {
                st.warned.remove(&ledger.folder);
            }
            Err(e) => {
                if st.warned.insert(ledger.folder.clone()) {
                    tracing::warn!(
                        "{}: cannot persist the session ({e}); it goes on in memory",
                        ledger.folder.display()
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger(folder: &Path, seq: u64) -> Ledger {
        Ledger {
            version: LEDGER_VERSION,
            folder: folder.to_path_buf(),
            seq,
            visible: Vec::new(),
            reached: Vec::new(),
            groups: Vec::new(),
            batches: Vec::new(),
            pending: Vec::new(),
            touched: Vec::new(),
        }
    }

    #[test]
    fn the_writer_keeps_the_latest_ledger_and_flush_waits_for_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let folder = Path::new("/work/some/folder");
        let writer = Writer::default();
        for seq in 1..=50 {
            writer.save(dir.path(), ledger(folder, seq));
        }
        assert!(writer.pending(dir.path(), folder).is_some_and(|l| l.seq >= 1), "visible before it is written");
        assert!(writer.flush(std::time::Duration::from_secs(30)));
        assert_eq!(writer.pending(dir.path(), folder), None);
        assert_eq!(load(dir.path(), folder).map(|l| l.map(|l| l.seq)), Ok(Some(50)));
    }

    #[test]
    fn a_ledger_is_cut_back_to_its_folder_and_a_seq_past_the_end_is_corrupt() {
        let folder = Path::new("/p/r");
        let mut l = ledger(folder, 3);
        l.reached = ["/p/r/a", "/p/r/../secret", "/p/secret", "../secret", "/p/r"].iter().map(PathBuf::from).collect();
        assert_eq!(checked(l).map(|l| l.reached), Ok(vec![PathBuf::from("/p/r/a")]));
        assert!(checked(ledger(folder, MAX_SEQ)).is_ok());
        assert!(checked(ledger(folder, MAX_SEQ + 1)).is_err());
        let mut ahead = ledger(folder, 1);
        ahead.batches.push(Batch { seq: 2, reason: Reason::Touch, changes: Vec::new(), text: String::new() });
        assert!(checked(ahead).is_err(), "a batch after the ledger's seq");
    }

    #[cfg(unix)]
    #[test]
    fn state_files_that_are_links_fifos_or_too_large_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        assert!(read_state_file(&link, 10).is_err());
        let big = dir.path().join("big");
        std::fs::write(&big, "x".repeat(11)).expect("write");
        assert!(read_state_file(&big, 10).is_err());
        assert_eq!(read_state_file(&big, 11).ok().map(|b| b.len()), Some(11));
        let fifo = dir.path().join("fifo");
        if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            assert!(read_state_file(&fifo, 10).is_err(), "never blocks, never reads");
        }
    }
}
