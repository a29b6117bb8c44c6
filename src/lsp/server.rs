//! The language server: lifecycle, documents, folders, settings, features and custom methods.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::Notify;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::convert::{self, Encoding};
use super::ext::{self, DidChangeParams, EffectiveParams, TouchParams, TransitionsParams};
use super::hover;
use super::state::{self, State};
use crate::chain::agents::{self, AgentEnv};
use crate::chain::discover::project_root;
use crate::chain::settings::{Env, Settings, SettingsProblem};
use crate::chain::source::FileCache;
use crate::paths::{self, uri_to_path};
use crate::session::ledger::Reason;
use crate::session::profiles::{AgentAnswer, Views};
use crate::watch::{DirWatcher, WatchEvent};

/// Shared between the server and its background tasks.
pub struct Inner {
    state: Mutex<State>,
    pub cache: FileCache,
    refresh: Notify,
    shutdown: AtomicBool,
    watcher: Mutex<Option<DirWatcher>>,
    /// Bumped by every event that may change an answer (documents, touches, files, settings).
    generation: std::sync::atomic::AtomicU64,
    /// Warm `instructions/effective` answers, valid for one generation while watching.
    memo: Mutex<Memo>,
    /// Agent views, remembered like `memo` once every directory they read is watched.
    views: Mutex<std::collections::HashMap<ViewKey, (u64, Arc<AgentAnswer>)>>,
    /// `instructions/effective` answers with `profile`, remembered the same way.
    profile_memo: Mutex<ProfileMemo>,
    /// Directories remembered answers read beyond the sessions' own: watched too, and a change
    /// in one is an event.
    read_dirs: Mutex<std::collections::BTreeSet<PathBuf>>,
    /// `read_dirs` grew since the watches were last set (see [`Inner::rewatch`]).
    rewatch: AtomicBool,
    /// Bumped by every change on disk the server hears of (and by settings): the checked trees
    /// (see [`Inner::tree`]) follow the disk, not the buffers or the touches.
    disk_generation: std::sync::atomic::AtomicU64,
    /// What `check` says of each session's folder, by folder: (disk generation, selection,
    /// the tree).
    trees: Mutex<Trees>,
    /// Held while the repositories are walked whole (see [`finish_walks`]): an answer that
    /// depends on the agents a repository targets waits for the walk instead of answering from
    /// the names near its root, so that it says what `check` says.
    walks: tokio::sync::Mutex<()>,
    agent_env: AgentEnv,
    /// The names the agents look for in directories outside a project (see
    /// [`Inner::read_by_memo`]): their file and folder names, and each part of their global paths.
    global_names: BTreeSet<String>,
    /// Remembered `instructions/effective` answers as sent, by their params as JSON: the
    /// transport answers from here without routing, cloning or serializing (see
    /// [`Server::remembered_answer`]).
    wire: Mutex<Wire>,
}

/// (folder, uri path) -> (generation, answer).
type Memo = std::collections::HashMap<(PathBuf, Option<PathBuf>), (u64, Value)>;

/// (folder, profile, uri path) -> (generation, answer).
type ProfileMemo = std::collections::HashMap<(PathBuf, String, Option<PathBuf>), (u64, Value)>;

/// folder -> (disk generation, selection, what `check` says of the folder).
type Trees = std::collections::HashMap<PathBuf, (u64, String, Arc<crate::session::check::Tree>)>;

/// params as JSON -> (generation, serialized answer).
type Wire = std::collections::HashMap<String, (u64, Arc<[u8]>)>;

/// (folder, profile, its overrides, touched paths).
type ViewKey = (PathBuf, String, String, Vec<PathBuf>);

/// The most entries a memo keeps before it starts afresh (answers are per folder, profile and
/// preview: a client asking about any number of paths does not grow the server).
pub const MEMO_ENTRIES_MAX: usize = 256;

/// The most directories remembered answers may add to the watched ones; past it answers are
/// computed each time instead.
const READ_DIRS_MAX: usize = 16_384;

impl Inner {
    pub fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves state that is still usable: keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Watches exactly the directories the sessions need now. True when some cannot be watched
    /// (the inotify limit, say), so the client should report changes instead.
    fn update_watches(&self) -> bool {
        let dirs = self.watched_dirs();
        let mut watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
        let Some(w) = watcher.as_mut() else { return false };
        w.set(dirs);
        !w.is_complete()
    }

    /// The sessions' directories and those remembered answers read.
    fn watched_dirs(&self) -> std::collections::BTreeSet<PathBuf> {
        let mut dirs = self.state().watched_dirs();
        dirs.extend(self.read_dirs.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned());
        dirs
    }

    /// The watcher's epoch when it sees every directory it was asked to; `None` when answers
    /// must not be remembered (no watcher, or some directory could not be watched).
    fn watch_epoch(&self) -> Option<u64> {
        let watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
        watcher.as_ref().filter(|w| w.is_complete()).map(DirWatcher::epoch)
    }

    /// Whether an answer computed at `generation` and watcher `epoch`, from the directories
    /// `dirs`, may be remembered: nothing happened since, and every one of them was watched all
    /// along (the epoch did not move). When some is not watched yet it is watched once the
    /// caller calls [`Inner::rewatch`], so the next computation can be remembered.
    pub fn may_remember(&self, generation: u64, epoch: u64, dirs: &std::collections::BTreeSet<PathBuf>) -> bool {
        if self.generation.load(Ordering::SeqCst) != generation {
            return false;
        }
        {
            let watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
            let Some(w) = watcher.as_ref().filter(|w| w.is_complete()) else { return false };
            if w.epoch() == epoch && dirs.iter().all(|d| w.watches(d)) {
                return true;
            }
        }
        let grew = {
            let mut read = self.read_dirs.lock().unwrap_or_else(|e| e.into_inner());
            let before = read.len();
            if before + dirs.len() <= READ_DIRS_MAX {
                read.extend(dirs.iter().cloned());
            }
            read.len() != before
        };
        if grew {
            self.rewatch.store(true, Ordering::SeqCst);
        }
        false
    }

    /// Watches what remembered answers asked for since the last time: once per request or
    /// diagnostics pass, not once per view (setting the watches looks at every session).
    pub fn rewatch(&self) {
        if self.rewatch.swap(false, Ordering::SeqCst) {
            // A directory that cannot be watched leaves the watcher incomplete, which is what
            // the next announce tells the client.
            let _ = self.update_watches();
        }
    }

