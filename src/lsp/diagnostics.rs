//! The diagnostics: what `check` says of each folder for the agents, the session's own findings
//! for the engine's profile, published by one background loop that sends only what changed.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tower_lsp_server::lsp_types::Diagnostic;

use super::convert;
use super::shared::{Placed, Shared};
use super::state::DiagnosticsInput;
use crate::chain::discover::{Discovery, Scope};
use crate::chain::lint::{self, Finding};
use crate::chain::source::Buffers;
use crate::session::{Session, Snapshot};

/// The findings of every session's chain and of every open candidate document: the engine's
/// own for the session's lifecycle when its profile is selected, and for the agents what
/// `instructions-lsp check FOLDER` says of the files in the folder (see [`Shared::tree`]), each
/// file from the innermost folder that holds it.
pub fn findings(input: &DiagnosticsInput, shared: &Shared) -> (Vec<Finding>, Vec<(Session, Snapshot)>) {
    let cache = &shared.cache;
    let mut out: Vec<Finding> = Vec::new();
    let mut snapshots = Vec::new();
    let buffers = Some(&input.buffers);
    let innermost = |path: &Path| {
        input
            .sessions
            .iter()
            .filter(|s| crate::paths::starts_with(path, &s.folder))
            .max_by_key(|s| s.folder.components().count())
            .map(|s| s.folder.clone())
    };
    let mut scope = None;
    // The checked trees' findings, which the check filtered by what the repository accepts
    // already (filtering them again would walk up from every file's folder on every pass).
    let mut decided: Vec<Finding> = Vec::new();
    for session in &input.sessions {
        let snap = session.snapshot(cache, buffers);
        let profiles = session.profiles();
        if profiles.iter().any(|p| p == session.settings.profile.name()) {
            let disc = session.discovery(cache, buffers);
            let skipped: Vec<_> = snap.skipped().cloned().collect();
            out.extend(lint::skip_findings(&skipped, &session.settings, |p| disc.heading(p)));
            for f in snap.files() {
                out.extend(lint::content_findings(&f.path, &f.file.text, session.settings.frame));
            }
            out.extend(session.chain_findings(&snap));
        }
        // A configuration that cannot be used, where `check` would stop with it.
        out.extend(session.config_problem());
        if profiles.iter().any(|p| crate::chain::agents::NAMES.contains(&p.as_str())) {
            let tree = shared.tree_in(session, &mut scope);
            // And those below the folder, which `check` reports too.
            out.extend(
                tree.config_errors.iter().filter_map(|e| {
                    crate::chain::config::config_finding(e, "below it the folder's agents are checked")
                }),
            );
            // A file above every folder (the root's AGENTS.md of a package opened as a folder)
            // gets what the folders below it say of it.
            decided.extend(
                tree.findings
                    .iter()
                    .filter(|f| innermost(&f.path).is_none_or(|folder| folder == session.folder))
                    .cloned(),
            );
            // An open file typed since its save: what the agents say at its tokens follows the
            // buffer (the rest of what they say follows the disk).
            let unsaved: Vec<(PathBuf, Arc<str>)> = input
                .buffers
                .iter()
                .filter(|(path, _)| innermost(path).as_ref() == Some(&session.folder))
                .filter(|(path, text)| {
                    crate::chain::source::read_prefix(path, text.len() as u64 + 1) != text.as_bytes()
                })
                .map(|(p, t)| (p.clone(), t.clone()))
                .collect();
            for (path, _) in &unsaved {
                let cache = shared.typing_scope(&session.folder);
                let (asked, typed) = crate::session::typed::token_findings(session, path, &unsaved, &cache);
                let stale =
                    |f: &Finding| &f.path == path && f.code.at_token() && f.agent.is_some_and(|a| asked.contains(&a));
                out.retain(|f| !stale(f));
                decided.retain(|f| !stale(f));
                out.extend(typed);
            }
        }
        snapshots.push((session.clone(), snap));
    }
    // Open candidates judged in their own directory, whether or not a chain reaches them.
    for (path, settings, folder, own) in &input.open_candidates {
        if !own {
            continue;
        }
        let Some(dir) = path.parent() else { continue };
        let disc = Discovery::new(settings, cache, buffers, folder);
        let scan = disc.scan_dir(dir, Scope::Nested);
        let mine: Vec<_> = scan.skipped.iter().filter(|s| &s.path == path).cloned().collect();
        out.extend(lint::skip_findings(&mine, settings, |p| disc.heading(p)));
        if let Some(f) = scan.files.iter().find(|f| &f.path == path) {
            out.extend(lint::content_findings(path, &f.file.text, settings.frame));
        }
    }
    crate::session::decisions::retain(&mut out);
    out.extend(decided);
    let mut seen = HashSet::new();
    out.retain(|f| seen.insert((f.path.clone(), f.code, f.span, f.message.clone())));
    (out, snapshots)
}

