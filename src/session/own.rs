//! What an agent loads by itself, and a batch as that agent should get it: without those files,
//! so that the model sees each file once. The hooks (`hook claude|codex`) and the MCP server (for
//! a client it knows) both give batches on top of what the agent already loaded, through this.
//!
//! Files are compared by identity (links resolved): the agent's view and a session's ledger may
//! name one file through different paths.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::chain::agents::{self, AgentEnv, Overrides};
use crate::chain::render::SectionStyle;
use crate::chain::source::FileCache;
use crate::session::ledger::{Action, Batch, Change, Reason};
use crate::session::{Session, render_with_notices};

/// Paths as the disk knows them (links resolved), so that the agent's view and the session's
/// ledger name a file alike. Directories are resolved one component at a time and remembered: a
/// chain ten deep costs one `lstat` per directory, not a `realpath` per file.
#[derive(Default)]
struct Identities {
    dirs: HashMap<PathBuf, PathBuf>,
}

impl Identities {
    fn dir(&mut self, dir: &Path) -> PathBuf {
        if let Some(real) = self.dirs.get(dir) {
            return real.clone();
        }
        let real = match (dir.parent(), dir.file_name()) {
            (Some(parent), Some(name)) => {
                let link = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
                if link {
                    std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())
                } else {
                    self.dir(parent).join(name)
                }
            }
            _ => dir.to_path_buf(),
        };
        self.dirs.insert(dir.to_path_buf(), real.clone());
        real
    }

    /// A file's identity: its directory resolved, and the file itself when it is a link; for a
    /// file that is gone, its directory resolved and its name.
    fn of(&mut self, path: &Path) -> PathBuf {
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
            && let Ok(real) = std::fs::canonicalize(path)
        {
            return real;
        }
        match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => self.dir(dir).join(name),
            _ => path.to_path_buf(),
        }
    }
}

/// The files one agent loads by itself, by identity, as they grow over its session: a file it
/// loaded that is gone now is still its own (its removal is not ours to announce).
pub struct Own {
    agent: String,
    files: BTreeSet<PathBuf>,
    /// Resolved paths, remembered for one event or call only: the disk may change between two.
    ids: Identities,
}

/// A batch as the agent gets it: the changes and text left, and the changes taken out.
pub struct Trimmed {
    /// The batch with only the changes the agent does not load by itself, and their text
    /// (empty when nothing is left).
    pub batch: Batch,
    /// The changes taken out: files the agent loads by itself.
    pub left_out: Vec<Change>,
}

impl Own {
    /// Agent profile `agent` (`claude`, `codex`, …), with the files known to be its own so far.
    pub fn new(agent: &str, files: BTreeSet<PathBuf>) -> Self {
        Self { agent: agent.to_string(), files, ids: Identities::default() }
    }

    /// The files known to be the agent's own, to keep for its next event or call.
    pub fn into_files(self) -> BTreeSet<PathBuf> {
        self.files
    }

    /// Adds what the agent loads by itself (its profile, with `overrides`) working in `cwd` after
    /// reading the `touched` files. An agent without a profile adds nothing.
    pub fn add(&mut self, env: &AgentEnv, overrides: &Overrides, cwd: &Path, touched: &[PathBuf]) {
        let Some(profile) = agents::profile(&self.agent, env, overrides) else { return };
        let cwd = self.ids.dir(cwd);
        let view = agents::load(&profile, &cwd, touched);
        let ids = &mut self.ids;
        self.files.extend(view.files.iter().filter(|f| f.status.reaches()).map(|f| ids.of(&f.path)));
    }

    fn is_own(&mut self, change: &Change) -> bool {
        crate::paths::uri_to_path(&change.uri).is_some_and(|p| self.files.contains(&self.ids.of(&p)))
    }

    /// `batch` without the agent's own files: the batch itself when it has none of them, else
    /// the rest rendered again the same way (from the session's current files).
    pub fn trim(&mut self, batch: &Batch, session: &Session, cache: &FileCache) -> Trimmed {
        let (left_out, keep): (Vec<Change>, Vec<Change>) = batch.changes.iter().cloned().partition(|c| self.is_own(c));
        if left_out.is_empty() {
            return Trimmed { batch: batch.clone(), left_out };
        }
        let text = if keep.is_empty() { String::new() } else { render_kept(batch, &keep, session, cache) };
        let batch = Batch { seq: batch.seq, reason: batch.reason, changes: keep, text };
        Trimmed { batch, left_out }
    }
}

/// The block of a batch's `keep` changes, framed as the batch was.
fn render_kept(batch: &Batch, keep: &[Change], session: &Session, cache: &FileCache) -> String {
    let snapshot = session.snapshot(cache, None);
    let files: Vec<_> = keep
        .iter()
        .filter(|c| c.action != Action::Remove)
        .filter_map(|c| {
            let path = crate::paths::uri_to_path(&c.uri)?;
            snapshot.files().find(|f| f.path == path && c.sha256.as_ref() == Some(&f.file.sha256)).cloned()
        })
        .collect();
    let notices: Vec<String> = keep
        .iter()
        .filter(|c| c.action == Action::Remove)
        .map(|c| format!("Instructions removed: {}", c.path))
        .collect();
    let style = match batch.reason {
        Reason::Baseline => SectionStyle::Initial,
        Reason::Touch => SectionStyle::Additional,
        Reason::Change | Reason::Config | Reason::Restart => SectionStyle::Updated,
    };
    render_with_notices(&session.settings, files, style, &notices).rendered.text
}
