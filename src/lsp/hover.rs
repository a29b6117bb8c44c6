//! What hovers and code lenses say about a candidate file, per session.

use std::fmt::Write as _;
use std::path::Path;

use crate::chain::agents;
use crate::session::answer::file_status;
use crate::session::{RenderedFiles, Session, Snapshot};

/// One session's view of a file: a one-line summary and a Markdown detail.
pub struct Description {
    pub line: String,
    pub markdown: String,
}

fn folder_name(session: &Session) -> String {
    session
        .folder
        .file_name()
        .map_or_else(|| session.folder.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// "600 B", "1.2 KiB", "64 KiB" (as the editors' sidebars write sizes).
fn kib(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let text = format!("{:.1}", bytes as f64 / 1024.0);
    format!("{} KiB", text.strip_suffix(".0").unwrap_or(&text))
}

fn share(bytes: u64, budget: i64) -> String {
    if budget <= 0 {
        "budget disabled".into()
    } else {
        format!("{:.1}% of the {} budget", bytes as f64 * 100.0 / budget as f64, kib(budget as u64))
    }
}

/// How each session that knows `path` sees it, for the sessions whose own profile (`dsh`,
/// `ds4`) is selected; the agents' view is [`agents`].
pub fn describe(path: &Path, sessions: &[(Session, Snapshot)]) -> Vec<Description> {
    let mut out = Vec::new();
    for (session, snap) in sessions {
        if !session.profiles().iter().any(|p| p == session.settings.profile.name()) {
            continue;
        }
        let name = folder_name(session);
        let blocks = std::iter::once(("baseline", &snap.baseline)).chain(snap.nested.iter().map(|n| ("nested", n)));
        let mut found = false;
        for (which, block) in blocks {
            if let Some(i) = block.files.iter().position(|f| f.path == path) {
                out.push(loaded(session, &name, which, block, i));
                found = true;
                break;
            }
        }
        if found {
            continue;
        }
        if let Some(s) = snap.skipped().find(|s| s.path == path) {
            let why = match &s.shadowed_by {
                Some(w) => format!(
                    "{} by `{}`",
                    s.reason.name(),
                    w.strip_prefix(&snap.chain.project_root).unwrap_or(w).display()
                ),
                None => s.reason.name().to_string(),
            };
            out.push(Description {
                line: format!("{name}: not loaded ({why})"),
                markdown: format!("**{name}**: not loaded: {why}. Agents working in this folder never read this file."),
            });
        } else if path.starts_with(&session.folder) && path.parent() != Some(session.folder.as_path()) {
            out.push(Description {
                line: format!("{name}: not reached yet"),
                markdown: format!(
                    "**{name}**: not reached yet. Agents load it when they read, write or edit a file in `{}` or below.",
                    path.parent().and_then(|p| p.strip_prefix(&session.folder).ok()).unwrap_or(Path::new(".")).display()
                ),
            });
        }
    }
    out
}

fn loaded(session: &Session, name: &str, which: &str, block: &RenderedFiles, i: usize) -> Description {
    let f = &block.files[i];
    let total = block.files.len();
    let status = file_status(&block.rendered, i);
    let bytes = f.file.bytes();
    let included = block.rendered.included_bytes(i, f.file.text.len()) as u64;
    let budget = session.settings.budget_bytes;
    let status_text = match status {
        "truncated" => format!("truncated: agents see {} of {}", kib(included), kib(bytes)),
        "omitted" => "omitted by the budget: agents do not see it".to_string(),
        _ => "loaded whole".to_string(),
    };
    let line = format!("{name}: #{} of {total} · {status} · {} · {}", i + 1, kib(bytes), share(bytes, budget));
    let mut md = String::new();
    let _ = writeln!(md, "**{name}** — #{} of {total} in the {which} block, {status_text}", i + 1);
    let _ = writeln!(md);
    let _ = writeln!(md, "- scope `{}`, kind `{}`", f.scope.name(), f.kind.name());
    let _ = writeln!(md, "- {}, {}", crate::chain::words::bytes(bytes), share(bytes, budget));
    let _ = writeln!(md, "- sha256 `{}`", &f.file.sha256[..12]);
    let broader: Vec<String> = block.files[..i].iter().map(|g| format!("`{}`", g.heading)).collect();
    let deeper: Vec<String> = block.files[i + 1..].iter().map(|g| format!("`{}`", g.heading)).collect();
    if !broader.is_empty() {
        let _ = writeln!(md, "- overrides {}", broader.join(", "));
    }
    if !deeper.is_empty() {
        let _ = writeln!(md, "- overridden by {}", deeper.join(", "));
    }
    Description { line, markdown: md }
}

/// What each agent a folder is checked for does with one file, in the words of `check` and of
/// the published diagnostics.
pub struct AgentsSaid {
    /// Each agent the folder is checked for, and what it does with the file: "Codex cuts this
    /// file at line 575, …", "Claude Code loads this file".
    pub said: Vec<(String, String)>,
    /// Which agents, and why: the repository's configuration or files, or the setting.
    pub why: String,
    name: String,
}

impl AgentsSaid {
    /// The hover's part: one bullet per agent, then `size` (the file's size in bytes and tokens)
    /// and why these agents.
    pub fn markdown(&self, size: Option<&str>) -> String {
        let bullets: Vec<String> = self.said.iter().map(|(_, p)| format!("- {p}")).collect();
        let size = size.map(|s| format!("\n\n{s}")).unwrap_or_default();
        format!("**Agents** working in {}:\n\n{}{size}\n\n_{}_", self.name, bullets.join("\n"), self.why)
    }
}

/// What each agent the folder is checked for does with `path`, in the words of `check` and of
/// the published diagnostics: e.g. "Codex cuts this file at line 575, … · Claude Code loads
/// this file". From the innermost folder that holds the file; nothing when no agent meets it.
/// `tree` gives what `check` says of a session's folder.
pub fn agents(
    path: &Path,
    sessions: &[(Session, Snapshot)],
    tree: impl Fn(&Session) -> std::sync::Arc<crate::session::check::Tree>,
) -> Option<AgentsSaid> {
    let with_agents = |s: &Session| s.profiles().iter().any(|n| agents::NAMES.contains(&n.as_str()));
    // The innermost folder that holds the file; for a file above every folder, the first whose
    // agents meet it.
    let holder = sessions
        .iter()
        .filter(|(s, _)| crate::paths::starts_with(path, &s.folder))
        .max_by_key(|(s, _)| s.folder.components().count());
    let (session, tree) = match holder {
        Some((s, _)) if with_agents(s) => (s, tree(s)),
        Some(_) => return None,
        None => sessions
            .iter()
            .filter(|(s, _)| with_agents(s))
            .map(|(s, _)| (s, tree(s)))
            .find(|(_, t)| t.statements.contains_key(path))?,
    };
    let statements = tree.statements.get(path).filter(|s| !s.is_empty())?;
    // Every agent the folder is checked for gets a word, also one that never meets the file.
    let mut said = Vec::new();
    for name in session.profiles().iter().filter(|n| agents::NAMES.contains(&n.as_str())) {
        let text = match statements.iter().find(|s| s.agent == name) {
            Some(s) => s.text.clone(),
            None => format!("{} does not read this file", agents::display_name(name)),
        };
        said.push((name.clone(), text));
    }
    let why = match session.targets() {
        Some(t) if session.settings.targeted => t.describe("show"),
        _ => "showing the agents the `profiles` setting names".to_string(),
    };
    Some(AgentsSaid { said, why, name: folder_name(session) })
}
