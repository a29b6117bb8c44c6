//! Agent profiles (issue 9): what one coding agent actually loads, as data plus one small
//! strategy per rule, never an `if profile == …` in discovery or rendering.
//!
//! `codex` mirrors Codex CLI 0.171.0 (`codex-rs/core/src/project_doc.rs`; verified against
//! `codex debug prompt-input`).

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Which file of a directory counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Winner {
    /// The first candidate that is a file or a symlink (lstat) wins, even when it turns out
    /// empty or unreadable (Codex).
    FirstPresent,
}

/// Where the walk starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// From the canonical cwd up to the nearest directory holding `.git` (a file or directory,
    /// symlinks followed), the filesystem root itself never checked; without one, the cwd only
    /// (Codex).
    GitOrCwd,
}

/// How the byte budget cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// One budget shared root-first: each file is read up to what remains (the crossing file is
    /// cut mid-character if need be, decoded lossily); files empty after trimming are dropped and
    /// cost nothing; no marker says anything was cut (Codex).
    SharedRootFirst { max_bytes: u64 },
}

/// How the loaded texts become the agent's message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Join {
    /// `# AGENTS.md instructions for <cwd>` and `<INSTRUCTIONS>` around the global text, the
    /// separator `--- project-doc ---`, and the project texts joined by blank lines (Codex).
    CodexInstructions,
}

/// One agent's loading rules.
#[derive(Clone, Debug)]
pub struct AgentProfile {
    pub name: &'static str,
    /// The agent release these rules mirror.
    pub mirrors: &'static str,
    /// Per directory, in precedence order.
    pub candidates: Vec<String>,
    /// User-global files in precedence order: the first that is not empty is used.
    pub global: Vec<PathBuf>,
    pub winner: Winner,
    pub root: Root,
    pub budget: Budget,
    pub join: Join,
}

/// What an agent gets from one file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentFile {
    pub path: PathBuf,
    pub scope: &'static str,
    pub bytes: u64,
    pub included_bytes: u64,
    /// `loaded`, `truncated`, `omitted` (no budget left), `empty`, `shadowed` or `unreadable`.
    pub status: &'static str,
}

/// What an agent gets in a directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentView {
    pub profile: &'static str,
    pub mirrors: &'static str,
    pub files: Vec<AgentFile>,
    /// The text the agent puts in its context; empty when nothing loads.
    pub text: String,
}

/// The profile names this module knows.
pub const NAMES: &[&str] = &["codex"];

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
        global: vec![codex_home.join("AGENTS.override.md"), codex_home.join("AGENTS.md")],
        winner: Winner::FirstPresent,
        root: Root::GitOrCwd,
        budget: Budget::SharedRootFirst { max_bytes: max_bytes.unwrap_or(32 * 1024) },
        join: Join::CodexInstructions,
    }
}

fn search_dirs(root: Root, cwd: &Path) -> Vec<PathBuf> {
    match root {
        Root::GitOrCwd => {
            let mut chain = vec![cwd.to_path_buf()];
            let mut cursor = cwd.to_path_buf();
            while let Some(parent) = cursor.parent().map(Path::to_path_buf) {
                if fs::metadata(cursor.join(".git")).is_ok() {
                    chain.reverse();
                    return chain;
                }
                chain.push(parent.clone());
                cursor = parent;
            }
            vec![cwd.to_path_buf()]
        }
    }
}

fn winners(profile: &AgentProfile, dirs: &[PathBuf], shadowed: &mut Vec<AgentFile>) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in dirs {
        let mut won: Option<PathBuf> = None;
        for name in &profile.candidates {
            let path = dir.join(name);
            let Ok(meta) = fs::symlink_metadata(&path) else { continue };
            let present = match profile.winner {
                Winner::FirstPresent => meta.file_type().is_file() || meta.file_type().is_symlink(),
            };
            if !present {
                continue;
            }
            if won.is_some() {
                shadowed.push(AgentFile {
                    path,
                    scope: "project",
                    bytes: meta.len(),
                    included_bytes: 0,
                    status: "shadowed",
                });
            } else {
                won = Some(path);
            }
        }
        found.extend(won);
    }
    found
}

/// Reads at most `limit` bytes and the file's full size.
fn read_limited(path: &Path, limit: u64) -> io::Result<(Vec<u8>, u64)> {
    let file = fs::File::open(path)?;
    let size = file.metadata()?.len();
    let mut data = Vec::new();
    file.take(limit).read_to_end(&mut data)?;
    Ok((data, size))
}

/// What the agent of `profile` loads working in `cwd`.
pub fn load(profile: &AgentProfile, cwd: &Path) -> AgentView {
    let cwd = fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut files = Vec::new();

    // The global file: the first one that is not empty.
    let mut global_text = None;
    for path in &profile.global {
        let Ok(text) = fs::read_to_string(path) else { continue };
        let bytes = text.len() as u64;
        if text.trim().is_empty() {
            files.push(AgentFile { path: path.clone(), scope: "global", bytes, included_bytes: 0, status: "empty" });
            continue;
        }
        files.push(AgentFile { path: path.clone(), scope: "global", bytes, included_bytes: bytes, status: "loaded" });
        global_text = Some(text.trim().to_string());
        break;
    }

    let dirs = search_dirs(profile.root, &cwd);
    let mut shadowed = Vec::new();
    let found = winners(profile, &dirs, &mut shadowed);
    let mut parts: Vec<String> = Vec::new();
    match profile.budget {
        Budget::SharedRootFirst { max_bytes } => {
            let mut remaining = max_bytes;
            for path in found {
                let size = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                if remaining == 0 {
                    files.push(AgentFile { path, scope: "project", bytes: size, included_bytes: 0, status: "omitted" });
                    continue;
                }
                match read_limited(&path, remaining) {
                    Ok((data, size)) => {
                        let text = String::from_utf8_lossy(&data).into_owned();
                        let included = data.len() as u64;
                        let status = if text.trim().is_empty() {
                            "empty"
                        } else if included < size {
                            "truncated"
                        } else {
                            "loaded"
                        };
                        if status != "empty" {
                            parts.push(text);
                            remaining = remaining.saturating_sub(included);
                        }
                        let included_bytes = if status == "empty" { 0 } else { included };
                        files.push(AgentFile { path, scope: "project", bytes: size, included_bytes, status });
                    }
                    Err(_) => files.push(AgentFile {
                        path,
                        scope: "project",
                        bytes: size,
                        included_bytes: 0,
                        status: "unreadable",
                    }),
                }
            }
        }
    }
    files.extend(shadowed);

    let text = match profile.join {
        Join::CodexInstructions => {
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
            body.map(|b| format!("{heading}\n\n<INSTRUCTIONS>\n{b}\n</INSTRUCTIONS>")).unwrap_or_default()
        }
    };
    AgentView { profile: profile.name, mirrors: profile.mirrors, files, text }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let view = load(&profile, &repo.join("pkg/deep"));
        let cwd = fs::canonicalize(repo.join("pkg/deep")).expect("canonical");
        assert_eq!(
            view.text,
            format!(
                "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\nglobal rules\n\n--- project-doc ---\n\nroot rules, quite a few of them\n\nfallback \n</INSTRUCTIONS>",
                cwd.display()
            )
        );
        let statuses: Vec<&str> = view.files.iter().map(|f| f.status).collect();
        assert_eq!(statuses, ["loaded", "loaded", "empty", "truncated"]);
        assert_eq!(view.files[3].included_bytes, 9);
    }
}
