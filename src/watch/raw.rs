//! What a backend (inotify, `notify`, polling) tells the debouncer.

use std::path::PathBuf;

/// One report of a backend.
pub(super) enum Raw {
    Changed(Vec<PathBuf>),
    /// Events were lost: look at everything again.
    Rescan,
    /// The backend failed, in words: look at everything again.
    Failed(String),
}