    /// Whether a changed path lies in a directory a remembered answer read, and can change it.
    /// The agents walk up from a folder through directories outside the project (`/tmp`, the
    /// home directory), where they look for a few names only: there a change of another name
    /// (a busy `/tmp`, a shell's history) changes nothing, and costs nothing more than this
    /// lookup: the sessions' project roots and folders, and the names that matter outside them,
    /// are worked out only for a path in a directory that was read.
    fn read_by_memo<'a>(
        &self,
        changed: &[PathBuf],
        sessions: impl Iterator<Item = &'a crate::session::Session>,
    ) -> bool {
        let read = self.read_dirs.lock().unwrap_or_else(|e| e.into_inner());
        let mut sessions = Some(sessions);
        let mut known: Option<(Vec<PathBuf>, BTreeSet<String>)> = None;
        changed.iter().any(|p| {
            let Some(dir) = [Some(p.as_path()), p.parent()].into_iter().flatten().find(|d| read.contains(*d)) else {
                return false;
            };
            let dir = if dir == p.as_path() { p.parent().unwrap_or(dir) } else { dir };
            let (roots, names) = known.get_or_insert_with(|| {
                let mut roots = Vec::new();
                let mut names = self.global_names.clone();
                for s in sessions.take().into_iter().flatten() {
                    roots.push(s.folder.clone());
                    roots.push(s.project_root());
                    names.extend(s.settings.all_names().map(str::to_string));
                    names.extend(s.settings.root_markers.iter().cloned());
                }
                (roots, names)
            });
            let outside = roots.iter().any(|r| r.as_path() != dir && r.starts_with(dir));
            !outside || roots.iter().any(|r| r.starts_with(p)) || name_matters_outside(p, names)
        })
    }

    /// Keeps a remembered answer as sent, for [`Server::remembered_answer`].
    fn remember_wire(&self, params: String, generation: u64, value: &Value) {
        let Ok(bytes) = serde_json::to_vec(value) else { return };
        let mut wire = self.wire.lock().unwrap_or_else(|e| e.into_inner());
        if wire.len() >= MEMO_ENTRIES_MAX {
            wire.clear();
        }
        wire.insert(params, (generation, Arc::from(bytes)));
    }

    /// Something changed: memoized answers are stale.
    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Something changed on disk (or in the settings): the checked trees are stale too.
    fn bump_disk(&self) {
        self.disk_generation.fetch_add(1, Ordering::SeqCst);
        self.bump();
    }

    /// What `instructions-lsp check FOLDER` says of a session's folder, for the agents the
    /// session publishes: the findings the server publishes and the statements its hovers make,
    /// so that the editor shows what CI will say. Remembered until the disk or the settings
    /// change.
    pub fn tree(&self, session: &crate::session::Session) -> Arc<crate::session::check::Tree> {
        let selection = crate::session::check::Selection {
            profiles: session.profiles().into_iter().filter(|p| agents::NAMES.contains(&p.as_str())).collect(),
            targets: session.targets().filter(|_| session.settings.targeted).cloned(),
        };
        let key = format!("{:?}|{:?}|{:?}", selection.profiles, selection.targets, session.settings);
        let generation = self.disk_generation.load(Ordering::SeqCst);
        {
            let trees = self.trees.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((g, k, tree)) = trees.get(&session.folder)
                && *g == generation
                && *k == key
            {
                return tree.clone();
            }
        }
        let tree = Arc::new(crate::session::check::check_tree(&session.folder, &session.settings, &selection));
        let mut trees = self.trees.lock().unwrap_or_else(|e| e.into_inner());
        if trees.len() >= MEMO_ENTRIES_MAX {
            trees.clear();
        }
        trees.insert(session.folder.clone(), (generation, key, tree.clone()));
        tree
    }

    /// Whether the watcher sees every directory that matters now, so that answers from memory
    /// stay true until an event says otherwise.
    fn watching_all(&self) -> bool {
        self.watcher.lock().unwrap_or_else(|e| e.into_inner()).as_ref().is_some_and(DirWatcher::is_complete)
    }

    /// Waits (bounded) until every queued ledger is written; blocks, so never on the protocol
    /// thread's runtime without `spawn_blocking`.
    pub fn flush_ledgers(&self) {
        let writer = self.state().ledgers.clone();
        if !writer.flush(LEDGER_FLUSH_LIMIT) {
            tracing::warn!("ledgers still unwritten after {} s; giving up on them", LEDGER_FLUSH_LIMIT.as_secs());
        }
    }

    /// Whether `shutdown` was received (the exit code depends on it).
    pub fn shut_down(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }
}

impl Views for Inner {
    fn cache(&self) -> &FileCache {
        &self.cache
    }

    /// The view of agent `name` in `folder` after the `touched` files, with its findings: from
    /// memory when nothing happened since it was computed and every directory it read is
    /// watched (`watch`: the session lets the server watch). `None` for a name that is not an
    /// agent.
    fn agent_view(
        &self,
        name: &str,
        overrides: &agents::Overrides,
        folder: &Path,
        touched: &[PathBuf],
        watch: bool,
    ) -> Option<Arc<AgentAnswer>> {
        let generation = self.generation.load(Ordering::SeqCst);
        let epoch = if watch { self.watch_epoch() } else { None };
        let key = (folder.to_path_buf(), name.to_string(), format!("{overrides:?}"), touched.to_vec());
        if epoch.is_some() {
            let views = self.views.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((g, m)) = views.get(&key)
                && *g == generation
            {
                return Some(m.clone());
            }
        }
        let profile = agents::profile(name, &self.agent_env, overrides)?;
        let view = agents::load(&profile, folder, touched);
        let findings = agents::view_findings(&view, folder);
        let dirs = epoch.and_then(|_| agents::dirs_read(&profile, &view, touched));
        let memo = Arc::new(AgentAnswer { view, findings, dirs });
        if let (Some(epoch), Some(dirs)) = (epoch, &memo.dirs)
            && self.may_remember(generation, epoch, dirs)
        {
            let mut views = self.views.lock().unwrap_or_else(|e| e.into_inner());
            if views.len() >= MEMO_ENTRIES_MAX {
                views.clear();
            }
            views.insert(key, (generation, memo.clone()));
        }
        Some(memo)
    }
}

pub struct Server {
    client: Client,
    inner: Arc<Inner>,
    /// Folders whose settings to pull, in order, by one task (started at `initialized`).
    pulls: tokio::sync::mpsc::UnboundedSender<Vec<PathBuf>>,
    pull_queue: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Vec<PathBuf>>>>,
}

/// How long `shutdown` or the end of the process waits for ledgers to reach the disk: long
/// enough for thousands of fsyncs, bounded so a hung file system cannot keep the process.
const LEDGER_FLUSH_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// How long a `workspace/configuration` pull may wait for the client; after that the last
/// known settings stay.
const PULL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn path_of(uri: &Uri) -> Option<PathBuf> {
    uri_to_path(uri.as_str())
}

