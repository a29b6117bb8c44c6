//! What an author sees on an instruction file: the hover, the code lens, the links of its imports
//! and the `instructions.open` command (the code actions are `actions.rs`).

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
    let (instruction, in_diagnostic) = {
        let st = shared.state();
        // A diagnostic about the file (a cut, a shadowed file), not one about a token there (a
        // missing import, a misspelt key), which says all there is to say of it.
        let about_token = |d: &Diagnostic| match &d.code {
            Some(NumberOrString::String(code)) => crate::chain::lint::Code::named(code).is_some_and(|c| c.at_token()),
            _ => false,
        };
        let in_diagnostic =
            st.published.get(&path).is_some_and(|d| d.iter().any(|d| contains(d.range, pos) && !about_token(d)));
        (st.is_instruction_file(&path), in_diagnostic)
    };
    // On an import: the file it names, then what the agents do with that file.
    let import = import_links(shared, &params.text_document_position_params.text_document.uri)
        .into_iter()
        .find(|(r, _, _)| contains(*r, pos))
        .and_then(|(range, target, named)| Some((range, path_of(&target)?, named)));
    // On a pattern of a rule's front matter: what it matches, for each agent that reads it.
    if instruction && pos.line > 0 {
        shared.finish_walks().await;
        let (working, on) = (shared.clone(), path.clone());
        let found = off_thread(move || Ok(pattern_hover(&working, &on, pos))).await?;
        if found.is_some() {
            return Ok(found);
        }
    }
    // The file's own hover: on its first line, or inside a diagnostic that is not an import's
    // (the diagnostic says itself).
    let own = pos.line == 0 || (in_diagnostic && import.is_none() && instruction);
    if !own && import.is_none() {
        return Ok(None);
    }
    shared.finish_walks().await;
    let working = shared.clone();
    off_thread(move || {
        let mut parts: Vec<String> = Vec::new();
        if own {
            let (engine, agents) = describe(&working, &path);
            parts.extend(engine.into_iter().map(|d| d.markdown));
            match agents {
                Some(a) => parts.push(a.markdown(size_words(&working, &path, &a).as_deref())),
                // Any other file: what each agent gets when it reads it.
                None if !instruction && path.is_file() => parts.extend(here_markdown(&working, &path)),
                None => {}
            }
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
            let (engine, agents) = describe(&working, target);
            parts.extend(engine.into_iter().map(|d| d.markdown));
            parts.extend(agents.map(|a| a.markdown(None)));
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

/// The hover on a pattern of a rule's front matter at `pos`: how many files of the repository it
/// matches for each agent the folder is checked for that reads the file, and the first few.
fn pattern_hover(shared: &Shared, path: &Path, pos: Position) -> Option<Hover> {
    let (session, enc) = {
        let st = shared.state();
        (st.session_of(path).cloned()?, st.encoding)
    };
    let text = file_text(shared, path);
    let offset = convert::offset(&text, pos, enc);
    let profiles = session.profiles();
    let agents: Vec<&str> = profiles.iter().map(String::as_str).collect();
    let root = session.project_root();
    // The folder's listing of the repository, not a walk of it at each hover.
    let scope = shared.typing_scope(&session.folder);
    let hits = crate::chain::agents::with_repo_cache(&scope, || {
        crate::chain::agents::patterns::hits_at(path, &text, offset, &agents, &root)
    })?;
    let show = crate::session::project::display_paths(&root);
    // A pattern of thousands of bytes is named by its start.
    let named: String = hits.pattern.chars().take(200).collect();
    let more = if named.len() < hits.pattern.len() { "…" } else { "" };
    let mut md = format!("**`{named}{more}`** (`{}`)\n", hits.key);
    for (agent, found) in &hits.agents {
        let who = crate::chain::agents::display_name(agent);
        use crate::chain::agents::patterns::Reach;
        let said = match found {
            Reach::Every => "matches every file".to_string(),
            Reach::Unlisted => "cannot be matched: the repository is too large to list".to_string(),
            Reach::TooLong => format!(
                "is not matched here: it is {} bytes long, more than the {} a hover matches",
                hits.pattern.len(),
                crate::chain::agents::patterns::PATTERN_MAX
            ),
            Reach::Files(0, _) => "matches no file in the repository".to_string(),
            Reach::Files(n, first) => {
                let named: Vec<String> = first
                    .iter()
                    .map(|f| match convert::uri_of(f) {
                        Some(u) => format!("[{}]({})", show(f), u.as_str()),
                        None => format!("`{}`", show(f)),
                    })
                    .collect();
                let files =
                    format!("{} file{}", crate::chain::words::number(*n as u64), if *n == 1 { "" } else { "s" });
                let more = if *n > named.len() { ", …" } else { "" };
                format!("matches {files}: {}{more}", named.join(", "))
            }
        };
        md.push_str(&format!("\n- {who}: {said}"));
    }
    let range = Range::new(
        convert::position(text.as_bytes(), hits.at.0, enc),
        convert::position(text.as_bytes(), hits.at.1, enc),
    );
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::Markdown, value: md }),
        range: Some(range),
    })
}

