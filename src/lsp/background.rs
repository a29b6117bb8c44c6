//! The server's work in the background, as methods of [`Shared`]: the walks of new folders
//! finished, the client asked to report changes when the server does not watch, and the
//! watcher's events turned into announcements and new diagnostics.

use std::path::PathBuf;
use std::sync::Arc;

use tower_lsp_server::lsp_types::*;

use super::ext::{self, DidChangeParams};
use super::shared::{Shared, release_free_memory};
use crate::paths;
use crate::session::ledger::Reason;
use crate::watch::WatchEvent;

impl Shared {
    /// Asks the client to report changes of instruction files and root markers, for sessions that
    /// do not watch themselves (`watch: false`), or when the server's own watching fell short; once,
    /// when the client can register dynamically (a failed registration is tried again next time).
    pub(super) async fn register_watched_files(&self) {
        let names: Vec<String> = {
            let st = self.state();
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
                        // A package root appears or goes: where agents start changes.
                        .map(str::to_string)
                        .chain(crate::session::starts::manifest_globs())
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
        match self.client.register_capability(vec![registration]).await {
            Ok(()) => self.state().registered_watch = true,
            Err(e) => tracing::warn!("cannot register workspace/didChangeWatchedFiles: {e}"),
        }
    }

    /// Walks whole, off the protocol thread, the repositories whose sessions started from the names
    /// near their root; sessions whose agents change with it are announced (`instructions/didChange`,
    /// so that editors ask again) and their diagnostics republished.
    pub(super) async fn finish_walks(&self) {
        let _walking = self.walks.lock().await;
        let roots = self.state().partly_walked();
        if roots.is_empty() {
            return;
        }
        let walked = tokio::task::spawn_blocking(move || {
            let walked = roots.into_iter().map(|r| (crate::chain::targets::names_below(&r), r)).collect::<Vec<_>>();
            release_free_memory();
            walked
        })
        .await
        .unwrap_or_default();
        let mut changed = Vec::new();
        {
            let mut st = self.state();
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
        self.announce(changed).await;
    }

    /// Announces new batches (`instructions/didChange`), follows the watched directories, and
    /// republishes diagnostics.
    pub(super) async fn announce(&self, events: Vec<(PathBuf, u64)>) {
        self.answers_changed();
        for (folder, seq) in events {
            let params = DidChangeParams { folder: paths::path_to_uri(&folder), seq };
            self.client.send_notification::<ext::DidChange>(params).await;
        }
        if self.update_watches() {
            self.register_watched_files().await;
        }
        self.refresh.notify_one();
    }

    /// Paths changed on disk (watcher or `didChangeWatchedFiles`): every session they can affect
    /// reconciles with the disk. Changes no session cares about (a shell's history in a watched
    /// home directory, say) cost nothing more.
    pub(super) async fn handle_paths(&self, changed: Vec<PathBuf>) {
        let events = {
            let mut st = self.state();
            let folders: Vec<PathBuf> = st
                .sessions
                .iter()
                .filter(|(_, s)| changed.iter().any(|p| s.is_relevant(p)))
                .map(|(f, _)| f.clone())
                .collect();
            let relisted = self.forget_outdated_listings(&changed);
            if folders.is_empty() {
                // No session's chain, but maybe a remembered agent view's (a rules file, an import),
                // or the listing of a repository whose rules were searched.
                if relisted || self.read_by_memo(&changed, st.sessions.values()) {
                    self.disk_changed();
                    for p in &changed {
                        self.cache.invalidate(p);
                    }
                    self.refresh.notify_one();
                }
                return;
            }
            self.disk_changed();
            for p in &changed {
                self.cache.invalidate(p);
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
                events.extend(st.with_session(&folder, &self.cache, |s, cache| {
                    s.reconcile(cache, Reason::Change);
                }));
            }
            events
        };
        tracing::debug!("{} changed paths, {} new batches", changed.len(), events.len());
        self.announce(events).await;
    }

    /// Feeds debounced watcher events to the sessions.
    pub(super) async fn watch_loop(self: Arc<Self>, mut rx: tokio::sync::mpsc::UnboundedReceiver<WatchEvent>) {
        while let Some(first) = rx.recv().await {
            // Coalesce whatever else is already queued.
            let mut events = vec![first];
            while let Ok(more) = rx.try_recv() {
                events.push(more);
            }
            if self.shut_down() {
                return;
            }
            let changed = if events.contains(&WatchEvent::Rescan) {
                // Events were lost: every directory that matters is looked at again.
                self.watched_dirs().into_iter().map(|d| d.to_path_buf()).collect()
            } else {
                events
                    .into_iter()
                    .flat_map(|e| match e {
                        WatchEvent::Changed(paths) => paths,
                        WatchEvent::Rescan => Vec::new(),
                    })
                    .collect()
            };
            self.handle_paths(changed).await;
        }
    }
}
