//! Edits of `instructions-lsp.toml` that quick fixes offer: a budget raised for an agent
//! (`[codex] max-bytes = 49152`), a finding accepted for a file (`[accept] "CLAUDE.md" =
//! ["agentIgnored"]`). Each is the smallest change of the text (one line set or added, or the
//! file created), and is offered only when the changed text, read again as the configuration,
//! says what was meant and nothing else changed; else there is no fix.

use std::path::{Path, PathBuf};

use super::config::{self, CONFIG_NAMES, ProjectConfig};
use super::lint::{Change, ConfigChange, Fix};

/// The configuration file a fix for the folder `dir` writes: the nearest from `dir` up to the
/// project root that `holds` (else the nearest), else a new `instructions-lsp.toml` at the
/// project root; with its text (empty for a new one).
fn target(dir: &Path, holds: impl Fn(&ProjectConfig) -> bool) -> Option<(PathBuf, String)> {
    let files = config::config_files(dir);
    let holder = files.iter().find(|f| config::load_config(f).is_ok_and(|c| holds(&c)));
    if let Some(path) = holder.or(files.first()) {
        return Some((path.clone(), text_of(path)?));
    }
    let root = dir.ancestors().find(|d| super::confine::holds_git(d))?;
    let new = root.join(CONFIG_NAMES[0]);
    Some((new.clone(), text_of(&new)?))
}

/// Whether a fix may write the configuration at `path`: not through a link that leads out of the
/// project, nor through one that leads nowhere (an editor would create its target on save,
/// wherever the repository points it).
pub fn writable(path: &Path) -> bool {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    super::confine::leaves_project(path).is_none() && !(link && super::confine::real_location(path).is_err())
}

/// The text of the configuration file at `path` on the disk (empty when there is none); `None`
/// when it cannot be read as one ([`config::read_config`]) or is not [`writable`].
pub fn text_of(path: &Path) -> Option<String> {
    if !writable(path) {
        return None;
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(String::new()),
        Err(_) => None,
        Ok(_) => config::read_config(path).ok(),
    }
}

/// The edit that sets `key = value` in the table `[table]` of `text` (both written as TOML):
/// the line that sets it replaced, else a line added at the table's end, else the table added
/// at the end of the text. As `(start, end, new text)` of the bytes replaced.
fn set_line(text: &str, table: &str, key: &str, value: &str) -> (usize, usize, String) {
    let header = format!("[{table}]");
    let line = format!("{key} = {value}\n");
    let mut at = 0;
    let mut in_table = false;
    let mut table_end = None;
    for l in text.split_inclusive('\n') {
        let t = l.trim();
        if t.starts_with('[') {
            if in_table {
                break;
            }
            in_table = t == header;
        } else if in_table {
            let written = t.split_once('=').map(|(k, _)| k.trim().trim_matches('"'));
            if written == Some(key.trim_matches('"')) {
                let end = at + l.trim_end_matches(['\n', '\r']).len();
                return (at, end, line.trim_end().to_string());
            }
            if !t.is_empty() {
                table_end = Some(at + l.len());
            }
        }
        if in_table && table_end.is_none() {
            table_end = Some(at + l.len());
        }
        at += l.len();
    }
    match table_end {
        // After the table's last line (a line break first when the text does not end in one).
        Some(end) => {
            let lead = if text[..end].ends_with('\n') { "" } else { "\n" };
            (end, end, format!("{lead}{line}"))
        }
        None => {
            let lead = match text {
                "" => "",
                t if t.ends_with("\n\n") => "",
                t if t.ends_with('\n') => "\n",
                _ => "\n\n",
            };
            (text.len(), text.len(), format!("{lead}{header}\n{line}"))
        }
    }
}

/// `edit` applied to `text`.
fn applied(text: &str, (start, end, with): &(usize, usize, String)) -> String {
    format!("{}{with}{}", &text[..*start], &text[*end..])
}

