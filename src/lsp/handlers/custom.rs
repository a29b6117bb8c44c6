//! The custom methods: `instructions/effective`, `instructions/transitions` and the
//! `instructions/touch` notification (see docs/protocol.md).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};

use super::super::ext::{self, EffectiveParams, TouchParams, TransitionsParams};
use super::super::shared::Shared;
use super::{implicit_folder, log_problems, off_thread, touch};
use crate::paths::{self, uri_to_path};

/// The session folder a request means, and the path inside it, or a -32602 error.
fn resolve(shared: &Shared, uri: Option<&str>) -> Result<(PathBuf, Option<PathBuf>)> {
    let mut st = shared.state();
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

/// `instructions/transitions`.
pub async fn transitions(shared: &Shared, params: Value) -> Result<Value> {
    let p: TransitionsParams = ext::parse(ext::TRANSITIONS, TransitionsParams::SHAPE, params)?;
    let (folder, _) = resolve(shared, p.uri.as_deref())?;
    let events = shared.state().start_session(&folder, &shared.cache).into_iter().collect();
    shared.announce(events).await;
    let st = shared.state();
    let Some(session) = st.sessions.get(&folder) else {
        return Err(Error::invalid_params("the workspace folder was removed"));
    };
    serde_json::to_value(session.transitions(&shared.cache, p.since)).map_err(|e| Error::invalid_params(e.to_string()))
}

/// The serialized answer to `instructions/effective` with `params`, when it is remembered and
/// still true (nothing happened since, every directory it read is watched): the transport's
/// fast path for warm requests.
pub fn remembered_answer(shared: &Shared, params: &Value) -> Option<Arc<[u8]>> {
    // After `shutdown` every request gets the router's error.
    if shared.shut_down() {
        return None;
    }
    shared.watch_epoch()?;
    let generation = shared.generation.load(Ordering::SeqCst);
    shared.sent.get(&params.to_string(), generation)
}

/// `instructions/effective`.
pub async fn effective(shared: &Arc<Shared>, params: Value) -> Result<Value> {
    let wire_key = params.to_string();
    let p: EffectiveParams = ext::parse(ext::EFFECTIVE, EffectiveParams::SHAPE, params)?;
    let (folder, path) = resolve(shared, p.uri.as_deref())?;
    tracing::debug!("effective for {} (unsaved: {})", folder.display(), p.unsaved);
    if let Some(name) = p.profile {
        // The agents of the folder are those of its whole repository.
        shared.finish_walks().await;
        return profile_answer(shared, (folder, path), name, p.tokens, wire_key).await;
    }
    let generation = shared.generation.load(Ordering::SeqCst);
    let key = (folder.clone(), path.clone());
    // Only the folder's own answer: a preview reads directories that are not watched yet.
    let memo = !p.unsaved && path.as_ref().is_none_or(|p| p == &folder) && shared.watching_all();
    if memo && let Some(v) = shared.memo.get(&key, generation) {
        return Ok(v);
    }
    let (session, buffers) = {
        let st = shared.state();
        let Some(session) = st.sessions.get(&folder) else {
            return Err(Error::invalid_params("the workspace folder was removed"));
        };
        (session.clone(), p.unsaved.then(|| st.buffers()))
    };
    let keep = memo && session.settings.watch && session.is_started();
    let working = shared.clone();
    let value = off_thread(move || {
        // A directory below the folder previews what a touch of a file inside it adds.
        let preview = path.filter(|p| p != &session.folder).map(|p| if p.is_dir() { p.join(".touch") } else { p });
        let result = session.effective(&working.cache, buffers.as_ref(), preview.as_deref());
        serde_json::to_value(result).map_err(|e| Error::invalid_params(e.to_string()))
    })
    .await?;
    if keep {
        shared.memo.put(key, generation, value.clone());
        shared.remember_sent(wire_key, generation, &value);
    }
    Ok(value)
}

/// `instructions/effective` with `profile`: from memory while nothing happened since and every
/// directory it read is watched, as the engine's own answer.
async fn profile_answer(
    shared: &Arc<Shared>,
    (folder, path): (PathBuf, Option<PathBuf>),
    name: String,
    tokens: bool,
    wire_key: String,
) -> Result<Value> {
    let generation = shared.generation.load(Ordering::SeqCst);
    let key = (folder.clone(), name.clone(), path.clone(), tokens);
    let watch = shared.state().sessions.get(&folder).is_some_and(|s| s.settings.watch && s.is_started());
    let epoch = if watch { shared.watch_epoch() } else { None };
    if epoch.is_some()
        && let Some(v) = shared.profile_memo.get(&key, generation)
    {
        return Ok(v);
    }
    let (session, env) = {
        let st = shared.state();
        let Some(session) = st.sessions.get(&folder) else {
            return Err(Error::invalid_params("the workspace folder was removed"));
        };
        (session.clone(), st.env.clone())
    };
    let working = shared.clone();
    let (value, dirs) = off_thread(move || {
        let preview = path.filter(|p| p != &session.folder).map(|p| if p.is_dir() { p.join(".touch") } else { p });
        let answer =
            crate::session::profiles::answer(&session, working.as_ref(), &name, &env, preview.as_deref(), tokens);
        working.rewatch();
        answer.map_err(Error::invalid_params)
    })
    .await?;
    if let (Some(epoch), Some(dirs)) = (epoch, dirs)
        && shared.may_remember(generation, epoch, &dirs)
    {
        shared.profile_memo.put(key, generation, value.clone());
        shared.remember_sent(wire_key, generation, &value);
    }
    Ok(value)
}

/// `instructions/touch`.
pub async fn touch_notification(shared: &Shared, params: Value) {
    match ext::parse::<TouchParams>(ext::TOUCH, TouchParams::SHAPE, params) {
        Ok(p) => match uri_to_path(&p.uri) {
            Some(path) => {
                let events = touch(shared, &path);
                shared.announce(events).await;
            }
            None => tracing::warn!("{}: `uri` must be a file:// URI, got `{}`", ext::TOUCH, p.uri),
        },
        Err(e) => tracing::warn!("{}", e.message),
    }
}