/// The lenses: each selected engine profile's place for the file; then, for an instruction file
/// or a file agents import, what each agent does with it; for any other file, what each agent
/// gets when it reads it. An agent's lens opens its view ([`ext::CMD_SHOW_VIEW`]).
pub async fn code_lens(shared: &Arc<Shared>, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
    let uri = params.text_document.uri;
    let Some(path) = path_of(&uri) else { return Ok(None) };
    if shared.state().folder_of(&path).is_none() && !shared.state().is_instruction_file(&path) {
        return Ok(None);
    }
    shared.finish_walks().await;
    let working = shared.clone();
    off_thread(move || {
        let instruction = working.state().is_instruction_file(&path);
        let at = Range::new(Position::new(0, 0), Position::new(0, 0));
        let lens = |title: String, command: &str, arguments: Option<Vec<Value>>| CodeLens {
            range: at,
            command: Some(Command { title, command: command.into(), arguments }),
            data: None,
        };
        let show = |agent: &str| Some(vec![Value::String(uri.to_string()), Value::String(agent.to_string())]);
        let (engine, agents) = describe(&working, &path);
        let mut lenses: Vec<CodeLens> = engine.into_iter().map(|d| lens(d.line, "", None)).collect();
        match agents {
            Some(a) => {
                let text = file_text(&working, &path);
                // Counted only when the editor has the whole text.
                let open = working.state().buffers().contains_key(&path);
                let whole = open || std::fs::metadata(&path).map_or(0, |m| m.len()) <= text.len() as u64;
                // One count for every agent's lens: the file's text is the same for each.
                let count = whole.then(|| crate::chain::tokens::count(&text)).flatten();
                for (agent, said) in &a.said {
                    let tokens = count.map(|count| crate::chain::tokens::Tokens {
                        count,
                        exact: crate::chain::tokens::exact_for(agent),
                    });
                    let title = match tokens {
                        Some(t) => format!("{said} · {}", t.words()),
                        None => said.clone(),
                    };
                    lenses.push(lens(title, ext::CMD_SHOW_VIEW, show(agent)));
                }
            }
            None if !instruction && path.is_file() => {
                for here in here_of(&working, &path) {
                    lenses.push(lens(here.line(), ext::CMD_SHOW_VIEW, show(&here.agent)));
                }
            }
            None => {}
        }
        Ok(Some(lenses))
    })
    .await
}

/// What the hover and the code lens say of `path`, over copies of the sessions (so it can run
/// off the protocol thread): each session's own profile's view when it is selected, then what
/// each selected agent does with the file, in the words of the findings.
fn describe(shared: &Shared, path: &Path) -> (Vec<hover::Description>, Option<hover::AgentsSaid>) {
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
    (hover::describe(path, &snapshots), hover::agents(path, &snapshots, |s| shared.tree(s)))
}

/// The text of `path` as the editor has it: its open buffer, else the file (1 MiB at most).
fn file_text(shared: &Shared, path: &Path) -> Arc<str> {
    match shared.state().buffers().get(path).cloned() {
        Some(text) => text,
        None => String::from_utf8_lossy(&crate::chain::source::read_prefix(path, 1 << 20)).into(),
    }
}

/// "Size: 1.2 KiB, 300 tokens (o200k_base: exact for Codex, an estimate for Claude Code)"; a
/// file larger than what the editor reads of it is given in bytes alone.
fn size_words(shared: &Shared, path: &Path, said: &hover::AgentsSaid) -> Option<String> {
    let text = file_text(shared, path);
    let on_disk = std::fs::metadata(path).map_or(0, |m| m.len());
    if !shared.state().buffers().contains_key(path) && on_disk > text.len() as u64 {
        return Some(format!("Size: {} (too large to count its tokens here)", crate::chain::words::bytes(on_disk)));
    }
    let count = crate::chain::tokens::count(&text)?;
    let names = |exact: bool| -> Vec<&str> {
        said.said
            .iter()
            .filter(|(a, _)| crate::chain::tokens::exact_for(a) == exact)
            .map(|(a, _)| crate::chain::agents::display_name(a))
            .collect()
    };
    let (exact, estimated) = (names(true), names(false));
    let mut whose = Vec::new();
    if !exact.is_empty() {
        whose.push(format!("exact for {}", exact.join(", ")));
    }
    if !estimated.is_empty() {
        whose.push(format!("an estimate for {}", estimated.join(", ")));
    }
    let tokens = crate::chain::tokens::Tokens { count, exact: true }.words();
    Some(format!(
        "Size: {}, {tokens} ({}: {})",
        crate::chain::words::bytes(text.len() as u64),
        crate::chain::tokens::ENCODING,
        whose.join("; ")
    ))
}

/// What each agent of the innermost session holding `path` gets when it reads it.
fn here_of(shared: &Shared, path: &Path) -> Vec<crate::session::here::Here> {
    let (session, env) = {
        let st = shared.state();
        let Some(session) = st.session_of(path).cloned() else { return Vec::new() };
        (session, st.env.clone())
    };
    crate::session::here::rules_here(&session, shared, &env, path)
}

