//! GitHub Copilot in VS Code: VS Code's own chat instruction handling, mirrored from the
//! released workbench of VS Code 1.139.1 (`microsoft/vscode@53c2f3253bcf`, as shipped by
//! code-server 4.139.1; `computeAutomaticInstructions.ts`, `promptFilesLocator.ts`,
//! `promptsServiceImpl.ts`, `promptFileParser.ts`, `config/config.ts`) and checked against that
//! workbench by the project's VS Code test (a chat participant records what VS Code attaches).
//!
//! What one request gets, in VS Code's order, computed over all its attached (here: touched)
//! files at once, anywhere in the workspace folder (the repository): the instructions files
//! whose pattern matches an attached file or is `**`, `**/*` or `*`
//! (`chat.includeApplyingInstructions`), in the order VS Code lists them (the user's folders, then
//! `.github/instructions`, `.claude/rules` and the other configured folders, searched five
//! folders deep); with `chat.includeReferencedInstructions`, the files they link to; then
//! `copilot-instructions.md`, then `AGENTS.md`, `CLAUDE.md`, `CLAUDE.local.md` and
//! `.claude/CLAUDE.md` sorted by URI; then one text listing every instructions file (and, with
//! `chat.useNestedAgentsMdFiles`, every `AGENTS.md` of the workspace) for the model to read when
//! it judges one relevant. Code-server does not run Copilot Chat itself: the text of each
//! attachment here is ours, the files and their order are VS Code's.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::chain::agents::copilot_files::{
    AgentKind, AgentSwitches, agent_files, header, instruction_files, nested_agents_md, patterns, prompt_kind,
    references, stray_files,
};
use crate::chain::loader::find::outside;
use crate::chain::model::env::{AgentEnv, Overrides};
use crate::chain::model::profile::{AgentProfile, GlobStyle, GlobalRule, Join, Nested, Pick, Root, RuleFiles};
use crate::chain::model::view::{AgentFile, Entry, RuleProblem, RuleProblemKind, Scope, Status};
use crate::chain::patterns::rule::is_wildcard;
use crate::chain::text::read::read_capped;

/// The VS Code settings this profile reads, with their defaults at the mirrored release.
pub const SETTINGS: &[&str] = &[
    USE_INSTRUCTION_FILES,
    USE_AGENTS_MD,
    USE_NESTED_AGENTS_MD,
    USE_CLAUDE_MD,
    INCLUDE_APPLYING,
    INCLUDE_REFERENCED,
    INSTRUCTIONS_LOCATIONS,
];
const USE_INSTRUCTION_FILES: &str = "github.copilot.chat.codeGeneration.useInstructionFiles";
const USE_AGENTS_MD: &str = "chat.useAgentsMdFile";
const USE_NESTED_AGENTS_MD: &str = "chat.useNestedAgentsMdFiles";
const USE_CLAUDE_MD: &str = "chat.useClaudeMdFile";
const INCLUDE_APPLYING: &str = "chat.includeApplyingInstructions";
const INCLUDE_REFERENCED: &str = "chat.includeReferencedInstructions";
const INSTRUCTIONS_LOCATIONS: &str = "chat.instructionsFilesLocations";
/// The most `chat.instructionsFilesLocations` entries searched (VS Code has no bound; ours keeps a
/// repository's settings from making every answer search a folder thousands of times).
pub const LOCATIONS_MAX: usize = 100;

/// Why a file is attached, in VS Code's words where it has some (`instruction.file.reason.*`,
/// `always added` for the files attached to every request). They tell the kinds of file apart.
const REASON_ALL: &str = "automatically attached as pattern is **";
/// An instructions file whose pattern waits for an attached file that matches it.
const RULE: &str = "automatically attached as its pattern matches an attached file";
/// An instructions file VS Code only lists for the model: no pattern, or applying instructions off.
const LISTED: &str = "listed";
/// `copilot-instructions.md`, and the other files attached to every request.
const COPILOT: &str = "always added (copilot-instructions.md)";
const ALWAYS: &str = "always added";
/// The workspace's own `AGENTS.md` when nested ones are listed too: attached, and listed first.
const ALWAYS_LISTED: &str = "always added (and listed with the nested AGENTS.md)";
/// A nested `AGENTS.md` VS Code lists.
const NESTED: &str = "listed (nested AGENTS.md)";
/// A file an attached instructions file links to (`chat.includeReferencedInstructions`).
const REFERENCED: &str = "referenced";

