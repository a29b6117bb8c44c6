//! The server's handlers, grouped by concern: documents, workspace and configuration, the custom
//! methods, the features (hover, lenses, links, commands) and the code actions. Each takes the state
//! ([`Shared`]) and calls into it and the session; `server.rs` hands each message here in one
//! line. Nothing else imports this module: the state never calls a handler.

pub mod actions;
pub mod completion;
pub mod custom;
pub mod documents;
pub mod features;
pub mod workspace;

use std::path::{Path, PathBuf};

use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::Uri;

use super::shared::Shared;
use super::state::Workspace;
use crate::chain::discover::project_root;
use crate::chain::settings::SettingsProblem;
use crate::paths::uri_to_path;

pub(super) fn path_of(uri: &Uri) -> Option<PathBuf> {
    uri_to_path(uri.as_str())
}

/// Runs a request's heavy part on the blocking pool, over copies of what it needs: the protocol
/// thread stays free to read `$/cancelRequest`, and a cancelled request is answered at once
/// (its computation finishes unobserved).
async fn off_thread<T: Send + 'static>(work: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        let mut error = Error::internal_error();
        error.message = format!("the computation of the answer failed: {e}").into();
        Err(error)
    })
}

/// The project root of a document when the client opened no folder: from the nearest directory
/// that exists, so a made-up path makes no session of its own.
fn implicit_folder(st: &Workspace, path: &Path) -> PathBuf {
    let dir = if path.is_dir() { path } else { path.parent().unwrap_or(path) };
    let dir = dir.ancestors().find(|d| d.is_dir()).unwrap_or(dir);
    project_root(dir, &st.defaults.root_markers)
}

pub(super) fn log_problems(folder: &Path, problems: &[SettingsProblem]) {
    for p in problems {
        tracing::warn!("{}: {p}", folder.display());
    }
}

/// Records a touch in the innermost session containing `path` (starting an implicit session
/// when the client opened no folder); returns new batches.
#[must_use]
fn touch(shared: &Shared, path: &Path) -> Vec<(PathBuf, u64)> {
    let mut st = shared.state();
    if st.folder_of(path).is_none() && st.implicit {
        let folder = implicit_folder(&st, path);
        let problems = st.add_implicit_session(&folder);
        log_problems(&folder, &problems);
    }
    let Some(folder) = st.folder_of(path) else { return Vec::new() };
    st.with_session(&folder, &shared.cache, |session, cache| {
        let added = session.touch(cache, path);
        let files: Vec<&str> = added.iter().flat_map(|r| r.files.iter().map(|f| f.heading.as_str())).collect();
        tracing::debug!("touch {} in {}: new nested files {files:?}", path.display(), folder.display());
    })
}
