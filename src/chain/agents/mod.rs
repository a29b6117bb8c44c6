//! The agents: one file per agent, each reading like the others (where it looks, what it
//! loads, in which order, its budget, its findings), and this registry ([`NAMES`], [`profile()`]),
//! the one place that maps every agent's name to its profile.
//!
//! An agent's file imports the engine's folders below (`model`, `patterns`, `repo`, `text`,
//! `loader`), never another agent's; nothing but this registry imports an agent's file (tests in
//! `src/lib.rs` hold both). How an agent loads its files (a pick, a cut, a join, its fallback
//! files) is a function value in its profile, never an `if profile == …` in the loader. What the
//! layers below know of an agent by its name alone is listed in `docs/architecture.md` ("How to
//! add an agent profile"): the keys of its rule files, the patterns hovers explain, its tokens,
//! the budget a fix may raise, the words of its headers.
//!
//! Each profile names the agent release it mirrors; the README has the rules with their
//! sources, and `tests/it/agents.rs` compares every profile with the real agent.
//!
//! - `codex.rs`: Codex's profile and how it cuts (one budget shared root-first, its message);
//!   `codex_config.rs`: its `config.toml`.
//! - `claude.rs`: Claude Code's profile (its layers), fallback files, its reminders.
//! - `gemini.rs`: Gemini CLI's profile and its context sections.
//! - `opencode.rs`: opencode's profile and its instruction entries.
//! - `copilot.rs`: GitHub Copilot in VS Code: its settings (`.vscode/settings.json`), what one
//!   request attaches and in what order, its `<instructions>` list; `copilot_files.rs`: where VS
//!   Code finds those files and what it reads in them (patterns, links).
//! - `cursor.rs`: Cursor's `.mdc` rules, `AGENTS.md` and `.cursorrules`, from its documentation.
//! - `dshnext.rs`: dsh-next's profile and its block (load-all, trimmed duplicates, budget fit).
//!
//! The edges take what they need of the engine through the names re-exported here.
//!
//! Nothing here knows a protocol: no LSP type.

mod claude;
mod codex;
mod codex_config;
mod copilot;
mod copilot_files;
mod cursor;
mod dshnext;
mod gemini;
mod opencode;

pub use super::loader::deps::dirs_read;
pub use super::loader::explain::{
    attach_words, bounded_by_start, cut_line, explain, globs_words, loaded_elsewhere, not_read, nothing_of, title,
    view_findings,
};
pub use super::loader::find::file_key;
pub use super::loader::hits as patterns;
pub use super::loader::load::load;
pub use super::model::env::{AgentEnv, CONFIG_FOLDERS, FILE_NAMES, Overrides, is_agent_path};
pub use super::model::names::{NAMES, display_name};
pub use super::model::profile::{
    AgentProfile, Budget, FrontMatter, GlobStyle, GlobalRule, Imports, Join, Layer, LayerKind, Nested, Order, Pick,
    Probe, Root, RuleFiles,
};
pub use super::model::view::{AgentFile, AgentView, Role, Scope, Status};
pub use super::repo::cache::{RepoCache, with_cache as with_repo_cache, with_texts};
pub use super::repo::index::RepoIndex;
pub use super::repo::listing::{REPO_ENTRIES, RepoListing};
pub use super::repo::memo::lstat_exists;
pub use super::text::front_matter::front_matter;
pub use super::text::keys::{keys_for, values_for};
pub use super::text::read::{READ_CAP, js_trim, read_capped, text_prefix};
pub use super::text::{imports, read};
pub use super::words::size_words;
pub use codex::codex;
pub use copilot::SETTINGS as COPILOT_SETTINGS;
pub use copilot_files::reference_links;

/// The profile called `name`, or `None` for a name that is not an agent profile.
pub fn profile(name: &str, env: &AgentEnv, o: &Overrides) -> Option<AgentProfile> {
    Some(match name {
        "codex" => codex::profile(env, o),
        "claude" => claude::profile(env),
        "gemini" => gemini::profile(env, o),
        "opencode" => opencode::profile(env),
        "dsh-next" => dshnext::profile(env, o),
        "copilot" => copilot::profile(env, o),
        "cursor" => cursor::profile(env),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry and the names agree: each name the layers below know has its profile, called
    /// by that name, and a name a person reads; nothing else has one.
    #[test]
    fn every_name_has_its_profile_and_a_display_name() {
        let (env, o) = (AgentEnv::from_process(), Overrides::default());
        for name in NAMES {
            let p = profile(name, &env, &o).unwrap_or_else(|| panic!("{name} is in NAMES but has no profile()"));
            assert_eq!(p.name, *name);
            assert_ne!(display_name(name), display_name("no-such-agent"), "{name} has no display name");
        }
        assert!(profile("no-such-agent", &env, &o).is_none());
    }
}
