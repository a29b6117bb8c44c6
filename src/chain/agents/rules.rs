//! What is wrong with the glob-attached rules of Copilot and Cursor, as their users would want
//! to know before wondering why a rule never reaches the agent: front matter that does not
//! parse, a Cursor rule nothing attaches, and a pattern that matches no file of the repository.

use std::path::Path;

use super::explain::display_name;
use super::profile::AgentProfile;
use super::read::read_capped;
use super::repo::SearchKey;
use super::view::{AgentFile, RuleProblem, RuleProblemKind, RuleReach, Scope, Status};
use super::walk::{front_matter_problem, is_wildcard, rule_base};

/// The problems of `files`' rules (only for profiles whose rules are attached by globs of
/// their own, [`AgentProfile::rule_files`]: Copilot's instructions files, Cursor's `.mdc`
/// rules), as `(file, message)`. `base` is the project's directory (the nearest holding `.git`,
/// else the working directory).
pub(super) fn problems(profile: &AgentProfile, files: &[AgentFile], base: &Path) -> (Vec<RuleProblem>, Vec<RuleReach>) {
    let Some(rule_files) = profile.rule_files else { return (Vec::new(), Vec::new()) };
    let mut reach = Vec::new();
    let mut out = profile.problems.map(|own| own(profile, files, base)).unwrap_or_default();
    let is_rule = |f: &AgentFile| {
        !f.globs.is_empty() || f.path.file_name().and_then(|n| n.to_str()).unwrap_or("").ends_with(rule_files.suffix)
    };
    let agent = display_name(profile.name);
    let never = |path: &Path, message: String| RuleProblem::new(path.to_path_buf(), RuleProblemKind::Never, message);
    // The rules whose patterns are checked against the repository, searched together below.
    let mut searched: Vec<(&AgentFile, SearchKey)> = Vec::new();
    for f in files.iter().filter(|f| is_rule(f) && f.status != Status::LinkedOutside) {
        let problem = super::repo::remembered("front matter problem", &f.path, || {
            let text = read_capped(&f.path, 64 * 1024).map(|(d, _)| String::from_utf8_lossy(&d).into_owned());
            text.ok().as_deref().and_then(front_matter_problem)
        });
        if let Some(why) = problem {
            out.push(never(
                &f.path,
                format!("{agent} cannot read this file's front matter ({why}), so it reads none of its keys"),
            ));
            continue;
        }
        if f.status == Status::Manual {
            out.push(never(
                &f.path,
                format!(
                    "{agent} never attaches this rule on its own: its front matter has neither `alwaysApply`, `globs` nor `description` (only an @-mention adds it)"
                ),
            ));
        }
        if !searches_repository(f) {
            continue;
        }
        let globs: Vec<String> = f.globs.iter().filter(|g| !is_wildcard(g)).cloned().collect();
        let rule_dir = rule_base(&f.path, f.scope, base);
        searched.push((f, SearchKey { style: profile.glob_style, rule_dir, globs }));
    }
    if searched.is_empty() {
        return (out, reach);
    }
    let keys: Vec<SearchKey> = searched.iter().map(|(_, k)| k.clone()).collect();
    // A repository too large to list: nothing is known of what the patterns match.
    let Some(results) = super::repo::index(base).search(&keys) else { return (out, reach) };
    for ((f, key), search) in searched.into_iter().zip(results) {
        if f.status == Status::Waiting {
            reach.push(RuleReach { path: f.path.clone(), matching: search.matching, example: search.example.clone() });
        }
        let dead: Vec<String> =
            key.globs.iter().zip(&search.alive).filter(|(_, alive)| !**alive).map(|(g, _)| format!("`{g}`")).collect();
        if dead.is_empty() {
            continue;
        }
        let all = dead.len() == f.globs.len();
        let verb = if dead.len() == 1 { "matches" } else { "match" };
        let problem = if all {
            never(
                &f.path,
                format!(
                    "{agent} never attaches this file by its `{key}`: {} {verb} no file in the repository",
                    dead.join(", "),
                    key = rule_files.globs_key
                ),
            )
        } else {
            // The rule attaches by its other patterns: one dead alternative is worth knowing, not
            // a warning.
            RuleProblem::new(
                f.path.clone(),
                RuleProblemKind::DeadPattern,
                format!(
                    "{agent} attaches this file by its other `{key}` patterns; {} {} {verb} no file in the repository",
                    if dead.len() == 1 { "the pattern" } else { "the patterns" },
                    dead.join(", "),
                    key = rule_files.globs_key
                ),
            )
        };
        out.push(problem);
    }
    (out, reach)
}

/// Whether the patterns of rule `f` are checked against every file of the repository (its
/// "matches no file" and how many files it reaches): a project rule with a pattern that is not
/// a wildcard.
pub(super) fn searches_repository(f: &AgentFile) -> bool {
    f.scope != Scope::Global && f.globs.iter().any(|g| !is_wildcard(g))
}
