//! instructions-lsp: computes, checks and serves the instruction files coding agents read.
//!
//! Data flows one way: disk or buffer -> [`chain`] (pure engine) -> [`session`] (state over
//! time) -> [`lsp`] / [`cli`] (presentation).

pub mod chain;
pub mod cli;
pub mod hook;
pub mod lsp;
pub mod mcp;
pub mod paths;
pub mod session;
pub mod watch;
