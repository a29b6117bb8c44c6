//! The files a Codex `apply_patch` call touched, read from the patch's own file headers.
//!
//! This is Codex's structured edit, not a shell command: its envelope names every file it adds,
//! updates, deletes or moves to on a line of its own (`*** Add File: <path>` and so on), and
//! nothing else in it is a path. Shell commands are never parsed (the seeds forbid inferring
//! file activity from them).

use std::path::{Path, PathBuf};

/// The headers that name a file, in the patch grammar Codex gives its model.
const HEADERS: &[&str] = &["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "];

/// The paths a patch names, resolved against `cwd` (patch paths are relative; an absolute one is
/// kept), each once, in order.
pub fn touched(patch: &str, cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        let Some(rest) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) else { continue };
        let rest = rest.trim();
        if rest.is_empty() {
            continue;
        }
        let path = crate::paths::normalize(&cwd.join(rest));
        if !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_header_is_a_touch_and_hunk_lines_are_not() {
        let patch = "*** Begin Patch\n*** Add File: a/new.rs\n+*** Update File: not/a/header\n*** Update File: b/old.rs\n*** Move to: c/moved.rs\n@@\n-x\n+y\n*** Delete File: d/gone.rs\r\n*** Update File: b/old.rs\n*** End Patch\n";
        let cwd = Path::new("/p");
        let got = touched(patch, cwd);
        let want: Vec<PathBuf> =
            ["a/new.rs", "b/old.rs", "c/moved.rs", "d/gone.rs"].iter().map(|p| cwd.join(p)).collect();
        assert_eq!(got, want);
        assert_eq!(touched("*** Update File: /abs/x.rs\n", cwd), [PathBuf::from("/abs/x.rs")]);
        assert!(touched("cat a/b.rs", cwd).is_empty());
    }
}
