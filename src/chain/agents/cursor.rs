//! Cursor: its rules, from its documentation (Cursor is closed source; nothing here was checked
//! against the editor). Per directory from the project root to the working directory: the
//! `.mdc` rules of its `.cursor/rules` folder (sub-folders included, by path) and its
//! `AGENTS.md`; at the root, after them, the legacy `.cursorrules`. A rule's front matter says
//! when it applies: `alwaysApply: true` at start; `globs` when a touched file matches (auto
//! attached); a `description` alone when the agent asks for it; none of them only when the
//! user @-mentions it. A touch below the working directory adds the rules folders and
//! `AGENTS.md` of the directories between, as nested rules attach when files of their
//! directory are referenced.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::chain::loader::find::file_key;
use crate::chain::model::env::AgentEnv;
use crate::chain::model::profile::{
    AgentProfile, FrontMatter, GlobStyle, GlobalRule, Join, Nested, Pick, Root, RuleFiles,
};
use crate::chain::model::view::{AgentFile, Entry, Scope, Status};
use crate::chain::text::front_matter::{front_matter, front_matter_globs, yaml_scalar};
use crate::chain::text::read::read_capped;

/// The Cursor profile.
pub(crate) fn profile(env: &AgentEnv) -> AgentProfile {
    AgentProfile {
        name: "cursor",
        mirrors: "Cursor documentation (rules, AGENTS.md), read 2026-11",
        global_rule: GlobalRule::ByPick,
        pick: Pick::Own(pick),
        root: Root::GitOrCwd { check_fs_root: false },
        nested: Nested::Walk { pick: Pick::Own(pick), upto_root: false, deepest_first: false },
        join: Join::Own(join),
        rule_files: Some(RuleFiles { suffix: ".mdc", globs_key: "globs" }),
        glob_style: GlobStyle::Gitignore,
        // A rule's front matter is its metadata, not its text.
        front_matter: FrontMatter::Strip,
        deps: Some(dirs_read),
        ..AgentProfile::base(env.home.clone())
    }
}

/// The most entries one rules folder walk looks at, and how deep it goes.
const RULES_WALK_ENTRIES: usize = 10_000;
const RULES_MAX_DEPTH: usize = 16;

/// What a rule's front matter says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RuleMeta {
    pub(crate) always: bool,
    pub(crate) globs: Vec<String>,
    pub(crate) description: Option<String>,
}

/// The front matter of an `.mdc` rule; none when it does not parse.
pub(crate) fn rule_meta(path: &Path) -> RuleMeta {
    crate::chain::repo::memo::remembered("cursor rule", path, || read_rule_meta(path))
}

fn read_rule_meta(path: &Path) -> RuleMeta {
    let Ok((data, _)) = read_capped(path, 64 * 1024) else { return RuleMeta::default() };
    let text = String::from_utf8_lossy(&data);
    let Some((meta, _)) = front_matter(&text) else { return RuleMeta::default() };
    if crate::chain::text::front_matter::front_matter_problem(&text).is_some() {
        return RuleMeta::default();
    }
    let globs = front_matter_globs(meta, "globs", |g| !g.trim().is_empty());
    RuleMeta {
        always: yaml_scalar(meta, "alwaysApply").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
        globs,
        description: yaml_scalar(meta, "description").filter(|d| !d.trim().is_empty()),
    }
}

/// Every `.mdc` below a rules folder, by path; directory links followed, each directory once.
fn mdc_files(dir: &Path) -> Vec<PathBuf> {
    // Every start below the folder reads the same rules folder: once per scope.
    crate::chain::repo::memo::remembered("cursor rules", dir, || mdc_files_now(dir))
}

fn mdc_files_now(dir: &Path) -> Vec<PathBuf> {
    struct Walk {
        /// The project: a folder below that leads out of it is not listed (the rules folder
        /// itself is judged by the caller).
        base: PathBuf,
        seen: HashSet<(u64, u64)>,
        entries: usize,
        out: Vec<PathBuf>,
    }
    fn walk(dir: &Path, depth: usize, w: &mut Walk) {
        if depth > 0 && crate::chain::loader::find::outside(dir, &w.base).is_some() {
            return;
        }
        let Some(key) = file_key(dir) else { return };
        if !w.seen.insert(key) {
            return;
        }
        let Ok(read) = fs::read_dir(dir) else { return };
        let mut paths: Vec<PathBuf> = read.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            w.entries += 1;
            if w.entries > RULES_WALK_ENTRIES {
                return;
            }
            match crate::chain::repo::memo::stat(&path) {
                Some(m) if m.is_dir && depth < RULES_MAX_DEPTH => walk(&path, depth + 1, w),
                Some(m) if m.is_file && path.extension().is_some_and(|e| e == "mdc") => w.out.push(path),
                _ => {}
            }
        }
    }
    let mut w = Walk {
        base: crate::chain::repo::project::project_base(dir),
        seen: HashSet::new(),
        entries: 0,
        out: Vec::new(),
    };
    walk(dir, 0, &mut w);
    w.out
}

