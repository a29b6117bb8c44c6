//! What a repository decides in `instructions-lsp.toml` about its findings: those it accepts
//! for some files (`[accept]`, as ruff's `per-file-ignores`), which no edge reports (every
//! configuration file from a finding's folder up to the project root counts, each naming files
//! from its own folder); and the budget it may raise for an agent that cuts its files, offered
//! as a fix.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::chain::agents::{AgentView, Scope, Status};
use crate::chain::lint::{Code, Finding, Fix};
use crate::chain::targets;

/// The `[accept]` entries of one configuration file, compiled: its folder, its patterns as one
/// set, and each pattern's codes.
type Entries = (PathBuf, globset::GlobSet, Vec<Vec<String>>);

/// What the configuration files met so far accept, read once each.
#[derive(Default)]
pub struct Accepted {
    configs: HashMap<PathBuf, Option<Entries>>,
    /// The nearest configuration file of each folder asked about.
    nearest: HashMap<PathBuf, Option<PathBuf>>,
}

impl Accepted {
    fn entries(&mut self, config: &Path) -> Option<&Entries> {
        self.configs
            .entry(config.to_path_buf())
            .or_insert_with(|| {
                // A configuration that cannot be used accepts nothing (`check` says why).
                let c = targets::load_config(config).ok()?;
                let dir = config.parent()?.to_path_buf();
                let mut set = globset::GlobSetBuilder::new();
                let mut codes = Vec::new();
                for (pattern, list) in c.accept {
                    set.add(targets::accept_pattern(&pattern).ok()?);
                    codes.push(list);
                }
                Some((dir, set.build().ok()?, codes))
            })
            .as_ref()
    }

    /// Whether a configuration from `path`'s folder up to the project root accepts findings of
    /// code `code` for `path`.
    pub fn accepts(&mut self, path: &Path, code: &str) -> bool {
        let mut here = path.parent().map(Path::to_path_buf);
        while let Some(dir) = here.take() {
            let found = self.nearest.entry(dir.clone()).or_insert_with(|| targets::find_config(&dir)).clone();
            let Some(config) = found else { return false };
            if let Some((base, set, codes)) = self.entries(&config)
                && let Ok(rel) = path.strip_prefix(base)
                && set.matches(rel).into_iter().any(|i| codes.get(i).is_some_and(|list| list.iter().any(|c| c == code)))
            {
                return true;
            }
            let holder = config.parent().unwrap_or(&dir);
            if std::fs::symlink_metadata(holder.join(".git")).is_ok() {
                return false;
            }
            here = holder.parent().map(Path::to_path_buf);
        }
        false
    }
}

/// `findings` without those the repository accepts (never one about the configuration itself).
pub fn retain(findings: &mut Vec<Finding>) {
    let mut accepted = Accepted::default();
    findings.retain(|f| f.code == Code::BadConfig || !accepted.accepts(&f.path, f.code.name()));
}

/// Memo of the budget fixes made in one pass: by the configuration written (or the folder a new
/// one would be made for), agent and size.
pub type BudgetFixes = HashMap<(PathBuf, &'static str, u64), Option<Fix>>;

/// The fix that raises the budget of `view`'s agent to what its files take, for a finding of a
/// file it cuts or leaves out by its budget (Codex's `project_doc_max_bytes`, dsh-next's
/// `maxBytes`: `[agent] max-bytes`). `memo` keeps them for a pass over many folders.
pub fn budget_fix(view: &AgentView, path: &Path, memo: &mut BudgetFixes) -> Option<Fix> {
    let file = view.files.iter().find(|f| f.path == path)?;
    if !matches!(file.status, Status::Truncated | Status::Omitted) || !matches!(view.profile, "codex" | "dsh-next") {
        return None;
    }
    let counted = view.files.iter().filter(|f| {
        (f.scope != Scope::Global || view.global_in_budget)
            && matches!(f.status, Status::Loaded | Status::Truncated | Status::Omitted)
    });
    // Codex counts the files' bytes alone; dsh-next's frame takes some more.
    let slack = if view.profile == "dsh-next" { 1024 } else { 0 };
    let needed = (counted.map(|f| f.bytes).sum::<u64>() + slack).div_ceil(1024) * 1024;
    let key = targets::find_config(&view.cwd).unwrap_or_else(|| view.cwd.clone());
    memo.entry((key, view.profile, needed))
        .or_insert_with(|| crate::chain::config_edit::raise_budget(&view.cwd, view.profile, needed))
        .clone()
}
