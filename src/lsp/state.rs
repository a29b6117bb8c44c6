//! Server state: sessions keyed by folder (innermost wins), open documents, and the
//! computation of every diagnostic from session snapshots.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::lsp_types::{Diagnostic, Uri};

use super::convert::Encoding;
use crate::chain::settings::{Env, Settings, SettingsProblem};
use crate::chain::source::{Buffers, FileCache};
use crate::session::Session;
use crate::session::ledger;

/// The largest open instruction file whose text the server keeps (larger than any file that
/// can load: `maxFileBytes` is at most this).
pub const DOCUMENT_TEXT_CAP: usize = crate::chain::settings::MAX_FILE_BYTES_CAP as usize;

/// The most sessions made for projects the client did not open as folders.
pub const IMPLICIT_SESSIONS_MAX: usize = 64;

/// One open document.
#[derive(Clone, Debug)]
pub struct Document {
    pub uri: Uri,
    /// The buffer's text, for instruction files only (and at most [`DOCUMENT_TEXT_CAP`]); other
    /// documents are only touches.
    pub text: Option<Arc<str>>,
    pub version: i32,
}

/// Everything the server knows, behind one lock that is never held across an await.
pub struct Workspace {
    pub encoding: Encoding,
    pub env: Env,
    /// Settings from `initializationOptions`; set through [`Workspace::set_init_options`].
    init_options: Value,
    /// Those options parsed once: what judges a path no session owns.
    pub defaults: Settings,
    /// The client answers `workspace/configuration`.
    pub pull_config: bool,
    /// No workspace folder and no root: sessions are made per document's project root.
    pub implicit: bool,
    /// Those sessions, oldest first (at most [`IMPLICIT_SESSIONS_MAX`]).
    implicit_order: std::collections::VecDeque<PathBuf>,
    /// The instruction file names below each project root (see [`Workspace::names_below`]).
    /// With whether the walk was whole (see [`Workspace::names_near`]).
    names_below: HashMap<PathBuf, (Arc<std::collections::BTreeSet<String>>, bool)>,
    pub sessions: BTreeMap<PathBuf, Session>,
    pub documents: HashMap<PathBuf, Document>,
    /// What was last published, per file.
    pub published: HashMap<PathBuf, Vec<Diagnostic>>,
    /// The last settings problems shown per folder, so the same problem is shown once.
    pub shown_problems: HashMap<PathBuf, Vec<SettingsProblem>>,
    pub logged_ignored: HashSet<Vec<String>>,
    /// Writes ledgers off the protocol thread.
    pub ledgers: ledger::Writer,
    /// The client registers file watchers dynamically (`didChangeWatchedFiles`).
    pub dynamic_watch: bool,
    pub registered_watch: bool,
}

impl Workspace {
    pub fn new(env: Env) -> Self {
        let defaults = Settings::parse(&Value::Null, None, &env).0;
        Self {
            encoding: Encoding::Utf16,
            env,
            init_options: Value::Null,
            defaults,
            pull_config: false,
            implicit: false,
            implicit_order: std::collections::VecDeque::new(),
            names_below: HashMap::new(),
            sessions: BTreeMap::new(),
            documents: HashMap::new(),
            published: HashMap::new(),
            shown_problems: HashMap::new(),
            logged_ignored: HashSet::new(),
            ledgers: ledger::Writer::default(),
            dynamic_watch: false,
            registered_watch: false,
        }
    }

    /// The folder of the innermost session that contains `path`.
    pub fn folder_of(&self, path: &Path) -> Option<PathBuf> {
        // A scan, not a range of the ordered map: on Windows a client may spell a folder's case
        // differently from the file's, and the map orders by exact case. Folders are few.
        self.sessions
            .keys()
            .filter(|folder| crate::paths::starts_with(path, folder))
            .max_by_key(|folder| folder.components().count())
            .cloned()
    }

    pub fn session_of(&self, path: &Path) -> Option<&Session> {
        self.folder_of(path).and_then(|f| self.sessions.get(&f))
    }

    /// Keeps the `initializationOptions` and the defaults they make.
    pub fn set_init_options(&mut self, options: Value) {
        self.init_options = options;
        self.defaults = Settings::parse(&self.settings_value(None), None, &self.env).0;
    }

    /// Settings from `initializationOptions` merged with a pulled `instructions` section.
    pub fn settings_value(&self, pulled: Option<&Value>) -> Value {
        let mut base = match &self.init_options {
            Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        };
        if let Some(Value::Object(m)) = pulled {
            for (k, v) in m {
                base.insert(k.clone(), v.clone());
            }
        }
        Value::Object(base)
    }

