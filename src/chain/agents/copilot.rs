//! GitHub Copilot in VS Code: VS Code's own chat instruction handling (the chat prompt-files
//! code of `microsoft/vscode`: `computeAutomaticInstructions.ts`, `promptFilesLocator.ts`,
//! `promptsServiceImpl.ts`, `config/config.ts`, `config/promptFileLocations.ts`), mirrored from
//! reading the source, since Copilot Chat cannot run offline.
//!
//! What one request gets, in VS Code's order: the instruction files whose `applyTo` matches an
//! attached (here: touched) file, or whose `applyTo` is `**`, `**/*` or `*`; then
//! `.github/copilot-instructions.md` (`github.copilot.chat.codeGeneration.useInstructionFiles`);
//! then the root `AGENTS.md` (`chat.useAgentsMdFile`); then one text listing every instruction
//! file (and, with `chat.useNestedAgentsMdFiles`, every `AGENTS.md` of the workspace) for the
//! model to read when it judges one relevant.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::env::{AgentEnv, Overrides};
use super::profile::{AgentProfile, GlobStyle, GlobalRule, Join, Nested, Pick, Root, RuleFiles};
use super::read::read_capped;
use super::view::{AgentFile, Entry, Scope, Status};
use super::walk::{bounded_globs, front_matter, is_wildcard, outside, split_outside_braces, yaml_scalar};

/// The VS Code settings this profile reads, with their defaults at the mirrored commit.
pub const SETTINGS: &[&str] = &[USE_INSTRUCTION_FILES, USE_AGENTS_MD, USE_NESTED_AGENTS_MD, INSTRUCTIONS_LOCATIONS];
const USE_INSTRUCTION_FILES: &str = "github.copilot.chat.codeGeneration.useInstructionFiles";
const USE_AGENTS_MD: &str = "chat.useAgentsMdFile";
const USE_NESTED_AGENTS_MD: &str = "chat.useNestedAgentsMdFiles";
const INSTRUCTIONS_LOCATIONS: &str = "chat.instructionsFilesLocations";
/// The most `chat.instructionsFilesLocations` entries searched (VS Code has no bound; ours keeps a
/// repository's settings from making every answer search a folder thousands of times).
pub const LOCATIONS_MAX: usize = 100;
/// The instructions folder VS Code looks in unless `chat.instructionsFilesLocations` turns it off.
const DEFAULT_LOCATION: &str = ".github/instructions";

/// The labels that say why a file is attached (VS Code's reasons, `instruction.file.reason.*`).
const REASON_ALL: &str = "Automatically attached as pattern is **";
const REASON_COPILOT: &str =
    "Automatically attached as setting github.copilot.chat.codeGeneration.useInstructionFiles is enabled";
const REASON_AGENTS: &str = "Automatically attached as setting chat.useAgentsMdFile is enabled";
/// A file VS Code only lists for the model (no label of VS Code's: it is never attached).
const LISTED: &str = "listed";

/// The Copilot profile for `env`; `o.editor` holds VS Code settings that win over the
/// workspace's `.vscode/settings.json`.
pub(super) fn profile(env: &AgentEnv, o: &Overrides) -> AgentProfile {
    AgentProfile {
        name: "copilot",
        mirrors: "VS Code chat, microsoft/vscode@e06a3cee (release tag not verified)",
        global_rule: GlobalRule::ByPick,
        // The user's prompts folder of VS Code's default profile.
        global: vec![vec![prompts_home(env)]],
        pick: Pick::Own(pick),
        root: Root::GitOrCwd { check_fs_root: false },
        nested: Nested::None,
        join: Join::Own(join),
        rule_files: Some(RuleFiles { suffix: ".instructions.md", globs_key: "applyTo" }),
        glob_style: GlobStyle::VsCode,
        // VS Code attaches a file whatever it holds.
        drop_blank: false,
        editor_settings: o.editor.clone(),
        ..AgentProfile::base(env.home.clone())
    }
}

/// `User/prompts` of VS Code's user data folder, per platform.
fn prompts_home(env: &AgentEnv) -> PathBuf {
    let user = if cfg!(target_os = "macos") {
        env.home_join("Library/Application Support/Code/User")
    } else if cfg!(windows) {
        std::env::var_os("APPDATA")
            .map(PathBuf::from)
            .unwrap_or_else(|| env.home_join("AppData/Roaming"))
            .join("Code/User")
    } else {
        env.xdg_config_home.clone().unwrap_or_else(|| env.home_join(".config")).join("Code/User")
    };
    user.join("prompts")
}

