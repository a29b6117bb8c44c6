//! Where VS Code 1.139.1 finds the files of Copilot's requests, and what it reads in them
//! (`promptFilesLocator.ts`, `promptsServiceImpl.ts`, `promptFileParser.ts`,
//! `promptFileLocations.ts` of `microsoft/vscode`, read from the released workbench).

use std::cmp::Ordering;
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::chain::loader::find::outside;
use crate::chain::model::view::Scope;
use crate::chain::patterns::rule::bounded_globs;
use crate::chain::repo::memo::stat;
use crate::chain::repo::project::{is_file_entry, project_entries};
use crate::chain::text::front_matter::{front_matter, front_matter_problem, yaml_scalar, yaml_strings};
use crate::chain::text::read::read_capped;

/// How deep VS Code searches an instructions folder (`resolveFilesAtLocation`, `MAX_DEPTH`).
const FOLDER_DEPTH: usize = 5;
/// The most entries one location's search looks at (VS Code has no bound).
const SEARCH_ENTRIES: usize = 20_000;

/// The instructions folders VS Code searches unless `chat.instructionsFilesLocations` turns
/// one off (`DEFAULT_INSTRUCTIONS_SOURCE_FOLDERS`): the workspace's, then the user's.
pub(crate) const DEFAULT_LOCATIONS: &[&str] =
    &[".github/instructions", ".claude/rules", "~/.copilot/instructions", "~/.claude/rules"];

/// VS Code's kinds of file, told by name and folder (`getPromptFileType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PromptKind {
    Prompt,
    Instructions,
    Agent,
    Skill,
    Hook,
}

/// The kind VS Code gives `path`, in its order of checks: `*.prompt.md`; `*.instructions.md` and
/// `copilot-instructions.md`; `*.chatmode.md` and `*.agent.md`; `SKILL.md`; a Markdown file
/// (not `README.md`) in an agents folder, then below a `.claude/rules` folder; `*.json`.
pub(crate) fn prompt_kind(path: &Path) -> Option<PromptKind> {
    let name = path.file_name().and_then(|n| n.to_str())?;
    if name.ends_with(".prompt.md") {
        return Some(PromptKind::Prompt);
    }
    if name.ends_with(".instructions.md") || name == "copilot-instructions.md" {
        return Some(PromptKind::Instructions);
    }
    if name.ends_with(".chatmode.md") || name.ends_with(".agent.md") {
        return Some(PromptKind::Agent);
    }
    if name.eq_ignore_ascii_case("SKILL.md") {
        return Some(PromptKind::Skill);
    }
    let markdown = name.ends_with(".md") && name != "README.md";
    let dir = path.parent().map(crate::paths::slash_join).unwrap_or_default();
    if markdown
        && [".github/agents", ".claude/agents", ".copilot/agents"].iter().any(|d| dir.ends_with(&format!("/{d}")))
    {
        return Some(PromptKind::Agent);
    }
    if markdown && is_claude_rule(path) {
        return Some(PromptKind::Instructions);
    }
    name.to_ascii_lowercase().ends_with(".json").then_some(PromptKind::Hook)
}

/// Whether VS Code takes `path` for an instructions file.
pub(crate) fn is_instructions(path: &Path) -> bool {
    prompt_kind(path) == Some(PromptKind::Instructions)
}

/// A file below a `.claude/rules` folder (`isInClaudeRulesFolder`): its pattern is `paths:`.
pub(crate) fn is_claude_rule(path: &Path) -> bool {
    crate::paths::slash_join(path).contains("/.claude/rules/")
}

/// Whether a location holds a glob (`isValidGlob`): `*` or `?`, or brackets or braces that pair.
fn has_glob(segment: &str) -> bool {
    let (mut brackets, mut braces, mut saw_bracket, mut saw_brace) = (0i32, 0i32, false, false);
    let mut escaped = false;
    for c in segment.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '*' | '?' => return true,
            '[' => (saw_bracket, brackets) = (true, brackets + 1),
            ']' => (saw_bracket, brackets) = (true, brackets - 1),
            '{' => (saw_brace, braces) = (true, braces + 1),
            '}' => (saw_brace, braces) = (true, braces - 1),
            _ => {}
        }
    }
    (saw_bracket && brackets == 0) || (saw_brace && braces == 0)
}

