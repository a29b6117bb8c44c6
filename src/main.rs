use std::process::ExitCode;

use clap::Parser;
use instructions_lsp::cli::{self, Cli, Command};

fn main() -> ExitCode {
    let args = Cli::parse();
    init_tracing(args.log_level.as_deref());
    match args.command {
        Some(Command::Effective(a)) => one_line_on_panic("effective", || cli::effective(&a)),
        Some(Command::Check(a)) => one_line_on_panic("check", || cli::check(&a)),
        Some(Command::Compare(a)) => one_line_on_panic("compare", || cli::compare(&a)),
        Some(Command::Diff(a)) => one_line_on_panic("diff", || cli::diff(&a)),
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

/// Runs a command of the command line so that a panic anywhere in it (a bug, or a library's on
/// input it did not expect, such as a corrupt git object) ends as one line on stderr naming the
/// command, and exit code 2 (as for any input it cannot use), instead of a trace and 101.
fn one_line_on_panic(command: &'static str, run: impl FnOnce() -> ExitCode) -> ExitCode {
    std::panic::set_hook(Box::new(move |info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_string());
        let at = info.location().map(|l| format!(" (at {}:{})", l.file(), l.line())).unwrap_or_default();
        let what = instructions_lsp::paths::printable(&what);
        eprintln!(
            "instructions-lsp {command}: internal error, stopped: {what}{at}; please report it with the command that caused it"
        );
    }));
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or(ExitCode::from(2))
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