/// The settings in effect: the profile's own (`--set`, the project configuration), else the
/// workspace's `.vscode/settings.json` (JSON with comments and trailing commas), else VS Code's
/// defaults. The user's own `settings.json` is not read.
struct Settings {
    values: BTreeMap<String, Value>,
}

impl Settings {
    fn read(root: &Path, own: &BTreeMap<String, Value>) -> Self {
        let mut values = BTreeMap::new();
        let path = root.join(".vscode/settings.json");
        if let Ok((data, _)) = read_capped(&path, 1024 * 1024) {
            let text = String::from_utf8_lossy(&data);
            if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&strip_jsonc(&text)) {
                values.extend(map.into_iter().filter(|(k, _)| SETTINGS.contains(&k.as_str())));
            }
        }
        values.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
        Self { values }
    }

    /// A boolean setting: `true`/`false`, or VS Code's reading of `"true"`/`"false"`.
    fn flag(&self, key: &str, default: bool) -> bool {
        match self.values.get(key) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => true,
            Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("false") => false,
            // Another value is falsy in VS Code's `if (!value)` checks, but for `null`.
            Some(Value::Null) | None => default,
            Some(_) => false,
        }
    }

    /// `chat.instructionsFilesLocations` as VS Code's `promptSourceFolders` reads it: an object
    /// of paths to booleans; the default folder unless set to `false`, then every other path set
    /// to `true`. Not an object: no folder at all.
    fn locations(&self) -> Vec<String> {
        let Some(value) = self.values.get(INSTRUCTIONS_LOCATIONS) else { return vec![DEFAULT_LOCATION.into()] };
        let Value::Object(map) = value else { return Vec::new() };
        let as_bool = |v: &Value| match v {
            Value::Bool(b) => Some(*b),
            Value::String(s) if s.trim().eq_ignore_ascii_case("true") => Some(true),
            Value::String(s) if s.trim().eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        };
        let clean: Vec<(String, bool)> = map
            .iter()
            .filter_map(|(k, v)| Some((k.trim().to_string(), as_bool(v)?)))
            .filter(|(k, _)| !k.is_empty())
            .collect();
        let mut out = Vec::new();
        if !clean.iter().any(|(k, on)| k == DEFAULT_LOCATION && !on) {
            out.push(DEFAULT_LOCATION.to_string());
        }
        out.extend(clean.into_iter().filter(|(k, on)| *on && k != DEFAULT_LOCATION).map(|(k, _)| k));
        out
    }
}

/// JSON with comments as plain JSON: `//` and `/* */` comments and trailing commas removed,
/// strings kept as they are.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                while let Some(s) = chars.next() {
                    out.push(s);
                    match s {
                        '\\' => out.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for s in chars.by_ref() {
                    if s == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for s in chars.by_ref() {
                    if last == '*' && s == '/' {
                        break;
                    }
                    last = s;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    // A comma followed only by blanks and a closing bracket goes.
    let mut cleaned = String::with_capacity(out.len());
    let bytes: Vec<char> = out.chars().collect();
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            cleaned.push(c);
            if c == '\\' {
                if let Some(n) = bytes.get(i + 1) {
                    cleaned.push(*n);
                    i += 1;
                }
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            cleaned.push(c);
        } else if c == ',' {
            let next = bytes[i + 1..].iter().find(|n| !n.is_whitespace());
            if !matches!(next, Some('}') | Some(']')) {
                cleaned.push(c);
            }
        } else {
            cleaned.push(c);
        }
        i += 1;
    }
    cleaned
}

/// An instructions file's name (`getPromptFileType`): `*.instructions.md`, or a
/// `copilot-instructions.md` found in an instructions folder.
fn is_instructions(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".instructions.md") || n == "copilot-instructions.md")
}

/// Whether a location holds a glob (`isValidGlob`: `*`, `?`, or paired brackets or braces).
fn has_glob(s: &str) -> bool {
    s.contains(['*', '?']) || (s.contains('[') && s.contains(']')) || (s.contains('{') && s.contains('}'))
}

/// The most entries one glob location's search looks at.
const SEARCH_ENTRIES: usize = 20_000;

