//! Open documents: their text when it is an instruction file's, and each one a touch.

use std::path::PathBuf;
use std::sync::Arc;

use tower_lsp_server::lsp_types::*;

use super::super::convert;
use super::super::shared::Shared;
use super::super::state;
use super::{path_of, touch, workspace};

pub async fn did_open(shared: &Shared, params: DidOpenTextDocumentParams) {
    let doc = params.text_document;
    let Some(path) = path_of(&doc.uri) else { return };
    {
        let mut st = shared.state();
        // Only instruction files need their text (the agents' findings at its tokens follow
        // it as typed): any other document (a 100 MB log, say) is a touch and nothing more.
        let keep = st.keeps_text(&path) && doc.text.len() <= state::DOCUMENT_TEXT_CAP;
        let text = keep.then(|| Arc::from(doc.text));
        st.documents.insert(path.clone(), state::Document { uri: doc.uri.clone(), text, version: doc.version });
    }
    let before: Vec<PathBuf> = shared.state().sessions.keys().cloned().collect();
    let events = touch(shared, &path);
    let added: Vec<PathBuf> = shared.state().sessions.keys().filter(|k| !before.contains(k)).cloned().collect();
    shared.announce(events).await;
    workspace::pull_settings(shared, added).await;
}

pub async fn did_change(shared: &Shared, params: DidChangeTextDocumentParams) {
    let Some(path) = path_of(&params.text_document.uri) else { return };
    let candidate = {
        let mut st = shared.state();
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
        st.keeps_text(&path)
    };
    if candidate {
        shared.refresh.notify_one();
    }
}

pub async fn did_save(shared: &Shared, params: DidSaveTextDocumentParams) {
    if let Some(path) = path_of(&params.text_document.uri) {
        let events = touch(shared, &path);
        shared.announce(events).await;
        // The saved bytes may be an instruction file the agents hold.
        shared.handle_paths(vec![path]).await;
    }
}

pub async fn did_close(shared: &Shared, params: DidCloseTextDocumentParams) {
    if let Some(path) = path_of(&params.text_document.uri) {
        shared.state().documents.remove(&path);
        shared.refresh.notify_one();
    }
}
