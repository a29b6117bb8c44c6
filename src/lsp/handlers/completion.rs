//! Completion: what [`crate::session::complete`] offers at the cursor, over the open buffer.

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::*;

use super::super::convert;
use super::super::shared::Shared;
use super::path_of;
use crate::session::complete::{self, Kind};

/// The characters after which a client asks at once: an import's `@` and `/`, a quote and a
/// bracket of the configuration.
pub const TRIGGERS: &[&str] = &["@", "/", "\"", "["];

pub async fn completion(shared: &Shared, params: CompletionParams) -> Result<Option<CompletionResponse>> {
    let at = params.text_document_position;
    let Some(path) = path_of(&at.text_document.uri) else { return Ok(None) };
    let (text, enc, agents, base) = {
        let st = shared.state();
        if !st.keeps_text(&path) {
            return Ok(None);
        }
        let Some(session) = st.session_of(&path) else { return Ok(None) };
        let text = st.buffers().get(&path).cloned();
        (text, st.encoding, session.profiles(), session.project_root())
    };
    let text: std::sync::Arc<str> = match text {
        Some(t) => t,
        None => String::from_utf8_lossy(&crate::chain::source::read_prefix(&path, 1 << 20)).into(),
    };
    let offset = convert::offset(&text, at.position, enc);
    let c = complete::complete(&path, &text, offset, &agents, &base);
    if c.items.is_empty() {
        return Ok(None);
    }
    let range = Range::new(convert::position(text.as_bytes(), c.from, enc), at.position);
    let items = c
        .items
        .into_iter()
        .map(|i| CompletionItem {
            kind: Some(match i.kind {
                Kind::Key => CompletionItemKind::PROPERTY,
                Kind::Value => CompletionItemKind::VALUE,
                Kind::File => CompletionItemKind::FILE,
                Kind::Folder => CompletionItemKind::FOLDER,
            }),
            detail: (!i.detail.is_empty()).then_some(i.detail),
            text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text: i.insert })),
            label: i.label,
            ..CompletionItem::default()
        })
        .collect();
    Ok(Some(CompletionResponse::Array(items)))
}