/// The files of one instructions location: its files (not sub-folders) when it names a folder,
/// itself when it names a file; with a glob, the files below its first glob-free parent whose
/// path from there matches the rest (`firstNonGlobParentAndPattern`, then a file search).
fn location_files(root: &Path, location: &str) -> Vec<PathBuf> {
    let full = if Path::new(location).is_absolute() { PathBuf::from(location) } else { root.join(location) };
    let text = crate::paths::slash_join(&full);
    let segments: Vec<&str> = text.split('/').collect();
    let Some(i) = segments.iter().position(|s| has_glob(s)) else {
        return match fs::metadata(&full) {
            Ok(m) if m.is_file() => vec![full],
            Ok(m) if m.is_dir() => {
                let mut files: Vec<PathBuf> = fs::read_dir(&full)
                    .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect())
                    .unwrap_or_default();
                files.sort();
                files
            }
            _ => Vec::new(),
        };
    };
    let parent = PathBuf::from(segments[..i].join("/"));
    // A search outside the workspace folder (`../**`, `/**`) is not made.
    if outside(&parent, root).is_some() {
        return Vec::new();
    }
    let pattern = segments[i..].join("/");
    if pattern == "*" || pattern.is_empty() {
        return location_files(root, &crate::paths::slash_join(&parent));
    }
    let Ok(glob) = globset::GlobBuilder::new(&pattern).literal_separator(true).build() else { return Vec::new() };
    let matcher = glob.compile_matcher();
    let mut out: Vec<PathBuf> = ignore::WalkBuilder::new(&parent)
        .hidden(false)
        .require_git(false)
        .build()
        .take(SEARCH_ENTRIES)
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| e.path().strip_prefix(&parent).is_ok_and(|rel| matcher.is_match(rel)))
        .map(|e| e.into_path())
        .collect();
    out.sort();
    out
}

/// What an instructions file's front matter says: `applyTo` and `description`, and whether it
/// has front matter at all (VS Code lists a file's path only when it has).
#[derive(Default)]
pub(super) struct Header {
    pub(super) present: bool,
    pub(super) apply_to: Option<String>,
    pub(super) description: Option<String>,
}

pub(super) fn header(path: &Path) -> Header {
    let Ok((data, _)) = read_capped(path, 64 * 1024) else { return Header::default() };
    let text = String::from_utf8_lossy(&data);
    let Some((meta, _)) = front_matter(&text) else { return Header::default() };
    let bad = super::walk::front_matter_problem(&text).is_some();
    if bad {
        // VS Code's YAML parser gives no attributes for front matter it cannot read.
        return Header { present: true, ..Header::default() };
    }
    let nonempty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    Header {
        present: true,
        apply_to: nonempty(yaml_scalar(meta, "applyTo")),
        description: nonempty(yaml_scalar(meta, "description")),
    }
}

/// `applyTo` as VS Code splits it (`splitGlobAware` at commas outside braces), each pattern
/// trimmed, empty ones dropped.
pub(super) fn patterns(apply_to: &str) -> Vec<String> {
    // Bounded as the other agents' rules are (VS Code has no bound).
    bounded_globs(split_outside_braces(apply_to))
}