/// A folder's entries as Node lists them (libuv sorts a directory's names by their bytes).
/// Remembered in a run's scope: every request of a run (every directory `check` and `diff`
/// look from) searches the same folders.
fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    crate::chain::repo::memo::remembered("sorted entries", dir, || {
        let mut names: Vec<PathBuf> =
            fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        names.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        names
    })
}

/// The files of folder `dir`, in its order, a sub-folder's files in its place, `depth` deep at
/// most (VS Code's `resolveFilesAtLocation`: links followed, as its file service stats them).
fn folder_files(
    dir: &Path,
    depth: usize,
    recurse: bool,
    fence: Option<&Path>,
    seen: &mut usize,
    out: &mut Vec<PathBuf>,
) {
    for path in sorted_entries(dir) {
        *seen += 1;
        if *seen > SEARCH_ENTRIES {
            return;
        }
        match stat(&path) {
            Some(m) if m.is_file => out.push(path),
            Some(m)
                if m.is_dir && recurse && depth < FOLDER_DEPTH && fence.is_none_or(|w| outside(&path, w).is_none()) =>
            {
                folder_files(&path, depth + 1, recurse, fence, seen, out)
            }
            _ => {}
        }
    }
}

/// The files of one location, absolute (`~/` already expanded): the file itself, a folder's
/// files (its sub-folders' too, to [`FOLDER_DEPTH`], unless it is the workspace folder itself),
/// or, with a glob, the files below its first glob-free folder whose path from there matches the
/// rest (`firstNonGlobParentAndPattern`, then a file search honouring `.gitignore`).
pub(crate) fn location_files(location: &Path, workspace: &Path) -> Vec<PathBuf> {
    let text = crate::paths::slash_join(location);
    let segments: Vec<&str> = text.split('/').collect();
    let Some(i) = segments.iter().position(|s| has_glob(s)) else {
        return match stat(location) {
            Some(m) if m.is_file => vec![location.to_path_buf()],
            Some(m) if m.is_dir => {
                let mut out = Vec::new();
                // In the workspace, a folder linked out of it is not listed.
                let fence = inside_real(location, workspace).then_some(workspace);
                folder_files(location, 0, location != workspace, fence, &mut 0, &mut out);
                out
            }
            _ => Vec::new(),
        };
    };
    let parent = PathBuf::from(segments[..i].join("/"));
    let pattern = segments[i..].join("/");
    if (i + 1 == segments.len() && pattern == "*") || pattern.is_empty() {
        return location_files(&parent, workspace);
    }
    // A search outside the workspace folder (`../**`, `/**`) is not made.
    if outside(&parent, workspace).is_some() {
        return Vec::new();
    }
    let Ok(glob) = crate::chain::patterns::rule::vscode_glob(&pattern, true) else {
        return Vec::new();
    };
    let matcher = glob.compile_matcher();
    let mut out: Vec<PathBuf> =
        crate::chain::confine::entries(&mut crate::chain::confine::walker(&parent, |_| true), SEARCH_ENTRIES)
            .into_iter()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .filter(|e| e.path().strip_prefix(&parent).is_ok_and(|rel| matcher.is_match(rel)))
            .map(|e| e.into_path())
            .collect();
    out.sort();
    out
}

