//! Workspace folders, settings (pulled or pushed), and changes on disk the client reports; and
//! `initialized`, which starts the background work.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::lsp_types::*;

use super::super::convert;
use super::super::shared::Shared;
use super::super::state::Workspace;
use super::{log_problems, path_of};
use crate::chain::settings::{Settings, SettingsProblem};
use crate::session::ledger::Reason;
use crate::watch::DirWatcher;

/// How long a `workspace/configuration` pull may wait for the client; after that the last
/// known settings stay.
const PULL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Starts the background work (diagnostics passes, the repository walks, file watching, the
/// settings pulls) and applies the first settings.
pub async fn initialized(shared: &Arc<Shared>) {
    tokio::spawn(shared.clone().refresh_loop());
    let walking = shared.clone();
    tokio::spawn(async move { walking.finish_walks().await });
    // Starting inotify and its thread takes about a millisecond: off the protocol thread, so
    // the first requests do not wait for it.
    tokio::spawn(start_watching(shared.clone()));
    let (folders, init_problems) = {
        let mut st = shared.state();
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
    report(shared, init_problems).await;
    start_pull_task(shared);
    pull_settings(shared, folders).await;
    shared.refresh.notify_one();
}

/// Starts the watcher; then catches up with what changed before the watches were in place.
async fn start_watching(shared: Arc<Shared>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    match tokio::task::spawn_blocking(move || DirWatcher::new(tx)).await {
        Ok(Ok(w)) => {
            *shared.watcher.lock().unwrap_or_else(|e| e.into_inner()) = Some(w);
            if shared.update_watches() {
                shared.register_watched_files().await;
            }
            let folders: Vec<PathBuf> =
                shared.state().sessions.iter().filter(|(_, s)| s.settings.watch).map(|(f, _)| f.clone()).collect();
            shared.handle_paths(folders).await;
            tokio::spawn(shared.watch_loop(rx));
        }
        // Not even polling: the client is the only one left to tell us.
        Ok(Err(e)) => {
            tracing::warn!("{e}; changes on disk are seen through didChangeWatchedFiles only");
            shared.register_watched_files().await;
        }
        Err(e) => {
            tracing::warn!(
                "file watching did not start: {e}; changes on disk are seen through didChangeWatchedFiles only"
            );
            shared.register_watched_files().await;
        }
    }
}

pub async fn did_change_workspace_folders(shared: &Shared, params: DidChangeWorkspaceFoldersParams) {
    let added: Vec<PathBuf> = {
        let mut st = shared.state();
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
    pull_settings(shared, added).await;
    shared.announce(Vec::new()).await;
    shared.finish_walks().await;
}

pub async fn did_change_configuration(shared: &Shared, params: DidChangeConfigurationParams) {
    let (pull, folders) = {
        let st = shared.state();
        (st.pull_config, st.sessions.keys().cloned().collect::<Vec<_>>())
    };
    if pull {
        pull_settings(shared, folders).await;
    } else {
        let value = match params.settings {
            Value::Object(mut m) if m.contains_key("instructions") => m.remove("instructions").unwrap_or_default(),
            other => other,
        };
        push_settings(shared, &value).await;
    }
}

pub async fn did_change_watched_files(shared: &Shared, params: DidChangeWatchedFilesParams) {
    let changed: Vec<PathBuf> = params.changes.iter().filter_map(|c| path_of(&c.uri)).collect();
    shared.handle_paths(changed).await;
}

/// Pulls the `instructions` section for folders and applies it: queued for the pull task when
/// the client answers `workspace/configuration`, so that a handler never waits for the client
/// (a client that never answers would hold every handler slot); applied at once otherwise.
pub(super) async fn pull_settings(shared: &Shared, folders: Vec<PathBuf>) {
    if folders.is_empty() {
        return;
    }
    if shared.state().pull_config {
        if shared.pulls.send(folders).is_err() {
            tracing::warn!("the settings pull task has stopped; keeping the current settings");
        }
    } else {
        apply_settings_of(shared, folders).await;
    }
}

/// Runs queued pulls one after another, so settings apply in the order they were asked.
fn start_pull_task(shared: &Arc<Shared>) {
    let Some(mut queue) = shared.pull_queue.lock().unwrap_or_else(|e| e.into_inner()).take() else { return };
    let shared = shared.clone();
    tokio::spawn(async move {
        while let Some(folders) = queue.recv().await {
            apply_settings_of(&shared, folders).await;
        }
    });
}

/// Pulls (when the client answers `workspace/configuration`) and applies the settings of
/// folders, then starts or reconciles their sessions. A pull that fails or times out keeps the
/// last known settings.
async fn apply_settings_of(shared: &Shared, folders: Vec<PathBuf>) {
    let pull = shared.state().pull_config;
    let pulled: Option<Vec<Option<Value>>> = if pull {
        let items = folders
            .iter()
            .map(|f| ConfigurationItem { scope_uri: convert::uri_of(f), section: Some("instructions".into()) })
            .collect();
        match tokio::time::timeout(PULL_TIMEOUT, shared.client.configuration(items)).await {
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
        let mut st = shared.state();
        for (i, folder) in folders.iter().enumerate() {
            let before = st.sessions.get(folder).map(|s| s.settings.clone());
            if let Some(pulled) = &pulled {
                let value = st.settings_value(pulled.get(i).and_then(Option::as_ref));
                if let Some(r) = apply_settings(&mut st, folder, &value) {
                    reports.push(r);
                }
            }
            let changed = st.sessions.get(folder).map(|s| &s.settings) != before.as_ref();
            events.extend(start_or_reconcile(shared, &mut st, folder, changed));
        }
        unwatched = st.sessions.values().any(|s| !s.settings.watch);
    }
    report(shared, reports).await;
    if unwatched {
        shared.register_watched_files().await;
    }
    shared.announce(events).await;
}

/// After settings are applied: start the session's lifecycle, or reconcile with the new
/// settings (`config`).
fn start_or_reconcile(shared: &Shared, st: &mut Workspace, folder: &Path, changed: bool) -> Vec<(PathBuf, u64)> {
    let started = st.sessions.get(folder).is_some_and(crate::session::Session::is_started);
    if started {
        // Settings that did not change (a pull answering what the session already has) are no
        // event: a `config` batch would hand over what the budget kept out.
        if !changed {
            return Vec::new();
        }
        st.with_session(folder, &shared.cache, |s, cache| {
            s.reconcile(cache, Reason::Config);
        })
    } else {
        st.start_session(folder, &shared.cache).into_iter().collect()
    }
}

/// Applies one settings object to every session (clients that push settings).
async fn push_settings(shared: &Shared, value: &Value) {
    let (reports, events) = {
        let mut st = shared.state();
        let folders: Vec<PathBuf> = st.sessions.keys().cloned().collect();
        let merged = st.settings_value(Some(value));
        let mut reports = Vec::new();
        let mut events = Vec::new();
        for folder in folders {
            let before = st.sessions.get(&folder).map(|s| s.settings.clone());
            reports.extend(apply_settings(&mut st, &folder, &merged));
            let changed = st.sessions.get(&folder).map(|s| &s.settings) != before.as_ref();
            events.extend(start_or_reconcile(shared, &mut st, &folder, changed));
        }
        (reports, events)
    };
    report(shared, reports).await;
    shared.announce(events).await;
}

async fn report(shared: &Shared, reports: Vec<String>) {
    for message in reports {
        shared.client.show_message(MessageType::WARNING, message).await;
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
            key: crate::chain::config::CONFIG_NAMES[0].into(),
            message: format!("{e}; {}", crate::chain::config::DETECTED_INSTEAD),
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

/// Before files or folders are renamed or moved: the edits that keep every import and link
/// naming them (see [`crate::session::rename`]), in the instruction files the agents read and
/// the open ones.
pub async fn will_rename_files(
    shared: &Arc<Shared>,
    params: RenameFilesParams,
) -> tower_lsp_server::jsonrpc::Result<Option<WorkspaceEdit>> {
    let renames: Vec<(PathBuf, PathBuf)> = params
        .files
        .iter()
        .filter_map(|f| Some((crate::paths::uri_to_path(&f.old_uri)?, crate::paths::uri_to_path(&f.new_uri)?)))
        .collect();
    if renames.is_empty() {
        return Ok(None);
    }
    shared.finish_walks().await;
    let working = shared.clone();
    super::off_thread(move || {
        let (texts, enc) = instruction_texts(&working);
        let edits = crate::session::rename::rename_edits(&texts, &renames);
        if edits.is_empty() {
            return Ok(None);
        }
        let mut changes = Vec::new();
        for (path, file_edits) in edits {
            let Some((_, text)) = texts.iter().find(|(p, _)| *p == path) else { continue };
            let Some(uri) = convert::uri_of(&path) else { continue };
            let bytes = text.as_bytes();
            let edits = file_edits
                .into_iter()
                .map(|(start, end, new_text)| {
                    OneOf::Left(TextEdit {
                        range: Range::new(convert::position(bytes, start, enc), convert::position(bytes, end, enc)),
                        new_text,
                    })
                })
                .collect();
            changes.push(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier { uri, version: None },
                edits,
            });
        }
        Ok(Some(WorkspaceEdit { document_changes: Some(DocumentChanges::Edits(changes)), ..WorkspaceEdit::default() }))
    })
    .await
}

/// The instruction files the agents of every folder read, and the open ones, with their texts
/// (the buffer as typed, else the disk), and the client's encoding: where a file is named.
pub(super) fn instruction_texts(shared: &Shared) -> (Vec<(PathBuf, Arc<str>)>, convert::Encoding) {
    let (sessions, buffers, enc) = {
        let st = shared.state();
        (st.sessions.values().cloned().collect::<Vec<_>>(), st.buffers(), st.encoding)
    };
    let mut paths: std::collections::BTreeSet<PathBuf> = buffers.keys().cloned().collect();
    for session in &sessions {
        let tree = shared.tree(session);
        paths.extend(tree.statements.keys().filter(|p| p.starts_with(&session.folder)).cloned());
    }
    let texts = paths
        .into_iter()
        .map(|p| {
            let text = buffers
                .get(&p)
                .cloned()
                .unwrap_or_else(|| String::from_utf8_lossy(&crate::chain::source::read_prefix(&p, 1 << 20)).into());
            (p, text)
        })
        .collect();
    (texts, enc)
}

/// The imports and links that name a file (`textDocument/references`), in the files of
/// [`instruction_texts`].
pub async fn references(
    shared: &Arc<Shared>,
    params: ReferenceParams,
) -> tower_lsp_server::jsonrpc::Result<Option<Vec<Location>>> {
    let Some(target) = path_of(&params.text_document_position.text_document.uri) else { return Ok(None) };
    shared.finish_walks().await;
    let working = shared.clone();
    super::off_thread(move || {
        let (texts, enc) = instruction_texts(&working);
        let mut out = Vec::new();
        for (path, at) in crate::session::rename::mentions_of(&texts, &target) {
            let Some((_, text)) = texts.iter().find(|(p, _)| *p == path) else { continue };
            let Some(uri) = convert::uri_of(&path) else { continue };
            let bytes = text.as_bytes();
            out.extend(at.into_iter().map(|(start, end)| {
                Location::new(
                    uri.clone(),
                    Range::new(convert::position(bytes, start, enc), convert::position(bytes, end, enc)),
                )
            }));
        }
        Ok(Some(out))
    })
    .await
}