impl Server {
    pub fn new(client: Client, env: Env) -> Self {
        let inner = Inner {
            cache: FileCache::new(),
            refresh: Notify::new(),
            shutdown: AtomicBool::new(false),
            watcher: Mutex::new(None),
            generation: std::sync::atomic::AtomicU64::new(0),
            memo: Mutex::new(std::collections::HashMap::new()),
            views: Mutex::new(std::collections::HashMap::new()),
            profile_memo: Mutex::new(std::collections::HashMap::new()),
            read_dirs: Mutex::new(std::collections::BTreeSet::new()),
            rewatch: AtomicBool::new(false),
            disk_generation: std::sync::atomic::AtomicU64::new(0),
            trees: Mutex::new(std::collections::HashMap::new()),
            walks: tokio::sync::Mutex::new(()),
            global_names: global_names(&AgentEnv::with_home(&env)),
            agent_env: AgentEnv::with_home(&env),
            wire: Mutex::new(std::collections::HashMap::new()),
            state: Mutex::new(State::new(env)),
        };
        let (pulls, queue) = tokio::sync::mpsc::unbounded_channel();
        Self { client, inner: Arc::new(inner), pulls, pull_queue: Mutex::new(Some(queue)) }
    }

    pub fn inner(&self) -> Arc<Inner> {
        self.inner.clone()
    }

    /// Asks for a diagnostics pass; passes coalesce.
    fn refresh(&self) {
        self.inner.refresh.notify_one();
    }

    /// Pulls the `instructions` section for folders and applies it: queued for the pull task
    /// when the client answers `workspace/configuration`, so that a handler never waits for
    /// the client (a client that never answers would hold every handler slot); applied at once
    /// otherwise.
    async fn pull_settings(&self, folders: Vec<PathBuf>) {
        if folders.is_empty() {
            return;
        }
        if self.inner.state().pull_config {
            if self.pulls.send(folders).is_err() {
                tracing::warn!("the settings pull task has stopped; keeping the current settings");
            }
        } else {
            self.apply_settings_of(folders).await;
        }
    }

    /// Runs queued pulls one after another, so settings apply in the order they were asked.
    fn start_pull_task(&self) {
        let Some(mut queue) = self.pull_queue.lock().unwrap_or_else(|e| e.into_inner()).take() else { return };
        let server = Server {
            client: self.client.clone(),
            inner: self.inner.clone(),
            pulls: self.pulls.clone(),
            pull_queue: Mutex::new(None),
        };
        tokio::spawn(async move {
            while let Some(folders) = queue.recv().await {
                server.apply_settings_of(folders).await;
            }
        });
    }

    /// Pulls (when the client answers `workspace/configuration`) and applies the settings of
    /// folders, then starts or reconciles their sessions. A pull that fails or times out keeps
    /// the last known settings.
    async fn apply_settings_of(&self, folders: Vec<PathBuf>) {
        let pull = self.inner.state().pull_config;
        let pulled: Option<Vec<Option<Value>>> = if pull {
            let items = folders
                .iter()
                .map(|f| ConfigurationItem { scope_uri: convert::uri_of(f), section: Some("instructions".into()) })
                .collect();
            match tokio::time::timeout(PULL_TIMEOUT, self.client.configuration(items)).await {
                Ok(Ok(values)) => Some(values.into_iter().map(Some).collect()),
                Ok(Err(e)) => {
                    tracing::warn!("workspace/configuration failed: {e}; keeping the current settings");
                    None
                }
                Err(_) => {
                    tracing::warn!(
                        "workspace/configuration had no answer in {} s; keeping the current settings",
                        PULL_TIMEOUT.as_secs()
                    );
                    None
                }
            }
        } else {
            Some(Vec::new())
        };
        let mut reports = Vec::new();
        let mut events = Vec::new();
        let unwatched;
        {
            let mut st = self.inner.state();
            for (i, folder) in folders.iter().enumerate() {
                let before = st.sessions.get(folder).map(|s| s.settings.clone());
                if let Some(pulled) = &pulled {
                    let value = st.settings_value(pulled.get(i).and_then(Option::as_ref));
                    if let Some(r) = apply_settings(&mut st, folder, &value) {
                        reports.push(r);
                    }
                }
                let changed = st.sessions.get(folder).map(|s| &s.settings) != before.as_ref();
                events.extend(self.settle(&mut st, folder, changed));
            }
            unwatched = st.sessions.values().any(|s| !s.settings.watch);
        }
        self.report(reports).await;
        if unwatched {
            register_watched_files(&self.client, &self.inner).await;
        }
        announce(&self.client, &self.inner, events).await;
    }

    /// After settings are applied: start the session's lifecycle, or reconcile with the new
    /// settings (`config`).
    fn settle(&self, st: &mut State, folder: &Path, changed: bool) -> Vec<(PathBuf, u64)> {
        let started = st.sessions.get(folder).is_some_and(crate::session::Session::is_started);
        if started {
            // Settings that did not change (a pull answering what the session already has) are
            // no event: a `config` batch would hand over what the budget kept out.
            if !changed {
                return Vec::new();
            }
            st.with_session(folder, &self.inner.cache, |s, cache| {
                s.reconcile(cache, Reason::Config);
            })
        } else {
            st.start_session(folder, &self.inner.cache).into_iter().collect()
        }
    }

    /// Applies one settings object to every session (clients that push settings).
    async fn push_settings(&self, value: &Value) {
        let (reports, events) = {
            let mut st = self.inner.state();
            let folders: Vec<PathBuf> = st.sessions.keys().cloned().collect();
            let merged = st.settings_value(Some(value));
            let mut reports = Vec::new();
            let mut events = Vec::new();
            for folder in folders {
                let before = st.sessions.get(&folder).map(|s| s.settings.clone());
                reports.extend(apply_settings(&mut st, &folder, &merged));
                let changed = st.sessions.get(&folder).map(|s| &s.settings) != before.as_ref();
                events.extend(self.settle(&mut st, &folder, changed));
            }
            (reports, events)
        };
        self.report(reports).await;
        announce(&self.client, &self.inner, events).await;
    }

    async fn report(&self, reports: Vec<String>) {
        for message in reports {
            self.client.show_message(MessageType::WARNING, message).await;
        }
    }