/// Every instructions file of one request, in VS Code's order (`listPromptFiles`): the user's
/// folders (`~/…` locations, then the prompts folder of its profile), then the workspace's, each
/// folder's files in its order; each file once, also when a folder link leads to it again (VS
/// Code would list it under each path, up to its depth). `locations` are as the settings give
/// them.
pub(crate) fn instruction_files(
    root: &Path,
    home: Option<&Path>,
    prompts_home: &Path,
    locations: &[String],
) -> Vec<(PathBuf, Scope)> {
    let mut out: Vec<(PathBuf, Scope)> = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut searched: HashSet<PathBuf> = HashSet::new();
    let mut add = |files: Vec<PathBuf>, scope: Scope, out: &mut Vec<(PathBuf, Scope)>| {
        for f in files.into_iter().filter(|f| is_instructions(f)) {
            if seen.insert(crate::chain::repo::memo::real_path(&f).unwrap_or_else(|_| f.clone())) {
                out.push((f, scope));
            }
        }
    };
    let (user, local): (Vec<&String>, Vec<&String>) = locations.iter().partition(|l| l.starts_with("~/"));
    for l in user {
        let Some(home) = home else { continue };
        let dir = crate::paths::normalize(&home.join(&l[2..]));
        if admitted(&dir, root, Some(home), prompts_home) && searched.insert(dir.clone()) {
            // A `~/` location that is the workspace's own folder is the repository's, and what
            // links out of it is judged so.
            let scope = if inside_real(&dir, root) { Scope::Project } else { Scope::Global };
            add(location_files(&dir, root), scope, &mut out);
        }
    }
    add(location_files(prompts_home, root), Scope::Global, &mut out);
    for l in local {
        let dir = crate::paths::normalize(&root.join(l));
        if admitted(&dir, root, home, prompts_home) && searched.insert(dir.clone()) {
            add(location_files(&dir, root), Scope::Project, &mut out);
        }
    }
    out
}

/// The folders outside the workspace that a location may name: the user's instructions folders
/// VS Code searches by default, and its prompts folder.
fn global_folders<'a>(home: &'a Path, prompts_home: &'a Path) -> impl Iterator<Item = PathBuf> + 'a {
    DEFAULT_LOCATIONS
        .iter()
        .filter_map(|l| l.strip_prefix("~/"))
        .map(|rest| home.join(rest))
        .chain(std::iter::once(prompts_home.to_path_buf()))
}

/// Whether a configured location is searched: its real location (`~`, `..` and links resolved
/// first, however it is written) lies in the workspace or in one of VS Code's own user folders
/// ([`global_folders`]). A repository's `.vscode/settings.json` may name `~/../anywhere`, a
/// link to `/`, or `/etc`: none of those is listed, opened or measured. The glob-free part of a
/// location is what is resolved; a location that does not exist has nothing to search.
pub(crate) fn admitted(location: &Path, workspace: &Path, home: Option<&Path>, prompts_home: &Path) -> bool {
    inside_real(location, workspace)
        || home.is_some_and(|home| global_folders(home, prompts_home).any(|g| inside_real(location, &g)))
}

/// Whether the real location of `path` (its glob-free part) lies in the real location of `base`.
fn inside_real(path: &Path, base: &Path) -> bool {
    let text = crate::paths::slash_join(path);
    let fixed: PathBuf = match text.split('/').position(has_glob) {
        Some(i) => PathBuf::from(text.split('/').take(i).collect::<Vec<_>>().join("/")),
        None => path.to_path_buf(),
    };
    // (Most locations do not exist: one remembered stat says so, before any path is resolved.)
    if crate::chain::repo::memo::stat(&fixed).is_none() {
        return false;
    }
    let (Ok(real), Ok(base)) = (crate::chain::repo::memo::real_path(&fixed), crate::chain::repo::memo::real_path(base))
    else {
        return false;
    };
    real.starts_with(base) && !crate::chain::text::read::is_special(&real)
}

/// The files below the workspace's `.github` and `.claude` folders that look meant for Copilot
/// but that VS Code never finds with its default folders, with why: a `*.instructions.md` outside
/// `.github/instructions`, a Markdown file there not named `*.instructions.md`, a file deeper than
/// VS Code searches. (The rest of the repository is not walked for them.)
pub(crate) fn stray_files(root: &Path) -> Vec<(PathBuf, String)> {
    crate::chain::repo::memo::remembered("copilot strays", root, || find_stray_files(root))
}