    /// Adds a session for a folder (settings from the init options until a pull answers).
    pub fn add_session(&mut self, folder: &Path) -> Vec<SettingsProblem> {
        let (settings, problems) = Settings::parse(&self.settings_value(None), None, &self.env);
        if !self.sessions.contains_key(folder) {
            let mut session = Session::new(folder, settings);
            // The nearby names now, the whole walk in the background (see `names_near`).
            let names = self.names_near(&session.project_root());
            session.refresh_targets_logged(&names);
            self.sessions.insert(folder.to_path_buf(), session);
        }
        problems
    }

    /// The instruction file names below a project root, walked once for every session of that
    /// repository (ten thousand folders of one repository cost one walk).
    pub fn names_below(&mut self, root: &Path) -> Arc<std::collections::BTreeSet<String>> {
        match self.names_below.get(root) {
            Some((names, true)) => names.clone(),
            _ => self.set_names_below(root, crate::chain::targets::names_below(root)),
        }
    }

    /// [`Workspace::names_below`] when it is known, else the names near the root
    /// ([`crate::chain::targets::names_near`]): a session starts without walking a large
    /// repository whole; [`Workspace::partly_walked`] says which roots to walk later.
    pub fn names_near(&mut self, root: &Path) -> Arc<std::collections::BTreeSet<String>> {
        if let Some((names, _)) = self.names_below.get(root) {
            return names.clone();
        }
        let names = Arc::new(crate::chain::targets::names_near(root));
        self.names_below.insert(root.to_path_buf(), (names.clone(), false));
        names
    }

    /// The project roots known only from [`Workspace::names_near`].
    pub fn partly_walked(&self) -> Vec<PathBuf> {
        self.names_below.iter().filter(|(_, (_, whole))| !whole).map(|(r, _)| r.clone()).collect()
    }

    /// Records the whole walk of a root.
    pub fn set_names_below(
        &mut self,
        root: &Path,
        names: std::collections::BTreeSet<String>,
    ) -> Arc<std::collections::BTreeSet<String>> {
        let names = Arc::new(names);
        self.names_below.insert(root.to_path_buf(), (names.clone(), true));
        names
    }

    /// Walks a project root again (an instruction file appeared or went away).
    pub fn forget_names_below(&mut self, root: &Path) {
        self.names_below.remove(root);
    }

    /// Adds a session for a project the client did not open as a folder; past
    /// [`IMPLICIT_SESSIONS_MAX`] the oldest such session is dropped (its ledger stays on disk),
    /// so a client asking about any number of directories does not grow the server.
    pub fn add_implicit_session(&mut self, folder: &Path) -> Vec<SettingsProblem> {
        if !self.sessions.contains_key(folder) {
            self.implicit_order.push_back(folder.to_path_buf());
        }
        while self.implicit_order.len() > IMPLICIT_SESSIONS_MAX {
            if let Some(old) = self.implicit_order.pop_front() {
                self.sessions.remove(&old);
                self.shown_problems.remove(&old);
            }
        }
        self.add_session(folder)
    }

    /// Starts a session's lifecycle (once): continue its ledger when there is a usable one,
    /// else a `baseline` batch. Returns the `(folder, seq)` of a new batch.
    pub fn start_session(&mut self, folder: &Path, cache: &FileCache) -> Option<(PathBuf, u64)> {
        let session = self.sessions.get_mut(folder)?;
        if session.is_started() {
            return None;
        }
        // A ledger still waiting to be written is newer than the one on disk.
        let dir = session.settings.state_dir.clone();
        let waiting = dir.as_deref().and_then(|d| self.ledgers.pending(d, &session.folder));
        let (batch, how) = session.resume(cache, dir.as_deref(), waiting, false);
        match how {
            crate::session::Resumed::Continued { from } => {
                tracing::info!("{}: continuing from seq {}", folder.display(), from.seq);
            }
            crate::session::Resumed::Replaced(e) => {
                tracing::warn!("{}: {e}; starting afresh (the ledger will be replaced)", folder.display());
            }
            crate::session::Resumed::Fresh => {}
        }
        self.commit(folder, batch.is_some())
    }

    /// Runs `f` on a started session and commits when it added a batch.
    pub fn with_session(
        &mut self,
        folder: &Path,
        cache: &FileCache,
        f: impl FnOnce(&mut Session, &FileCache),
    ) -> Vec<(PathBuf, u64)> {
        let mut events: Vec<(PathBuf, u64)> = self.start_session(folder, cache).into_iter().collect();
        let Some(session) = self.sessions.get_mut(folder) else { return events };
        let before = session.seq;
        f(session, cache);
        let changed = session.seq != before;
        events.extend(self.commit(folder, changed));
        events
    }

    /// Persists a session after a batch; returns the `(folder, seq)` to announce.
    pub fn commit(&mut self, folder: &Path, changed: bool) -> Option<(PathBuf, u64)> {
        if !changed {
            return None;
        }
        let session = self.sessions.get(folder)?;
        if let Some(dir) = &session.settings.state_dir {
            self.ledgers.save(dir, session.ledger());
        }
        Some((folder.to_path_buf(), session.seq))
    }

