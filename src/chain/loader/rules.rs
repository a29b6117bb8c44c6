//! What is wrong with the glob-attached rules of Copilot and Cursor, as their users would want
//! to know before wondering why a rule never reaches the agent: front matter that does not
//! parse, a Cursor rule nothing attaches, and a pattern that matches no file of the repository.

use std::path::Path;
use std::sync::Arc;

use crate::chain::model::env::in_claude_rules;
use crate::chain::model::fix::Fix;
use crate::chain::model::names::display_name;
use crate::chain::model::profile::AgentProfile;
use crate::chain::model::view::{AgentFile, RuleProblem, RuleProblemKind, RuleReach, Scope, Status};
use crate::chain::patterns::rule::{is_wildcard, rule_base};
use crate::chain::repo::cache::RuleOutcome;
use crate::chain::repo::index::{Search, SearchKey};
use crate::chain::text::front_matter::front_matter_problem;
use crate::chain::text::read::read_capped;

/// The problems of `files`' rules (only for profiles whose rules are attached by globs of
/// their own, [`AgentProfile::rule_files`]: Copilot's instructions files, Cursor's `.mdc`
/// rules), as `(file, message)`. `base` is the project's directory (the nearest holding `.git`,
/// else the working directory).
pub(crate) fn problems(profile: &AgentProfile, files: &[AgentFile], base: &Path) -> (Vec<RuleProblem>, Vec<RuleReach>) {
    // What the agent misreads in the front matter of the project's rule files, key by key.
    let keys = files
        .iter()
        .filter(|f| f.scope != Scope::Global && f.status != Status::LinkedOutside)
        .flat_map(|f| crate::chain::text::keys::problems(profile.name, &f.path));
    let mut out: Vec<RuleProblem> = keys.collect();
    let Some(rule_files) = profile.rule_files else { return (out, Vec::new()) };
    out.extend(profile.problems.map(|own| own(profile, files, base)).unwrap_or_default());
    let is_rule = |f: &AgentFile| {
        !f.globs.is_empty() || f.path.file_name().and_then(|n| n.to_str()).unwrap_or("").ends_with(rule_files.suffix)
    };
    let agent = display_name(profile.name);
    let never = |path: &Path, message: String| RuleProblem::new(path.to_path_buf(), RuleProblemKind::Never, message);
    // Each rule file's outcome: worked out by another view of the run (every view below a
    // rules folder meets the same rules), else here.
    let rules: Vec<&AgentFile> = files.iter().filter(|f| is_rule(f) && f.status != Status::LinkedOutside).collect();
    let key = |f: &AgentFile| (profile.name, f.status, f.scope);
    let mut outcomes: Vec<Option<Arc<RuleOutcome>>> =
        rules.iter().map(|f| crate::chain::repo::cache::rule_outcome(key(f), &f.path, base)).collect();
    // The rules worked out here; those whose patterns are checked against the repository are
    // searched together below.
    let mut fresh: Vec<(usize, RuleOutcome, Option<SearchKey>)> = Vec::new();
    for (i, f) in rules.iter().enumerate().filter(|(i, _)| outcomes[*i].is_none()) {
        let mut outcome = RuleOutcome::default();
        let problem = crate::chain::repo::memo::remembered("front matter problem", &f.path, || {
            let text = read_capped(&f.path, 64 * 1024).map(|(d, _)| String::from_utf8_lossy(&d).into_owned());
            text.ok().as_deref().and_then(front_matter_problem)
        });
        if let Some(why) = problem {
            outcome.early.push(never(
                &f.path,
                format!("{agent} cannot read this file's front matter ({why}), so it reads none of its keys"),
            ));
            fresh.push((i, outcome, None));
            continue;
        }
        if f.status == Status::Manual {
            outcome.early.push(never(
                &f.path,
                format!(
                    "{agent} never attaches this rule on its own: its front matter has neither `alwaysApply`, `globs` nor `description` (only an @-mention adds it)"
                ),
            ));
        }
        let search = searches_repository(f).then(|| {
            let globs: Vec<String> = f.globs.iter().filter(|g| !is_wildcard(g)).cloned().collect();
            SearchKey { style: profile.glob_style, rule_dir: rule_base(&f.path, f.scope, base), globs }
        });
        fresh.push((i, outcome, search));
    }
    let keys: Vec<SearchKey> = fresh.iter().filter_map(|(_, _, k)| k.clone()).collect();
    // A repository too large to list: nothing is known of what the patterns match.
    let index = (!keys.is_empty()).then(|| crate::chain::repo::cache::index(base));
    let results = index.as_ref().and_then(|index| index.search(&keys));
    let mut results = results.into_iter().flatten();
    for (i, mut outcome, search_key) in fresh {
        let f = rules[i];
        if let Some(key) = search_key {
            outcome.searched = index.as_ref().map(|index| index.base().to_path_buf());
            if let Some(search) = results.next() {
                outcome.late.extend(dead_patterns(f, &key, &search, agent, rule_files.globs_key));
                if f.status == Status::Waiting {
                    outcome.reach = Some(RuleReach {
                        path: f.path.clone(),
                        matching: search.matching,
                        example: search.examples.first().cloned(),
                    });
                }
            }
        }
        outcomes[i] = Some(crate::chain::repo::cache::keep_rule_outcome(key(f), &f.path, base, outcome));
    }
    let outcomes: Vec<Arc<RuleOutcome>> = outcomes.into_iter().flatten().collect();
    out.extend(outcomes.iter().flat_map(|o| o.early.iter().cloned()));
    out.extend(outcomes.iter().flat_map(|o| o.late.iter().cloned()));
    let reach = outcomes.iter().filter_map(|o| o.reach.clone()).collect();
    (out, reach)
}

