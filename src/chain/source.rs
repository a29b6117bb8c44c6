//! Loading one candidate file (docs/discovery.md): the symlink policy, bounded reads, UTF-8
//! validation, SHA-256 digests and a cache keyed by path and signature.

use std::collections::HashMap;
use std::fs::{self, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::settings::SymlinkPolicy;

/// Why a candidate that exists does not load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkipReason {
    Symlink,
    NotAFile,
    TooLarge,
    InvalidUtf8,
    Unreadable,
    OutsideRoot,
    /// An earlier candidate of the same directory won.
    Shadowed,
    /// `dedupeTrimmed`: the same trimmed content as an earlier file of the directory.
    Duplicate,
    /// The more specific files of the chain already hold [`crate::chain::discover::CHAIN_READ_CAP`].
    ChainTooLarge,
}

impl SkipReason {
    /// The wire name (docs/discovery.md).
    pub fn name(self) -> &'static str {
        match self {
            Self::Symlink => "symlink",
            Self::NotAFile => "notAFile",
            Self::TooLarge => "tooLarge",
            Self::InvalidUtf8 => "invalidUtf8",
            Self::Unreadable => "unreadable",
            Self::OutsideRoot => "outsideRoot",
            Self::Shadowed => "shadowed",
            Self::Duplicate => "duplicate",
            Self::ChainTooLarge => "chainTooLarge",
        }
    }
}

/// What is known about a skipped file beyond its reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipDetail {
    None,
    /// The size in bytes that exceeded `maxFileBytes` (a lower bound when read from a stream).
    Size(u64),
    /// The byte offset of the first invalid UTF-8 sequence.
    InvalidAt(usize),
    /// Where a symlink points.
    Target(PathBuf),
    /// The I/O error that made the file unreadable.
    Error(String),
}

/// A file that loads: its exact text and digest.
#[derive(Debug)]
pub struct LoadedFile {
    pub text: Arc<str>,
    pub sha256: String,
}

impl LoadedFile {
    pub fn new(text: Arc<str>) -> Self {
        let sha256 = sha256_hex(text.as_bytes());
        Self { text, sha256 }
    }

    pub fn bytes(&self) -> u64 {
        self.text.len() as u64
    }
}

