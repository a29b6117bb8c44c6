//! Every read an agent profile makes goes through here, so that every bound holds for all of
//! them at once: a file is never read past [`READ_CAP`], one view never reads more than
//! [`VIEW_READ_CAP`] in all, special files (`/proc`, `/sys`, `/dev`) are never read, and a FIFO
//! or a device is never opened in a way that blocks. Here too: reading a file of the chain into
//! its [`AgentFile`] (its size, `oversized`, `unreadable`, `capped`), and JavaScript's trim.

use std::cell::Cell;
use std::fs;
use std::io::{self, Read};
use std::path::Path;

use crate::chain::model::view::{AgentFile, Status};
use crate::chain::repo::memo;
pub use crate::chain::repo::memo::real_path;

/// The most any profile reads of one file; a larger file is reported `oversized` instead of
/// read (an agent would try to read it whole, and an instruction file this large is a mistake).
pub const READ_CAP: u64 = 4 * 1024 * 1024;

/// The most one agent view reads in all, whatever the number of files (fifty links to one
/// large file, say): past it, files are reported `capped` and not read. Eight MiB of instructions
/// is some two million tokens, more than any agent's context holds; and a view's text is copied
/// a few times on its way to a client, with several views computed at once.
pub const VIEW_READ_CAP: u64 = 8 * 1024 * 1024;

thread_local! {
    /// What the view being computed on this thread may still read; `None` outside a view.
    static REMAINING: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The marker of the error a read returns once the view's read budget is spent.
const CAPPED: &str = "the profile's read budget is spent";

/// Runs `f` with a fresh read budget of `cap` bytes for every read on this thread; the budget
/// before is restored after (views may nest: `compare` inside a test, say).
pub fn with_budget<T>(cap: u64, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            REMAINING.with(|r| r.set(self.0));
        }
    }
    let _restore = Restore(REMAINING.with(|r| r.replace(Some(cap))));
    memo::with_view_paths(f)
}

/// Whether a read failed because the view's budget is spent.
pub fn is_capped(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Other && e.to_string() == CAPPED
}

pub use crate::chain::confine::{SHARED_MEMORY, is_special};

/// Reads at most `limit` bytes and the file's full size. Never blocks: a FIFO, a device or a
/// special file is an error, as is a directory. Charges what it reads to the view's budget.
pub fn read_capped(path: &Path, limit: u64) -> io::Result<(Vec<u8>, u64)> {
    // Read before in this scope (another view of the same run): the same bytes, charged again.
    if let Some(before) = memo::read_before(path, limit) {
        let want = before.size.min(limit);
        let remaining = REMAINING.with(Cell::get);
        if let Some(left) = remaining
            && want > left
        {
            return Err(io::Error::other(CAPPED));
        }
        let data = before.data[..usize::try_from(want).unwrap_or(usize::MAX).min(before.data.len())].to_vec();
        if let Some(left) = remaining {
            REMAINING.with(|r| r.set(Some(left.saturating_sub(data.len() as u64))));
        }
        return Ok((data, before.size));
    }
    let meta = fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::from(io::ErrorKind::IsADirectory));
    }
    let real = real_path(path)?;
    if is_special(&real) {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, "a kernel or device file is never read"));
    }
    let file = crate::chain::confine::open_regular(&real)?;
    let size = file.metadata()?.len();
    let want = size.min(limit);
    let remaining = REMAINING.with(Cell::get);
    if let Some(left) = remaining
        && want > left
    {
        return Err(io::Error::other(CAPPED));
    }
    let mut data = Vec::with_capacity(usize::try_from(want).unwrap_or(0));
    file.take(limit).read_to_end(&mut data)?;
    if let Some(left) = remaining {
        REMAINING.with(|r| r.set(Some(left.saturating_sub(data.len() as u64))));
    }
    memo::keep_read(path, memo::Read { data: data.clone(), size, limit });
    Ok((data, size))
}