/// The edit of `text`, the configuration at `path` (empty for a new one), that makes `change`,
/// as `(start, end, new text)` of the bytes replaced: `None` when the text does not read as a
/// configuration (or is larger than one may be), holds the change already (a budget as large or
/// larger: a raise never lowers one), or would say anything else once changed (a key written
/// another way, an inline table).
pub fn place(change: &ConfigChange, path: &Path, text: &str) -> Option<(usize, usize, String)> {
    if text.len() as u64 > config::CONFIG_MAX_BYTES {
        return None;
    }
    let before = (!text.is_empty()).then(|| config::parse_config(path, text)).transpose().ok()?;
    let mut expected = before.clone().unwrap_or_else(|| ProjectConfig { path: path.to_path_buf(), ..empty() });
    let edit = match change {
        ConfigChange::Budget { agent, bytes } => {
            let budget = &mut expected.settings.entry(agent.clone()).or_default().max_bytes;
            if budget.is_some_and(|b| b >= *bytes) {
                return None;
            }
            *budget = Some(*bytes);
            set_line(text, agent, "max-bytes", &bytes.to_string())
        }
        ConfigChange::Accept { key, code } => {
            let codes = expected.accept.entry(key.clone()).or_default();
            if codes.iter().any(|c| c == code) {
                return None;
            }
            codes.push(code.clone());
            let list = serde_json::to_string(&codes).ok()?.replace(',', ", ");
            set_line(text, "accept", &serde_json::to_string(key).ok()?, &list)
        }
    };
    let after = config::parse_config(path, &applied(text, &edit)).ok()?;
    (after == expected).then_some(edit)
}

/// The fix that makes `change` in the configuration `path`, whose text is `text`, titled
/// `title` (given the file's name), when it can be placed there.
fn fix((path, text): (PathBuf, String), change: ConfigChange, title: impl FnOnce(&str) -> String) -> Option<Fix> {
    place(&change, &path, &text)?;
    let name = path.file_name()?.to_str()?.to_string();
    Some(Fix { title: title(&name), change: Change::Config { path, change } })
}

/// "Raise Codex's budget to 48 KiB in instructions-lsp.toml": `[agent] max-bytes = bytes` in
/// the configuration for `dir`, the folder the agent starts in: in the file whose `[agent]`
/// table decides for `dir` (a table in a nearer file would replace it whole), else the nearest.
pub fn raise_budget(dir: &Path, agent: &str, bytes: u64) -> Option<Fix> {
    let who = super::agents::display_name(agent);
    fix(target(dir, |c| c.settings.contains_key(agent))?, ConfigChange::Budget { agent: agent.into(), bytes }, |name| {
        format!("Raise {who}'s budget to {} in {name}", super::words::size_words(bytes))
    })
}

/// "Accept `agentIgnored` for CLAUDE.md in instructions-lsp.toml": the finding's code added to
/// the `[accept]` entry of `file` (named from the configuration's folder).
pub fn accept(file: &Path, code: &str) -> Option<Fix> {
    let (path, text) = target(file.parent()?, |_| true)?;
    let key = crate::paths::slash_join(file.strip_prefix(path.parent()?).ok()?);
    let title = format!("Accept `{code}` for {key} in ");
    fix((path, text), ConfigChange::Accept { key, code: code.into() }, |name| format!("{title}{name}"))
}