fn find_stray_files(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for top in [".github", ".claude"] {
        let dir = root.join(top);
        // (A folder linked out of the workspace is not the repository's to list.)
        if !crate::chain::repo::memo::is_dir(&dir) || outside(&dir, root).is_some() {
            continue;
        }
        let root_real = crate::chain::repo::memo::real_path(root).unwrap_or_else(|_| root.to_path_buf());
        let mut walk = crate::chain::confine::walker(&dir, move |e| {
            !e.path_is_symlink() || crate::chain::confine::leaves(e.path(), &root_real).is_none()
        });
        walk.max_depth(Some(12));
        for e in crate::chain::confine::entries(&mut walk, SEARCH_ENTRIES)
            .into_iter()
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        {
            let path = e.path();
            let Ok(rel) = path.strip_prefix(root) else { continue };
            let rel_text = crate::paths::slash_join(rel);
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let folder = [".github/instructions/", ".claude/rules/"].into_iter().find(|f| rel_text.starts_with(f));
            let why = match folder {
                Some(f) if is_instructions(path) => {
                    let depth = rel_text[f.len()..].matches('/').count();
                    if depth <= FOLDER_DEPTH {
                        continue;
                    }
                    format!(
                        "VS Code searches `{}` {FOLDER_DEPTH} folders deep, and this file is {depth} folders down",
                        f.trim_end_matches('/')
                    )
                }
                Some(".github/instructions/")
                    if name.ends_with(".md") && !name.ends_with(".prompt.md") && name != "README.md" =>
                {
                    "in `.github/instructions` VS Code reads only files named `*.instructions.md`".to_string()
                }
                None if name.ends_with(".instructions.md") => {
                    "it is in none of the folders VS Code searches for instructions (`.github/instructions`, `.claude/rules`, or one named in `chat.instructionsFilesLocations`)".to_string()
                }
                _ => continue,
            };
            out.push((path.to_path_buf(), why));
        }
    }
    out.sort();
    out
}

/// What an instructions file's front matter says, as VS Code reads it.
#[derive(Clone, Default)]
pub(crate) struct Header {
    /// The pattern that attaches the file (`applyTo`, or a `.claude/rules` file's `paths:`).
    pub(crate) pattern: Option<String>,
    pub(crate) description: Option<String>,
}

/// The header of the instructions file `path` (`getPattern`: a `.claude/rules` file's `paths:`
/// joined with `, `, `**` when it has none; another file's `applyTo`, only as a plain string).
pub(crate) fn header(path: &Path) -> Header {
    crate::chain::repo::memo::remembered("copilot header", path, || read_header(path))
}

fn read_header(path: &Path) -> Header {
    let claude = is_claude_rule(path);
    let text = read_capped(path, 64 * 1024).map(|(d, _)| String::from_utf8_lossy(&d).into_owned()).unwrap_or_default();
    let meta = front_matter(&text).map(|(m, _)| m);
    let broken = meta.is_some() && front_matter_problem(&text).is_some();
    let meta = meta.filter(|_| !broken).unwrap_or("");
    let pattern = if claude {
        let has_key = meta.lines().any(|l| l.strip_prefix("paths").is_some_and(|r| r.trim_start().starts_with(':')));
        if has_key { Some(bounded_globs(yaml_strings(meta, "paths")).join(", ")) } else { Some("**".to_string()) }
    } else {
        yaml_scalar(meta, "applyTo")
    };
    Header {
        pattern: pattern.filter(|p| !p.is_empty()),
        description: yaml_scalar(meta, "description").filter(|d| !d.trim().is_empty()),
    }
}

/// A pattern as VS Code splits it (`splitGlobAware`): at commas outside `{…}` and `[…]`, each
/// part trimmed, empty ones dropped; bounded as the other agents' rules are.
pub(crate) fn patterns(pattern: &str) -> Vec<String> {
    let (mut parts, mut part, mut in_brace, mut in_bracket) = (Vec::new(), String::new(), false, false);
    for c in pattern.chars() {
        match c {
            ',' if !in_brace && !in_bracket => {
                parts.push(std::mem::take(&mut part));
                continue;
            }
            '{' => in_brace = true,
            '}' => in_brace = false,
            '[' => in_bracket = true,
            ']' => in_bracket = false,
            _ => {}
        }
        part.push(c);
    }
    parts.push(part);
    bounded_globs(parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()))
}

/// What kind of always-attached file VS Code found (`listAgentInstructions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AgentKind {
    CopilotInstructions,
    AgentsMd,
    ClaudeMd,
}

/// Which always-attached files are on (their settings).
pub(crate) struct AgentSwitches {
    pub(crate) agents_md: bool,
    pub(crate) claude_md: bool,
    pub(crate) copilot_instructions: bool,
}