/// The problem of rule `f` whose patterns `key` some of which `search` found matching nothing,
/// placed at the first dead pattern where the front matter writes it (under `globs_key`, or
/// `paths` in a `.claude/rules` file), with a fix that drops it when the others attach the rule.
fn dead_patterns(f: &AgentFile, key: &SearchKey, search: &Search, agent: &str, globs_key: &str) -> Option<RuleProblem> {
    let dead_globs: Vec<&String> =
        key.globs.iter().zip(&search.alive).filter(|(_, alive)| !**alive).map(|(g, _)| g).collect();
    let first = dead_globs.first()?;
    let dead: Vec<String> = dead_globs.iter().map(|g| format!("`{g}`")).collect();
    let globs_key = if in_claude_rules(&f.path) { "paths" } else { globs_key };
    let written = crate::chain::text::keys::pattern_at(&f.path, globs_key, first);
    let verb = if dead.len() == 1 { "matches" } else { "match" };
    if dead.len() == f.globs.len() {
        return Some(RuleProblem {
            at: written.map(|(at, _)| at),
            ..RuleProblem::new(
                f.path.clone(),
                RuleProblemKind::Never,
                format!(
                    "{agent} never attaches this file by its `{globs_key}`: {} {verb} no file in the repository",
                    dead.join(", ")
                ),
            )
        });
    }
    // The rule attaches by its other patterns: one dead alternative is worth knowing, not a
    // warning.
    let fix = written.as_ref().map(|(_, (start, end, with))| {
        Fix::replace(format!("Drop the pattern `{first}`, which matches no file"), *start, *end, with.clone())
    });
    Some(RuleProblem {
        at: written.map(|(at, _)| at),
        fix,
        ..RuleProblem::new(
            f.path.clone(),
            RuleProblemKind::DeadPattern,
            format!(
                "{agent} attaches this file by its other `{globs_key}` patterns; {} {} {verb} no file in the repository",
                if dead.len() == 1 { "the pattern" } else { "the patterns" },
                dead.join(", ")
            ),
        )
    })
}

/// Whether the patterns of rule `f` are checked against every file of the repository (its
/// "matches no file" and how many files it reaches): a project rule with a pattern that is not
/// a wildcard.
pub(crate) fn searches_repository(f: &AgentFile) -> bool {
    f.scope != Scope::Global && f.globs.iter().any(|g| !is_wildcard(g))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use crate::chain::agents::{AgentEnv, Overrides, RepoCache, load, profile, with_repo_cache};

    /// The views of one run share each rule's outcome: a view that finds it worked out says
    /// the same of the rule, and still depends on the repository's listing its patterns met.
    #[test]
    fn views_that_share_a_rule_say_the_same_of_it_and_all_depend_on_the_listing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("real path");
        fs::create_dir_all(root.join(".git")).expect("mkdir");
        fs::create_dir_all(root.join(".github/instructions")).expect("mkdir");
        fs::create_dir_all(root.join("a/b")).expect("mkdir");
        fs::write(root.join("a/b/x.ts"), "x").expect("write");
        let rule = "---\napplyTo: \"**/*.ts, **/*.vue\"\n---\nts rule\n";
        fs::write(root.join(".github/instructions/ts.instructions.md"), rule).expect("write");
        let env = AgentEnv { home: Some(root.join("home")), ..AgentEnv::default() };
        let copilot = profile("copilot", &env, &Overrides::default()).expect("copilot");
        let cache = std::sync::Arc::new(RepoCache::default());
        let views: Vec<_> = with_repo_cache(&cache, || {
            [root.clone(), root.join("a"), root.join("a/b")].iter().map(|d| load(&copilot, d, &[])).collect()
        });
        let alone = load(&copilot, &root.join("a/b"), &[]);
        for v in &views {
            assert_eq!(v.repository.as_deref(), Some(root.as_path()), "{v:#?}");
            assert_eq!(v.rule_problems, alone.rule_problems);
            assert_eq!(v.rule_reach, alone.rule_reach);
        }
        assert!(alone.rule_problems.iter().any(|p| p.message.contains("`**/*.vue`")), "{:#?}", alone.rule_problems);
        assert_eq!(alone.rule_reach.first().map(|r| r.matching), Some(1));
    }
}