fn empty() -> ProjectConfig {
    ProjectConfig {
        path: PathBuf::new(),
        agents: None,
        settings: Default::default(),
        starts: Vec::new(),
        accept: Default::default(),
        exclude: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str, table: &str, key: &str, value: &str) -> String {
        applied(text, &set_line(text, table, key, value))
    }

    #[test]
    fn a_line_is_set_where_it_is_added_where_its_table_ends_or_with_its_table() {
        let t = "agents = [\"codex\"]\n\n[codex]\nmax-bytes = 100 # mine\n\n[claude]\nfile-names = [\"A.md\"]\n";
        assert_eq!(
            set(t, "codex", "max-bytes", "49152"),
            "agents = [\"codex\"]\n\n[codex]\nmax-bytes = 49152\n\n[claude]\nfile-names = [\"A.md\"]\n"
        );
        assert_eq!(
            set(t, "claude", "max-bytes", "1"),
            "agents = [\"codex\"]\n\n[codex]\nmax-bytes = 100 # mine\n\n[claude]\nfile-names = [\"A.md\"]\nmax-bytes = 1\n"
        );
        assert_eq!(set("agents = []", "codex", "max-bytes", "1"), "agents = []\n\n[codex]\nmax-bytes = 1\n");
        assert_eq!(set("", "accept", "\"a.md\"", "[\"shadowed\"]"), "[accept]\n\"a.md\" = [\"shadowed\"]\n");
        assert_eq!(set("[codex]", "codex", "max-bytes", "1"), "[codex]\nmax-bytes = 1\n");
    }

    #[test]
    fn fixes_write_the_nearest_configuration_and_only_what_is_meant() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).expect("mkdir");
        std::fs::create_dir_all(root.join("pkg")).expect("mkdir");
        // No configuration: a new file at the project root.
        let f = raise_budget(&root.join("pkg"), "codex", 49152).expect("a fix");
        assert_eq!(f.title, "Raise Codex's budget to 48 KiB in instructions-lsp.toml");
        let Change::Config { path, change } = &f.change else { panic!("{f:?}") };
        assert_eq!(path, &root.join("instructions-lsp.toml"));
        assert_eq!(place(change, path, ""), Some((0, 0, "[codex]\nmax-bytes = 49152\n".into())));
        assert!(!f.in_fix_all(), "a decision for the author, not a mechanical mend");
        // One to extend: an entry of [accept] gains the code.
        let config = "agents = [\"codex\", \"opencode\"]\n[accept]\n\"pkg/CLAUDE.md\" = [\"shadowed\"]\n";
        std::fs::write(root.join("instructions-lsp.toml"), config).expect("write");
        let f = accept(&root.join("pkg/CLAUDE.md"), "agentIgnored").expect("a fix");
        assert_eq!(f.title, "Accept `agentIgnored` for pkg/CLAUDE.md in instructions-lsp.toml");
        let Change::Config { path, change } = &f.change else { panic!("{f:?}") };
        assert_eq!(
            applied(config, &place(change, path, config).expect("placed")),
            "agents = [\"codex\", \"opencode\"]\n[accept]\n\"pkg/CLAUDE.md\" = [\"shadowed\", \"agentIgnored\"]\n"
        );
        assert_eq!(accept(&root.join("pkg/CLAUDE.md"), "shadowed"), None, "accepted already");
        // A configuration that writes the key otherwise (an inline table): no edit is sure.
        std::fs::write(root.join("instructions-lsp.toml"), "codex = { max-bytes = 1 }\n").expect("write");
        assert_eq!(raise_budget(root, "codex", 2048), None);
        // A package's file without a `[codex]` table: the root's table decides for the package,
        // and a table added to the package's file would replace it whole. The root's is raised.
        let config = "[codex]\nmax-bytes = 1000\nfile-names = [\"RULES.md\"]\n";
        std::fs::write(root.join("instructions-lsp.toml"), config).expect("write");
        std::fs::write(root.join("pkg/instructions-lsp.toml"), "agents = [\"codex\"]\n").expect("write");
        let f = raise_budget(&root.join("pkg"), "codex", 2048).expect("a fix");
        let Change::Config { path, change } = &f.change else { panic!("{f:?}") };
        assert_eq!(path, &root.join("instructions-lsp.toml"));
        assert_eq!(
            applied(config, &place(change, path, config).expect("placed")),
            "[codex]\nmax-bytes = 2048\nfile-names = [\"RULES.md\"]\n"
        );
        // Where the package's own file has the table, it decides, and it is the one raised.
        std::fs::write(root.join("pkg/instructions-lsp.toml"), "[codex]\nmax-bytes = 1500\n").expect("write");
        let f = raise_budget(&root.join("pkg"), "codex", 2048).expect("a fix");
        let Change::Config { path, .. } = &f.change else { panic!("{f:?}") };
        assert_eq!(path, &root.join("pkg/instructions-lsp.toml"));
        // A raise never lowers a budget (the editor's buffer may hold a larger one than the disk).
        let larger = "[codex]\nmax-bytes = 4096\n";
        assert_eq!(place(&ConfigChange::Budget { agent: "codex".into(), bytes: 2048 }, path, larger), None);
    }

    /// A configuration that is a link leading nowhere, or out of the project, is never a fix's
    /// target: an editor would write through it, wherever the repository points it.
    #[cfg(unix)]
    #[test]
    fn no_fix_writes_through_a_link_out_or_to_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).expect("mkdir");
        let config = root.join("instructions-lsp.toml");
        std::os::unix::fs::symlink(dir.path().join("nowhere.toml"), &config).expect("link");
        assert_eq!(raise_budget(&root, "codex", 2048), None, "a dangling link");
        assert_eq!(accept(&root.join("CLAUDE.md"), "shadowed"), None, "a dangling link");
        std::fs::write(dir.path().join("nowhere.toml"), "agents = [\"codex\"]\n").expect("write");
        assert_eq!(raise_budget(&root, "codex", 2048), None, "a link out of the project");
        std::fs::remove_file(&config).expect("unlink");
        assert!(raise_budget(&root, "codex", 2048).is_some(), "a new file at the project root");
    }
}