/// The files of the workspace folder `dirs[0]`: the user's instructions files and the
/// workspace's, each attached at start (a wildcard `applyTo`), waiting for a touch (other
/// `applyTo` patterns) or only listed (none); then `.github/copilot-instructions.md` and the
/// root `AGENTS.md` as their settings say; then, with `chat.useNestedAgentsMdFiles`, every other
/// `AGENTS.md`, listed.
fn pick(profile: &AgentProfile, dirs: &[PathBuf], scope: Scope) -> Vec<AgentFile> {
    let Some(root) = dirs.first().filter(|_| scope != Scope::Nested) else { return Vec::new() };
    let settings = Settings::read(root, &profile.editor_settings);
    let mut out: Vec<AgentFile> = Vec::new();
    let mut instructions: Vec<(PathBuf, Scope)> = Vec::new();
    for home in profile.global.iter().flatten() {
        let files = location_files(home, &crate::paths::slash_join(home));
        instructions.extend(files.into_iter().map(|p| (p, Scope::Global)));
    }
    // Each folder searched once, however it is spelled (`a`, `a/`, `./a`), and at most
    // LOCATIONS_MAX of them: a repository's settings may list thousands.
    let mut searched = HashSet::new();
    for location in settings.locations().into_iter().take(LOCATIONS_MAX) {
        if searched.insert(crate::paths::normalize(&root.join(&location))) {
            instructions.extend(location_files(root, &location).into_iter().map(|p| (p, Scope::Project)));
        }
    }
    let mut listed: HashSet<PathBuf> = HashSet::new();
    for (path, scope) in instructions {
        if !is_instructions(&path) || !listed.insert(path.clone()) {
            continue;
        }
        // The repository's settings may name any folder; what lies outside it is not read.
        if let Some(real) = outside(&path, root).filter(|_| scope == Scope::Project) {
            out.push(AgentFile::new(path, scope, Status::LinkedOutside).by(&real));
            continue;
        }
        let h = header(&path);
        let pats: Vec<String> = h.apply_to.as_deref().map(patterns).unwrap_or_default();
        let mut f = if pats.iter().any(|p| is_wildcard(p)) {
            let mut f = AgentFile::new(path, scope, Status::Loaded);
            f.label = Some(REASON_ALL);
            f
        } else if !pats.is_empty() {
            let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            AgentFile::new(path, scope, Status::Waiting).size(bytes, 0)
        } else {
            let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let mut f = AgentFile::new(path, scope, Status::OnRequest).size(bytes, 0);
            f.label = Some(LISTED);
            f
        };
        f.globs = pats;
        out.push(f);
    }
    if settings.flag(USE_INSTRUCTION_FILES, true) {
        let path = root.join(".github/copilot-instructions.md");
        if path.is_file() {
            let mut f = AgentFile::new(path, Scope::Project, Status::Loaded);
            f.label = Some(REASON_COPILOT);
            out.push(f);
        }
    }
    let use_agents_md = settings.flag(USE_AGENTS_MD, true);
    let root_agents = fs::read_dir(root).ok().and_then(|d| {
        d.flatten()
            .find(|e| e.file_name().to_string_lossy().eq_ignore_ascii_case("agents.md") && e.path().is_file())
            .map(|e| e.path())
    });
    if let Some(path) = root_agents.filter(|_| use_agents_md) {
        let mut f = AgentFile::new(path, Scope::Project, Status::Loaded);
        f.label = Some(REASON_AGENTS);
        out.push(f);
    }
    if settings.flag(USE_NESTED_AGENTS_MD, false) {
        for path in nested_agents_md(root) {
            // The root `AGENTS.md`, when attached, is listed from its entry.
            if out.iter().any(|f| f.path == path) {
                continue;
            }
            let bytes = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            let mut f = AgentFile::new(path, Scope::Nested, Status::OnRequest).size(bytes, 0);
            f.label = Some(LISTED);
            out.push(f);
        }
    }
    out
}

/// Every `AGENTS.md` of the workspace (`**/AGENTS.md`, the file search honouring `.gitignore`),
/// root first, then by path.
fn nested_agents_md(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git" && e.file_name() != "node_modules")
        .build()
        .take(SEARCH_ENTRIES)
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()) && e.file_name() == "AGENTS.md")
        .map(|e| e.into_path())
        .collect();
    found.sort_by_key(|p| (p.components().count(), p.clone()));
    found
}

/// VS Code's request, as parts: the files attached at start (each in an `<attachment>` of ours,
/// with VS Code's reason), VS Code's `<instructions>` list, then the files each touch attaches.
fn join(profile: &AgentProfile, entries: &[Entry]) -> Vec<String> {
    let attach = |e: &Entry| {
        let reason = match e.file.label {
            Some(r) if r != LISTED => r.to_string(),
            _ => match header(&e.file.path).apply_to {
                Some(a) => format!("Automatically attached as pattern {a} matches a touched file"),
                None => REASON_ALL.to_string(),
            },
        };
        format!("<attachment filePath=\"{}\" reason=\"{reason}\">\n{}\n</attachment>", e.file.path.display(), e.text)
    };
    let mut parts: Vec<String> =
        entries.iter().filter(|e| e.file.batch == 0 && e.file.status.reaches()).map(attach).collect();
    if let Some(list) = instructions_list(profile, entries) {
        parts.push(list);
    }
    let mut batches: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for e in entries.iter().filter(|e| e.file.batch > 0 && e.file.status.reaches()) {
        batches.entry(e.file.batch).or_default().push(attach(e));
    }
    parts.extend(batches.into_values().flatten());
    parts
}

