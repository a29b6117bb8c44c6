//! What an author may type next in an instruction file or in `instructions-lsp.toml`: the
//! front-matter keys (and the few values) the agents read in that kind of file, the agents and
//! keys of the configuration, and the project's files after an `@` import. Made from the names
//! the checks use, so that completion offers nothing a check would then flag.

use std::path::Path;

use crate::chain::agents;
use crate::chain::config::{AGENT_KEYS, CONFIG_NAMES};

/// One thing to type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// What the list shows.
    pub label: String,
    /// What replaces the word typed so far (from [`Completion::from`]).
    pub insert: String,
    /// A few words on it.
    pub detail: String,
    pub kind: Kind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Key,
    Value,
    File,
    Folder,
}

/// The items, and the byte where the word they replace starts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    pub from: usize,
    pub items: Vec<Item>,
}

/// The most files an `@` completion lists from one folder.
const FILES_MAX: usize = 500;

/// What may be typed at byte `at` of `text`, the file at `path`, for `agents` (the agents the
/// folder is checked for; `base`: the project's folder, which `@` completion never leaves).
pub fn complete(path: &Path, text: &str, at: usize, agents_on: &[String], base: &Path) -> Completion {
    let at = floor_char_boundary(text, at.min(text.len()));
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..at];
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if CONFIG_NAMES.contains(&name) {
        return config(text, line_start, line);
    }
    if let Some(c) = front_matter(path, text, line_start, line, agents_on) {
        return c;
    }
    import(path, line_start, line, base)
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The word being typed at the end of `line`: its start (in the line) and itself.
fn word<'a>(line: &'a str, also: &[char]) -> (usize, &'a str) {
    let start = line
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '-' || *c == '_' || *c == '.' || also.contains(c)))
        .map_or(0, |(i, c)| i + c.len_utf8());
    (start, &line[start..])
}

fn items(words: &[&str], kind: Kind, detail: &str, insert: impl Fn(&str) -> String) -> Vec<Item> {
    words.iter().map(|w| Item { label: w.to_string(), insert: insert(w), detail: detail.to_string(), kind }).collect()
}

/// In `instructions-lsp.toml`: a table's name after `[`, an agent inside `agents = [`, a
/// Copilot setting inside `settings = {`, else the keys of the table the line is in.
fn config(text: &str, line_start: usize, line: &str) -> Completion {
    let trimmed = line.trim_start();
    let (start, _) = word(line, &[]);
    let from = line_start + start;
    if trimmed.starts_with('[') && !trimmed.contains(']') {
        let mut all = items(agents::NAMES, Kind::Key, "the agent's table", |w| w.to_string());
        all.extend(items(&["accept"], Kind::Key, "findings accepted for some files", |w| w.to_string()));
        return Completion { from, items: all };
    }
    // The table the line is in: the last `[name]` above it.
    let table = text[..line_start].lines().rev().find_map(|l| {
        let l = l.trim();
        l.strip_prefix('[').and_then(|r| r.strip_suffix(']')).map(str::trim)
    });
    let quoted = line[..start].ends_with('"');
    let quote = |w: &str| if quoted { w.to_string() } else { format!("\"{w}\"") };
    if let Some((key, value)) = line.split_once('=') {
        let key = key.trim();
        if table.is_none() && key == "agents" && value.contains('[') {
            return Completion { from, items: items(agents::NAMES, Kind::Value, "an agent", quote) };
        }
        if table == Some("accept") && value.contains('[') {
            let codes: Vec<&str> = crate::chain::lint::Code::ALL.iter().map(|c| c.name()).collect();
            return Completion { from, items: items(&codes, Kind::Value, "a finding's code", quote) };
        }
        if table == Some("copilot") && key == "settings" && value.contains('{') {
            let settings = agents::COPILOT_SETTINGS;
            return Completion {
                from,
                items: items(settings, Kind::Key, "a VS Code setting Copilot's view reads", quote),
            };
        }
        return Completion { from, items: Vec::new() };
    }
    let keys: Vec<&str> = match table {
        None => vec!["agents", "starts", "exclude"],
        Some("copilot") => AGENT_KEYS.to_vec(),
        Some(t) if agents::NAMES.contains(&t) => AGENT_KEYS.iter().copied().filter(|k| *k != "settings").collect(),
        Some(_) => Vec::new(),
    };
    Completion { from, items: items(&keys, Kind::Key, "a key of instructions-lsp.toml", |w| format!("{w} = ")) }
}

/// Inside the front matter of a file whose keys an agent reads: the keys not written yet, or
/// after `key:` the values the agents know for it. `None` outside front matter.
fn front_matter(path: &Path, text: &str, line_start: usize, line: &str, agents_on: &[String]) -> Option<Completion> {
    let first = text.find('\n')?;
    if text[..first].trim_end() != "---" || line_start <= first {
        return None;
    }
    let closed = text[first + 1..line_start].lines().any(|l| l.trim_end() == "---");
    if closed {
        return None;
    }
    let readers: Vec<&str> =
        agents_on.iter().map(String::as_str).filter(|a| agents::keys_for(a, path).is_some()).collect();
    if readers.is_empty() {
        return None;
    }
    let (start, _) = word(line, &[]);
    let from = line_start + start;
    if let Some((key, _)) = line.split_once(':') {
        let mut values: Vec<&str> = Vec::new();
        for a in &readers {
            for v in agents::values_for(a, key.trim()) {
                if !values.contains(v) {
                    values.push(v);
                }
            }
        }
        return Some(Completion {
            from,
            items: items(&values, Kind::Value, "a value the agent knows", |w| w.to_string()),
        });
    }
    let written: Vec<&str> =
        text[first + 1..line_start].lines().filter_map(|l| l.split_once(':').map(|(k, _)| k.trim())).collect();
    let mut keys: Vec<&str> = Vec::new();
    let mut detail: Vec<String> = Vec::new();
    for a in &readers {
        for k in agents::keys_for(a, path).unwrap_or_default() {
            if !keys.contains(k) && !written.contains(k) {
                keys.push(k);
            }
        }
        detail.push(agents::display_name(a).to_string());
    }
    let detail = format!("read by {}", detail.join(", "));
    Some(Completion { from, items: items(&keys, Kind::Key, &detail, |w| format!("{w}: ")) })
}

