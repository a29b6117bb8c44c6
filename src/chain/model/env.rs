//! What a profile is made from: the files agents look for ([`FILE_NAMES`]), where they keep
//! their user-global files ([`AgentEnv`]) and what a caller may change ([`Overrides`]). Which
//! agent file makes a named profile is the registry's business (`chain/agents/mod.rs`), which sits
//! above this file and every agent's.

use std::path::{Path, PathBuf};

/// Every name an agent profile looks for in a directory (a change to one may change what an
/// agent loads).
pub const FILE_NAMES: &[&str] = &[
    "AGENTS.md",
    "AGENTS.override.md",
    "AGENTS.local.md",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    "CONTEXT.md",
    ".claude",
    "copilot-instructions.md",
    ".cursorrules",
];

/// The folders where agents keep their configuration, skills and rules: nobody starts an agent
/// inside one, so no directory below one is a place an agent works in.
pub const CONFIG_FOLDERS: &[&str] =
    &[".agents", ".claude", ".codex", ".cursor", ".gemini", ".github", ".opencode", ".vscode"];

/// Whether a change at `path` may change what an agent profile loads: a name of
/// [`FILE_NAMES`], a Copilot instructions file, a Cursor rule, or VS Code's workspace settings.
pub fn is_agent_path(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    FILE_NAMES.contains(&name)
        || name.ends_with(".instructions.md")
        || name.ends_with(".mdc")
        || (name == "settings.json" && path.parent().and_then(Path::file_name).is_some_and(|n| n == ".vscode"))
}

/// Where the agents keep their user-global files, read from the environment once.
#[derive(Clone, Debug, Default)]
pub struct AgentEnv {
    pub home: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
    pub dsh_home: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub opencode_config_dir: Option<PathBuf>,
    pub opencode_no_claude: bool,
}

impl AgentEnv {
    pub fn from_process() -> Self {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let flag = |k: &str| std::env::var(k).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        Self {
            home: var("HOME"),
            codex_home: var("CODEX_HOME"),
            dsh_home: std::env::var("DSH_HOME").ok().filter(|v| !v.trim().is_empty()).map(PathBuf::from),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            opencode_config_dir: var("OPENCODE_CONFIG_DIR"),
            opencode_no_claude: flag("OPENCODE_DISABLE_CLAUDE_CODE_PROMPT"),
        }
    }

    /// The process's variables, but the home directories of `env` (the server's, which tests
    /// point at a private home).
    pub fn with_home(env: &Env) -> Self {
        Self {
            home: env.home.clone(),
            dsh_home: env.dsh_home.as_ref().filter(|v| !v.trim().is_empty()).map(PathBuf::from),
            ..Self::from_process()
        }
    }

    pub(crate) fn home_join(&self, rel: &str) -> PathBuf {
        self.home.as_deref().unwrap_or(Path::new("~")).join(rel)
    }
}

/// What a caller may change of a profile: `baselineMaxBytes` and `instructionFileCandidates`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Overrides {
    /// The byte budget (Codex's `project_doc_max_bytes`, dsh-agent-instructions' `maxBytes`).
    pub max_bytes: Option<u64>,
    /// File names: Codex's fallbacks, Gemini's `context.fileName`, dsh-agent-instructions'
    /// `instructionFileCandidates`.
    pub candidates: Option<Vec<String>>,
    /// Editor settings (Copilot: VS Code's `chat.*` switches), winning over the workspace's.
    pub editor: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Overrides {
    /// The candidate file names given, else `default`.
    pub(crate) fn candidates_or(&self, default: &[&str]) -> Vec<String> {
        match &self.candidates {
            Some(c) => c.clone(),
            None => default.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// The parts of the process environment that settings depend on, passed explicitly so tests
/// never mutate the real environment.
#[derive(Clone, Debug, Default)]
pub struct Env {
    pub home: Option<PathBuf>,
    pub dsh_home: Option<String>,
    pub xdg_state_home: Option<String>,
}

impl Env {
    /// Reads `HOME` (or `USERPROFILE`), `DSH_HOME` and `XDG_STATE_HOME`.
    pub fn from_process() -> Self {
        let non_empty = |key: &str| std::env::var(key).ok().filter(|v| !v.is_empty());
        Self {
            home: non_empty("HOME").or_else(|| non_empty("USERPROFILE")).map(PathBuf::from),
            dsh_home: non_empty("DSH_HOME"),
            xdg_state_home: non_empty("XDG_STATE_HOME"),
        }
    }
}

/// A file inside a `.claude/rules` folder: a rule whose patterns are `paths:` (Claude Code's, and
/// Copilot's for these files).
pub(crate) fn in_claude_rules(path: &Path) -> bool {
    let parts: Vec<_> = path.components().map(|c| c.as_os_str()).collect();
    parts.windows(2).any(|w| w[0] == ".claude" && w[1] == "rules")
}