/// The Copilot profile for `env`; `o.editor` holds VS Code settings that win over the
/// workspace's `.vscode/settings.json`.
pub(crate) fn profile(env: &AgentEnv, o: &Overrides) -> AgentProfile {
    AgentProfile {
        name: "copilot",
        mirrors: "VS Code 1.139.1 chat (microsoft/vscode@53c2f3253bcf, the workbench of code-server 4.139.1)",
        global_rule: GlobalRule::ByPick,
        // The prompts folder of VS Code's default profile (its user data).
        global: vec![vec![prompts_home(env)]],
        pick: Pick::Own(pick),
        root: Root::GitOrCwd { check_fs_root: false },
        nested: Nested::None,
        join: Join::Own(join),
        one_request: true,
        after_touches: Some(add_references),
        problems: Some(problems),
        deps: Some(dirs_read),
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
        // A settings file linked out of the workspace is not the repository's (it may be the
        // user's own): not read.
        let linked_out = crate::chain::confine::leaves_project(&path).is_some();
        if let Some((data, _)) = (!linked_out).then(|| read_capped(&path, 1024 * 1024).ok()).flatten() {
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

    /// `chat.instructionsFilesLocations` as VS Code's `promptSourceFolders` reads it: an object of
    /// paths to booleans, merged over its default (every default folder on); the default folders
    /// not set to `false`, in their order, then every other path set to `true`. Not an object: no
    /// folder at all. At most [`LOCATIONS_MAX`] of them.
    fn locations(&self) -> Vec<String> {
        let defaults = crate::chain::agents::copilot_files::DEFAULT_LOCATIONS;
        let Some(value) = self.values.get(INSTRUCTIONS_LOCATIONS) else {
            return defaults.iter().map(|d| d.to_string()).collect();
        };
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
        let off = |d: &str| clean.iter().any(|(k, on)| k == d && !on);
        let mut out: Vec<String> = defaults.iter().filter(|d| !off(d)).map(|d| d.to_string()).collect();
        out.extend(clean.into_iter().filter(|(k, on)| *on && !defaults.contains(&k.as_str())).map(|(k, _)| k));
        out.truncate(LOCATIONS_MAX);
        out
    }
}

/// The files of one request in the workspace folder `dirs[0]`: every instructions file (attached
/// at start for a wildcard pattern, waiting for an attached file for another, only listed
/// without one or with applying instructions off), then the files attached to every request,
/// then, with `chat.useNestedAgentsMdFiles`, every other `AGENTS.md`, listed.
fn pick(profile: &AgentProfile, dirs: &[PathBuf], scope: Scope) -> Vec<AgentFile> {
    let Some(root) = dirs.first().filter(|_| scope != Scope::Nested) else { return Vec::new() };
    let settings = Settings::read(root, &profile.editor_settings);
    let home = profile.home.as_deref();
    let prompts = profile.global.iter().flatten().next().cloned().unwrap_or_default();
    let applying = settings.flag(INCLUDE_APPLYING, true);
    let size = |p: &Path| crate::chain::repo::memo::stat(p).map_or(0, |m| m.len);
    let mut out: Vec<AgentFile> = Vec::new();
    for (path, scope) in instruction_files(root, home, &prompts, &settings.locations()) {
        // The repository's settings may name any folder; what lies outside it is not read.
        if let Some(real) = outside(&path, root).filter(|_| scope == Scope::Project) {
            out.push(AgentFile::new(path, scope, Status::LinkedOutside).by(&real));
            continue;
        }
        let pats = header(&path).pattern.as_deref().map(patterns).unwrap_or_default();
        let bytes = size(&path);
        let mut f = if !applying || pats.is_empty() {
            let mut f = AgentFile::new(path, scope, Status::OnRequest).size(bytes, 0);
            f.label = Some(LISTED);
            f
        } else if pats.iter().any(|p| is_wildcard(p)) {
            let mut f = AgentFile::new(path, scope, Status::Loaded);
            f.label = Some(REASON_ALL);
            f
        } else {
            let mut f = AgentFile::new(path, scope, Status::Waiting).size(bytes, 0);
            f.label = Some(RULE);
            f
        };
        f.globs = pats;
        out.push(f);
    }
    let use_agents_md = settings.flag(USE_AGENTS_MD, true);
    let switches = AgentSwitches {
        agents_md: use_agents_md,
        claude_md: settings.flag(USE_CLAUDE_MD, true),
        copilot_instructions: settings.flag(USE_INSTRUCTION_FILES, true),
    };
    let nested = use_agents_md && settings.flag(USE_NESTED_AGENTS_MD, false);
    for (path, kind, scope) in agent_files(root, home, &switches) {
        let mut f = AgentFile::new(path, scope, Status::Loaded);
        let root_agents = kind == AgentKind::AgentsMd && f.path.parent() == Some(root.as_path());
        f.label = Some(match kind {
            AgentKind::CopilotInstructions => COPILOT,
            _ if nested && root_agents => ALWAYS_LISTED,
            _ => ALWAYS,
        });
        out.push(f);
    }
    if nested {
        for path in nested_agents_md(root) {
            // One attached at the root is listed from its own entry.
            if out.iter().any(|f| f.path == path) {
                continue;
            }
            let bytes = size(&path);
            let mut f = AgentFile::new(path, Scope::Nested, Status::OnRequest).size(bytes, 0);
            f.label = Some(NESTED);
            out.push(f);
        }
    }
    out
}

/// With `chat.includeReferencedInstructions`: the files the attached instructions files link to
/// (`_addReferencedInstructions`), after them, and those `copilot-instructions.md` links to,
/// after it: a file in the workspace folder, or one of VS Code's own kinds anywhere (whose links
/// are followed in turn, inside the workspace: one outside is listed, not read), each once.
fn add_references(profile: &AgentProfile, root: &Path, files: &mut Vec<AgentFile>) {
    let settings = Settings::read(root, &profile.editor_settings);
    if !settings.flag(INCLUDE_REFERENCED, false) {
        return;
    }
    let home = profile.home.as_deref();
    let mut known: HashSet<PathBuf> = files.iter().filter(|f| f.status.reaches()).map(|f| f.path.clone()).collect();
    let follow = |from: &[&AgentFile], known: &mut HashSet<PathBuf>| {
        let mut stack: Vec<(PathBuf, u32)> = from.iter().map(|f| (f.path.clone(), f.batch)).collect();
        let mut found = Vec::new();
        while let Some((path, batch)) = stack.pop() {
            for target in references(&path, home) {
                let inside = target.starts_with(root);
                if known.contains(&target)
                    || !(prompt_kind(&target).is_some() || inside)
                    || !crate::chain::repo::memo::stat(&target).is_some_and(|m| m.is_file)
                {
                    continue;
                }
                known.insert(target.clone());
                let out = outside(&target, root).is_some();
                // VS Code follows its own kinds' links in turn; one outside the workspace is
                // not read, so neither are its links.
                if prompt_kind(&target).is_some() && !out {
                    stack.push((target.clone(), batch));
                }
                let status = if out { Status::LinkedOutside } else { Status::Loaded };
                let mut f = AgentFile::new(target, Scope::Import, status).by(&path);
                (f.label, f.batch) = (Some(REFERENCED), batch);
                found.push(f);
            }
        }
        found
    };
    let is_rule = |f: &AgentFile| matches!(f.label, Some(REASON_ALL) | Some(RULE));
    let applying: Vec<&AgentFile> = files.iter().filter(|f| is_rule(f) && f.status.reaches()).collect();
    let after_rules = files.iter().rposition(|f| is_rule(f) || f.label == Some(LISTED)).map_or(0, |i| i + 1);
    let first = follow(&applying, &mut known);
    let copilot: Vec<&AgentFile> = files.iter().filter(|f| f.label == Some(COPILOT)).collect();
    let after_copilot = files.iter().rposition(|f| f.label == Some(COPILOT));
    let second = follow(&copilot, &mut known);
    if let Some(i) = after_copilot {
        files.splice(i + 1..i + 1, second);
    }
    files.splice(after_rules..after_rules, first);
}

/// VS Code's request, as parts: each attached file in VS Code's order (in an `<attachment>` of
/// ours, with VS Code's reason), then VS Code's `<instructions>` list.
fn join(_profile: &AgentProfile, entries: &[Entry]) -> Vec<String> {
    let attach = |e: &Entry| {
        let reason = match e.file.label {
            Some(RULE) => {
                let pattern = header(&e.file.path).pattern.unwrap_or_default();
                format!("automatically attached as pattern {pattern} matches an attached file")
            }
            Some(REFERENCED) => {
                let by = e.file.by.as_deref().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
                format!("Referenced by {}", by.unwrap_or_default())
            }
            Some(COPILOT) | Some(ALWAYS_LISTED) => ALWAYS.to_string(),
            Some(label) => label.to_string(),
            None => ALWAYS.to_string(),
        };
        let path = e.file.path.display().to_string();
        format!(
            "<attachment filePath=\"{}\" reason=\"{}\">\n{}\n</attachment>",
            attribute(&path),
            attribute(&reason),
            e.text
        )
    };
    let mut parts: Vec<String> = entries.iter().filter(|e| e.file.status.reaches()).map(attach).collect();
    parts.extend(instructions_list(entries));
    parts
}

/// A value inside our `<attachment>`'s quotes: what `escape` escapes, and quotes and line breaks
/// (a file's name may hold them).
fn attribute(s: &str) -> String {
    escape(s).replace('"', "&quot;").replace('\n', "&#10;").replace('\r', "&#13;")
}

/// `<`, `>` and `&` escaped, as VS Code escapes what it puts in its list.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// VS Code's `<instructions>` list (`_getCustomizationsIndex`, with the read tool enabled, as in
/// agent mode): every instructions file, attached or not, with its path, description and
/// pattern, then, with `chat.useNestedAgentsMdFiles`, every `AGENTS.md` of the workspace with
/// its folder. `None` when there is nothing to list.
fn instructions_list(entries: &[Entry]) -> Option<String> {
    let mut lines: Vec<String> = [
        "<instructions>",
        "Here is a list of instruction files that contain rules for working with this codebase.",
        "These files are important for understanding the codebase structure, conventions, and best practices.",
        "When an instruction file applies to your task (based on its description or applyTo pattern), follow the rules specified in it.",
        "If the file content is not already included in the context, use the #tool:readFile tool to read it before proceeding. Use the exact value from the <file> element as-is with the tool; do not add or remove prefixes or otherwise modify it.",
        "Only load instruction files when they are relevant to the current task. Do not eagerly load all instructions upfront.",
        "When modifying or creating files, check for instructions whose applyTo pattern matches the file path and follow them.",
    ]
    .map(String::from)
    .to_vec();
    let mut any = false;
    let instruction = |e: &&Entry| matches!(e.file.label, Some(REASON_ALL) | Some(RULE) | Some(LISTED));
    for e in entries.iter().filter(instruction).filter(|e| e.file.status != Status::LinkedOutside) {
        let h = header(&e.file.path);
        lines.push("<instruction>".into());
        lines.push(format!("<file>{}</file>", e.file.path.display()));
        if let Some(d) = &h.description {
            lines.push(format!("<description>{}</description>", escape(d)));
        }
        if let Some(p) = &h.pattern {
            lines.push(format!("<applyTo>{}</applyTo>", escape(p)));
        }
        lines.push("</instruction>".into());
        any = true;
    }
    // The workspace's own `AGENTS.md` first (its folder is the workspace folder), then the others.
    let attached_root = entries.iter().find(|e| e.file.label == Some(ALWAYS_LISTED));
    let nested: Vec<&Entry> = entries.iter().filter(|e| e.file.label == Some(NESTED)).collect();
    let root = match attached_root {
        Some(e) => e.file.path.parent(),
        None => nested.first().and_then(|e| e.file.path.ancestors().find(|d| crate::chain::repo::project::has_git(d))),
    };
    for e in attached_root.into_iter().chain(nested) {
        let folder = e
            .file
            .path
            .parent()
            .and_then(|d| d.strip_prefix(root?).ok())
            .map(crate::paths::slash_join)
            .unwrap_or_default();
        let description = if folder.trim().is_empty() {
            "Instructions for the workspace".to_string()
        } else {
            format!("Instructions for folder '{folder}'")
        };
        lines.push("<instruction>".into());
        lines.push(format!("<file>{}</file>", e.file.path.display()));
        lines.push(format!("<description>{}</description>", escape(&description)));
        lines.push("</instruction>".into());
        any = true;
    }
    if !any {
        return None;
    }
    lines.extend(["</instructions>".to_string(), String::new(), String::new()]);
    Some(lines.join("\n"))
}

/// What authors of Copilot's files would want to know (`base` is the workspace folder): an
/// instructions file VS Code never finds, so that neither Copilot nor the model can read it, and
/// a text attached twice.
fn problems(profile: &AgentProfile, files: &[AgentFile], base: &Path) -> Vec<RuleProblem> {
    let agent = crate::chain::model::names::display_name(profile.name);
    let show = |p: &Path| p.strip_prefix(base).map_or_else(|_| p.display().to_string(), crate::paths::slash_join);
    let known: HashSet<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    let mut out = Vec::new();
    for (path, why) in stray_files(base) {
        if known.contains(path.as_path()) {
            continue;
        }
        out.push(RuleProblem::new(
            path,
            RuleProblemKind::Never,
            format!("{agent} never finds this file, so neither it nor the model can read it: {why}"),
        ));
    }
    // The same text attached twice: files of one size, then their bytes.
    let attached: Vec<&AgentFile> = files.iter().filter(|f| f.status.reaches() && f.bytes > 0).collect();
    let mut texts: Vec<(&AgentFile, Vec<u8>)> = Vec::new();
    for f in attached {
        if !attached_size_twin(files, f) {
            continue;
        }
        let Ok((data, _)) = read_capped(&f.path, f.bytes) else { continue };
        if let Some((first, _)) = texts.iter().find(|(t, d)| t.bytes == f.bytes && *d == data) {
            let mut p = RuleProblem::new(
                f.path.clone(),
                RuleProblemKind::AttachedTwice,
                format!(
                    "{agent} attaches this file's text twice: its {} are the same as `{}`, which it attaches too",
                    crate::chain::words::bytes(f.bytes),
                    show(&first.path)
                ),
            );
            p.other = Some(first.path.clone());
            out.push(p);
            continue;
        }
        texts.push((f, data));
    }
    out
}

/// Whether another attached file of `files` has the size of `f` (only then are texts compared).
fn attached_size_twin(files: &[AgentFile], f: &AgentFile) -> bool {
    files.iter().any(|g| g.status.reaches() && g.bytes == f.bytes && g.path != f.path)
}

/// The directories a Copilot view read, so that it can be remembered while they are watched: the
/// workspace folder and its ancestors, its `.vscode`, `.github` and `.claude` folders, every
/// instructions folder with the folders below it, the user's folders, and the folder of every
/// file listed. `None` when the view looked further: a glob location, the nested `AGENTS.md`
/// search, followed links, or a rule's patterns checked against every file of the repository.
fn dirs_read(
    profile: &AgentProfile,
    view: &crate::chain::model::view::AgentView,
    _: &[PathBuf],
) -> Option<std::collections::BTreeSet<PathBuf>> {
    use crate::chain::loader::deps::{below, existing, listed_dirs};
    let root =
        view.cwd.ancestors().find(|d| crate::chain::repo::project::has_git(d)).unwrap_or(&view.cwd).to_path_buf();
    let settings = Settings::read(&root, &profile.editor_settings);
    let locations = settings.locations();
    // What the repository's listing answered (patterns, nested `AGENTS.md`) holds while no file
    // is made or removed in it: the caller watches that apart (`view.repository`).
    if settings.flag(INCLUDE_REFERENCED, false) || locations.iter().any(|l| l.contains(['*', '?', '[', '{'])) {
        return None;
    }
    let home = profile.home.as_deref();
    let mut out: std::collections::BTreeSet<PathBuf> = view.cwd.ancestors().map(Path::to_path_buf).collect();
    out.extend(root.ancestors().map(Path::to_path_buf));
    let mut trees: Vec<PathBuf> = profile.global.iter().flatten().cloned().collect();
    let prompts = trees.first().cloned().unwrap_or_default();
    for l in &locations {
        let dir = match (l.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            (Some(_), None) => continue,
            (None, _) => root.join(l),
        };
        // Watched only where it is searched: never a folder outside.
        let dir = crate::paths::normalize(&dir);
        if crate::chain::agents::copilot_files::admitted(&dir, &root, home, &prompts) {
            trees.push(dir);
        }
    }
    let mut folders = vec![root.join(".vscode"), root.join(".github"), root.join(".claude")];
    if let Some(home) = home {
        folders.extend([home.join(".copilot"), home.join(".claude")]);
    }
    for dir in folders.iter().chain(&trees) {
        out.insert(existing(dir));
    }
    listed_dirs(view, &mut out);
    let mut seen = HashSet::new();
    for dir in trees.iter().chain(&folders[1..3]) {
        if crate::chain::repo::memo::is_dir(dir) && !below(dir, 0, &mut seen, &mut out) {
            return None;
        }
    }
    Some(out)
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
        let defaults = crate::chain::agents::copilot_files::DEFAULT_LOCATIONS;
        let mut with_extra: Vec<&str> = defaults.to_vec();
        with_extra.push("docs/ai");
        assert_eq!(s(serde_json::json!({"docs/ai": true})).locations(), with_extra);
        let off = serde_json::json!({".github/instructions": false, ".claude/rules": "false", "a": "true", "b": false});
        assert_eq!(s(off).locations(), ["~/.copilot/instructions", "~/.claude/rules", "a"]);
        assert!(s(serde_json::json!(["x"])).locations().is_empty());
    }
}
