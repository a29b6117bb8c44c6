//! Agent profiles (docs/profiles.md): what one coding agent actually loads, as data plus one small
//! strategy per rule, never an `if profile == …` in discovery or rendering.
//!
//! Each profile names the agent release it mirrors; the README has the rules with their
//! sources. Every profile is compared with the real agent by `tests/it/agents.rs` (Claude Code
//! through a local stand-in of its API).
//!
//! One file per concern, and one per agent. This file is the registry ([`NAMES`],
//! [`profile()`]), the one place that knows every agent; an agent's file imports only the shared
//! files below (never another agent's), and no shared file imports an agent's: what an agent
//! does its own way (a pick, a cut, a join, its fallback files) is a function value in its
//! profile. The `layering` test of `src/lib.rs` holds this.
//!
//! Shared:
//!
//! - `profile.rs`: the rule types ([`Probe`], [`Pick`], [`Root`], [`Budget`], [`Join`], …) and
//!   [`AgentProfile`], one agent's answers to them.
//! - `view.rs`: what a profile produces: [`Scope`], [`Status`], [`AgentFile`], [`AgentView`], and
//!   the read files an agent's join is given.
//! - `env.rs`: [`FILE_NAMES`], [`AgentEnv`], [`Overrides`]: what profiles are made from.
//! - `rules.rs`: what is wrong with glob-attached rules such as Copilot's and Cursor's (dead
//!   globs, front matter), for profiles with [`RuleFiles`].
//! - `walk.rs`: finding the files: probes, the walk up, picks, rules folders, front matter,
//!   links out of the project, file identity.
//! - `load.rs`: [`load()`]: globals, project files, touches, then the budget or whole reads with
//!   imports, and the join of the agent.
//! - `imports.rs`: `@path` imports, Gemini's inline form and Claude Code's listed form.
//! - `comments.rs`: Claude Code's hiding of HTML comments that stand as blocks.
//! - `read.rs`: every read, capped per file and per view.
//! - `explain.rs`: what an agent does differently, in words and as findings.
//! - `deps.rs`: the directories a view depends on, so that it can be remembered while they are
//!   watched.
//!
//! One per agent, each with its `profile()`:
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
//! Nothing here knows a protocol: no LSP type.

mod claude;
mod codex;
mod codex_config;
mod comments;
mod copilot;
mod copilot_files;
mod cursor;
mod deps;
mod dshnext;
mod env;
mod explain;
mod gemini;
mod globs;
pub mod imports;
mod keys;
pub use keys::{keys_for, values_for};
mod listing;
mod load;
mod opencode;
pub mod patterns;
mod profile;
pub mod read;
mod repo;
mod rules;
mod view;
mod walk;

pub use codex::codex;
pub use copilot::SETTINGS as COPILOT_SETTINGS;
pub use copilot_files::reference_links;
pub use deps::dirs_read;
pub use env::{AgentEnv, CONFIG_FOLDERS, FILE_NAMES, Overrides, is_agent_path};
pub use explain::{
    attach_words, bounded_by_start, cut_line, display_name, explain, globs_words, loaded_elsewhere, not_read,
    nothing_of, size_words, title, view_findings,
};
pub use listing::RepoListing;
pub use load::load;
pub use profile::{
    AgentProfile, Budget, FrontMatter, GlobStyle, GlobalRule, Imports, Join, Layer, LayerKind, Nested, Order, Pick,
    Probe, Root, RuleFiles,
};
pub use read::{READ_CAP, js_trim, read_capped, text_prefix, with_texts};
pub use repo::{REPO_ENTRIES, RepoCache, RepoIndex, lstat_exists, with_cache as with_repo_cache};
pub use view::{AgentFile, AgentView, Role, Scope, Status};
pub use walk::{file_key, front_matter};

/// The agent profile names, in the order `compare` shows them.
pub const NAMES: &[&str] = &["codex", "claude", "gemini", "opencode", "dsh-next", "copilot", "cursor"];

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
