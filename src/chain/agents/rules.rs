//! What is wrong with the glob-attached rules of Copilot and Cursor, as their users would want
//! to know before wondering why a rule never reaches the agent: front matter that does not
//! parse, a Cursor rule nothing attaches, and a pattern that matches no file of the repository.

use std::path::{Path, PathBuf};

use super::explain::display_name;
use super::profile::AgentProfile;
use super::read::read_capped;
use super::view::{AgentFile, Scope, Status};
use super::walk::{RuleMatcher, front_matter_problem, is_wildcard, rule_base};

/// The most entries the search for files a pattern matches looks at.
const REPO_ENTRIES: usize = 20_000;

/// The problems of `files`' rules (only for profiles whose rules are attached by globs of
/// their own, [`AgentProfile::rule_files`]: Copilot's instructions files, Cursor's `.mdc`
/// rules), as `(file, message)`. `base` is the project's directory (the nearest holding `.git`,
/// else the working directory).
pub(super) fn problems(profile: &AgentProfile, files: &[AgentFile], base: &Path) -> Vec<(PathBuf, String)> {
    let Some(rule_files) = profile.rule_files else { return Vec::new() };
    let is_rule = |p: &Path| p.file_name().and_then(|n| n.to_str()).unwrap_or("").ends_with(rule_files.suffix);
    let agent = display_name(profile.name);
    let key = rule_files.globs_key;
    let mut out = Vec::new();
    let mut repo: Option<Vec<PathBuf>> = None;
    for f in files.iter().filter(|f| is_rule(&f.path) && f.status != Status::LinkedOutside) {
        let text = read_capped(&f.path, 64 * 1024).map(|(d, _)| String::from_utf8_lossy(&d).into_owned());
        if let Some(why) = text.ok().as_deref().and_then(front_matter_problem) {
            out.push((
                f.path.clone(),
                format!("{agent} cannot read this file's front matter ({why}), so it reads none of its keys"),
            ));
            continue;
        }
        if f.status == Status::Manual {
            out.push((
                f.path.clone(),
                format!(
                    "{agent} never attaches this rule on its own: its front matter has neither `alwaysApply`, `globs` nor `description` (only an @-mention adds it)"
                ),
            ));
        }
        let patterns: Vec<&String> = f.globs.iter().filter(|g| !is_wildcard(g)).collect();
        if patterns.is_empty() || f.scope == Scope::Global {
            continue;
        }
        let repo = repo.get_or_insert_with(|| repo_files(base));
        let rule_dir = rule_base(&f.path, f.scope, base);
        let dead: Vec<String> = patterns
            .into_iter()
            .filter(|g| {
                RuleMatcher::new(profile.glob_style, std::slice::from_ref(*g))
                    .is_none_or(|m| !repo.iter().any(|p| m.matches(&rule_dir, p)))
            })
            .map(|g| format!("`{g}`"))
            .collect();
        if dead.is_empty() {
            continue;
        }
        let all = dead.len() == f.globs.len();
        let message = if all {
            format!(
                "{agent} never attaches this file by its `{key}`: {} {} no file in the repository",
                dead.join(", "),
                if dead.len() == 1 { "matches" } else { "match" }
            )
        } else {
            format!(
                "{agent}: the `{key}` {} {} {} no file in the repository",
                if dead.len() == 1 { "pattern" } else { "patterns" },
                dead.join(", "),
                if dead.len() == 1 { "matches" } else { "match" }
            )
        };
        out.push((f.path.clone(), message));
    }
    out
}

/// The files of the repository below `base` (real paths, `.gitignore` honoured, `.git` and
/// `node_modules` skipped), at most [`REPO_ENTRIES`] entries looked at.
fn repo_files(base: &Path) -> Vec<PathBuf> {
    let base = super::read::real_path(base).unwrap_or_else(|_| base.to_path_buf());
    ignore::WalkBuilder::new(&base)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git" && e.file_name() != "node_modules")
        .build()
        .take(REPO_ENTRIES)
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| e.into_path())
        .collect()
}