/// The files attached to every request (`listAgentInstructions`): `AGENTS.md`, `CLAUDE.md`,
/// `CLAUDE.local.md` in the workspace folder, `CLAUDE.md` in its `.claude` folder and in the
/// user's, `copilot-instructions.md` in its `.github` folder and in the user's `.copilot`, each
/// name in any letter case; a link whose target is already in the list is dropped; then
/// `copilot-instructions.md` first and the rest as VS Code sorts their URIs.
pub(crate) fn agent_files(root: &Path, home: Option<&Path>, on: &AgentSwitches) -> Vec<(PathBuf, AgentKind, Scope)> {
    let mut found: Vec<(PathBuf, AgentKind, Scope)> = Vec::new();
    let mut look = |dir: &Path, names: &[(&str, AgentKind)], scope: Scope| {
        for path in sorted_entries(dir) {
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
            let Some((_, kind)) = names.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else { continue };
            if stat(&path).is_some_and(|m| m.is_file) {
                found.push((path, *kind, scope));
            }
        }
    };
    if on.claude_md {
        look(&root.join(".claude"), &[("CLAUDE.md", AgentKind::ClaudeMd)], Scope::Project);
        if let Some(home) = home {
            look(&home.join(".claude"), &[("CLAUDE.md", AgentKind::ClaudeMd)], Scope::Global);
        }
    }
    if on.copilot_instructions {
        let name = [("copilot-instructions.md", AgentKind::CopilotInstructions)];
        look(&root.join(".github"), &name, Scope::Project);
        if let Some(home) = home {
            look(&home.join(".copilot"), &name, Scope::Global);
        }
    }
    let mut names = Vec::new();
    if on.agents_md {
        names.push(("AGENTS.md", AgentKind::AgentsMd));
    }
    if on.claude_md {
        names.extend([("CLAUDE.md", AgentKind::ClaudeMd), ("CLAUDE.local.md", AgentKind::ClaudeMd)]);
    }
    look(root, &names, Scope::Project);
    // Files first, then links whose target is not in the list yet.
    let is_link = |p: &Path| {
        crate::chain::repo::memo::remembered("is a link", p, || {
            fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
        })
    };
    let (links, plain): (Vec<_>, Vec<_>) = found.into_iter().partition(|(p, _, _)| is_link(p));
    let mut listed: HashSet<PathBuf> = plain.iter().map(|(p, _, _)| p.clone()).collect();
    let mut out = plain;
    for (path, kind, scope) in links {
        let real = fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if listed.insert(real) {
            out.push((path, kind, scope));
        }
    }
    out.sort_by(|a, b| uri_order(&a.0, &b.0));
    let (mut first, rest): (Vec<_>, Vec<_>) =
        out.into_iter().partition(|(_, k, _)| *k == AgentKind::CopilotInstructions);
    first.extend(rest);
    first
}

/// Every `AGENTS.md` of the workspace in any letter case (`findAgentMDsInWorkspace`: a file
/// search for `**/AGENTS.md` honouring `.gitignore`), by path.
/// From the repository's listing; in a repository too large to list, from its first
/// [`SEARCH_ENTRIES`] entries.
pub(crate) fn nested_agents_md(root: &Path) -> Vec<PathBuf> {
    let index = crate::chain::repo::cache::index(root);
    let mut found: Vec<PathBuf> = if index.base() == root && index.is_listed() {
        index.named("agents.md")
    } else {
        project_entries(root, SEARCH_ENTRIES)
            .into_iter()
            .filter(|e| is_file_entry(e) && e.file_name().eq_ignore_ascii_case("agents.md"))
            .map(|e| e.into_path())
            .collect()
    };
    found.sort_by_key(|p| (p.components().count(), p.clone()));
    found
}

