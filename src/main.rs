use std::process::ExitCode;

use clap::Parser;
use instructions_lsp::cli::{self, Cli, Command};

fn main() -> ExitCode {
    let args = Cli::parse();
    init_tracing(args.log_level.as_deref());
    match args.command {
        Some(Command::Effective(a)) => cli::effective(&a),
        Some(Command::Check(a)) => cli::check(&a),
        Some(Command::Compare(a)) => cli::compare(&a),
        Some(Command::Diff(a)) => cli::diff(&a),
        Some(Command::Mcp(a)) => instructions_lsp::mcp::run(a.settings.profile.as_deref(), &a.settings.set),
        Some(Command::Hook(a)) => {
            instructions_lsp::hook::run_with(a.agent.as_deref().unwrap_or(""), a.profile.as_deref(), &a.set)
        }
        Some(Command::Serve) | None => {
            use std::io::IsTerminal;
            if std::io::stdin().is_terminal() {
                // Someone typed the bare command: say what is waiting for input.
                eprintln!(
                    "instructions-lsp is a language server and waits for an editor on stdin; for the command line, try `instructions-lsp effective .`, `check .` or `compare .` (--help for more)"
                );
            }
            instructions_lsp::lsp::serve_stdio()
        }
    }
}

/// Logs go to stderr only: stdout carries the protocol. The MCP SDK logs every session's
/// start and end at `info`, which an agent's log does not need: its warnings only, by default.
fn init_tracing(level: Option<&str>) {
    use tracing_subscriber::EnvFilter;
    const DEFAULT: &str = "info,rmcp=warn";
    let filter = match level {
        Some(l) => EnvFilter::try_new(l).unwrap_or_else(|_| EnvFilter::new(DEFAULT)),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT)),
    };
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
}
