//! How a rule's patterns match paths, as the agents' own packages match them.
//!
//! - `globs.rs`: many patterns compiled into one set, matched against every file in one pass
//!   (a repository of 100,000 files against every rule at once).
//! - `rule.rs`: Claude Code's gitignore lines and VS Code's globs for one rule
//!   ([`rule::RuleMatcher`]), and how written globs become matched ones (commas, braces, bounds).

pub mod globs;
pub mod rule;
