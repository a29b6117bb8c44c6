//! Code actions: the quick fix each diagnostic carries (a fix of the configuration placed in
//! the buffer the editor holds), the acceptance of any finding, every safe fix at once, and the
//! rename of an instruction file.

use super::super::convert;
use super::super::ext;
use super::super::shared::Shared;
use super::path_of;
use crate::chain::lint::ConfigChange;
use serde_json::Value;
use std::path::Path;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::*;

/// The fix a diagnostic carries (see [`convert::diagnostic`]): its title, and the edit that
/// makes it in the document `uri`.
fn fix_of(shared: &Shared, d: &Diagnostic, uri: &Uri) -> Option<(String, WorkspaceEdit, Option<TextEdit>)> {
    fix_in(shared, d.data.as_ref()?, uri)
}

/// The edit that makes `change` in the configuration `uri`, placed in its text as the editor has
/// it now (its open buffer, saved or not, else the disk's; the file created first when there is
/// neither); `None` when it cannot be placed there. The edit of an open document names the
/// document's version: an editor whose buffer has moved on since refuses it, never misplaces it.
fn config_edit(shared: &Shared, uri: Uri, change: &ConfigChange) -> Option<WorkspaceEdit> {
    let path = path_of(&uri)?;
    if !crate::chain::config_edit::writable(&path) {
        return None;
    }
    let (open, enc) = {
        let st = shared.state();
        (st.documents.get(&path).and_then(|d| Some((d.text.clone()?, d.version))), st.encoding)
    };
    let exists = open.is_some() || std::fs::symlink_metadata(&path).is_ok();
    let text: String = match &open {
        Some((text, _)) => text.to_string(),
        None => crate::chain::config_edit::text_of(&path)?,
    };
    let (start, end, new_text) = crate::chain::config_edit::place(change, &path, &text)?;
    let at = |offset| convert::position(text.as_bytes(), offset, enc);
    let mut ops = Vec::new();
    if !exists {
        ops.push(DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
            uri: uri.clone(),
            options: Some(CreateFileOptions { overwrite: Some(false), ignore_if_exists: Some(true) }),
            annotation_id: None,
        })));
    }
    ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
        text_document: OptionalVersionedTextDocumentIdentifier { uri, version: open.map(|(_, v)| v) },
        edits: vec![OneOf::Left(TextEdit { range: Range { start: at(start), end: at(end) }, new_text })],
    }));
    Some(WorkspaceEdit { document_changes: Some(DocumentChanges::Operations(ops)), ..Default::default() })
}

/// The fix of a diagnostic's `data` ([`convert::fix_data`]).
fn fix_in(shared: &Shared, data: &Value, uri: &Uri) -> Option<(String, WorkspaceEdit, Option<TextEdit>)> {
    let fix = data.get("fix")?;
    let title = fix.get("title")?.as_str()?.to_string();
    let change = fix.get("change")?;
    if let Some(create) = change.get("create").and_then(Value::as_str) {
        let uri: Uri = create.parse().ok()?;
        let op = DocumentChangeOperation::Op(ResourceOp::Create(CreateFile {
            uri,
            options: Some(CreateFileOptions { overwrite: Some(false), ignore_if_exists: Some(true) }),
            annotation_id: None,
        }));
        let edit =
            WorkspaceEdit { document_changes: Some(DocumentChanges::Operations(vec![op])), ..Default::default() };
        return Some((title, edit, None));
    }
    if let Some(config) = change.get("config") {
        let other: Uri = config.get("uri")?.as_str()?.parse().ok()?;
        let set: ConfigChange = serde_json::from_value(config.get("change")?.clone()).ok()?;
        return Some((title, config_edit(shared, other, &set)?, None));
    }
    let text_edit = TextEdit {
        range: serde_json::from_value(change.get("range")?.clone()).ok()?,
        new_text: change.get("newText")?.as_str()?.to_string(),
    };
    Some((title, edits_in(uri, vec![text_edit.clone()]), Some(text_edit)))
}