/// Two files in the order VS Code sorts their URIs (`uri.toString().localeCompare(…)`): the
/// percent-encoded paths compared as ICU's root collation does for such text, punctuation
/// before digits before letters, letters by their lower case first, lower case before upper on
/// a tie; then byte by byte.
pub(crate) fn uri_order(a: &Path, b: &Path) -> Ordering {
    let (a, b) = (uri_text(a), uri_text(b));
    let class = |c: char| match c {
        c if c.is_ascii_digit() => 1,
        c if c.is_alphabetic() => 2,
        _ => 0,
    };
    let primary = |s: &str| s.chars().map(|c| (class(c), c.to_ascii_lowercase())).collect::<Vec<_>>();
    let tertiary = |s: &str| s.chars().map(|c| c.is_ascii_uppercase()).collect::<Vec<_>>();
    primary(&a).cmp(&primary(&b)).then_with(|| tertiary(&a).cmp(&tertiary(&b))).then_with(|| a.cmp(&b))
}

/// A path as VS Code's `URI.toString()` spells it: every byte but `A-Za-z0-9-._~/` encoded.
fn uri_text(path: &Path) -> String {
    let mut out = String::new();
    for b in crate::paths::slash_join(path).bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The files an instructions file refers to (`PromptBody.fileReferences`): Markdown links
/// `[text](path)` not preceded by `!`, and `#file:path`, outside fenced code and inline code,
/// resolved as VS Code does (`~/` against the home folder, `/…` as absolute, else against the
/// file's folder; a `scheme:/` link is not a file).
pub(crate) fn references(path: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let Ok((data, _)) = read_capped(path, 1024 * 1024) else { return Vec::new() };
    let text = String::from_utf8_lossy(&data);
    let dir = path.parent().unwrap_or(Path::new("/"));
    reference_mentions(&text).into_iter().filter_map(|(_, _, target)| resolve(&target, dir, home)).collect()
}

/// The references of [`references`] in `text` as written: the bytes of each link's target (or
/// of the path after `#file:`) and the target.
pub(crate) fn reference_mentions(text: &str) -> Vec<(usize, usize, String)> {
    let body = front_matter(text).map_or(text, |(_, body)| body);
    let mut at = text.len() - body.len();
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for line in body.split_inclusive('\n') {
        let line_at = at;
        at += line.len();
        let line = line.trim_end_matches(['\n', '\r']);
        let t = line.trim_start();
        let run = |c: char| t.chars().take_while(|x| *x == c).count();
        let (tick, tilde) = (run('`'), run('~'));
        let opener = if tick >= 3 {
            Some(('`', tick))
        } else if tilde >= 3 {
            Some(('~', tilde))
        } else {
            None
        };
        if let Some((c, n)) = opener {
            match fence {
                None => {
                    fence = Some((c, n));
                    continue;
                }
                Some((fc, fnum)) if fc == c && n >= fnum && t[n..].trim().is_empty() => {
                    fence = None;
                    continue;
                }
                _ => {}
            }
        }
        if fence.is_some() {
            continue;
        }
        let code = code_spans(line);
        let in_code = |i: usize| code.iter().any(|(s, e)| i >= *s && i < *e);
        let mut links: Vec<(usize, usize)> = Vec::new();
        for (start, end, target) in markdown_links(line) {
            links.push((start, end));
            if (start > 0 && line.as_bytes()[start - 1] == b'!') || in_code(start) {
                continue;
            }
            // (The target ends before the link's closing parenthesis.)
            out.push((line_at + end - 1 - target.len(), line_at + end - 1, target));
        }
        let lower = line.to_ascii_lowercase();
        let mut from = 0;
        while let Some(i) = lower[from..].find("#file:").map(|i| i + from) {
            let rest = &line[i + 6..];
            let len = rest.find(|c: char| c.is_whitespace() || c == '#').unwrap_or(rest.len());
            let end = i + 6 + len;
            from = end.max(i + 1);
            let touches_link = links.iter().any(|(s, e)| i <= *e && end >= *s);
            if len == 0 || touches_link || in_code(i) {
                continue;
            }
            out.push((line_at + i + 6, line_at + end, rest[..len].to_string()));
        }
    }
    out
}

/// The references of `text` (the file at `path`) an author can follow: the Markdown links and
/// `#file:` mentions Copilot reads (see [`references`]) that name a file of the project, never
/// one outside it.
pub fn reference_links(path: &Path, text: &str) -> Vec<crate::chain::text::imports::ImportLink> {
    let Some(dir) = path.parent() else { return Vec::new() };
    let followable = crate::chain::text::imports::project_file(dir);
    reference_mentions(text)
        .into_iter()
        .filter(|(_, _, target)| !target.starts_with('~'))
        .filter_map(|(start, end, target)| {
            let target = resolve(&target, dir, None)?;
            followable(&target).then_some(crate::chain::text::imports::ImportLink { start, end, target })
        })
        .collect()
}

/// The spans of a line's inline code (`` `…` ``), as byte ranges.
fn code_spans(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    for (i, c) in line.char_indices() {
        if c == '`' {
            match open {
                Some(s) if i > s + 1 => {
                    out.push((s, i + 1));
                    open = None;
                }
                Some(_) => open = Some(i),
                None => open = Some(i),
            }
        }
    }
    out
}

/// A line's Markdown links `[text](target)` (the shortest text, the shortest target), as
/// (start, end, target).
fn markdown_links(line: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(open) = line[at..].find('[').map(|i| i + at) {
        let Some(close) = line[open + 1..].find("](").map(|i| i + open + 1) else { break };
        let target_start = close + 2;
        let Some(end) = line[target_start..].find(')').map(|i| i + target_start) else { break };
        if end == target_start {
            at = target_start;
            continue;
        }
        out.push((open, end + 1, line[target_start..end].to_string()));
        at = end + 1;
    }
    out
}

fn resolve(target: &str, dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if target == "~" || target.starts_with("~/") {
        let home = home?;
        return Some(crate::paths::normalize(&home.join(target.trim_start_matches('~').trim_start_matches('/'))));
    }
    let scheme = target.find(":/").is_some_and(|i| i > 0 && target[..i].chars().all(|c| c.is_ascii_alphabetic()));
    if scheme {
        return None;
    }
    Some(crate::paths::normalize(&dir.join(target)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_told_by_name_and_folder_as_vs_code_tells_them() {
        assert!(is_instructions(Path::new("/r/.github/instructions/ts.instructions.md")));
        assert!(is_instructions(Path::new("/r/.claude/rules/style.md")));
        assert!(is_instructions(Path::new("/r/.claude/rules/deep/more.md")));
        assert!(!is_instructions(Path::new("/r/.claude/rules/README.md")));
        assert!(!is_instructions(Path::new("/r/.claude/rules/x.prompt.md")));
        assert!(!is_instructions(Path::new("/r/.github/instructions/notes.md")));
        assert!(!is_instructions(Path::new("/r/.github/instructions/a.agent.md")));
        assert_eq!(prompt_kind(Path::new("/r/.github/agents/review.md")), Some(PromptKind::Agent));
        assert_eq!(prompt_kind(Path::new("/r/.github/hooks/x.JSON")), Some(PromptKind::Hook));
        assert_eq!(prompt_kind(Path::new("/r/docs/guide.md")), None);
    }

    #[test]
    fn patterns_split_at_commas_outside_braces_and_brackets() {
        assert_eq!(patterns("**/*.{ts,tsx}, src/[a,b]/*.rs,,docs/**"), ["**/*.{ts,tsx}", "src/[a,b]/*.rs", "docs/**"]);
    }

    #[test]
    fn uris_sort_as_vs_code_sorts_them() {
        let mut v: Vec<PathBuf> =
            ["/r/CLAUDE.md", "/r/agents.md", "/r/.claude/CLAUDE.md", "/r/CLAUDE.local.md"].map(PathBuf::from).to_vec();
        v.sort_by(|a, b| uri_order(a, b));
        assert_eq!(
            v,
            ["/r/.claude/CLAUDE.md", "/r/agents.md", "/r/CLAUDE.local.md", "/r/CLAUDE.md"].map(PathBuf::from)
        );
    }

    #[test]
    fn references_are_links_and_file_mentions_outside_code() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("a.instructions.md");
        std::fs::write(
            &f,
            "---\napplyTo: '**'\n---\nSee [style](docs/style.md) and #file:../b.md.\n![img](pic.png) `[x](code.md)`\n```\n[y](fenced.md)\n```\n[web](https://example.org/x)\n",
        )
        .expect("write");
        let refs = references(&f, None);
        assert_eq!(refs, [dir.path().join("docs/style.md"), crate::paths::normalize(&dir.path().join("../b.md."))]);
    }
}
