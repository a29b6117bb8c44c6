//! What `instructions-lsp.toml` may hold beyond the agents' tables: the patterns of `starts`,
//! `exclude` and `[accept]` with their limits, what `exclude` leaves out, and the JSON schema
//! published for TOML editors. (The file itself is read in [`super::config`].)

use super::agents;
use super::lint::Code;

/// The JSON schema of `instructions-lsp.toml`, for TOML editors (taplo, Even Better TOML): made
/// from the names [`super::config::load_config`] checks against, so that it says what the file may hold.
/// `editors/instructions-lsp.schema.json` is this, written out (a test keeps them equal).
pub fn config_schema() -> serde_json::Value {
    use serde_json::json;
    let agent_table = |name: &str| {
        let mut properties = json!({
            "max-bytes": {
                "type": "integer", "minimum": 0,
                "description": "The agent's byte budget (Codex's project_doc_max_bytes, dsh-next's maxBytes)."
            },
            "file-names": {
                "type": "array", "items": {"type": "string", "pattern": "^[^/\\\\]+$", "not": {"enum": [".", ".."]}},
                "description": "The agent's file names (Codex's fallback names, Gemini CLI's context.fileName, dsh-next's instructionFileCandidates): plain file names."
            },
        });
        if name == "copilot" {
            let settings: serde_json::Map<String, serde_json::Value> =
                agents::COPILOT_SETTINGS.iter().map(|k| (k.to_string(), json!({}))).collect();
            properties["settings"] = json!({
                "type": "object", "properties": settings, "additionalProperties": false,
                "description": "VS Code settings for the copilot profile, winning over the workspace's .vscode/settings.json."
            });
        }
        json!({"type": "object", "properties": properties, "additionalProperties": false})
    };
    let mut properties = json!({
        "agents": {
            "type": "array", "uniqueItems": true, "items": {"enum": agents::NAMES},
            "description": "The agents to check for; without it they are detected from the files."
        },
        "exclude": {
            "type": "array", "maxItems": EXCLUDE_MAX, "items": {"type": "string"},
            "description": "Folders and files left out of detection, of the places agents start and of the check: .gitignore lines relative to this file's folder."
        },
        "accept": {
            "type": "object", "maxProperties": ACCEPT_MAX,
            "additionalProperties": {"type": "array", "items": {"enum": Code::ALL.iter().map(|c| c.name()).collect::<Vec<_>>()}},
            "description": "Findings accepted: for the files a pattern (relative to this file's folder) names, the codes of the findings no longer reported."
        },
        "starts": {
            "type": "array", "maxItems": STARTS_MAX, "items": {"type": "string"},
            "description": "Folders where the repository's people start agents, besides its package roots: globs relative to this file's folder."
        },
    });
    for name in agents::NAMES {
        properties[*name] = agent_table(name);
    }
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "instructions-lsp.toml",
        "description": "Which agents a repository is written for, and their settings (docs/targets.md).",
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    })
}

/// The most patterns `starts` may hold.
pub const STARTS_MAX: usize = 256;

/// The most patterns `exclude` may hold.
pub const EXCLUDE_MAX: usize = 256;

/// The most patterns `[accept]` may name.
pub const ACCEPT_MAX: usize = 1000;

/// The most patterns of `[accept]` with wildcards (each compiled into the one set the file's
/// patterns are matched with); paths without wildcards are compared as they are.
pub const ACCEPT_GLOBS_MAX: usize = 100;

/// The longest pattern of `[accept]` or `exclude`, in bytes.
pub const PATTERN_MAX: usize = 1024;

/// Whether a pattern of `[accept]` has wildcards (else it names one file by its path).
pub fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{', '\\'])
}

/// A pattern of `[accept]` as a glob of files below the configuration's directory (`*` within
/// one name, `**` across names); the error says why it is no such pattern.
pub fn accept_pattern(pattern: &str) -> Result<globset::Glob, String> {
    if pattern.len() > PATTERN_MAX {
        return Err(format!("is {} bytes long; a pattern is at most {PATTERN_MAX}", pattern.len()));
    }
    if pattern.is_empty() || pattern.starts_with('/') || pattern.starts_with('~') || pattern.contains('\\') {
        return Err("is not a file below the configuration's folder (write it relative, with `/`)".into());
    }
    if pattern.split('/').any(|c| c == ".." || c == "." || c.is_empty()) {
        return Err("leaves the configuration's folder or has an empty name (no `.`, `..` or `//`)".into());
    }
    globset::GlobBuilder::new(pattern).literal_separator(true).build().map_err(|e| format!("is no glob: {}", e.kind()))
}

/// A pattern of `starts` as a glob of folders below the configuration's directory (`*` within
/// one name, `**` across names); the error says why it is no such pattern.
pub fn start_pattern(pattern: &str) -> Result<globset::Glob, String> {
    let trimmed = pattern.trim_end_matches('/');
    if trimmed.is_empty() || trimmed.starts_with('/') || trimmed.starts_with('~') || trimmed.contains('\\') {
        return Err("which is not a folder below the file's own (write it relative, with `/`)".into());
    }
    if trimmed.split('/').any(|c| c == ".." || c == "." || c.is_empty()) {
        return Err("which leaves the file's folder or has an empty name (no `.`, `..` or `//`)".into());
    }
    globset::GlobBuilder::new(trimmed)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("which is no glob: {}", e.kind()))
}