    /// The session folder a request means, and the path inside it, or a -32602 error.
    fn resolve(&self, uri: Option<&str>) -> Result<(PathBuf, Option<PathBuf>)> {
        let mut st = self.inner.state();
        let folders = || {
            let list: Vec<String> = st.sessions.keys().map(|f| paths::path_to_uri(f)).collect();
            if list.is_empty() { "none".to_string() } else { list.join(", ") }
        };
        match uri {
            Some(uri) => {
                let Some(path) = uri_to_path(uri) else {
                    return Err(Error::invalid_params(format!("`uri` must be a file:// URI, got `{uri}`")));
                };
                if let Some(folder) = st.folder_of(&path) {
                    return Ok((folder, Some(path)));
                }
                if st.implicit {
                    let folder = implicit_folder(&st, &path);
                    let problems = st.add_implicit_session(&folder);
                    log_problems(&folder, &problems);
                    return Ok((folder, Some(path)));
                }
                Err(Error::invalid_params(format!(
                    "`{uri}` is not inside any workspace folder; pass a folder or a file inside one of: {}",
                    folders()
                )))
            }
            None => match st.sessions.len() {
                1 => Ok((st.sessions.keys().next().cloned().unwrap_or_default(), None)),
                0 => Err(Error::invalid_params("no workspace folder is open; pass `uri` naming a folder or a file")),
                _ => Err(Error::invalid_params(format!(
                    "several workspace folders are open; pass `uri` naming one of them or a file inside: {}",
                    folders()
                ))),
            },
        }
    }

    /// Records a touch in the innermost session containing `path`; returns new batches.
    #[must_use]
    fn touch(&self, path: &Path) -> Vec<(PathBuf, u64)> {
        let mut st = self.inner.state();
        if st.folder_of(path).is_none() && st.implicit {
            let folder = implicit_folder(&st, path);
            let problems = st.add_implicit_session(&folder);
            log_problems(&folder, &problems);
        }
        let Some(folder) = st.folder_of(path) else { return Vec::new() };
        st.with_session(&folder, &self.inner.cache, |session, cache| {
            let added = session.touch(cache, path);
            let files: Vec<&str> = added.iter().flat_map(|r| r.files.iter().map(|f| f.heading.as_str())).collect();
            tracing::debug!("touch {} in {}: new nested files {files:?}", path.display(), folder.display());
        })
    }

    /// `instructions/transitions`.
    pub async fn transitions(&self, params: Value) -> Result<Value> {
        let p: TransitionsParams = ext::parse(ext::TRANSITIONS, TransitionsParams::SHAPE, params)?;
        let (folder, _) = self.resolve(p.uri.as_deref())?;
        let events = self.inner.state().start_session(&folder, &self.inner.cache).into_iter().collect();
        announce(&self.client, &self.inner, events).await;
        let st = self.inner.state();
        let Some(session) = st.sessions.get(&folder) else {
            return Err(Error::invalid_params("the workspace folder was removed"));
        };
        serde_json::to_value(session.transitions(&self.inner.cache, p.since))
            .map_err(|e| Error::invalid_params(e.to_string()))
    }

    /// The serialized answer to `instructions/effective` with `params`, when it is remembered
    /// and still true (nothing happened since, every directory it read is watched): the
    /// transport's fast path for warm requests.
    pub fn remembered_answer(&self, params: &Value) -> Option<Arc<[u8]>> {
        // After `shutdown` every request gets the router's error.
        if self.inner.shut_down() {
            return None;
        }
        self.inner.watch_epoch()?;
        let generation = self.inner.generation.load(Ordering::SeqCst);
        let wire = self.inner.wire.lock().unwrap_or_else(|e| e.into_inner());
        let (g, bytes) = wire.get(&params.to_string())?;
        (*g == generation).then(|| bytes.clone())
    }

    /// `instructions/effective`.
    pub async fn effective(&self, params: Value) -> Result<Value> {
        let wire_key = params.to_string();
        let p: EffectiveParams = ext::parse(ext::EFFECTIVE, EffectiveParams::SHAPE, params)?;
        let (folder, path) = self.resolve(p.uri.as_deref())?;
        tracing::debug!("effective for {} (unsaved: {})", folder.display(), p.unsaved);
        if let Some(name) = p.profile {
            // The agents of the folder are those of its whole repository.
            finish_walks(&self.client, &self.inner).await;
            return self.profile_answer(folder, path, name, wire_key).await;
        }
        let generation = self.inner.generation.load(Ordering::SeqCst);
        let key = (folder.clone(), path.clone());
        // Only the folder's own answer: a preview reads directories that are not watched yet.
        let memo = !p.unsaved && path.as_ref().is_none_or(|p| p == &folder) && self.inner.watching_all();
        if memo
            && let Some((g, v)) = self.inner.memo.lock().unwrap_or_else(|e| e.into_inner()).get(&key)
            && *g == generation
        {
            return Ok(v.clone());
        }
        let (session, buffers) = {
            let st = self.inner.state();
            let Some(session) = st.sessions.get(&folder) else {
                return Err(Error::invalid_params("the workspace folder was removed"));
            };
            (session.clone(), p.unsaved.then(|| st.buffers()))
        };
        let keep = memo && session.settings.watch && session.is_started();
        let inner = self.inner.clone();
        let value = off_thread(move || {
            // A directory below the folder previews what a touch of a file inside it adds.
            let preview = path.filter(|p| p != &session.folder).map(|p| if p.is_dir() { p.join(".touch") } else { p });
            let result = session.effective(&inner.cache, buffers.as_ref(), preview.as_deref());
            serde_json::to_value(result).map_err(|e| Error::invalid_params(e.to_string()))
        })
        .await?;
        if keep {
            let mut m = self.inner.memo.lock().unwrap_or_else(|e| e.into_inner());
            if m.len() > 256 {
                m.clear();
            }
            m.insert(key, (generation, value.clone()));
            drop(m);
            self.inner.remember_wire(wire_key, generation, &value);
        }
        Ok(value)
    }

    /// `instructions/effective` with `profile`: from memory while nothing happened since and
    /// every directory it read is watched, as the engine's own answer.
    async fn profile_answer(
        &self,
        folder: PathBuf,
        path: Option<PathBuf>,
        name: String,
        wire_key: String,
    ) -> Result<Value> {
        let generation = self.inner.generation.load(Ordering::SeqCst);
        let key = (folder.clone(), name.clone(), path.clone());
        let watch = self.inner.state().sessions.get(&folder).is_some_and(|s| s.settings.watch && s.is_started());
        let epoch = if watch { self.inner.watch_epoch() } else { None };
        if epoch.is_some() {
            let memo = self.inner.profile_memo.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((g, v)) = memo.get(&key)
                && *g == generation
            {
                return Ok(v.clone());
            }
        }
        let (session, env) = {
            let st = self.inner.state();
            let Some(session) = st.sessions.get(&folder) else {
                return Err(Error::invalid_params("the workspace folder was removed"));
            };
            (session.clone(), st.env.clone())
        };
        let inner = self.inner.clone();
        let (value, dirs) = off_thread(move || {
            let preview = path.filter(|p| p != &session.folder).map(|p| if p.is_dir() { p.join(".touch") } else { p });
            let answer = crate::session::profiles::answer(&session, inner.as_ref(), &name, &env, preview.as_deref());
            inner.rewatch();
            answer.map_err(Error::invalid_params)
        })
        .await?;
        if let (Some(epoch), Some(dirs)) = (epoch, dirs)
            && self.inner.may_remember(generation, epoch, &dirs)
        {
            let mut memo = self.inner.profile_memo.lock().unwrap_or_else(|e| e.into_inner());
            if memo.len() >= MEMO_ENTRIES_MAX {
                memo.clear();
            }
            memo.insert(key, (generation, value.clone()));
            drop(memo);
            self.inner.remember_wire(wire_key, generation, &value);
        }
        Ok(value)
    }

