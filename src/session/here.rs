//! Which instruction files and rules each agent a folder is checked for gets when it reads one
//! file: what the editor's lens and hover say on a source file ("Claude Code: CLAUDE.md,
//! src/CLAUDE.md, .claude/rules/rust.md"), and the view its lens opens.

use std::path::{Path, PathBuf};

use crate::chain::agents;
use crate::chain::settings::Env;
use crate::chain::tokens::Tokens;

use super::Session;
use super::profiles::{self, Views};

/// One agent's context once it has read a file.
#[derive(Debug)]
pub struct Here {
    pub agent: String,
    /// How people call the agent ("Claude Code").
    pub name: String,
    /// The files it has, in its order, whole or cut.
    pub files: Vec<HereFile>,
    pub bytes: usize,
    pub tokens: Option<Tokens>,
}

#[derive(Debug)]
pub struct HereFile {
    pub path: PathBuf,
    /// Named from the project root.
    pub shown: String,
    /// Loaded by this read: a rule whose globs match the file, a nested file on its way.
    pub added: bool,
    /// Cut by the agent's budget.
    pub truncated: bool,
}

/// What each agent `session`'s folder is checked for has once it reads `file` (after the
/// session's own touches), in the order the folder names them.
pub fn rules_here(session: &Session, views: &dyn Views, env: &Env, file: &Path) -> Vec<Here> {
    let has = |r: &profiles::ProfileResult, status: &[&str]| -> Vec<(PathBuf, String, bool)> {
        r.files
            .iter()
            .filter(|f| status.contains(&f.status.as_str()))
            .filter_map(|f| Some((crate::paths::uri_to_path(&f.uri)?, f.path.clone(), f.status == "truncated")))
            .collect()
    };
    let mut out = Vec::new();
    for name in session.profiles().iter().filter(|n| agents::NAMES.contains(&n.as_str())) {
        // What the agent had before the read: its files only, no size.
        let before = profiles::one(session, views, name, env, None, false);
        let (Ok(before), Ok(after)) = (before, profiles::one(session, views, name, env, Some(file), true)) else {
            continue;
        };
        let had: Vec<PathBuf> = has(&before, &["loaded", "truncated"]).into_iter().map(|(p, _, _)| p).collect();
        let files = has(&after, &["loaded", "truncated"])
            .into_iter()
            .map(|(path, shown, truncated)| HereFile { added: !had.contains(&path), path, shown, truncated })
            .collect();
        out.push(Here { agent: name.clone(), name: after.name, files, bytes: after.bytes, tokens: after.tokens });
    }
    out
}

impl Here {
    /// One line for a lens: "Claude Code: CLAUDE.md, + .claude/rules/rust.md · ~120 tokens
    /// (estimate)", the files this read adds marked with `+`, five names at most.
    pub fn line(&self) -> String {
        if self.files.is_empty() {
            return format!("{}: no instructions for this file", self.name);
        }
        let mut names: Vec<String> = self
            .files
            .iter()
            .take(5)
            .map(|f| if f.added { format!("+ {}", f.shown) } else { f.shown.clone() })
            .collect();
        if self.files.len() > 5 {
            names.push(format!("{} more", self.files.len() - 5));
        }
        let size = self.tokens.map_or_else(|| crate::chain::words::bytes(self.bytes as u64), |t| t.words());
        format!("{}: {} · {size}", self.name, names.join(", "))
    }
}