/// A workspace edit of the document `uri` alone.
fn edits_in(uri: &Uri, edits: Vec<TextEdit>) -> WorkspaceEdit {
    let doc = TextDocumentEdit {
        text_document: OptionalVersionedTextDocumentIdentifier { uri: uri.clone(), version: None },
        edits: edits.into_iter().map(OneOf::Left).collect(),
    };
    WorkspaceEdit { document_changes: Some(DocumentChanges::Edits(vec![doc])), ..Default::default() }
}

/// The kind of the action that applies every safe fix of a file.
pub const FIX_ALL: &str = "source.fixAll.instructions";

/// Whether the client asks for actions of `kind` (all of them when it names none).
fn wanted(only: Option<&Vec<CodeActionKind>>, kind: &str) -> bool {
    only.is_none_or(|only| only.iter().any(|k| kind == k.as_str() || kind.starts_with(&format!("{}.", k.as_str()))))
}

pub async fn code_action(shared: &Shared, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
    let Some(path) = path_of(&params.text_document.uri) else { return Ok(None) };
    let uri = &params.text_document.uri;
    let only = params.context.only.as_ref();
    let mut actions = Vec::new();
    if wanted(only, CodeActionKind::QUICKFIX.as_str()) {
        for d in &params.context.diagnostics {
            let Some((title, edit, here)) = fix_of(shared, d, uri) else { continue };
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                edit: Some(edit),
                // A mend of the text; raising a budget is a decision.
                is_preferred: Some(here.is_some()),
                ..CodeAction::default()
            }));
        }
        // Any finding may be accepted for this file in the configuration (as ruff's and typos'
        // servers offer to silence one).
        for d in &params.context.diagnostics {
            if d.source.as_deref() != Some("instructions") {
                continue;
            }
            let Some(NumberOrString::String(code)) = &d.code else { continue };
            if code == crate::chain::lint::Code::BadConfig.name() {
                continue;
            }
            let Some(fix) = crate::chain::config_edit::accept(&path, code) else { continue };
            let encoding = shared.state().encoding;
            let Some((title, edit, _)) = convert::fix_data(&fix, b"", encoding).and_then(|v| fix_in(shared, &v, uri))
            else {
                continue;
            };
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                edit: Some(edit),
                ..CodeAction::default()
            }));
        }
    }
    // Every safe fix of the file at once, from what is published for it: on save with
    // `editor.codeActionsOnSave`, or from the menu.
    if wanted(only, FIX_ALL) {
        let published = shared.state().published.get(&path).cloned().unwrap_or_default();
        let mut edits: Vec<TextEdit> = Vec::new();
        for d in &published {
            // Only a mend of this file's text (not a file made, nor the configuration edited).
            let change = d.data.as_ref().and_then(|v| v.get("fix")?.get("change"));
            if change.is_none_or(|c| c.get("range").is_none()) {
                continue;
            }
            let Some((_, _, Some(e))) = fix_of(shared, d, uri) else { continue };
            let overlaps = |o: &TextEdit| {
                let (a, b) = ((e.range.start.line, e.range.start.character), (e.range.end.line, e.range.end.character));
                let (c, d) = ((o.range.start.line, o.range.start.character), (o.range.end.line, o.range.end.character));
                (a < d && c < b) || (a == c && b == d)
            };
            if !edits.iter().any(overlaps) {
                edits.push(e);
            }
        }
        if !edits.is_empty() {
            let count = edits.len();
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Fix {count} instruction-file finding{}", if count == 1 { "" } else { "s" }),
                kind: Some(CodeActionKind::from(FIX_ALL)),
                edit: Some(edits_in(uri, edits)),
                ..CodeAction::default()
            }));
        }
    }
    for d in params.context.diagnostics.iter().filter(|_| wanted(only, CodeActionKind::QUICKFIX.as_str())) {
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
    if let Some(action) = rename_action(shared, &path).filter(|_| wanted(only, CodeActionKind::REFACTOR.as_str())) {
        actions.push(action);
    }
    Ok(Some(actions))
}

/// "Rename CLAUDE.md to AGENTS.md": offered when a later candidate is its directory's winner and
/// the first candidate does not exist.
fn rename_action(shared: &Shared, path: &Path) -> Option<CodeActionOrCommand> {
    let st = shared.state();
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
