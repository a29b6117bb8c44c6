//! `instructions-lsp mcp`: a Model Context Protocol server over stdio, so that any agent that
//! speaks MCP asks for the instructions of the directories it works in, through the same
//! sessions, lifecycle and ledgers as the language server (see `docs/mcp.md`).
//!
//! The protocol is the official SDK's (`rmcp`); this module only maps its three tools onto
//! [`crate::session::Session`]: one session per client root, started (or continued from its
//! ledger) on first use and reconciled with the disk before every call.

mod roots;
mod tools;
mod transport;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

use crate::chain::settings::Env;
/// Exit code for usage and I/O errors, as every command of the binary.
const EXIT_USAGE: u8 = 2;
pub use tools::{Connection, TOOL_NAMES};

/// How long the server waits for the client's answer to `roots/list` before it uses the
/// working directory instead.
const ROOTS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// What the server tells the client (and so the model) about itself at `initialize`.
const INSTRUCTIONS: &str = "Project instructions (AGENTS.md, CLAUDE.md and similar files) apply per directory. \
Call instructions_for with your working directory when a task starts or after your context was compacted; \
call instructions_touch with each file you read, write or edit, and follow the instructions it returns for \
files in that directory (it returns each block once); call instructions_transitions with the last seq you saw \
to catch up after resuming.";

/// Runs the server on stdin and stdout until the client closes them.
pub fn run(profile: Option<&str>, set: &[String]) -> ExitCode {
    let env = Env::from_process();
    let core = match Connection::from_args(profile, set, env) {
        Ok(c) => c,
        Err(message) => {
            eprintln!("instructions-lsp mcp: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => crate::paths::normalize(&d),
        Err(e) => {
            eprintln!("instructions-lsp mcp: cannot read the working directory: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("instructions-lsp mcp: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let changes = roots::Changes::default();
    let server = McpServer {
        core: Arc::new(Mutex::new(core)),
        cwd,
        changes: changes.clone(),
        asking: Arc::new(tokio::sync::Mutex::new(())),
    };
    runtime.block_on(async move {
        let (stdin, stdout) = rmcp::transport::stdio();
        let transport = roots::Watching::new(transport::Bounded::new(stdin, stdout), changes);
        let service = match server.serve(transport).await {
            Ok(s) => s,
            Err(e) => {
                tracing::error!("the MCP client did not initialize: {e}");
                return ExitCode::FAILURE;
            }
        };
        match service.waiting().await {
            Ok(reason) => {
                tracing::debug!("MCP session ended: {reason:?}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                tracing::error!("the MCP session failed: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// The protocol handler: the shared [`Connection`], where to fall back when the client names no
/// roots, and what tells it the roots changed.
#[derive(Clone)]
pub struct McpServer {
    core: Arc<Mutex<Connection>>,
    cwd: PathBuf,
    /// The roots changes the transport has read so far.
    changes: roots::Changes,
    /// Held while the roots are asked, so that calls that find them stale ask once.
    asking: Arc<tokio::sync::Mutex<()>>,
}

impl McpServer {
    fn core(&self) -> MutexGuard<'_, Connection> {
        // A panic in one call leaves sessions that are still usable: keep serving.
        self.core.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes the roots current before a call: asks the client when they were never asked or
    /// changed since (a call right after a change waits for the new list; the old one stays
    /// until it comes).
    async fn current_roots(&self, peer: &rmcp::Peer<RoleServer>) {
        if !self.core().roots_stale(self.changes.seen()) {
            return;
        }
        let _asking = self.asking.lock().await;
        // Read under the lock: another call may have asked meanwhile, and a change read after
        // this point makes the answer stale again.
        let changes = self.changes.seen();
        if !self.core().roots_stale(changes) {
            return;
        }
        let listed = self.roots(peer).await;
        self.core().roots_answered(changes, listed, &self.cwd);
    }

    /// The client's roots as directories: `roots/list` when the client declares the roots
    /// capability, else the working directory; `None` when it does not answer. Roots are
    /// deprecated from protocol 2026-07-28 on (SEP-2577), but the clients of the handshake
    /// versions, which agents speak today, send them.
    #[allow(deprecated)]
    async fn roots(&self, peer: &rmcp::Peer<RoleServer>) -> Option<Vec<PathBuf>> {
        let declared = peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
        if !declared {
            return Some(vec![self.cwd.clone()]);
        }
        let listed = tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await;
        match listed {
            Ok(Ok(result)) => Some(
                result
                    .roots
                    .iter()
                    .filter_map(|r| {
                        let path = crate::paths::uri_to_path(&r.uri);
                        if path.is_none() {
                            tracing::warn!("ignoring the root `{}`: not a file:// URI", r.uri);
                        }
                        path.map(|p| crate::paths::normalize(&p))
                    })
                    .collect(),
            ),
            Ok(Err(e)) => {
                tracing::warn!("roots/list failed ({e}); keeping the roots as they were (else the working directory)");
                None
            }
            Err(_) => {
                tracing::warn!(
                    "roots/list had no answer in {} s; keeping the roots as they were (else the working directory)",
                    ROOTS_TIMEOUT.as_secs()
                );
                None
            }
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("instructions-lsp", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools::definitions()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !TOOL_NAMES.contains(&name.as_str()) {
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`; this server has {}", TOOL_NAMES.join(", ")),
                None,
            ));
        }
        self.current_roots(&context.peer).await;
        let args = request.arguments.unwrap_or_default();
        // Who asks: an agent known by its `clientInfo` is not given again what it loads itself.
        let client = context.client_info().and_then(|info| tools::client_agent(&info.name));
        tracing::debug!("{name} for {}", client.unwrap_or("an unknown client"));
        let core = self.core.clone();
        // Discovery reads files: off the protocol's threads.
        let done = tokio::task::spawn_blocking(move || {
            let mut core = core.lock().unwrap_or_else(|e| e.into_inner());
            core.call(&name, &args, client)
        })
        .await;
        let result = match done {
            Ok(Ok(answer)) => answer.into_result(),
            Ok(Err(message)) => CallToolResult::error(vec![ContentBlock::text(message)]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("the tool failed: {e}"))]),
        };
        Ok(result.into())
    }

    // `notifications/roots/list_changed` is counted by the transport (`roots::Watching`), in
    // order with the calls; the handler, which may run after the next call, does nothing. The
    // sessions of roots that stay keep their state.
}