/// The text a finding is placed in: the open buffer, else at most `max + 1` bytes of disk.
pub fn text_for(path: &Path, buffers: &Buffers, max_bytes: u64) -> Vec<u8> {
    if let Some(t) = buffers.get(path) {
        return t.as_bytes().to_vec();
    }
    crate::chain::source::read_prefix(path, max_bytes)
}

/// A file's time of change and size.
fn stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

fn hash_of(findings: &[Finding]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    findings.hash(&mut h);
    h.finish()
}

/// Findings grouped per file as LSP diagnostics.
pub fn diagnostics(input: &DiagnosticsInput, shared: &Shared) -> HashMap<PathBuf, Vec<Diagnostic>> {
    let (mut found, _) = findings(input, shared);
    let max = input.sessions.iter().map(|s| s.settings.max_file_bytes).max().unwrap_or(1_048_576);
    // A file at a time, its text read once and let go before the next.
    found.sort_by(|a, b| a.path.cmp(&b.path));
    let mut before = std::mem::take(&mut *shared.placed.lock().unwrap_or_else(|e| e.into_inner()));
    let mut placed = HashMap::new();
    let mut out: HashMap<PathBuf, Vec<Diagnostic>> = HashMap::new();
    for same_file in found.chunk_by(|a, b| a.path == b.path) {
        let path = &same_file[0].path;
        let place = || {
            let text = text_for(path, &input.buffers, max);
            same_file.iter().map(|f| convert::diagnostic(f, &text, input.encoding)).collect::<Vec<_>>()
        };
        if input.buffers.contains_key(path) {
            out.insert(path.clone(), place());
            continue;
        }
        let now = Placed { findings: hash_of(same_file), stamp: stamp(path), encoding: input.encoding };
        let same = before.remove(path).is_some_and(|p| {
            p.findings == now.findings && p.stamp == now.stamp && now.stamp.is_some() && p.encoding == now.encoding
        });
        let published = if same { shared.state().published.get(path).cloned() } else { None };
        out.insert(path.clone(), published.unwrap_or_else(place));
        placed.insert(path.clone(), now);
    }
    *shared.placed.lock().unwrap_or_else(|e| e.into_inner()) = placed;
    out
}

impl Shared {
    /// Runs diagnostics passes when asked, publishing only what changed.
    pub async fn refresh_loop(self: Arc<Self>) {
        loop {
            self.refresh.notified().await;
            if self.shut_down() {
                return;
            }
            // The agents' findings follow the agents of the whole repository.
            self.finish_walks().await;
            let input = self.state().diagnostics_input();
            let worker = self.clone();
            let computed = match tokio::task::spawn_blocking(move || {
                let diagnostics = diagnostics(&input, &worker);
                worker.rewatch();
                super::shared::release_free_memory();
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
            // The paths whose diagnostics changed; each is copied out of what is published only
            // as it is sent, not all at once (the first pass of a monorepo publishes thousands).
            let changed: Vec<PathBuf> = {
                let mut st = self.state();
                let mut changed: Vec<PathBuf> = computed
                    .iter()
                    .filter(|(path, diags)| st.published.get(*path) != Some(diags))
                    .map(|(p, _)| p.clone())
                    .collect();
                changed.extend(st.published.keys().filter(|path| !computed.contains_key(*path)).cloned());
                st.published = computed;
                changed
            };
            for path in changed {
                let diags = self.state().published.get(&path).cloned().unwrap_or_default();
                if let Some(uri) = convert::uri_of(&path) {
                    self.client.publish_diagnostics(uri, diags, None).await;
                }
            }
        }
    }
}