/// After `@`: the files and folders of the project in the folder the path typed so far names
/// (from the file's folder, as Claude Code and Gemini CLI resolve an import); nothing outside
/// the project, through a link or not.
fn import(path: &Path, line_start: usize, line: &str, base: &Path) -> Completion {
    let (start, typed) = word(line, &['/', '@']);
    let Some(typed) = typed.strip_prefix('@') else { return Completion::default() };
    if start > 0 && !line[..start].ends_with(char::is_whitespace) {
        return Completion::default();
    }
    let (dir_part, _) = typed.rsplit_once('/').unwrap_or(("", typed));
    let from = line_start + start + 1 + if dir_part.is_empty() { 0 } else { dir_part.len() + 1 };
    let Some(folder) = path.parent().map(|p| crate::paths::normalize(&p.join(dir_part))) else {
        return Completion::default();
    };
    let inside = |p: &Path| p.starts_with(base) && crate::chain::confine::leaves(p, base).is_none();
    if !inside(&folder) {
        return Completion::default();
    }
    let Ok(entries) = std::fs::read_dir(&folder) else { return Completion::default() };
    let mut out: Vec<Item> = Vec::new();
    for entry in entries.flatten().take(FILES_MAX) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".git" || !inside(&entry.path()) {
            continue;
        }
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        let (insert, kind) = if is_dir { (format!("{name}/"), Kind::Folder) } else { (name.clone(), Kind::File) };
        out.push(Item { label: insert.clone(), insert, detail: String::new(), kind });
    }
    out.sort_by(|a, b| a.label.cmp(&b.label));
    Completion { from, items: out }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(c: &Completion) -> Vec<&str> {
        c.items.iter().map(|i| i.label.as_str()).collect()
    }

    /// The configuration: agents inside `agents = [`, tables after `[`, the keys of the table
    /// the line is in, Copilot's settings.
    #[test]
    fn the_configuration_offers_its_own_names_where_they_go() {
        let p = Path::new("/r/instructions-lsp.toml");
        let at_end = |text: &str| complete(p, text, text.len(), &[], Path::new("/r"));
        let c = at_end("agents = [\"cl");
        assert!(labels(&c).contains(&"claude") && c.items[0].insert == "codex" && c.from == 11, "{c:?}");
        assert_eq!(at_end("agents = [").items[0].insert, "\"codex\"");
        assert_eq!(labels(&at_end("[co")), [agents::NAMES, &["accept"]].concat());
        let accept = at_end("[accept]\n\"docs/CLAUDE.md\" = [\"sh");
        let codes = labels(&accept);
        assert!(codes.contains(&"shadowed") && codes.contains(&"agentCut"), "{codes:?}");
        assert_eq!(labels(&at_end("agents = []\n")), ["agents", "starts", "exclude"]);
        assert_eq!(labels(&at_end("[codex]\nmax")), ["max-bytes", "file-names"]);
        assert_eq!(labels(&at_end("[copilot]\n")), AGENT_KEYS);
        assert_eq!(labels(&at_end("[copilot]\nsettings = { \"")), agents::COPILOT_SETTINGS);
    }

    /// Front matter: the keys the targeted agents read in that kind of file and not written yet,
    /// the values they know; nothing in the body, nothing for a file no agent reads keys of.
    #[test]
    fn front_matter_offers_the_keys_the_agents_read() {
        let cursor = vec!["cursor".to_string()];
        let p = Path::new("/r/.cursor/rules/r.mdc");
        let text = "---\nglobs: src/**\n\n---\nbody\n";
        let c = complete(p, text, 18, &cursor, Path::new("/r"));
        assert_eq!(labels(&c), ["description", "alwaysApply"]);
        assert_eq!(c.items[0].insert, "description: ");
        let text = "---\nalwaysApply: t\n---\n";
        assert_eq!(labels(&complete(p, text, 18, &cursor, Path::new("/r"))), ["true", "false"]);
        assert!(complete(p, "---\n---\nbody ", 13, &cursor, Path::new("/r")).items.is_empty());
        let codex = vec!["codex".to_string()];
        assert!(complete(p, "---\n\n---\n", 4, &codex, Path::new("/r")).items.is_empty());
    }

    /// After `@`: the project's files from the file's folder; nothing above the project.
    #[test]
    fn an_import_completes_with_the_projects_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("docs/deep")).expect("dirs");
        std::fs::write(root.join("docs/guide.md"), "g").expect("write");
        std::fs::write(root.join("AGENTS.md"), "a").expect("write");
        let claude = root.join("CLAUDE.md");
        let text = "Read @docs/gu";
        let c = complete(&claude, text, text.len(), &[], root);
        assert_eq!(labels(&c), ["deep/", "guide.md"]);
        assert_eq!(c.from, "Read @docs/".len());
        let c = complete(&claude, "@", 1, &[], root);
        assert_eq!(labels(&c), ["AGENTS.md", "docs/"]);
        assert!(complete(&claude, "@../", 4, &[], root).items.is_empty(), "above the project");
        assert!(complete(&claude, "me@do", 5, &[], root).items.is_empty(), "an address is no import");
    }
}
