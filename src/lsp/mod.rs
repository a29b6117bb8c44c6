//! The protocol edge.

use std::process::ExitCode;

/// Serves the language server on stdio until `exit` or end of input.
pub fn serve_stdio() -> ExitCode {
    eprintln!("instructions-lsp: the language server is not built yet; use `effective` or `check`");
    ExitCode::from(2)
}