/// The text of `file` decoded lossily, its size recorded; `None` (and the status `oversized` or
/// `unreadable`) when it is larger than `cap` or cannot be read.
pub(crate) fn read_into(file: &mut AgentFile, cap: u64) -> Option<String> {
    // A file known to be too large is not read at all.
    if let Some(meta) = memo::stat(&file.path)
        && meta.is_file
        && meta.len > cap
    {
        file.bytes = meta.len;
        file.status = Status::Oversized;
        return None;
    }
    match read_capped(&file.path, cap.saturating_add(1)) {
        Ok((_, size)) if size > cap => {
            file.bytes = size;
            file.status = Status::Oversized;
            None
        }
        Ok((data, size)) => {
            file.bytes = size;
            Some(lossy(data))
        }
        Err(e) => {
            file.status = if is_capped(&e) { Status::Capped } else { Status::Unreadable };
            None
        }
    }
}

/// Bytes as text, invalid sequences replaced (as the agents' JavaScript decoders do): valid
/// UTF-8, by far the usual case, becomes the string without a copy or a second pass.
pub fn lossy(data: Vec<u8>) -> String {
    String::from_utf8(data).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A whole file as UTF-8 (up to [`READ_CAP`]), as Rust's `read_to_string` reads it.
pub(crate) fn read_string(path: &Path) -> io::Result<String> {
    let (data, _) = read_capped(path, READ_CAP)?;
    String::from_utf8(data).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// JavaScript's `String.prototype.trim`: Unicode white space and U+FEFF, but not U+0085.
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// [`js_trim`] at the start only: what a regular expression's leading `\s*` takes.
pub fn js_trim_start(s: &str) -> &str {
    s.trim_start_matches(is_js_space)
}

/// JavaScript's white space (`\s`): Unicode white space and U+FEFF, but not U+0085.
fn is_js_space(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}

/// The first `limit` bytes of the file at `path` as this scope's views read it (see
/// [`with_texts`](crate::chain::repo::cache::with_texts)), else as the disk has it.
pub fn text_prefix(path: &Path, limit: u64) -> Vec<u8> {
    match memo::read_before(path, limit) {
        Some(read) => read.data[..read.data.len().min(usize::try_from(limit).unwrap_or(usize::MAX))].to_vec(),
        None => crate::chain::source::read_prefix(path, limit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_reads_no_more_than_its_budget() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.md");
        fs::write(&a, "x".repeat(600)).expect("write");
        let (first, second, third) = with_budget(1000, || {
            let first = read_capped(&a, READ_CAP).map(|(d, _)| d.len());
            let second = read_capped(&a, READ_CAP).map_err(|e| is_capped(&e));
            // A smaller read still fits what is left.
            let third = read_capped(&a, 100).map(|(d, size)| (d.len(), size));
            (first, second, third)
        });
        assert_eq!(first.ok(), Some(600));
        assert_eq!(second.err(), Some(true));
        assert_eq!(third.ok(), Some((100, 600)));
        // Outside a view there is no budget.
        assert!(read_capped(&a, READ_CAP).is_ok());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn kernel_files_and_links_to_them_are_never_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = dir.path().join("rules.md");
        std::os::unix::fs::symlink("/proc/self/environ", &link).expect("symlink");
        assert_eq!(read_capped(&link, READ_CAP).err().map(|e| e.kind()), Some(io::ErrorKind::PermissionDenied));
        let zero = dir.path().join("zero.md");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
        assert!(read_capped(&zero, READ_CAP).is_err());
        // Shared memory holds ordinary files (diff's skeletons): they are read.
        if Path::new(SHARED_MEMORY).is_dir() {
            let shm = tempfile::tempdir_in(SHARED_MEMORY).expect("tempdir in shared memory");
            let file = shm.path().join("AGENTS.md");
            fs::write(&file, "kept in memory").expect("write");
            assert_eq!(read_capped(&file, READ_CAP).ok(), Some((b"kept in memory".to_vec(), 14)));
            let fifo = shm.path().join("fifo.md");
            if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
                assert!(read_capped(&fifo, READ_CAP).is_err(), "a FIFO in shared memory is not read");
            }
        }
    }
}
