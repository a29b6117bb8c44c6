//! The language server: lifecycle, documents, folders, settings, features and custom methods.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::convert::{self, Encoding};
use super::ext::{self, EffectiveParams, TouchParams, TransitionsParams};
use super::hover;
use super::shared::Shared;
use super::state::{self, Workspace};
use crate::chain::discover::project_root;
use crate::chain::settings::{Env, Settings, SettingsProblem};
use crate::paths::{self, uri_to_path};
use crate::session::ledger::Reason;
use crate::watch::DirWatcher;

pub struct Server {
    client: Client,
    inner: Arc<Shared>,
    /// Folders whose settings to pull, in order, by one task (started at `initialized`).
    pulls: tokio::sync::mpsc::UnboundedSender<Vec<PathBuf>>,
    pull_queue: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Vec<PathBuf>>>>,
}

/// How long a `workspace/configuration` pull may wait for the client; after that the last
/// known settings stay.
const PULL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn path_of(uri: &Uri) -> Option<PathBuf> {
    uri_to_path(uri.as_str())
}

impl Server {
    pub fn new(client: Client, env: Env) -> Self {
        let inner = Shared::new(client.clone(), env);
        let (pulls, queue) = tokio::sync::mpsc::unbounded_channel();
        Self { client, inner: Arc::new(inner), pulls, pull_queue: Mutex::new(Some(queue)) }
    }

    pub fn inner(&self) -> Arc<Shared> {
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
                events.extend(self.start_or_reconcile(&mut st, folder, changed));
            }
            unwatched = st.sessions.values().any(|s| !s.settings.watch);
        }
        self.report(reports).await;
        if unwatched {
            self.inner.register_watched_files().await;
        }
        self.inner.announce(events).await;
    }

    /// After settings are applied: start the session's lifecycle, or reconcile with the new
    /// settings (`config`).
    fn start_or_reconcile(&self, st: &mut Workspace, folder: &Path, changed: bool) -> Vec<(PathBuf, u64)> {
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
                events.extend(self.start_or_reconcile(&mut st, &folder, changed));
            }
            (reports, events)
        };
        self.report(reports).await;
        self.inner.announce(events).await;
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
        self.inner.announce(events).await;
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
        self.inner.sent.get(&params.to_string(), generation)
    }

    /// `instructions/effective`.
    pub async fn effective(&self, params: Value) -> Result<Value> {
        let wire_key = params.to_string();
        let p: EffectiveParams = ext::parse(ext::EFFECTIVE, EffectiveParams::SHAPE, params)?;
        let (folder, path) = self.resolve(p.uri.as_deref())?;
        tracing::debug!("effective for {} (unsaved: {})", folder.display(), p.unsaved);
        if let Some(name) = p.profile {
            // The agents of the folder are those of its whole repository.
            self.inner.finish_walks().await;
            return self.profile_answer(folder, path, name, wire_key).await;
        }
        let generation = self.inner.generation.load(Ordering::SeqCst);
        let key = (folder.clone(), path.clone());
        // Only the folder's own answer: a preview reads directories that are not watched yet.
        let memo = !p.unsaved && path.as_ref().is_none_or(|p| p == &folder) && self.inner.watching_all();
        if memo && let Some(v) = self.inner.memo.get(&key, generation) {
            return Ok(v);
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
            self.inner.memo.put(key, generation, value.clone());
            self.inner.remember_sent(wire_key, generation, &value);
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
        if epoch.is_some()
            && let Some(v) = self.inner.profile_memo.get(&key, generation)
        {
            return Ok(v);
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
            self.inner.profile_memo.put(key, generation, value.clone());
            self.inner.remember_sent(wire_key, generation, &value);
        }
        Ok(value)
    }

    /// `instructions/touch`.
    pub async fn touch_notification(&self, params: Value) {
        match ext::parse::<TouchParams>(ext::TOUCH, TouchParams::SHAPE, params) {
            Ok(p) => match uri_to_path(&p.uri) {
                Some(path) => {
                    let events = self.touch(&path);
                    self.inner.announce(events).await;
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
        describe_sessions(&self.inner, path, sessions, &buffers)
    }
}

/// What the hover and the code lens say of `path`, over copies of the sessions (so it can run
/// off the protocol thread): each session's own profile's view when it is selected, then each
/// selected agent's.
fn describe_sessions(
    inner: &Shared,
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

fn log_problems(folder: &Path, problems: &[SettingsProblem]) {
    for p in problems {
        tracing::warn!("{}: {p}", folder.display());
    }
}

/// Applies settings to a session; returns a message when there are new problems to show.
fn apply_settings(st: &mut Workspace, folder: &Path, value: &Value) -> Option<String> {
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
        tokio::spawn(self.inner.clone().refresh_loop());
        let inner = self.inner.clone();
        tokio::spawn(async move { inner.finish_walks().await });
        // Starting inotify and its thread takes about a millisecond: off the protocol thread,
        // so the first requests do not wait for it.
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let inner = self.inner.clone();
        tokio::spawn(async move {
            let created = tokio::task::spawn_blocking(move || DirWatcher::new(tx)).await;
            match created {
                Ok(Ok(w)) => {
                    *inner.watcher.lock().unwrap_or_else(|e| e.into_inner()) = Some(w);
                    if inner.update_watches() {
                        inner.register_watched_files().await;
                    }
                    // What changed before the watches were in place is caught up now.
                    let folders: Vec<PathBuf> = inner
                        .state()
                        .sessions
                        .iter()
                        .filter(|(_, s)| s.settings.watch)
                        .map(|(f, _)| f.clone())
                        .collect();
                    inner.handle_paths(folders).await;
                    tokio::spawn(inner.watch_loop(rx));
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
        self.inner.announce(events).await;
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
            self.inner.announce(events).await;
            // The saved bytes may be an instruction file the agents hold.
            self.inner.handle_paths(vec![path]).await;
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
        self.inner.announce(Vec::new()).await;
        self.inner.finish_walks().await;
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
        self.inner.handle_paths(changed).await;
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
        self.inner.finish_walks().await;
        let (sessions, buffers) = {
            let st = self.inner.state();
            (st.sessions.values().cloned().collect::<Vec<_>>(), st.buffers())
        };
        let inner = self.inner.clone();
        off_thread(move || {
            let descriptions = describe_sessions(&inner, &path, sessions, &buffers);
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
        self.inner.finish_walks().await;
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