/// The hover of a file that is no instruction file: each agent's files once it reads it, each
/// a link, those this read adds marked.
fn here_markdown(shared: &Shared, path: &Path) -> Option<String> {
    let all = here_of(shared, path);
    if all.is_empty() {
        return None;
    }
    let mut md = String::from("**Instructions** each agent gets when it reads this file:\n");
    for here in &all {
        let files: Vec<String> = here
            .files
            .iter()
            .map(|f| {
                let link = convert::uri_of(&f.path)
                    .map_or_else(|| format!("`{}`", f.shown), |u| format!("[{}]({})", f.shown, u.as_str()));
                let mut words = link;
                if f.added {
                    words.push_str(" (for this file)");
                }
                if f.truncated {
                    words.push_str(" (cut by its budget)");
                }
                words
            })
            .collect();
        if files.is_empty() {
            md.push_str(&format!("\n- **{}**: no instructions", here.name));
            continue;
        }
        let size = here.tokens.map_or_else(|| crate::chain::words::bytes(here.bytes as u64), |t| t.words());
        md.push_str(&format!("\n- **{}**: {} · {size}", here.name, files.join(", ")));
    }
    Some(md)
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

pub async fn execute_command(shared: &Arc<Shared>, params: ExecuteCommandParams) -> Result<Option<Value>> {
    if params.command == ext::CMD_SHOW_VIEW {
        return show_view(shared, params.arguments).await.map(Some);
    }
    if params.command != ext::CMD_OPEN {
        return Err(Error::invalid_params(format!(
            "unknown command `{}`; this server runs `{}` and `{}`",
            params.command,
            ext::CMD_OPEN,
            ext::CMD_SHOW_VIEW
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

/// `instructions.showView`: the view of an agent once it reads a file of a workspace folder (or
/// started in a folder), as `{ title, text, view }`: the title to show it under, the agent's
/// exact text, and the answer of `instructions/effective` with that `profile`.
async fn show_view(shared: &Arc<Shared>, arguments: Vec<Value>) -> Result<Value> {
    let cmd = ext::CMD_SHOW_VIEW;
    let agents = crate::chain::agents::NAMES.join(", ");
    let bad = |what: String| Error::invalid_params(format!("`{cmd}` takes [uri, agent]: {what}"));
    let (Some(arg), Some(agent)) =
        (arguments.first().and_then(Value::as_str), arguments.get(1).and_then(Value::as_str))
    else {
        return Err(bad(format!("two strings, a file: URI inside a workspace folder and an agent ({agents})")));
    };
    let shown_arg = crate::paths::printable(&arg.chars().take(200).collect::<String>()).into_owned();
    if !crate::chain::agents::NAMES.contains(&agent) {
        let agent = crate::paths::printable(&agent.chars().take(100).collect::<String>()).into_owned();
        return Err(bad(format!("`{agent}` is not an agent; expected one of {agents}")));
    }
    let Some(path) = uri_to_path(arg) else {
        return Err(bad(format!("`{shown_arg}` is not a file: URI")));
    };
    // A path that names nothing is no place an agent reads (and a made-up one of thousands of
    // folders would cost a walk of each).
    if path.as_os_str().len() > 4096 || std::fs::symlink_metadata(&path).is_err() {
        return Err(bad(format!("`{shown_arg}` names no file or folder")));
    }
    let (session, env) = {
        let st = shared.state();
        let Some(session) = st.session_of(&path).cloned() else {
            return Err(bad(format!("`{shown_arg}` is not inside a workspace folder")));
        };
        (session, st.env.clone())
    };
    shared.finish_walks().await;
    let (working, agent) = (shared.clone(), agent.to_string());
    off_thread(move || {
        let preview = (path != session.folder).then(|| if path.is_dir() { path.join(".touch") } else { path.clone() });
        let view = crate::session::profiles::one(&session, working.as_ref(), &agent, &env, preview.as_deref(), true)
            .map_err(Error::invalid_params)?;
        // Named as every view names a file, without the control characters a name may hold.
        let named = crate::session::project::display_paths(&session.project_root())(&path);
        let shown = crate::paths::printable(&named);
        let title = match preview {
            Some(_) => format!("{} reading {shown}", view.name),
            None => format!("{} in {shown}", view.name),
        };
        let text = view.text.clone();
        let view = serde_json::to_value(view).map_err(|e| Error::invalid_params(e.to_string()))?;
        Ok(serde_json::json!({"title": title, "text": text, "view": view}))
    })
    .await
}

/// Whether `instructions.open` may show `path`: inside a workspace folder, or a file some
/// session has given its agent (a project file above the folder, the global file).
fn may_open(shared: &Shared, path: &Path) -> bool {
    let st = shared.state();
    st.folder_of(path).is_some() || st.sessions.values().any(|s| s.ledger().visible.iter().any(|v| v.path == path))
}

fn contains(range: Range, pos: Position) -> bool {
    let after_start = (pos.line, pos.character) >= (range.start.line, range.start.character);
    let before_end = (pos.line, pos.character) <= (range.end.line, range.end.character);
    after_start && before_end
}