    /// `instructions/touch`.
    pub async fn touch_notification(&self, params: Value) {
        match ext::parse::<TouchParams>(ext::TOUCH, TouchParams::SHAPE, params) {
            Ok(p) => match uri_to_path(&p.uri) {
                Some(path) => {
                    let events = self.touch(&path);
                    announce(&self.client, &self.inner, events).await;
                }
                None => tracing::warn!("{}: `uri` must be a file:// URI, got `{}`", ext::TOUCH, p.uri),
            },
            Err(e) => tracing::warn!("{}", e.message),
        }
    }

    /// What the hover and the code lens say of `path`: the session's own profile's view when it
    /// is selected, then each selected agent's.
    fn describe(&self, path: &Path) -> Vec<hover::Description> {
        let (sessions, buffers) = {
            let st = self.inner.state();
            (st.sessions.values().cloned().collect::<Vec<_>>(), st.buffers())
        };
        describe(&self.inner, path, sessions, &buffers)
    }
}

/// What the hover and the code lens say of `path`, over copies of the sessions (so it can run
/// off the protocol thread): each session's own profile's view when it is selected, then each
/// selected agent's.
fn describe(
    inner: &Inner,
    path: &Path,
    sessions: Vec<crate::session::Session>,
    buffers: &crate::chain::source::Buffers,
) -> Vec<hover::Description> {
    let snapshots: Vec<_> = sessions
        .into_iter()
        .map(|s| {
            let snapshot = s.snapshot(&inner.cache, Some(buffers));
            (s, snapshot)
        })
        .collect();
    let mut out = hover::describe(path, &snapshots);
    out.extend(hover::agents(path, &snapshots, |s| inner.tree(s)));
    out
}

