//! Every agent by name: the names a user writes (`--agents codex,claude`), in the order
//! `compare` shows them, and how a person calls each. The layers below the agents (settings,
//! the configuration file, findings) know the agents by these names only; `agents/` maps each
//! name to its profile.

/// The agent profile names, in the order `compare` shows them.
pub const NAMES: &[&str] = &["codex", "claude", "gemini", "opencode", "dsh-next", "copilot", "cursor"];

/// How an agent is called in messages.
pub fn display_name(profile: &str) -> &'static str {
    match profile {
        "codex" => "Codex",
        "claude" => "Claude Code",
        "gemini" => "Gemini CLI",
        "opencode" => "opencode",
        "dsh-next" => "DeepSeek Harness (next)",
        "copilot" => "Copilot (VS Code)",
        "cursor" => "Cursor",
        _ => "The agent",
    }
}
