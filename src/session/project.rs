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
/// table of `instructions-lsp.toml`), then what the caller sets (`--set baselineMaxBytes=…`, the
/// editor's settings, [`crate::chain::settings::Settings::agent_sets`]). Every edge resolves an
/// agent's settings here, so that one setting means the same in `effective`, `compare`,
/// `check`, `diff`, the server and MCP. (What a real agent loads by itself, which the hooks and
/// MCP leave out of what they serve, follows the configuration alone.)
pub fn overrides(
    targets: Option<&Targets>,
    agent: &str,
    set: Option<&crate::chain::agents::Overrides>,
) -> crate::chain::agents::Overrides {
    merged(targets.map(|t| t.overrides(agent)).unwrap_or_default(), set)
}

/// `configured` (what a configuration file gives an agent) with what the caller sets winning.
pub fn merged(
    mut configured: crate::chain::agents::Overrides,
    set: Option<&crate::chain::agents::Overrides>,
) -> crate::chain::agents::Overrides {
    if let Some(set) = set {
        configured.max_bytes = set.max_bytes.or(configured.max_bytes);
        configured.candidates = set.candidates.clone().or(configured.candidates);
        configured.editor.extend(set.editor.clone());
    }
    configured
}

/// What the nearest `instructions-lsp.toml` (from `dir` up to the project root) gives `agent`;
/// nothing when there is none or it cannot be used (those who check it report that).
pub fn configured_overrides(dir: &Path, agent: &str) -> crate::chain::agents::Overrides {
    crate::chain::config::resolved_config(dir).ok().flatten().map(|c| c.overrides(agent)).unwrap_or_default()
}

/// The folder whose agents' views a change of `file` may change: the file's own folder (an
/// instruction file loads there and below), or for a file in an agent's folder (`.claude/rules`,
/// `.github/instructions`, `.cursor/rules`, a settings file) the folder that holds that one.
pub fn reach_of_change(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap_or(file);
    let config = dir.ancestors().find(|d| {
        d.file_name().and_then(|n| n.to_str()).is_some_and(|n| crate::chain::agents::CONFIG_FOLDERS.contains(&n))
    });
    match config.and_then(Path::parent) {
        Some(holder) => holder.to_path_buf(),
        None => dir.to_path_buf(),
    }
}