/// Asks the client to report changes of instruction files and root markers, for sessions that
/// do not watch themselves (`watch: false`), or when the server's own watching fell short; once,
/// when the client can register dynamically (a failed registration is tried again next time).
async fn register_watched_files(client: &Client, inner: &Inner) {
    let names: Vec<String> = {
        let st = inner.state();
        if !st.dynamic_watch || st.registered_watch {
            return;
        }
        let mut names: Vec<String> = st
            .sessions
            .values()
            .flat_map(|s| {
                s.settings
                    .all_names()
                    .chain(s.settings.root_markers.iter().map(String::as_str))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let options = DidChangeWatchedFilesRegistrationOptions {
        watchers: vec![FileSystemWatcher {
            glob_pattern: GlobPattern::String(format!("**/{{{}}}", names.join(","))),
            kind: None,
        }],
    };
    let registration = Registration {
        id: "instructions-watched-files".into(),
        method: "workspace/didChangeWatchedFiles".into(),
        register_options: serde_json::to_value(options).ok(),
    };
    match client.register_capability(vec![registration]).await {
        Ok(()) => inner.state().registered_watch = true,
        Err(e) => tracing::warn!("cannot register workspace/didChangeWatchedFiles: {e}"),
    }
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

/// Walks whole, off the protocol thread, the repositories whose sessions started from the names
/// near their root; sessions whose agents change with it are announced (`instructions/didChange`,
/// so that editors ask again) and their diagnostics republished.
async fn finish_walks(client: &Client, inner: &Inner) {
    let _walking = inner.walks.lock().await;
    let roots = inner.state().partly_walked();
    if roots.is_empty() {
        return;
    }
    let walked = tokio::task::spawn_blocking(move || {
        roots.into_iter().map(|r| (crate::chain::targets::names_below(&r), r)).collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    let mut changed = Vec::new();
    {
        let mut st = inner.state();
        for (names, root) in walked {
            let names = st.set_names_below(&root, names);
            for (folder, s) in st.sessions.iter_mut() {
                if s.project_root() != root {
                    continue;
                }
                let before = s.targets().map(|t| t.agents.clone());
                s.refresh_targets_logged(&names);
                if s.targets().map(|t| t.agents.clone()) != before {
                    changed.push((folder.clone(), s.seq));
                }
            }
        }
    }
    if !changed.is_empty() {
        tracing::debug!("the whole walk changed the agents of {} folders", changed.len());
    }
    announce(client, inner, changed).await;
}

/// Announces new batches (`instructions/didChange`), follows the watched directories, and
/// republishes diagnostics.
async fn announce(client: &Client, inner: &Inner, events: Vec<(PathBuf, u64)>) {
    inner.bump();
    for (folder, seq) in events {
        let params = DidChangeParams { folder: paths::path_to_uri(&folder), seq };
        client.send_notification::<ext::DidChange>(params).await;
    }
    if inner.update_watches() {
        register_watched_files(client, inner).await;
    }
    inner.refresh.notify_one();
}

/// Paths changed on disk (watcher or `didChangeWatchedFiles`): every session they can affect
/// reconciles with the disk. Changes no session cares about (a shell's history in a watched
/// home directory, say) cost nothing more.
async fn handle_paths(client: &Client, inner: &Inner, changed: Vec<PathBuf>) {
    let events = {
        let mut st = inner.state();
        let folders: Vec<PathBuf> = st
            .sessions
            .iter()
            .filter(|(_, s)| changed.iter().any(|p| s.is_relevant(p)))
            .map(|(f, _)| f.clone())
            .collect();
        if folders.is_empty() {
            // No session's chain, but maybe a remembered agent view's (a rules file, an import).
            if inner.read_by_memo(&changed, st.sessions.values()) {
                inner.bump_disk();
                for p in &changed {
                    inner.cache.invalidate(p);
                }
                inner.refresh.notify_one();
            }
            return;
        }
        inner.bump_disk();
        for p in &changed {
            inner.cache.invalidate(p);
        }
        // Repositories whose targets may have changed are walked again, once each.
        let mut walked: std::collections::HashMap<PathBuf, _> = std::collections::HashMap::new();
        let mut retarget = Vec::new();
        for folder in &folders {
            let Some(s) = st.sessions.get(folder) else { continue };
            if changed.iter().any(|p| s.changes_targets(p)) {
                let root = s.project_root();
                if !walked.contains_key(&root) {
                    st.forget_names_below(&root);
                    let names = st.names_below(&root);
                    walked.insert(root.clone(), names);
                }
                retarget.push((folder.clone(), root));
            }
        }
        for (folder, root) in retarget {
            let (Some(s), Some(names)) = (st.sessions.get_mut(&folder), walked.get(&root)) else { continue };
            s.refresh_targets_logged(names);
        }
        let mut events = Vec::new();
        for folder in folders {
            events.extend(st.with_session(&folder, &inner.cache, |s, cache| {
                s.reconcile(cache, Reason::Change);
            }));
        }
        events
    };
    tracing::debug!("{} changed paths, {} new batches", changed.len(), events.len());
    announce(client, inner, events).await;
}

/// Whether an agent walking up through the directory of `p` may look at `p`: an instruction
/// file or folder name, a Markdown file (a configured fallback name, an import), or one of
/// `names`.
fn name_matters_outside(p: &Path, names: &BTreeSet<String>) -> bool {
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else { return true };
    let lower = name.to_ascii_lowercase();
    names.contains(name)
        || agents::FILE_NAMES.contains(&name)
        || crate::chain::targets::CONFIG_NAMES.contains(&name)
        || lower.ends_with(".md")
        || lower.ends_with(".mdc")
}

/// The names agents look for outside a project: their candidates and layers, every part of their
/// global paths, and the usual root markers.
fn global_names(env: &AgentEnv) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = [".git", ".hg", ".jj", ".sl", ".svn"].iter().map(|s| s.to_string()).collect();
    let part = |p: &Path| -> Vec<String> {
        p.components().filter_map(|c| c.as_os_str().to_str().map(str::to_string)).collect()
    };
    for name in agents::NAMES {
        let Some(profile) = agents::profile(name, env, &agents::Overrides::default()) else { continue };
        for c in &profile.candidates {
            names.extend(part(Path::new(c)));
        }
        for layer in profile.layers.iter().chain(&profile.lazy_layers) {
            names.extend(part(Path::new(layer.path)));
        }
        for g in profile.global.iter().flatten() {
            names.extend(part(g));
        }
    }
    names
}

/// Feeds debounced watcher events to the sessions.
async fn watch_loop(client: Client, inner: Arc<Inner>, mut rx: tokio::sync::mpsc::UnboundedReceiver<WatchEvent>) {
    while let Some(first) = rx.recv().await {
        // Coalesce whatever else is already queued.
        let mut events = vec![first];
        while let Ok(more) = rx.try_recv() {
            events.push(more);
        }
        if inner.shut_down() {
            return;
        }
        let changed = if events.contains(&WatchEvent::Rescan) {
            // Events were lost: every directory that matters is looked at again.
            inner.watched_dirs().into_iter().collect()
        } else {
            events
                .into_iter()
                .flat_map(|e| match e {
                    WatchEvent::Changed(paths) => paths,
                    WatchEvent::Rescan => Vec::new(),
                })
                .collect()
        };
        handle_paths(&client, &inner, changed).await;
    }
}

/// The project root of a document when the client opened no folder: from the nearest directory
/// that exists, so a made-up path makes no session of its own.
fn implicit_folder(st: &State, path: &Path) -> PathBuf {
    let dir = if path.is_dir() { path } else { path.parent().unwrap_or(path) };
    let dir = dir.ancestors().find(|d| d.is_dir()).unwrap_or(dir);
    project_root(dir, &st.defaults.root_markers)
}

fn log_problems(folder: &Path, problems: &[SettingsProblem]) {
    for p in problems {
        tracing::warn!("{}: {p}", folder.display());
    }
}

/// Applies settings to a session; returns a message when there are new problems to show.
fn apply_settings(st: &mut State, folder: &Path, value: &Value) -> Option<String> {
    let env = st.env.clone();
    let session = st.sessions.get_mut(folder)?;
    let (settings, problems) = Settings::parse(value, Some(&session.settings), &env);
    tracing::debug!(
        "settings of {}: profile {}, budget {} bytes",
        folder.display(),
        settings.profile.name(),
        settings.budget_bytes
    );
    let ignored = settings.ignored_candidates.clone();
    // The targets depend on the project root only: walk the repository again only when the
    // root markers change (a walk of a large repository is not free).
    let same_root = session.settings.root_markers == settings.root_markers && session.targets().is_some();
    session.settings = settings;
    let config_problem = if same_root {
        None
    } else {
        let root = session.project_root();
        let names = st.names_below(&root);
        st.sessions.get_mut(folder).and_then(|s| s.refresh_targets_with(&names))
    };
    if !ignored.is_empty() && st.logged_ignored.insert(ignored.clone()) {
        tracing::warn!(
            "ignored candidate entries {ignored:?}: a candidate is a file name without `/` or `\\`, not empty, `.` or `..`"
        );
    }
    let mut problems = problems;
    if let Some(e) = config_problem {
        problems.push(SettingsProblem {
            key: crate::chain::targets::CONFIG_NAMES[0].into(),
            message: format!("{e}; {}", crate::chain::targets::DETECTED_INSTEAD),
            unknown_key: false,
        });
    }
    let shown = st.shown_problems.entry(folder.to_path_buf()).or_default();
    if *shown == problems {
        return None;
    }
    *shown = problems.clone();
    let relevant: Vec<String> = problems.iter().filter(|p| !p.unknown_key).map(ToString::to_string).collect();
    for p in problems.iter().filter(|p| p.unknown_key) {
        tracing::warn!("{}: {p}", folder.display());
    }
    if relevant.is_empty() {
        return None;
    }
    Some(format!("instructions-lsp ({}): {}; the previous values are kept", folder.display(), relevant.join("; ")))
}

/// Runs diagnostics passes when asked, publishing only what changed.
pub async fn refresh_loop(client: Client, inner: Arc<Inner>) {
    loop {
        inner.refresh.notified().await;
        if inner.shut_down() {
            return;
        }
        // The agents' findings follow the agents of the whole repository.
        finish_walks(&client, &inner).await;
        let input = inner.state().diagnostics_input();
        let worker = inner.clone();
        let computed = match tokio::task::spawn_blocking(move || {
            let diagnostics = state::diagnostics(&input, &worker);
            worker.rewatch();
            diagnostics
        })
        .await
        {
            Ok(d) => d,
            Err(e) => {
                tracing::error!("diagnostics pass failed: {e}");
                continue;
            }
        };
        let changes: Vec<(PathBuf, Vec<Diagnostic>)> = {
            let mut st = inner.state();
            let mut changes = Vec::new();
            for (path, diags) in &computed {
                if st.published.get(path) != Some(diags) {
                    changes.push((path.clone(), diags.clone()));
                }
            }
            for path in st.published.keys() {
                if !computed.contains_key(path) {
                    changes.push((path.clone(), Vec::new()));
                }
            }
            st.published = computed;
            changes
        };
        for (path, diags) in changes {
            if let Some(uri) = convert::uri_of(&path) {
                client.publish_diagnostics(uri, diags, None).await;
            }
        }
    }
}

impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let utf8 = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref())
            .is_some_and(|e| e.contains(&PositionEncodingKind::UTF8));
        let pull = params.capabilities.workspace.as_ref().and_then(|w| w.configuration).unwrap_or(false);
        let dynamic_watch = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        let mut folders: Vec<PathBuf> =
            params.workspace_folders.iter().flatten().filter_map(|f| path_of(&f.uri)).collect();
        #[allow(deprecated)]
        if folders.is_empty() {
            folders.extend(params.root_uri.as_ref().and_then(path_of));
        }
        {
            let mut st = self.inner.state();
            st.encoding = if utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
            st.pull_config = pull;
            st.dynamic_watch = dynamic_watch;
            st.set_init_options(params.initialization_options.unwrap_or(Value::Null));
            st.implicit = folders.is_empty();
            for folder in &folders {
                let problems = st.add_session(folder);
                log_problems(folder, &problems);
            }
        }
        let encoding = if utf8 { PositionEncodingKind::UTF8 } else { PositionEncodingKind::UTF16 };
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "instructions-lsp".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: ServerCapabilities {
                position_encoding: Some(encoding),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
                    ..TextDocumentSyncOptions::default()
                })),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_lens_provider: Some(CodeLensOptions { resolve_provider: Some(false) }),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::REFACTOR]),
                    ..CodeActionOptions::default()
                })),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![ext::CMD_OPEN.into()],
                    ..ExecuteCommandOptions::default()
                }),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: None,
                }),
                experimental: Some(serde_json::json!({
                    "instructions": { "effective": true, "transitions": true, "touch": true, "didChange": true }
                })),
                ..ServerCapabilities::default()
            },
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        tokio::spawn(refresh_loop(self.client.clone(), self.inner.clone()));
        let (client, inner) = (self.client.clone(), self.inner.clone());
        tokio::spawn(async move { finish_walks(&client, &inner).await });
        // Starting inotify and its thread takes about a millisecond: off the protocol thread,
        // so the first requests do not wait for it.
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let (client, inner) = (self.client.clone(), self.inner.clone());
        tokio::spawn(async move {
            let created = tokio::task::spawn_blocking(move || DirWatcher::new(tx)).await;
            match created {
                Ok(Ok(w)) => {
                    *inner.watcher.lock().unwrap_or_else(|e| e.into_inner()) = Some(w);
                    if inner.update_watches() {
                        register_watched_files(&client, &inner).await;
                    }
                    // What changed before the watches were in place is caught up now.
                    let folders: Vec<PathBuf> = inner
                        .state()
                        .sessions
                        .iter()
                        .filter(|(_, s)| s.settings.watch)
                        .map(|(f, _)| f.clone())
                        .collect();
                    handle_paths(&client, &inner, folders).await;
                    tokio::spawn(watch_loop(client, inner, rx));
                }
                Ok(Err(e)) => tracing::warn!("{e}; changes on disk are seen through didChangeWatchedFiles only"),
                Err(e) => tracing::warn!("file watching did not start: {e}"),
            }
        });
        let (folders, init_problems) = {
            let mut st = self.inner.state();
            let folders: Vec<PathBuf> = st.sessions.keys().cloned().collect();
            let value = st.settings_value(None);
            let mut reports = Vec::new();
            if !st.pull_config {
                for f in &folders {
                    reports.extend(apply_settings(&mut st, f, &value));
                }
            }
            (folders, reports)
        };
        self.report(init_problems).await;
        self.start_pull_task();
        self.pull_settings(folders).await;
        self.refresh();
    }

    async fn shutdown(&self) -> Result<()> {
        self.inner.shutdown.store(true, Ordering::SeqCst);
        self.inner.refresh.notify_one();
        // What the sessions did must be on disk before the client restarts us.
        let inner = self.inner.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || inner.flush_ledgers()).await {
            tracing::warn!("writing the ledgers at shutdown failed: {e}");
        }
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let Some(path) = path_of(&doc.uri) else { return };
        {
            let mut st = self.inner.state();
            // Only instruction files need their text: any other document (a 100 MB log, say) is
            // a touch and nothing more.
            let keep = st.is_candidate(&path) && doc.text.len() <= state::DOCUMENT_TEXT_CAP;
            let text = keep.then(|| Arc::from(doc.text));
            st.documents.insert(path.clone(), state::Document { uri: doc.uri.clone(), text, version: doc.version });
        }
        let before: Vec<PathBuf> = self.inner.state().sessions.keys().cloned().collect();
        let events = self.touch(&path);
        let added: Vec<PathBuf> = self.inner.state().sessions.keys().filter(|k| !before.contains(k)).cloned().collect();
        announce(&self.client, &self.inner, events).await;
        self.pull_settings(added).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let Some(path) = path_of(&params.text_document.uri) else { return };
        let candidate = {
            let mut st = self.inner.state();
            let enc = st.encoding;
            let Some(doc) = st.documents.get_mut(&path) else {
                tracing::warn!("didChange for a document that is not open: {}", path.display());
                return;
            };
            doc.version = params.text_document.version;
            let Some(current) = doc.text.take() else { return };
            let mut text = current.to_string();
            for change in &params.content_changes {
                convert::apply_change(&mut text, change, enc);
            }
            // Past the cap the disk stands in for the buffer again (no file that large loads).
            doc.text = (text.len() <= state::DOCUMENT_TEXT_CAP).then(|| Arc::from(text));
            st.is_candidate(&path)
        };
        if candidate {
            self.refresh();
        }
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        if let Some(path) = path_of(&params.text_document.uri) {
            let events = self.touch(&path);
            announce(&self.client, &self.inner, events).await;
            // The saved bytes may be an instruction file the agents hold.
            handle_paths(&self.client, &self.inner, vec![path]).await;
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        if let Some(path) = path_of(&params.text_document.uri) {
            self.inner.state().documents.remove(&path);
            self.refresh();
        }
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        let added: Vec<PathBuf> = {
            let mut st = self.inner.state();
            for f in &params.event.removed {
                if let Some(p) = path_of(&f.uri) {
                    st.sessions.remove(&p);
                    st.shown_problems.remove(&p);
                }
            }
            let mut added = Vec::new();
            for f in &params.event.added {
                if let Some(p) = path_of(&f.uri) {
                    let problems = st.add_session(&p);
                    log_problems(&p, &problems);
                    added.push(p);
                }
            }
            st.implicit = st.sessions.is_empty() && st.implicit;
            added
        };
        self.pull_settings(added).await;
        announce(&self.client, &self.inner, Vec::new()).await;
        finish_walks(&self.client, &self.inner).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let (pull, folders) = {
            let st = self.inner.state();
            (st.pull_config, st.sessions.keys().cloned().collect::<Vec<_>>())
        };
        if pull {
            self.pull_settings(folders).await;
        } else {
            let value = match params.settings {
                Value::Object(mut m) if m.contains_key("instructions") => m.remove("instructions").unwrap_or_default(),
                other => other,
            };
            self.push_settings(&value).await;
        }
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let changed: Vec<PathBuf> = params.changes.iter().filter_map(|c| path_of(&c.uri)).collect();
        handle_paths(&self.client, &self.inner, changed).await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let pos = params.text_document_position_params.position;
        let Some(path) = path_of(&params.text_document_position_params.text_document.uri) else { return Ok(None) };
        let in_diagnostic = {
            let st = self.inner.state();
            if !st.is_instruction_file(&path) {
                return Ok(None);
            }
            st.published.get(&path).is_some_and(|d| d.iter().any(|d| contains(d.range, pos)))
        };
        if pos.line != 0 && !in_diagnostic {
            return Ok(None);
        }
        finish_walks(&self.client, &self.inner).await;
        let (sessions, buffers) = {
            let st = self.inner.state();
            (st.sessions.values().cloned().collect::<Vec<_>>(), st.buffers())
        };
        let inner = self.inner.clone();
        off_thread(move || {
            let descriptions = describe(&inner, &path, sessions, &buffers);
            if descriptions.is_empty() {
                return Ok(None);
            }
            let markdown = descriptions.iter().map(|d| d.markdown.clone()).collect::<Vec<_>>().join("\n\n---\n\n");
            Ok(Some(Hover {
                contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: markdown }),
                range: None,
            }))
        })
        .await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        let Some(path) = path_of(&params.text_document.uri) else { return Ok(None) };
        if !self.inner.state().is_instruction_file(&path) {
            return Ok(None);
        }
        finish_walks(&self.client, &self.inner).await;
        let lenses = self
            .describe(&path)
            .into_iter()
            .map(|d| CodeLens {
                range: Range::new(Position::new(0, 0), Position::new(0, 0)),
                command: Some(Command { title: d.line, command: String::new(), arguments: None }),
                data: None,
            })
            .collect();
        Ok(Some(lenses))
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let Some(path) = path_of(&params.text_document.uri) else { return Ok(None) };
        let mut actions = Vec::new();
        for d in &params.context.diagnostics {
            let is_shadowed = matches!(&d.code, Some(NumberOrString::String(c)) if c == "shadowed");
            if !is_shadowed {
                continue;
            }
            for r in d.related_information.iter().flatten() {
                let name = path_of(&r.location.uri)
                    .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .unwrap_or_default();
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Open {name}, the file agents load instead"),
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![d.clone()]),
                    command: Some(Command {
                        title: format!("Open {name}"),
                        command: ext::CMD_OPEN.into(),
                        arguments: Some(vec![Value::String(r.location.uri.to_string())]),
                    }),
                    ..CodeAction::default()
                }));
            }
        }
        if let Some(action) = self.rename_action(&path) {
            actions.push(action);
        }
        Ok(Some(actions))
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        if params.command != ext::CMD_OPEN {
            return Err(Error::invalid_params(format!(
                "unknown command `{}`; this server runs `{}`",
                params.command,
                ext::CMD_OPEN
            )));
        }
        let Some(arg) = params.arguments.first().and_then(Value::as_str) else {
            return Err(Error::invalid_params(format!("`{}` takes one argument: the file URI to open", ext::CMD_OPEN)));
        };
        // The argument comes from the client, which may relay it from anywhere: never ask the
        // editor to open a web page or run a `command:` URI on our behalf.
        let uri = match uri_to_path(arg) {
            Some(path) if self.may_open(&path) => arg.parse::<Uri>().ok(),
            _ => None,
        };
        let Some(uri) = uri else {
            return Err(Error::invalid_params(format!(
                "`{}` opens only a file: URI inside a workspace folder or a file a session loads, got `{arg}`",
                ext::CMD_OPEN
            )));
        };
        let shown = self
            .client
            .show_document(ShowDocumentParams { uri, external: None, take_focus: Some(true), selection: None })
            .await;
        if let Err(e) = shown {
            tracing::warn!("window/showDocument failed: {e}");
        }
        Ok(None)
    }
}