/// The outcome of probing one path.
#[derive(Clone, Debug)]
pub enum Probe {
    /// Nothing there (ENOENT or ENOTDIR): the next candidate may win.
    Absent,
    Skipped(SkipReason, SkipDetail),
    Loaded(Arc<LoadedFile>),
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// True for the errors that mean "there is nothing at this path".
pub fn is_absence(err: &io::Error) -> bool {
    matches!(err.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Signature {
    size: u64,
    mtime: Option<SystemTime>,
    inode: u64,
    device: u64,
}

impl Signature {
    fn of(meta: &Metadata) -> Self {
        #[cfg(unix)]
        let (inode, device) = {
            use std::os::unix::fs::MetadataExt;
            (meta.ino(), meta.dev())
        };
        #[cfg(not(unix))]
        let (inode, device) = (0, 0);
        Self { size: meta.len(), mtime: meta.modified().ok(), inode, device }
    }
}

#[derive(Clone)]
struct CacheEntry {
    signature: Signature,
    max_file_bytes: u64,
    outcome: Probe,
}

/// Content cache shared by every session: a file is read again only when its signature
/// (size, mtime, inode) changes.
#[derive(Default)]
pub struct FileCache {
    entries: Mutex<HashMap<PathBuf, CacheEntry>>,
    reads: AtomicU64,
}

/// Open editor buffers, by absolute path, that stand in for the disk.
pub type Buffers = HashMap<PathBuf, Arc<str>>;

/// How to probe: the symlink policy and the bounds of one computation.
pub struct ProbeOptions<'a> {
    pub symlinks: SymlinkPolicy,
    pub max_file_bytes: u64,
    /// The canonical project root, for `withinRoot`; `None` disables the root check.
    pub root: Option<&'a Path>,
}

impl FileCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// How many times a file was opened for reading (to prove that warm runs read nothing).
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// Forgets a path (after a change event), so the next probe reads it again.
    pub fn invalidate(&self, path: &Path) {
        self.lock().remove(path);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<PathBuf, CacheEntry>> {
        // A panic while holding the lock leaves a map that is still consistent.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Probes a candidate path: buffers first, then the disk under the symlink policy.
    pub fn probe(&self, path: &Path, opts: &ProbeOptions<'_>, buffers: Option<&Buffers>) -> Probe {
        if let Some(text) = buffers.and_then(|b| b.get(path)) {
            if text.len() as u64 > opts.max_file_bytes {
                return Probe::Skipped(SkipReason::TooLarge, SkipDetail::Size(text.len() as u64));
            }
            return Probe::Loaded(Arc::new(LoadedFile::new(text.clone())));
        }
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if is_absence(&e) => return Probe::Absent,
            Err(e) => return Probe::Skipped(SkipReason::Unreadable, SkipDetail::Error(e.to_string())),
        };
        let meta = if meta.file_type().is_symlink() {
            match self.follow(path, opts) {
                Ok(meta) => meta,
                Err(skip) => return skip,
            }
        } else {
            meta
        };
        if !meta.is_file() {
            return Probe::Skipped(SkipReason::NotAFile, SkipDetail::None);
        }
        if meta.len() > opts.max_file_bytes {
            return Probe::Skipped(SkipReason::TooLarge, SkipDetail::Size(meta.len()));
        }
        let signature = Signature::of(&meta);
        if let Some(entry) = self.lock().get(path)
            && entry.signature == signature
            && entry.max_file_bytes == opts.max_file_bytes
        {
            return entry.outcome.clone();
        }
        let (outcome, signature) = self.read(path, opts.max_file_bytes, signature);
        if !matches!(outcome, Probe::Absent) {
            let entry = CacheEntry { signature, max_file_bytes: opts.max_file_bytes, outcome: outcome.clone() };
            self.lock().insert(path.to_path_buf(), entry);
        }
        outcome
    }

    /// Resolves a symlink under the policy: the target's metadata, or the skip.
    fn follow(&self, path: &Path, opts: &ProbeOptions<'_>) -> Result<Metadata, Probe> {
        let target = || SkipDetail::Target(fs::read_link(path).unwrap_or_default());
        match opts.symlinks {
            SymlinkPolicy::Skip => Err(Probe::Skipped(SkipReason::Symlink, target())),
            SymlinkPolicy::Follow | SymlinkPolicy::WithinRoot => {
                let resolved = match fs::canonicalize(path) {
                    Ok(p) => p,
                    // A dangling link is a link to no file.
                    Err(e) if is_absence(&e) => return Err(Probe::Skipped(SkipReason::NotAFile, target())),
                    Err(e) => return Err(Probe::Skipped(SkipReason::Unreadable, SkipDetail::Error(e.to_string()))),
                };
                if opts.symlinks == SymlinkPolicy::WithinRoot
                    && let Some(root) = opts.root
                    && !resolved.starts_with(root)
                {
                    return Err(Probe::Skipped(SkipReason::OutsideRoot, SkipDetail::Target(resolved)));
                }
                fs::metadata(&resolved).map_err(|e| {
                    if is_absence(&e) {
                        Probe::Skipped(SkipReason::NotAFile, SkipDetail::Target(resolved.clone()))
                    } else {
                        Probe::Skipped(SkipReason::Unreadable, SkipDetail::Error(e.to_string()))
                    }
                })
            }
        }
    }

    /// Reads at most `max + 1` bytes; a file that vanished is absent, any other failure
    /// unreadable.
    fn read(&self, path: &Path, max: u64, stat_signature: Signature) -> (Probe, Signature) {
        self.reads.fetch_add(1, Ordering::Relaxed);
        let file = match super::confine::open_regular(path) {
            Ok(f) => f,
            Err(e) if is_absence(&e) => return (Probe::Absent, stat_signature),
            Err(e) => {
                return (Probe::Skipped(SkipReason::Unreadable, SkipDetail::Error(e.to_string())), stat_signature);
            }
        };
        // The signature of what was actually opened, so a replace between stat and open is
        // not cached under the old signature.
        let signature = file.metadata().map(|m| Signature::of(&m)).unwrap_or(stat_signature);
        let mut bytes = Vec::with_capacity(stat_signature.size.min(max) as usize);
        if let Err(e) = file.take(max.saturating_add(1)).read_to_end(&mut bytes) {
            return (Probe::Skipped(SkipReason::Unreadable, SkipDetail::Error(e.to_string())), signature);
        }
        if bytes.len() as u64 > max {
            return (Probe::Skipped(SkipReason::TooLarge, SkipDetail::Size(bytes.len() as u64)), signature);
        }
        match String::from_utf8(bytes) {
            Ok(text) => (Probe::Loaded(Arc::new(LoadedFile::new(Arc::from(text)))), signature),
            Err(e) => (
                Probe::Skipped(SkipReason::InvalidUtf8, SkipDetail::InvalidAt(e.utf8_error().valid_up_to())),
                signature,
            ),
        }
    }
}

/// At most `max_bytes + 1` bytes of a regular file, for placing findings; empty when the path
/// is not a regular file, cannot be read, or is not the project's to read ([`super::confine::leaves_project`]):
/// a finding about a link out of the project (`linkOutside`) is placed without opening its
/// target, so no column or line count measures a file outside.
pub fn read_prefix(path: &Path, max_bytes: u64) -> Vec<u8> {
    read_prefix_within(path, max_bytes, None)
}

/// [`read_prefix`] of a file of the project whose real root is `base` when the caller knows it
/// (a file outside it is judged by its own project).
pub fn read_prefix_within(path: &Path, max_bytes: u64, base: Option<&Path>) -> Vec<u8> {
    let mut bytes = Vec::new();
    let leaves = match base {
        Some(base) if path.starts_with(base) => super::confine::leaves(path, base),
        _ => super::confine::leaves_project(path),
    };
    if leaves.is_some() {
        return bytes;
    }
    if let Ok(file) = super::confine::open_regular(path) {
        let _ = file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(max: u64) -> ProbeOptions<'static> {
        ProbeOptions { symlinks: SymlinkPolicy::Skip, max_file_bytes: max, root: None }
    }

    #[test]
    fn digest_is_lowercase_sha256() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn reads_are_bounded_and_cached_by_signature() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("AGENTS.md");
        fs::write(&path, "hello").expect("write");
        let cache = FileCache::new();
        assert!(matches!(cache.probe(&path, &opts(100), None), Probe::Loaded(f) if &*f.text == "hello"));
        assert!(matches!(cache.probe(&path, &opts(100), None), Probe::Loaded(_)));
        assert_eq!(cache.reads(), 1);
        fs::write(&path, "hello, world").expect("write");
        assert!(matches!(cache.probe(&path, &opts(100), None), Probe::Loaded(f) if &*f.text == "hello, world"));
        assert_eq!(cache.reads(), 2);
        assert!(matches!(
            cache.probe(&path, &opts(5), None),
            Probe::Skipped(SkipReason::TooLarge, SkipDetail::Size(12))
        ));
    }

    #[test]
    fn invalid_utf8_reports_the_first_bad_byte() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("AGENTS.md");
        fs::write(&path, b"ok\n\xffbad").expect("write");
        let probe = FileCache::new().probe(&path, &opts(100), None);
        assert!(matches!(probe, Probe::Skipped(SkipReason::InvalidUtf8, SkipDetail::InvalidAt(3))), "{probe:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_not_a_file_and_never_blocks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("AGENTS.md");
        let status = std::process::Command::new("mkfifo").arg(&path).status();
        if status.map(|s| s.success()).unwrap_or(false) {
            let probe = FileCache::new().probe(&path, &opts(100), None);
            assert!(matches!(probe, Probe::Skipped(SkipReason::NotAFile, _)), "{probe:?}");
        }
    }
}
