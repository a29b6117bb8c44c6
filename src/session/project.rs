//! Which agents a directory is checked for, and why: decided from its project (its
//! `instructions-lsp.toml`, else the instruction files of the whole project), the same for
//! every edge: `check D`, `compare D`, `effective D`, the language server, MCP and the hooks.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::chain::discover::project_root;
use crate::chain::targets::{self, Targets};

/// The agents `dir` is checked for. `walked`, the instruction file names below `dir` when a
/// caller walked it already, stands in for the project's when `dir` is the project root.
pub fn targets_of(dir: &Path, markers: &[String], walked: Option<&BTreeSet<String>>) -> Result<Targets, String> {
    let root = project_root(dir, markers);
    let names = match walked {
        Some(names) if root == dir => names.clone(),
        _ => targets::names_below(&root),
    };
    Targets::resolve(dir, names.iter().map(String::as_str))
}

/// How every view names a file: relative to the project root `root` (its real path too), else
/// whole. The root is resolved once, not once per file named.
pub fn display_paths(root: &Path) -> impl Fn(&Path) -> String + '_ {
    let real: PathBuf = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    move |path: &Path| match path.strip_prefix(&real).or_else(|_| path.strip_prefix(root)) {
        Ok(rel) if !rel.as_os_str().is_empty() => crate::paths::slash_join(rel),
        _ => crate::paths::slash_join(path),
    }
}

/// The settings an agent runs with in a directory: its project's configuration (the agent's
/// table of `instructions-lsp.toml`), then what the caller sets (`--set baselineMaxBytes=…`).
pub fn overrides(
    targets: Option<&Targets>,
    agent: &str,
    set: Option<&crate::chain::agents::Overrides>,
) -> crate::chain::agents::Overrides {
    let mut o = targets.map(|t| t.overrides(agent)).unwrap_or_default();
    if let Some(set) = set {
        o.max_bytes = set.max_bytes.or(o.max_bytes);
        o.candidates = set.candidates.clone().or(o.candidates);
        o.editor.extend(set.editor.clone());
    }
    o
}

/// What the nearest `instructions-lsp.toml` (from `dir` up to the project root) gives `agent`;
/// nothing when there is none or it cannot be used (those who check it report that).
pub fn configured_overrides(dir: &Path, agent: &str) -> crate::chain::agents::Overrides {
    targets::resolved_config(dir).ok().flatten().map(|c| c.overrides(agent)).unwrap_or_default()
}
