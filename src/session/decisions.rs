//! What a repository decides in `instructions-lsp.toml` about its findings: those it accepts
//! for some files (`[accept]`, as ruff's `per-file-ignores`), which no edge reports (every
//! configuration file from a finding's folder up to the project root counts, each naming files
//! from its own folder), and those in the folders it leaves out (`exclude`); and the budget it may raise for an agent that cuts its files, offered
//! as a fix.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::chain::agents::{AgentView, Scope, Status};
use crate::chain::config::Exclusions;
use crate::chain::lint::{Code, Finding, Fix};

/// What one configuration file decides, compiled: its folder, its `[accept]` (the files named
/// by their paths, and the patterns with wildcards as one set) and what its `exclude` leaves out.
struct Entries {
    dir: PathBuf,
    paths: HashMap<String, Vec<String>>,
    set: globset::GlobSet,
    codes: Vec<Vec<String>>,
    excluded: Exclusions,
}

/// What the configuration files met so far accept, read once each.
#[derive(Default)]
pub struct Accepted {
    configs: HashMap<PathBuf, Option<Entries>>,
    /// The nearest configuration file of each folder asked about.
    nearest: HashMap<PathBuf, Option<PathBuf>>,
}

impl Accepted {
    fn entries(&mut self, config: &Path) -> Option<&Entries> {
        // Each file's patterns compiled once, a few dozen files at a time: a repository of
        // hundreds of configuration files costs time, not memory.
        if self.configs.len() >= 32 && !self.configs.contains_key(config) {
            self.configs.clear();
        }
        self.configs
            .entry(config.to_path_buf())
            .or_insert_with(|| {
                // A configuration that cannot be used accepts nothing (`check` says why).
                let c = crate::chain::config::load_config(config).ok()?;
                let dir = config.parent()?.to_path_buf();
                let mut set = globset::GlobSetBuilder::new();
                let (mut paths, mut codes) = (HashMap::new(), Vec::new());
                for (pattern, list) in c.accept {
                    // Every key names the file at its path too: `app/[slug]/CLAUDE.md`, which the
                    // quick fix writes as it is, is that file as well as a pattern.
                    if crate::chain::config_keys::is_glob(&pattern) {
                        set.add(crate::chain::config_keys::accept_pattern(&pattern).ok()?);
                        codes.push(list.clone());
                    }
                    paths.insert(pattern, list);
                }
                let excluded = Exclusions::of_lines(&dir, &c.exclude);
                Some(Entries { dir, paths, set: set.build().ok()?, codes, excluded })
            })
            .as_ref()
    }

    /// [`crate::chain::config::find_config`] of `dir`, each folder on the way asked once: a
    /// check's findings lie in thousands of folders that share their ancestors.
    fn nearest(&mut self, dir: &Path) -> Option<PathBuf> {
        if let Some(found) = self.nearest.get(dir) {
            return found.clone();
        }
        let found = match crate::chain::config::config_in(dir) {
            Some(p) => Some(p),
            None if crate::chain::confine::holds_git(dir) => None,
            None => dir.parent().and_then(|up| self.nearest(up)),
        };
        self.nearest.insert(dir.to_path_buf(), found.clone());
        found
    }

    /// Whether a configuration from `path`'s folder up to the project root accepts findings of
    /// code `code` for `path`, or leaves `path` out altogether (`exclude`).
    pub fn accepts(&mut self, path: &Path, code: &str) -> bool {
        let mut here = path.parent().map(Path::to_path_buf);
        while let Some(dir) = here.take() {
            let Some(config) = self.nearest(&dir) else { return false };
            if let Some(e) = self.entries(&config)
                && let Ok(rel) = path.strip_prefix(&e.dir)
            {
                let has = |list: &Vec<String>| list.iter().any(|c| c == code);
                let named = e.paths.get(&crate::paths::slash_join(rel)).is_some_and(has);
                let matched = || e.set.matches(rel).into_iter().any(|i| e.codes.get(i).is_some_and(has));
                if named || matched() || e.excluded.excludes(path, false) {
                    return true;
                }
            }
            let holder = config.parent().unwrap_or(&dir);
            if crate::chain::confine::holds_git(holder) {
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
    let key = crate::chain::config::find_config(&view.cwd).unwrap_or_else(|| view.cwd.clone());
    memo.entry((key, view.profile, needed))
        .or_insert_with(|| crate::chain::config_edit::raise_budget(&view.cwd, view.profile, needed))
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key is the file at its path, also when the path holds a pattern's characters (a
    /// Next.js route folder), as the quick fix writes it; a pattern matches as a glob.
    #[test]
    fn accepted_keys_name_files_by_their_paths_and_patterns_by_globs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).expect("git");
        let config =
            "[accept]\n\"app/[slug]/CLAUDE.md\" = [\"agentIgnored\"]\n\"docs/**/AGENTS.md\" = [\"shadowed\"]\n";
        std::fs::write(root.join("instructions-lsp.toml"), config).expect("config");
        let mut a = Accepted::default();
        assert!(a.accepts(&root.join("app/[slug]/CLAUDE.md"), "agentIgnored"));
        // (And as a pattern, `[slug]` is a class of letters: `app/s` is matched too.)
        assert!(a.accepts(&root.join("app/s/CLAUDE.md"), "agentIgnored"));
        assert!(!a.accepts(&root.join("app/x/CLAUDE.md"), "agentIgnored"));
        assert!(a.accepts(&root.join("docs/a/b/AGENTS.md"), "shadowed"));
        assert!(!a.accepts(&root.join("docs/a/b/AGENTS.md"), "agentCut"));
    }
}
