//! What an author sees on an instruction file: the hover, the code lens, the code actions (open
//! the file agents load instead, rename to the first candidate) and the `instructions.open`
//! command.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::lsp_types::*;

use super::super::convert;
use super::super::ext;
use super::super::hover;
use super::super::shared::Shared;
use super::{off_thread, path_of};
use crate::paths::uri_to_path;
use crate::session::rename::Named;

pub async fn hover(shared: &Arc<Shared>, params: HoverParams) -> Result<Option<Hover>> {
    let pos = params.text_document_position_params.position;
    let Some(path) = path_of(&params.text_document_position_params.text_document.uri) else { return Ok(None) };
    let in_diagnostic = {
        let st = shared.state();
        if !st.is_instruction_file(&path) {
            return Ok(None);
        }
        st.published.get(&path).is_some_and(|d| d.iter().any(|d| contains(d.range, pos)))
    };
    // On an import: the file it names, then what the agents do with that file.
    let import = import_links(shared, &params.text_document_position_params.text_document.uri)
        .into_iter()
        .find(|(r, _, _)| contains(*r, pos))
        .and_then(|(range, target, named)| Some((range, path_of(&target)?, named)));
    // The file's own hover: on its first line, or inside a diagnostic.
    let own = pos.line == 0 || in_diagnostic;
    if !own && import.is_none() {
        return Ok(None);
    }
    shared.finish_walks().await;
    let working = shared.clone();
    off_thread(move || {
        let mut parts: Vec<String> = Vec::new();
        if own {
            parts.extend(describe(&working, &path).into_iter().map(|d| d.markdown));
        }
        if let Some((_, target, named)) = &import {
            let size = std::fs::metadata(target).map_or(0, |m| m.len());
            let shown = working
                .state()
                .sessions
                .values()
                .find_map(|s| target.strip_prefix(s.project_root()).ok().map(crate::paths::slash_join));
            let name = shown.unwrap_or_else(|| target.display().to_string());
            parts.push(format!("{} `{name}` ({})", verb(*named), crate::chain::words::bytes(size)));
            parts.extend(describe(&working, target).into_iter().map(|d| d.markdown));
        }
        if parts.is_empty() {
            return Ok(None);
        }
        let value = parts.join("\n\n---\n\n");
        let range = import.map(|(range, _, _)| range);
        Ok(Some(Hover { contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value }), range }))
    })
    .await
}

pub async fn code_lens(shared: &Shared, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
    let Some(path) = path_of(&params.text_document.uri) else { return Ok(None) };
    if !shared.state().is_instruction_file(&path) {
        return Ok(None);
    }
    shared.finish_walks().await;
    let lenses = describe(shared, &path)
        .into_iter()
        .map(|d| CodeLens {
            range: Range::new(Position::new(0, 0), Position::new(0, 0)),
            command: Some(Command { title: d.line, command: String::new(), arguments: None }),
            data: None,
        })
        .collect();
    Ok(Some(lenses))
}

/// What the hover and the code lens say of `path`, over copies of the sessions (so it can run
/// off the protocol thread): each session's own profile's view when it is selected, then each
/// selected agent's, in the words of the findings.
fn describe(shared: &Shared, path: &Path) -> Vec<hover::Description> {
    let (sessions, buffers) = {
        let st = shared.state();
        (st.sessions.values().cloned().collect::<Vec<_>>(), st.buffers())
    };
    let snapshots: Vec<_> = sessions
        .into_iter()
        .map(|s| {
            let snapshot = s.snapshot(&shared.cache, Some(&buffers));
            (s, snapshot)
        })
        .collect();
    let mut out = hover::describe(path, &snapshots);
    out.extend(hover::agents(path, &snapshots, |s| shared.tree(s)));
    out
}

