//! The language server: `initialize`, and each message handed in one line to its handler
//! (`handlers/`), which calls into the state and the session.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::lsp_types::*;
use tower_lsp_server::{Client, LanguageServer};

use super::convert::Encoding;
use super::ext;
use super::handlers::{actions, custom, documents, features, log_problems, path_of, workspace};
use super::shared::Shared;
use crate::chain::settings::Env;

pub struct Server {
    shared: Arc<Shared>,
}

impl Server {
    pub fn new(client: Client, env: Env) -> Self {
        Self { shared: Arc::new(Shared::new(client, env)) }
    }

    /// The state, for the transport and the process's end (ledgers to flush).
    pub fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// `instructions/transitions`.
    pub async fn transitions(&self, params: Value) -> Result<Value> {
        custom::transitions(&self.shared, params).await
    }

    /// `instructions/effective`.
    pub async fn effective(&self, params: Value) -> Result<Value> {
        custom::effective(&self.shared, params).await
    }

    /// `instructions/touch`.
    pub async fn touch_notification(&self, params: Value) {
        custom::touch_notification(&self.shared, params).await
    }

    /// A remembered answer to `instructions/effective`, for the transport's fast path.
    pub fn remembered_answer(&self, params: &Value) -> Option<Arc<[u8]>> {
        custom::remembered_answer(&self.shared, params)
    }

    /// Whether an `instructions/effective` request changes nothing the next message sees: true
    /// but for a server without workspace folders, where one starts a session for its path.
    pub fn effective_changes_nothing(&self) -> bool {
        !self.shared.state().implicit
    }
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
            let mut st = self.shared.state();
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
                document_link_provider: Some(DocumentLinkOptions {
                    resolve_provider: Some(false),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                }),
                definition_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(
                        super::handlers::completion::TRIGGERS.iter().map(|c| c.to_string()).collect(),
                    ),
                    ..CompletionOptions::default()
                }),
                code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                    code_action_kinds: Some(vec![
                        CodeActionKind::QUICKFIX,
                        CodeActionKind::REFACTOR,
                        CodeActionKind::from(super::handlers::actions::FIX_ALL),
                    ]),
                    ..CodeActionOptions::default()
                })),
                execute_command_provider: Some(ExecuteCommandOptions {
                    commands: vec![ext::CMD_OPEN.into(), ext::CMD_SHOW_VIEW.into()],
                    ..ExecuteCommandOptions::default()
                }),
                workspace: Some(WorkspaceServerCapabilities {
                    workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                        supported: Some(true),
                        change_notifications: Some(OneOf::Left(true)),
                    }),
                    file_operations: Some(WorkspaceFileOperationsServerCapabilities {
                        will_rename: Some(FileOperationRegistrationOptions {
                            filters: vec![FileOperationFilter {
                                scheme: Some("file".into()),
                                pattern: FileOperationPattern { glob: "**/*".into(), matches: None, options: None },
                            }],
                        }),
                        ..WorkspaceFileOperationsServerCapabilities::default()
                    }),
                }),
                experimental: Some(serde_json::json!({
                    "instructions": { "effective": true, "transitions": true, "touch": true, "didChange": true }
                })),
                ..ServerCapabilities::default()
            },
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        workspace::initialized(&self.shared).await
    }

    async fn shutdown(&self) -> Result<()> {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        self.shared.refresh.notify_one();
        // What the sessions did must be on disk before the client restarts us.
        let shared = self.shared.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || shared.flush_ledgers()).await {
            tracing::warn!("writing the ledgers at shutdown failed: {e}");
        }
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        documents::did_open(&self.shared, params).await
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        documents::did_change(&self.shared, params).await
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        documents::did_save(&self.shared, params).await
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        documents::did_close(&self.shared, params).await
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        workspace::did_change_workspace_folders(&self.shared, params).await
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        workspace::did_change_configuration(&self.shared, params).await
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        workspace::did_change_watched_files(&self.shared, params).await
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        features::hover(&self.shared, params).await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        features::code_lens(&self.shared, params).await
    }

    async fn document_link(&self, params: DocumentLinkParams) -> Result<Option<Vec<DocumentLink>>> {
        features::document_link(&self.shared, params).await
    }

    async fn goto_definition(&self, params: GotoDefinitionParams) -> Result<Option<GotoDefinitionResponse>> {
        features::goto_definition(&self.shared, params).await
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        workspace::references(&self.shared, params).await
    }

    async fn will_rename_files(&self, params: RenameFilesParams) -> Result<Option<WorkspaceEdit>> {
        workspace::will_rename_files(&self.shared, params).await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        super::handlers::completion::completion(&self.shared, params).await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        actions::code_action(&self.shared, params).await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        features::execute_command(&self.shared, params).await
    }
}