/// The files Cursor takes from `dirs` (root first): per directory its rules, then its
/// `AGENTS.md`; at the root (not on a touch) `.cursorrules` last.
fn pick(_: &AgentProfile, dirs: &[PathBuf], scope: Scope) -> Vec<AgentFile> {
    let mut out = Vec::new();
    let Some(root) = dirs.first() else { return out };
    let base = crate::chain::repo::project::project_base(root);
    for (i, dir) in dirs.iter().enumerate() {
        let rules = crate::paths::join(dir, ".cursor/rules");
        // A rules folder that leads out of the project is named, never listed.
        let leaves = if crate::chain::repo::memo::is_dir(&rules) {
            crate::chain::loader::find::outside(&rules, &base)
        } else {
            None
        };
        if let Some(real) = &leaves {
            out.push(AgentFile::new(rules.clone(), scope, Status::LinkedOutside).by(real));
        }
        for path in if leaves.is_some() { Vec::new() } else { mdc_files(&rules) } {
            // A rule linked out of the project is not read, its front matter included.
            if let Some(real) = crate::chain::loader::find::outside(&path, &base) {
                out.push(AgentFile::new(path, scope, Status::LinkedOutside).by(&real));
                continue;
            }
            let meta = rule_meta(&path);
            let bytes = crate::chain::repo::memo::stat(&path).map_or(0, |m| m.len);
            let f = if meta.always {
                AgentFile::new(path, scope, Status::Loaded)
            } else if !meta.globs.is_empty() {
                AgentFile::new(path, scope, Status::Waiting).size(bytes, 0)
            } else if meta.description.is_some() {
                AgentFile::new(path, scope, Status::OnRequest).size(bytes, 0)
            } else {
                AgentFile::new(path, scope, Status::Manual).size(bytes, 0)
            };
            out.push(AgentFile { globs: meta.globs, ..f });
        }
        let agents = crate::paths::join(dir, "AGENTS.md");
        let is_file = |p: &Path| crate::chain::repo::memo::stat(p).is_some_and(|m| m.is_file);
        if is_file(&agents) {
            out.push(AgentFile::new(agents, scope, Status::Loaded));
        }
        let legacy = crate::paths::join(dir, ".cursorrules");
        if i == 0 && scope != Scope::Nested && is_file(&legacy) {
            out.push(AgentFile::new(legacy, scope, Status::Loaded));
        }
    }
    out
}

/// One section per file that reaches the agent, in order, under its path. Cursor's own wording
/// is not public; the order is the one documented here.
fn join(_: &AgentProfile, entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.file.status.reaches() && !e.text.is_empty())
        .map(|e| format!("Rule from {}:\n{}", e.file.path.display(), e.text.trim()))
        .collect()
}

/// The directories a Cursor view read (see `deps.rs`): those of the walk from the working
/// directory and to each touch, with each one's `.cursor` folder and every folder below its
/// rules folder, and the folders of the files listed. What its rules' patterns match in the
/// repository is the repository's listing, watched apart (`view.repository`).
fn dirs_read(
    _: &AgentProfile,
    view: &crate::chain::model::view::AgentView,
    touched: &[PathBuf],
) -> Option<BTreeSet<PathBuf>> {
    use crate::chain::loader::deps::{below, existing, listed_dirs, walked_dirs};
    let mut out = BTreeSet::new();
    let mut seen = HashSet::new();
    for dir in walked_dirs(view, touched) {
        out.insert(existing(&dir.join(".cursor")));
        let rules = dir.join(".cursor/rules");
        if crate::chain::repo::memo::is_dir(&rules) && !below(&rules, 0, &mut seen, &mut out) {
            return None;
        }
        out.insert(dir);
    }
    listed_dirs(view, &mut out);
    Some(out)
}