/// The imports and references of an instruction file as links (`@` imports:
/// [`crate::chain::agents::imports::import_links`]; Markdown links and `#file:`:
/// [`crate::chain::agents::reference_links`]), over its open buffer or the file on disk, with
/// their ranges in the client's encoding.
fn import_links(shared: &Shared, uri: &Uri) -> Vec<(Range, Uri, Named)> {
    let Some(path) = path_of(uri) else { return Vec::new() };
    let (open, enc) = {
        let st = shared.state();
        if !st.is_instruction_file(&path) && path.extension().is_none_or(|e| e != "md") {
            return Vec::new();
        }
        (st.buffers().get(&path).cloned(), st.encoding)
    };
    let text: std::sync::Arc<str> = match open {
        Some(text) => text,
        None => String::from_utf8_lossy(&crate::chain::source::read_prefix(&path, 1 << 20)).into(),
    };
    crate::session::rename::links(&path, &text)
        .into_iter()
        .filter_map(|(l, named)| {
            let range = Range::new(
                convert::position(text.as_bytes(), l.start, enc),
                convert::position(text.as_bytes(), l.end, enc),
            );
            Some((range, convert::uri_of(&l.target)?, named))
        })
        .collect()
}

/// What a hover says a file does with the file a mention names.
fn verb(named: Named) -> &'static str {
    match named {
        Named::Import => "Imports",
        Named::Link => "Links to",
    }
}

pub async fn document_link(shared: &Shared, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
    let links = import_links(shared, &params.text_document.uri)
        .into_iter()
        .map(|(range, target, named)| DocumentLink {
            range,
            target: Some(target),
            tooltip: Some(match named {
                Named::Import => "Open the imported file".into(),
                Named::Link => "Open the linked file".into(),
            }),
            data: None,
        })
        .collect();
    Ok(Some(links))
}

pub async fn goto_definition(shared: &Shared, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
    let at = params.text_document_position_params;
    let found = import_links(shared, &at.text_document.uri).into_iter().find(|(r, _, _)| contains(*r, at.position));
    Ok(found.map(|(_, target, _)| GotoDefinitionResponse::Scalar(Location::new(target, Range::default()))))
}

/// The fix a diagnostic carries (see [`convert::diagnostic`]): its title, and the edit that
/// makes it in the document `uri`.
fn fix_of(d: &Diagnostic, uri: &Uri) -> Option<(String, WorkspaceEdit, Option<TextEdit>)> {
    let fix = d.data.as_ref()?.get("fix")?;
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
            let Some((title, edit, _)) = fix_of(d, uri) else { continue };
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![d.clone()]),
                edit: Some(edit),
                is_preferred: Some(true),
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
            let Some((_, _, Some(e))) = fix_of(d, uri) else { continue };
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

pub async fn execute_command(shared: &Shared, params: ExecuteCommandParams) -> Result<Option<Value>> {
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
    // The argument comes from the client, which may relay it from anywhere: never ask the editor
    // to open a web page or run a `command:` URI on our behalf.
    let uri = match uri_to_path(arg) {
        Some(path) if may_open(shared, &path) => arg.parse::<Uri>().ok(),
        _ => None,
    };
    let Some(uri) = uri else {
        return Err(Error::invalid_params(format!(
            "`{}` opens only a file: URI inside a workspace folder or a file a session loads, got `{arg}`",
            ext::CMD_OPEN
        )));
    };
    let shown = shared
        .client
        .show_document(ShowDocumentParams { uri, external: None, take_focus: Some(true), selection: None })
        .await;
    if let Err(e) = shown {
        tracing::warn!("window/showDocument failed: {e}");
    }
    Ok(None)
}

/// Whether `instructions.open` may show `path`: inside a workspace folder, or a file some
/// session has given its agent (a project file above the folder, the global file).
fn may_open(shared: &Shared, path: &Path) -> bool {
    let st = shared.state();
    st.folder_of(path).is_some() || st.sessions.values().any(|s| s.ledger().visible.iter().any(|v| v.path == path))
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

fn contains(range: Range, pos: Position) -> bool {
    let after_start = (pos.line, pos.character) >= (range.start.line, range.start.character);
    let before_end = (pos.line, pos.character) <= (range.end.line, range.end.character);
    after_start && before_end
}
