//! Codex: its profile, and how it cuts: one byte budget shared root-first, with no marker that
//! anything was cut ([`Budget::SharedRootFirst`]), and its `<INSTRUCTIONS>` message.

use std::path::Path;

use crate::chain::agents::codex_config;
use crate::chain::model::env::{AgentEnv, Overrides};
use crate::chain::model::profile::{
    AgentProfile, Budget, Cut, GlobalRule, Imports, Join, Nested, Order, Pick, Probe, Root,
};
use crate::chain::model::view::{AgentFile, Scope, Status};
use crate::chain::text::read::{read_capped, read_string};

/// The Codex profile for `env`: `--set` overrides `$CODEX_HOME/config.toml`, which overrides
/// Codex's defaults.
pub(crate) fn profile(env: &AgentEnv, o: &Overrides) -> AgentProfile {
    let home = env.codex_home.clone().unwrap_or_else(|| env.home_join(".codex"));
    let config = codex_config::read(&home);
    let fallbacks = o.candidates.clone().or(config.fallbacks).unwrap_or_default();
    codex(&home, o.max_bytes.or(config.max_bytes), &fallbacks)
}

/// Codex: `AGENTS.override.md`, `AGENTS.md`, then `fallbacks`; `$CODEX_HOME` (else
/// `~/.codex`) for the global file; `project_doc_max_bytes` (32768 by default).
pub fn codex(codex_home: &Path, max_bytes: Option<u64>, fallbacks: &[String]) -> AgentProfile {
    let mut candidates = vec!["AGENTS.override.md".to_string(), "AGENTS.md".to_string()];
    for f in fallbacks {
        if !f.is_empty() && !candidates.contains(f) {
            candidates.push(f.clone());
        }
    }
    AgentProfile {
        name: "codex",
        mirrors: "Codex CLI 0.171.0",
        candidates,
        global: vec![vec![codex_home.join("AGENTS.override.md"), codex_home.join("AGENTS.md")]],
        global_rule: GlobalRule::FirstNonEmpty,
        pick: Pick::First(Probe::Lstat),
        root: Root::GitOrCwd { check_fs_root: false },
        order: Order::RootFirst,
        nested: Nested::None,
        imports: Imports::None,
        budget: Budget::SharedRootFirst { max_bytes: max_bytes.unwrap_or(32 * 1024), cut: codex_budget },
        join: Join::ByBudget,
        drop_blank: true,
        ..AgentProfile::base(None)
    }
}

/// Codex's shared root-first budget, and its message: `# AGENTS.md instructions for <cwd>` and
/// `<INSTRUCTIONS>` around the global text, the separator `--- project-doc ---`, and the project
/// texts joined by blank lines.
fn codex_budget(cwd: &Path, files: Vec<AgentFile>, max_bytes: u64) -> Cut {
    let mut out = Vec::new();
    let mut global_text = None;
    let mut parts: Vec<String> = Vec::new();
    let mut remaining = max_bytes;
    let mut shadowed = Vec::new();
    for mut file in files {
        if file.status == Status::Shadowed {
            shadowed.push(file);
            continue;
        }
        // Codex would read it; its target is outside the project, never read here, and costs
        // the budget nothing we could know.
        if file.status == Status::LinkedOutside {
            out.push(file);
            continue;
        }
        if file.scope == Scope::Global {
            match read_string(&file.path) {
                Ok(text) => {
                    file.bytes = text.len() as u64;
                    if text.trim().is_empty() {
                        file.status = Status::Empty;
                    } else {
                        file.included_bytes = file.bytes;
                        global_text = Some(text.trim().to_string());
                    }
                }
                Err(_) => file.status = Status::Unreadable,
            }
            out.push(file);
            continue;
        }
        file.bytes = crate::chain::repo::memo::stat(&file.path).map_or(0, |m| m.len);
        if remaining == 0 {
            file.status = Status::Omitted;
            out.push(file);
            continue;
        }
        match read_capped(&file.path, remaining) {
            Ok((data, size)) => {
                let included = data.len() as u64;
                let text = crate::chain::text::read::lossy(data);
                file.bytes = size;
                file.status = if text.trim().is_empty() {
                    Status::Empty
                } else if included < size {
                    Status::Truncated
                } else {
                    Status::Loaded
                };
                if file.status != Status::Empty {
                    parts.push(text);
                    remaining = remaining.saturating_sub(included);
                    file.included_bytes = included;
                }
            }
            Err(_) => file.status = Status::Unreadable,
        }
        out.push(file);
    }
    out.extend(shadowed);
    let docs = (!parts.is_empty()).then(|| parts.join("\n\n"));
    // The heading names the directory only when project docs were found (observed with
    // `codex debug prompt-input`).
    let heading = match &docs {
        Some(_) => format!("# AGENTS.md instructions for {}", cwd.display()),
        None => "# AGENTS.md instructions".to_string(),
    };
    let body = match (global_text, docs) {
        (Some(g), Some(d)) => Some(format!("{g}\n\n--- project-doc ---\n\n{d}")),
        (Some(g), None) => Some(g),
        (None, Some(d)) => Some(d),
        (None, None) => None,
    };
    let parts = body.map(|b| format!("{heading}\n\n<INSTRUCTIONS>\n{b}\n</INSTRUCTIONS>")).into_iter().collect();
    (out, parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::agents::load;
    use std::fs;

    #[test]
    fn codex_spends_one_budget_root_first_and_says_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("repo");
        fs::create_dir_all(repo.join(".git")).expect("git");
        fs::create_dir_all(repo.join("pkg/deep")).expect("dirs");
        fs::write(repo.join("AGENTS.md"), "root rules, quite a few of them").expect("write");
        fs::write(repo.join("pkg/AGENTS.md"), "   ").expect("write");
        fs::write(repo.join("pkg/deep/CLAUDE.md"), "fallback deep").expect("write");
        let home = dir.path().join("home");
        fs::create_dir_all(&home).expect("home");
        fs::write(home.join("AGENTS.md"), "global rules").expect("write");
        let profile = codex(&home, Some(40), &["CLAUDE.md".to_string()]);
        let view = load(&profile, &repo.join("pkg/deep"), &[]);
        let cwd = fs::canonicalize(repo.join("pkg/deep")).expect("canonical");
        assert_eq!(
            view.text,
            format!(
                "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nglobal rules\n\n--- project-doc ---\n\nroot rules, quite a few of them\n\nfallback \n</INSTRUCTIONS>",
                cwd.display()
            )
        );
        let statuses: Vec<&str> = view.files.iter().map(|f| f.status.as_str()).collect();
        assert_eq!(statuses, ["loaded", "loaded", "empty", "truncated"]);
        assert_eq!(view.files[3].included_bytes, 9);
    }
}