/// VS Code's `<instructions>` list (`_getInstructionsWithPatternsList`, with the read tool
/// enabled, as in agent mode): every instructions file, attached or not, with its description,
/// path and `applyTo` (the path only when it has front matter, as VS Code does), then, with
/// `chat.useNestedAgentsMdFiles`, every `AGENTS.md` of the workspace. `None` when there is
/// nothing to list.
fn instructions_list(profile: &AgentProfile, entries: &[Entry]) -> Option<String> {
    let mut lines: Vec<String> = [
        "<instructions>",
        "Here is a list of instruction files that contain rules for modifying or creating new code.",
        "These files are important for ensuring that the code is modified or created correctly.",
        "Please make sure to follow the rules specified in these files when working with the codebase.",
        "If the file is not already available as attachment, use the #tool:readFile tool to acquire it.",
        "Make sure to acquire the instructions before making any changes to the code.",
    ]
    .map(String::from)
    .to_vec();
    let mut any = false;
    let is_agents_md = |e: &&Entry| e.file.path.file_name().is_some_and(|n| n.eq_ignore_ascii_case("agents.md"));
    let listed = |e: &&Entry| is_instructions(&e.file.path) && e.file.label != Some(REASON_COPILOT);
    for e in entries.iter().filter(listed).filter(|e| e.file.status != Status::LinkedOutside) {
        let h = header(&e.file.path);
        lines.push("<instruction>".into());
        if h.present {
            if let Some(d) = &h.description {
                lines.push(format!("<description>{d}</description>"));
            }
            lines.push(format!("<file>{}</file>", e.file.path.display()));
            if let Some(a) = &h.apply_to {
                lines.push(format!("<applyTo>{a}</applyTo>"));
            }
        }
        lines.push("</instruction>".into());
        any = true;
    }
    // The root `AGENTS.md` is attached; it is listed too when nested ones are searched for.
    let attached_root = entries.iter().filter(is_agents_md).find(|e| e.file.label == Some(REASON_AGENTS));
    let root = attached_root.and_then(|e| e.file.path.parent().map(Path::to_path_buf));
    let nested_on =
        root.as_deref().is_some_and(|r| Settings::read(r, &profile.editor_settings).flag(USE_NESTED_AGENTS_MD, false));
    let listed: Vec<&Entry> = entries
        .iter()
        .filter(is_agents_md)
        .filter(|e| e.file.status == Status::OnRequest || (nested_on && e.file.label == Some(REASON_AGENTS)))
        .collect();
    // The workspace folder: the root `AGENTS.md`'s, else the nearest holding `.git`.
    let root = root.or_else(|| {
        let first = listed.first()?;
        first.file.path.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
    });
    let mut listed = listed;
    listed.sort_by_key(|e| (e.file.path.components().count(), e.file.path.clone()));
    for e in listed {
        let folder = e
            .file
            .path
            .parent()
            .and_then(|d| d.strip_prefix(root.as_deref()?).ok())
            .map(crate::paths::slash_join)
            .unwrap_or_default();
        let description = if folder.trim().is_empty() {
            "Instructions for the workspace".to_string()
        } else {
            format!("Instructions for folder '{folder}'")
        };
        lines.push("<instruction>".into());
        lines.push(format!("<description>{description}</description>"));
        lines.push(format!("<file>{}</file>", e.file.path.display()));
        lines.push("</instruction>".into());
        any = true;
    }
    if !any {
        return None;
    }
    lines.extend(["</instructions>".to_string(), String::new(), String::new()]);
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_files_may_hold_comments_and_trailing_commas() {
        let text =
            "{\n  // a comment\n  \"chat.useAgentsMdFile\": false, /* more */\n  \"x\": \"a // not a comment\",\n}\n";
        let v: Value = serde_json::from_str(&strip_jsonc(text)).expect("parses");
        assert_eq!(v["chat.useAgentsMdFile"], Value::Bool(false));
        assert_eq!(v["x"], Value::String("a // not a comment".into()));
    }

    #[test]
    fn locations_keep_the_default_folder_unless_it_is_turned_off() {
        let s = |v: Value| Settings { values: [(INSTRUCTIONS_LOCATIONS.to_string(), v)].into_iter().collect() };
        assert_eq!(s(serde_json::json!({"docs/ai": true})).locations(), [DEFAULT_LOCATION, "docs/ai"]);
        assert_eq!(s(serde_json::json!({".github/instructions": false, "a": "true", "b": false})).locations(), ["a"]);
        assert!(s(serde_json::json!(["x"])).locations().is_empty());
    }
}
