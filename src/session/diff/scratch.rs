//! Where `diff` lays out its skeletons: a temporary directory of the user's only, in memory
//! where that is safe, and what an interrupted run left there taken away by the next.

use std::path::{Path, PathBuf};

use crate::chain::agents;

/// The prefix of a scratch directory's name, followed by the process id of the run that made it.
const PREFIX: &str = "instructions-lsp-diff-";

/// Linux's `/dev/shm` is taken only with this much room: it is shared by every process of the
/// machine (a container's holds 64 MB), and a skeleton must not fill it for the others.
const SHARED_MEMORY_FREE: u64 = 1 << 30;

/// Where the skeletons may go, best first: `$TMPDIR` when it is set (the user chose it), else
/// the memory file systems, where making a directory costs microseconds instead of a disk's
/// hundreds (the user's runtime directory `$XDG_RUNTIME_DIR`, then Linux's `/dev/shm` when it
/// has room to spare), and last the system's temporary directory. None inside `workdir`: the
/// working tree's walk would find the skeletons as changes of its own (`TMPDIR=$PWD`); when
/// every place is inside it, the repository's `git_dir`, which no walk enters.
pub(super) fn scratch_places(workdir: &Path, git_dir: &Path) -> Vec<PathBuf> {
    let mut places = Vec::new();
    if std::env::var_os("TMPDIR").is_none() {
        let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
        // (Not below `/dev` otherwise: nothing there is read as an instruction file.)
        let not_a_device = |d: &PathBuf| !agents::read::is_special(d);
        places.extend(runtime.filter(|d| d.is_absolute() && not_a_device(d)));
        let shared = Path::new(agents::read::SHARED_MEMORY);
        if cfg!(target_os = "linux") && free_bytes(shared).is_some_and(|free| free >= SHARED_MEMORY_FREE) {
            places.push(shared.to_path_buf());
        }
    }
    places.push(std::env::temp_dir());
    places.retain(|d| d.is_dir());
    let workdir = std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_path_buf());
    places.retain(|d| !std::fs::canonicalize(d).unwrap_or_else(|_| d.clone()).starts_with(&workdir));
    if places.is_empty() {
        places.push(git_dir.to_path_buf());
    }
    places.dedup();
    places
}

/// Runs `lay_out` in a fresh temporary directory in the first of `places` where it works: a
/// memory file system may be small, so a place that is full or refuses is left for the next.
/// An error that is not the scratch directory's (a wrong revision) is final. The directory is
/// the user's alone (its files are the revisions' instruction files and settings), and a run
/// that was interrupted before removing its own has it removed here.
pub(super) fn in_scratch<T>(
    places: &[PathBuf],
    mut lay_out: impl FnMut(&Path) -> Result<T, LayOut>,
) -> Result<(tempfile::TempDir, T), String> {
    let mut last = "no temporary directory to lay out the revisions in".to_string();
    for place in places {
        sweep(place);
        let mut builder = tempfile::Builder::new();
        let prefix = format!("{PREFIX}{}-", std::process::id());
        builder.prefix(&prefix);
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
        let tmp = match builder.tempdir_in(place) {
            Ok(t) => t,
            Err(e) => {
                last = format!("cannot create a temporary directory in {}: {e}", place.display());
                continue;
            }
        };
        match lay_out(tmp.path()) {
            Ok(out) => return Ok((tmp, out)),
            Err(LayOut::Scratch(e)) => last = e,
            Err(LayOut::Other(e)) => return Err(e),
        }
    }
    Err(last)
}

/// Removes the scratch directories in `place` whose run is gone (stopped by a signal before
/// it removed its own): in memory they would hold the machine's memory until it restarts.
/// Only the user's own are touched; a directory of a live process stays.
fn sweep(place: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(entries) = std::fs::read_dir(place) else { return };
        let me = rustix::process::geteuid().as_raw();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)).and_then(|rest| rest.split('-').next())
            else {
                continue;
            };
            let Ok(pid) = pid.parse::<i32>() else { continue };
            let ours = entry.metadata().is_ok_and(|m| m.is_dir() && m.uid() == me);
            if ours && pid > 0 && !alive(pid) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    #[cfg(not(unix))]
    let _ = place;
}

/// Whether process `pid` exists (a process of another user counts).
#[cfg(unix)]
fn alive(pid: i32) -> bool {
    // Signal 0 only asks whether the process exists; nothing is sent.
    let Some(pid) = rustix::process::Pid::from_raw(pid) else { return false };
    !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH))
}

/// The bytes free for an unprivileged user on the file system holding `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        let stat = rustix::fs::statvfs(dir).ok()?;
        Some(stat.f_bavail.saturating_mul(stat.f_frsize))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// Why laying out a side failed: writing the scratch directory, or anything else.
#[derive(Debug)]
pub(super) enum LayOut {
    Scratch(String),
    Other(String),
}

impl From<String> for LayOut {
    fn from(e: String) -> Self {
        LayOut::Other(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_scratch_place_leaves_the_layout_to_the_next_and_a_wrong_revision_stops_it() {
        let (small, disk) = (tempfile::tempdir().expect("tempdir"), tempfile::tempdir().expect("tempdir"));
        let places = [small.path().to_path_buf(), disk.path().to_path_buf()];
        let mut tried = Vec::new();
        let (tmp, laid) = in_scratch(&places, |tmp| {
            tried.push(tmp.to_path_buf());
            if tmp.starts_with(small.path()) { Err(LayOut::Scratch("No space left on device".into())) } else { Ok(7) }
        })
        .expect("the second place works");
        assert_eq!((laid, tried.len()), (7, 2));
        assert!(tmp.path().starts_with(disk.path()));
        // The place that failed keeps nothing.
        assert!(!tried[0].exists());
        let wrong =
            in_scratch(&places, |_| -> Result<(), LayOut> { Err(LayOut::Other("nope: not a revision".into())) });
        assert_eq!(wrong.err().as_deref(), Some("nope: not a revision"));
        let full = in_scratch(&places, |_| -> Result<(), LayOut> { Err(LayOut::Scratch("full".into())) });
        assert_eq!(full.err().as_deref(), Some("full"));
    }

    /// The scratch directory is the user's alone, and what a run that is gone left behind is
    /// removed by the next; a live run's directory and other files stay.
    #[cfg(unix)]
    #[test]
    fn a_scratch_directory_is_private_and_an_interrupted_runs_is_swept() {
        use std::os::unix::fs::PermissionsExt;
        let place = tempfile::tempdir().expect("tempdir");
        let mut gone = std::process::Command::new("true").spawn().expect("spawn true");
        let gone_pid = gone.id();
        gone.wait().expect("wait");
        let stale = place.path().join(format!("{PREFIX}{gone_pid}-abc"));
        std::fs::create_dir_all(stale.join("base/pkg")).expect("mkdir");
        std::fs::write(stale.join("base/pkg/AGENTS.md"), "left behind").expect("write");
        let live = place.path().join(format!("{PREFIX}{}-def", std::process::id()));
        std::fs::create_dir(&live).expect("mkdir");
        let other = place.path().join("instructions-lsp-diffXYZ");
        std::fs::create_dir(&other).expect("mkdir");
        let (tmp, mode) = in_scratch(&[place.path().to_path_buf()], |tmp| {
            Ok(std::fs::metadata(tmp).map(|m| m.permissions().mode() & 0o777).map_err(|e| e.to_string())?)
        })
        .expect("laid out");
        assert_eq!(mode, 0o700);
        assert!(!stale.exists(), "the interrupted run's skeleton is removed");
        assert!(live.exists() && other.exists() && tmp.path().exists());
    }
}
