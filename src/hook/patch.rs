//! The files a Codex `apply_patch` call touched, read from the patch's own file headers.
//!
//! This is Codex's structured edit, not a shell command: its envelope names every file it adds,
//! updates, deletes or moves to on a line of its own (`*** Add File: <path>` and so on), and
//! nothing else in it is a path. Shell commands are never parsed (the seeds forbid inferring
//! file activity from them).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The headers that name a file, in the patch grammar Codex gives its model.
const HEADERS: &[&str] = &["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "];

/// The most files the hook follows in one patch: a patch is an edit of a few files, and each
/// file followed costs a discovery; past this, the rest are left out (and said).
pub const MAX_FILES: usize = 1024;

/// The files a patch names.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Named {
    /// Each once, in order, at most [`MAX_FILES`].
    pub paths: Vec<PathBuf>,
    /// Headers naming a file not followed, past [`MAX_FILES`].
    pub more: usize,
}

/// The paths a patch names, resolved against `cwd` (patch paths are relative; an absolute one is
/// kept), each once, in order. Linear in the patch: seen paths are hashed, not searched.
pub fn touched(patch: &str, cwd: &Path) -> Named {
    let mut named = Named::default();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        let Some(rest) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) else { continue };
        let rest = rest.trim();
        if rest.is_empty() {
            continue;
        }
        let path = crate::paths::normalize(&cwd.join(rest));
        if seen.contains(&path) {
            continue;
        }
        if named.paths.len() == MAX_FILES {
            named.more += 1;
            continue;
        }
        seen.insert(path.clone());
        named.paths.push(path);
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_header_is_a_touch_and_hunk_lines_are_not() {
        let patch = "*** Begin Patch\n*** Add File: a/new.rs\n+*** Update File: not/a/header\n*** Update File: b/old.rs\n*** Move to: c/moved.rs\n@@\n-x\n+y\n*** Delete File: d/gone.rs\r\n*** Update File: b/old.rs\n*** End Patch\n";
        let cwd = Path::new("/p");
        let got = touched(patch, cwd).paths;
        let want: Vec<PathBuf> =
            ["a/new.rs", "b/old.rs", "c/moved.rs", "d/gone.rs"].iter().map(|p| cwd.join(p)).collect();
        assert_eq!(got, want);
        assert_eq!(touched("*** Update File: /abs/x.rs\n", cwd).paths, [PathBuf::from("/abs/x.rs")]);
        assert!(touched("cat a/b.rs", cwd).paths.is_empty());
    }

    #[test]
    fn a_patch_naming_more_files_than_the_cap_is_followed_up_to_it() {
        let patch: String =
            (0..MAX_FILES + 5).map(|i| format!("*** Add File: f{i}.rs\n*** Update File: f0.rs\n")).collect();
        let named = touched(&patch, Path::new("/p"));
        assert_eq!((named.paths.len(), named.more), (MAX_FILES, 5));
        assert_eq!(named.paths[1], PathBuf::from("/p/f1.rs"), "each once, in order");
    }
}
