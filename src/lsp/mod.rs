//! The protocol edge: server setup, handlers, conversions and custom methods. No discovery
//! logic lives here.

pub mod convert;
pub mod ext;
mod hover;
pub mod server;
mod state;
pub mod transport;

use std::process::ExitCode;

use tower_lsp_server::{ClientSocket, LspService};

use crate::chain::settings::Env;
pub use server::Server;

/// The service with every custom method registered.
pub fn service(env: Env) -> (LspService<Server>, ClientSocket) {
    LspService::build(|client| Server::new(client, env))
        .custom_method(ext::EFFECTIVE, Server::effective)
        .custom_method(ext::TRANSITIONS, Server::transitions)
        .custom_method(ext::TOUCH, Server::touch_notification)
        .finish()
}

/// Serves the language server on stdio until `exit` or end of input. The exit code is 0 when
/// `shutdown` came first, else 1 (as the LSP specification asks).
pub fn serve_stdio() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("instructions-lsp: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let clean = runtime.block_on(async {
        let (service, socket) = service(Env::from_process());
        let inner = service.inner().inner();
        transport::serve(tokio::io::stdin(), tokio::io::stdout(), service, socket).await;
        inner.shut_down()
    });
    // Background tasks (diagnostics, watchers) must not delay the exit.
    runtime.shutdown_background();
    if clean { ExitCode::SUCCESS } else { ExitCode::from(1) }
}