impl Server {
    /// Whether `instructions.open` may show `path`: inside a workspace folder, or a file some
    /// session has given its agent (a project file above the folder, the global file).
    fn may_open(&self, path: &Path) -> bool {
        let st = self.inner.state();
        st.folder_of(path).is_some() || st.sessions.values().any(|s| s.ledger().visible.iter().any(|v| v.path == path))
    }

    /// "Rename CLAUDE.md to AGENTS.md": offered when a later candidate is its directory's
    /// winner and the first candidate does not exist.
    fn rename_action(&self, path: &Path) -> Option<CodeActionOrCommand> {
        let st = self.inner.state();
        let settings = st.session_of(path).map(|s| s.settings.clone())?;
        let name = path.file_name()?.to_str()?;
        let first = settings.candidates.first()?;
        if name == first || !settings.candidates.iter().any(|c| c == name) {
            return None;
        }
        let dir = path.parent()?;
        let earlier_exists = settings
            .candidates
            .iter()
            .take_while(|c| c.as_str() != name)
            .any(|c| std::fs::symlink_metadata(dir.join(c)).is_ok() || st.documents.contains_key(&dir.join(c)));
        if earlier_exists {
            return None;
        }
        let old_uri = convert::uri_of(path)?;
        let new_uri = convert::uri_of(&dir.join(first))?;
        let edit = WorkspaceEdit {
            document_changes: Some(DocumentChanges::Operations(vec![DocumentChangeOperation::Op(ResourceOp::Rename(
                RenameFile { old_uri, new_uri, options: None, annotation_id: None },
            ))])),
            ..WorkspaceEdit::default()
        };
        Some(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Rename {name} to {first}, the name every agent reads first"),
            kind: Some(CodeActionKind::REFACTOR),
            edit: Some(edit),
            ..CodeAction::default()
        }))
    }
}

fn contains(range: Range, pos: Position) -> bool {
    let after_start = (pos.line, pos.character) >= (range.start.line, range.start.character);
    let before_end = (pos.line, pos.character) <= (range.end.line, range.end.character);
    after_start && before_end
}