    /// Every directory any watching session needs watched.
    pub fn watched_dirs(&self) -> std::collections::BTreeSet<PathBuf> {
        self.sessions.values().filter(|s| s.settings.watch).flat_map(|s| s.watched_dirs()).collect()
    }

    /// What [`Workspace::watched_dirs`] is made of, cheap to compare: each watching session's
    /// folder, the directory watched for its global file (which a change on disk may move) and
    /// the mark of its reached directories (see [`Session::reached_mark`]).
    pub fn watch_marks(&self) -> WatchMarks {
        self.sessions
            .iter()
            .filter(|(_, s)| s.settings.watch)
            .map(|(folder, s)| WatchMark {
                folder: folder.clone(),
                global: s.global_watch_dir(),
                reached: s.reached_mark(),
            })
            .collect()
    }

    /// The directories the watching sessions reached between the marks `before` and `now`,
    /// when that is all that changed (the same sessions, each `reached` only grown); `None`
    /// otherwise.
    pub fn reached_since(&self, before: &WatchMarks, now: &WatchMarks) -> Option<Vec<PathBuf>> {
        if before.len() != now.len() {
            return None;
        }
        let mut new = Vec::new();
        for (b, n) in before.iter().zip(now) {
            let ((id_before, len_before), (id_now, len_now)) = (b.reached, n.reached);
            if n.folder != b.folder || n.global != b.global || id_now != id_before || len_now < len_before {
                return None;
            }
            if len_now > len_before {
                new.extend(self.sessions.get(&n.folder)?.reached_after(len_before).iter().cloned());
            }
        }
        Some(new)
    }

    /// Open documents as buffers that stand in for the disk.
    pub fn buffers(&self) -> Buffers {
        self.documents.iter().filter_map(|(p, d)| Some((p.clone(), d.text.clone()?))).collect()
    }

    /// Whether an open document's text is kept: an instruction file's (its findings follow it
    /// as typed) or the configuration's (completion reads it).
    pub fn keeps_text(&self, path: &Path) -> bool {
        self.is_instruction_file(path)
            || path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| crate::chain::config::CONFIG_NAMES.contains(&n))
    }

    /// True for any file an instruction file may be: a candidate of the engine, an agent's file
    /// (`GEMINI.md`, `*.instructions.md`, `*.mdc`, …), or a Markdown file in a `.claude`
    /// folder (rules, imports): what hovers and code lenses are given for.
    pub fn is_instruction_file(&self, path: &Path) -> bool {
        let in_claude = path.components().any(|c| c.as_os_str() == ".claude");
        self.is_candidate(path)
            || crate::chain::agents::is_agent_path(path)
            || (in_claude && path.extension().is_some_and(|e| e == "md"))
    }

    /// True when the file name is a candidate or overlay of the session that would own it.
    pub fn is_candidate(&self, path: &Path) -> bool {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
        match self.session_of(path) {
            Some(s) => s.settings.all_names().any(|n| n == name),
            None => self.defaults.all_names().any(|n| n == name),
        }
    }
}

/// What one watching session's watched directories are made of (see [`Workspace::watch_marks`]).
#[derive(Debug)]
pub struct WatchMark {
    folder: PathBuf,
    global: Option<PathBuf>,
    reached: (u64, usize),
}

/// Each watching session's [`WatchMark`], in folder order.
pub type WatchMarks = Vec<WatchMark>;

/// What a diagnostics pass needs, copied out of the state so the lock is not held.
pub struct DiagnosticsInput {
    pub sessions: Vec<Session>,
    pub buffers: Buffers,
    /// Open documents that are instruction candidates, with the settings that judge them, their
    /// session's folder, and whether the engine's own findings are published for them.
    pub open_candidates: Vec<(PathBuf, Settings, PathBuf, bool)>,
    pub encoding: Encoding,
}

impl Workspace {
    pub fn diagnostics_input(&self) -> DiagnosticsInput {
        let default = &self.defaults;
        let open_candidates = self
            .documents
            .keys()
            .filter(|p| self.is_candidate(p))
            .map(|p| {
                let (settings, folder, profiles) = match self.session_of(p) {
                    Some(s) => (s.settings.clone(), s.folder.clone(), s.profiles()),
                    // Outside every folder: the engine's own findings only when its profile is
                    // named (by default the agents are followed, and the agents' findings of such
                    // a file come from the folders below it).
                    None => (
                        default.clone(),
                        p.parent().map(Path::to_path_buf).unwrap_or_default(),
                        if default.targeted { Vec::new() } else { default.profiles.clone() },
                    ),
                };
                let own = profiles.iter().any(|n| n == settings.profile.name());
                (p.clone(), settings, folder, own)
            })
            .collect();
        DiagnosticsInput {
            sessions: self.sessions.values().cloned().collect(),
            buffers: self.buffers(),
            open_candidates,
            encoding: self.encoding,
        }
    }
}
