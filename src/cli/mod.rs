//! The command line: `effective`, `check` and `compare` (docs/cli.md); `main.rs` hands `mcp` and `hook` to their edges.

mod args;
mod check;
mod compare;
mod diff;
mod effective;

pub use args::*;

/// `instructions-lsp check`.
pub fn check(args: &CheckArgs) -> std::process::ExitCode {
    one_run(|| check::run(args))
}

/// `instructions-lsp compare`.
pub fn compare(args: &CompareArgs) -> std::process::ExitCode {
    one_run(|| compare::run(args))
}

/// `instructions-lsp effective`.
pub fn effective(args: &EffectiveArgs) -> std::process::ExitCode {
    one_run(|| effective::run(args))
}

/// `instructions-lsp diff`.
pub fn diff(args: &DiffArgs) -> std::process::ExitCode {
    one_run(|| diff::run(args))
}

/// A command's views share one listing of each repository (the process answers once).
fn one_run<T>(f: impl FnOnce() -> T) -> T {
    crate::chain::agents::with_repo_cache(&std::sync::Arc::default(), f)
}
