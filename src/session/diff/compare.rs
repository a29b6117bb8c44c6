//! Two checked sides compared: each agent's view from each start summarised (the files it names,
//! their sizes and cuts, a digest of its text), then what entered, left or moved, the files
//! whose text changed, and the findings that appeared or went away.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::answer::*;
use crate::chain::agents::{self, AgentView, Status};
use crate::chain::settings::Settings;
use crate::paths;
use crate::session::check::{self};

/// A view as the diff compares it: each file of the repository it names, and its text.
pub(super) struct ViewSummary {
    pub(super) files: BTreeMap<String, State>,
    pub(super) bytes: usize,
    /// Of the text (`None`: not worked out, as the other side's text has another length).
    pub(super) digest: Option<[u8; 32]>,
}

/// One side checked: where agents start, their views there, the findings.
pub(super) struct Checked {
    pub(super) root: PathBuf,
    pub(super) workdir: PathBuf,
    pub(super) dirs: BTreeSet<String>,
    /// Places below a start judged on their own (they hold a file the start's view imports).
    pub(super) apart: BTreeSet<String>,
    /// The example folder of each class of folders, per agent (see [`ClassOf`]).
    pub(super) classes: BTreeMap<(String, &'static str), ClassOf>,
    /// The revision's directories the skeleton left out.
    pub(super) unwritten_dirs: BTreeSet<String>,
    pub(super) views: BTreeMap<(String, &'static str), ViewSummary>,
    pub(super) findings: Vec<Found>,
    /// The views the check computed (from this side's own starts), summed up.
    pub(super) kept: BTreeMap<(PathBuf, &'static str), ViewSummary>,
}

impl Checked {
    /// The views of every agent from `dirs` (the places of both sides) that this side has, the
    /// engine's (`engine`: its settings, when its profile is compared), and each agent's from
    /// the example folder of each of `classes`. A directory the skeleton left out is made first:
    /// it is in the revision, so an agent can start there.
    pub(super) fn views_of(
        &mut self,
        starts: &crate::session::starts::Starts,
        dirs: &BTreeSet<String>,
        classes: &BTreeMap<(String, &'static str), ClassOf>,
        engine: Option<&Settings>,
    ) -> BTreeMap<(String, &'static str), ViewSummary> {
        let mut out = BTreeMap::new();
        let (root, workdir) = (&self.root, &self.workdir);
        // Where an agent starts for `dir` on this side: a directory of the revision, laid out.
        let unwritten = &self.unwritten_dirs;
        let start = |dir: &str| {
            (holds(root, unwritten, dir) && super::skeleton::laid_dir(root, dir, true))
                .then(|| if dir == "." { root.clone() } else { root.join(dir) })
        };
        let kept = &mut self.kept;
        let mut add = |dir: &String, abs: &Path, name: &'static str, view: &dyn Fn() -> AgentView| {
            let summary = match kept.remove(&(abs.to_path_buf(), name)) {
                Some(kept) => kept,
                None => summary(root, workdir, &view(), |_| true),
            };
            out.insert((dir.clone(), name), summary);
        };
        for (dir, agent) in classes.keys() {
            let Some(abs) = start(dir) else { continue };
            if let Some(p) = starts.agents_at(&abs).iter().find(|p| p.name == *agent) {
                add(dir, &abs, p.name, &|| agents::load(p, &abs, &[]));
            }
        }
        for dir in dirs {
            let Some(abs) = start(dir) else { continue };
            for p in starts.agents_at(&abs) {
                add(dir, &abs, p.name, &|| agents::load(p, &abs, &[]));
            }
            if let Some(settings) = engine {
                add(dir, &abs, settings.profile.name(), &|| check::engine_view_at(settings, &abs));
            }
        }
        out
    }
}

/// What `diff` compares of an agent's view of the side at `root` (`workdir`: the repository's
/// own checkout, whose paths the agent's text names).
pub(super) fn summary(root: &Path, workdir: &Path, view: &AgentView, hash: impl FnOnce(usize) -> bool) -> ViewSummary {
    let mut files = BTreeMap::new();
    for f in &view.files {
        let Ok(path) = f.path.strip_prefix(root) else { continue };
        let reach = view.rule_reach.iter().find(|r| r.path == f.path);
        // A file "ignored" while a link to it is loaded (`CLAUDE.md -> AGENTS.md`) reaches the
        // agent through the link, as `check` says: said as the link is, so that a text that now
        // comes by a link instead of an import is no file lost.
        let through = (f.status == Status::Shadowed)
            .then(|| agents::file_key(&f.path))
            .flatten()
            .and_then(|k| view.files.iter().find(|g| g.status.reaches() && agents::file_key(&g.path) == Some(k)));
        let got = through.unwrap_or(f);
        let cut = matches!(got.status, Status::Truncated | Status::Omitted);
        let state = State {
            status: got.status.as_str().to_string(),
            bytes: Some(got.bytes),
            included_bytes: Some(got.included_bytes),
            // (Through a link, the link is how it comes: no file it loses to or is imported by.)
            by: through.map_or(got.by.as_deref(), |_| None).map(|b| rel(root, b)),
            by_own: false,
            globs: f.globs.clone(),
            matching: reach.map(|r| r.matching),
            budget: view.budget.clone().filter(|_| cut),
        };
        // A file the view names twice (an import that stays outside, and the same file
        // shadowed as the directory's own) is said as the agent gets it, else as first named.
        match files.entry(paths::slash_join(path)) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(state);
            }
            std::collections::btree_map::Entry::Occupied(mut o) if !o.get().reaches() && state.reaches() => {
                o.insert(state);
            }
            std::collections::btree_map::Entry::Occupied(_) => {}
        }
    }
    // The text as the agent gets it in the repository's own checkout: its length, and what it
    // hashes to when `hash` says that the length leaves the text's sameness open.
    // Counted as every edge counts a view: its parts, without the blank lines that join them
    // into one text.
    let (skeleton, checkout) = (root.to_string_lossy(), workdir.to_string_lossy());
    let finder = memchr::memmem::Finder::new(skeleton.as_bytes());
    let bytes = view
        .parts
        .iter()
        .map(|p| {
            let named = finder.find_iter(p.as_bytes()).count();
            p.len() - named * skeleton.len() + named * checkout.len()
        })
        .sum();
    let digest = hash(bytes).then(|| Sha256::digest(view.text.replace(&*skeleton, &checkout).as_bytes()).into());
    ViewSummary { files, bytes, digest }
}

/// `path` from `root`, with slashes; `.` for the root itself.
pub(super) fn rel(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(r) if r.as_os_str().is_empty() => ".".to_string(),
        Ok(r) => paths::slash_join(r),
        Err(_) => paths::slash_join(path),
    }
}

/// A message with the skeleton's root taken out of the paths it names.
pub(super) fn unrooted(message: &str, root: &Path) -> String {
    let root = root.to_string_lossy();
    message.replace(&format!("{root}/"), "").replace(&*root, ".")
}

impl Checked {
    fn exists(&self, dir: &str) -> bool {
        holds(&self.root, &self.unwritten_dirs, dir)
    }
}

/// Whether a side's revision holds the directory `dir`: laid out in its skeleton at `root`, or
/// left out there (`unwritten`) as holding nothing kept.
fn holds(root: &Path, unwritten: &BTreeSet<String>, dir: &str) -> bool {
    super::skeleton::laid_dir(root, dir, false) || unwritten.contains(dir)
}

/// The differences between two checked sides.
pub(super) fn compare(base: &Checked, head: &Checked) -> Diff {
    let every: BTreeSet<&String> = base.dirs.union(&head.dirs).collect();
    let added_dirs = every.iter().filter(|d| !base.exists(d)).map(|d| d.to_string()).collect();
    let removed_dirs = every.iter().filter(|d| !head.exists(d)).map(|d| d.to_string()).collect();
    // Per agent, the directories grouped by their list of changes, each directory's own file
    // resized without its sizes (each has its own); a group of one keeps them.
    // A class of folders is a group of its own, said only where it changes otherwise than the
    // start it is below (their changes named alike, from the start).
    type Alike = Vec<(DirBytes, Vec<Change>)>;
    let mut grouped: BTreeMap<(usize, Option<ClassOf>, Vec<Change>), Alike> = BTreeMap::new();
    let mut agents_of: BTreeMap<usize, &'static str> = BTreeMap::new();
    let classes = &base.classes;
    for ((dir, agent), after) in &head.views {
        let Some(before) = base.views.get(&(dir.clone(), agent)) else { continue };
        let changes = changes(dir, before, after);
        if changes.is_empty() {
            continue;
        }
        let class = classes.get(&(dir.clone(), agent)).cloned();
        if let Some(c) = &class {
            let key = (c.below.clone(), *agent);
            let of_start = match (base.views.get(&key), head.views.get(&key)) {
                (Some(b), Some(a)) => self::changes(&c.below, b, a),
                _ => Vec::new(),
            };
            if self::changes(&c.below, before, after) == of_start {
                continue;
            }
        }
        let order = agents::NAMES.iter().position(|n| n == agent).unwrap_or(agents::NAMES.len());
        agents_of.insert(order, agent);
        let key = changes.iter().map(Change::without_own_sizes).collect();
        let bytes = DirBytes { dir: dir.clone(), before: before.bytes, after: after.bytes, class: class.clone() };
        grouped.entry((order, class, key)).or_default().push((bytes, changes));
    }
    let mut groups: Vec<Group> = grouped
        .into_iter()
        .filter_map(|((order, _, key), mut dirs)| {
            let changes = match dirs.as_mut_slice() {
                [(_, own)] => std::mem::take(own),
                _ => key,
            };
            let dirs = dirs.into_iter().map(|(d, _)| d).collect();
            Some(Group { agent: agents_of.get(&order)?, dirs, changes })
        })
        .collect();
    groups.sort_by_key(|g| {
        (agents::NAMES.iter().position(|n| *n == g.agent), std::cmp::Reverse(g.dirs.len()), g.dirs[0].dir.clone())
    });
    let (new_findings, gone_findings, changed_findings) = findings(&base.findings, &head.findings);
    Diff {
        base: String::new(),
        head: String::new(),
        agents: Vec::new(),
        checked_for: CheckedFor { base: String::new(), head: String::new() },
        files: files(base, head),
        groups,
        added_dirs,
        removed_dirs,
        new_findings,
        gone_findings,
        changed_findings,
        warnings: Vec::new(),
    }
}

/// How one agent's view from `dir` changes.
fn changes(dir: &str, before: &ViewSummary, after: &ViewSummary) -> Vec<Change> {
    let place = |path: &str| match path.strip_prefix(&format!("{dir}/")) {
        Some(own) if dir != "." => Place { path: own.to_string(), own: true },
        _ => Place { path: path.to_string(), own: false },
    };
    // A file another one loses to, named from the directory when it is the directory's own.
    let own_by = |s: &State| -> State {
        let mut s = s.clone();
        if let Some(own) = s.by.as_deref().and_then(|by| by.strip_prefix(&format!("{dir}/"))).filter(|_| dir != ".") {
            s.by = Some(own.to_string());
            s.by_own = true;
        }
        s
    };
    let paths: BTreeSet<&String> = before.files.keys().chain(after.files.keys()).collect();
    let mut out = Vec::new();
    for path in paths {
        let (b, a) = (before.files.get(path).map(own_by), after.files.get(path).map(own_by));
        let (b, a) = (b.as_ref(), a.as_ref());
        let file = place(path);
        let reaches = |s: Option<&State>| s.is_some_and(State::reaches);
        let change = match (reaches(b), reaches(a), b, a) {
            // Each directory's own file has its own size: said without it, the directories that
            // gain or lose their own file change alike.
            (false, true, _, Some(a)) if file.own => {
                Change::Enters { file, before: b.map(State::without_sizes), after: a.without_sizes() }
            }
            (true, false, Some(b), _) if file.own => {
                Change::Leaves { file, before: b.without_sizes(), after: a.map(State::without_sizes) }
            }
            (false, true, _, Some(a)) => Change::Enters { file, before: b.cloned(), after: a.clone() },
            (true, false, Some(b), _) => Change::Leaves { file, before: b.clone(), after: a.cloned() },
            (true, true, Some(b), Some(a)) if b != a => Change::Resized { file, before: b.clone(), after: a.clone() },
            (false, false, _, _) if b.map(State::treatment) != a.map(State::treatment) && file.own => {
                Change::Treated { file, before: b.map(State::without_sizes), after: a.map(State::without_sizes) }
            }
            (false, false, _, _) if b.map(State::treatment) != a.map(State::treatment) => {
                Change::Treated { file, before: b.cloned(), after: a.cloned() }
            }
            _ => continue,
        };
        out.push(change);
    }
    if out.is_empty() && (before.bytes != after.bytes || before.digest != after.digest) {
        out.push(Change::Text);
    }
    // What leaves first, then what enters, then what moves: the most telling first.
    out.sort();
    out
}

/// The files some view of either side names whose text differs between the sides.
fn files(base: &Checked, head: &Checked) -> Vec<FileChange> {
    let named: BTreeSet<&String> =
        base.views.values().chain(head.views.values()).flat_map(|v| v.files.keys()).collect();
    named
        .into_iter()
        .filter_map(|path| {
            let (b, a) = (skeleton_file(base, path), skeleton_file(head, path));
            (b != a).then(|| FileChange {
                path: path.clone(),
                before: b.map(|(size, _)| size),
                after: a.map(|(size, _)| size),
            })
        })
        .collect()
}

/// The size of the file at `path` in the side's skeleton and its bytes as far as an agent reads
/// them ([`agents::READ_CAP`]); `None` when it is not a regular file inside the skeleton. A
/// crafted revision can make it a link to a FIFO (`/dev/stdin`), to `/dev/zero` or to any file
/// outside: none of them is opened or read.
fn skeleton_file(side: &Checked, path: &str) -> Option<(u64, Vec<u8>)> {
    use std::io::Read;
    let real = std::fs::canonicalize(side.root.join(path)).ok()?;
    if !real.starts_with(&side.root) {
        return None;
    }
    let file = crate::chain::confine::open_regular(&real).ok()?;
    let size = file.metadata().ok()?.len();
    let mut bytes = Vec::new();
    file.take(agents::READ_CAP).read_to_end(&mut bytes).ok()?;
    Some((size, bytes))
}

/// The findings of the head side that the base side has not, those it has that the head side
/// has not, and those both have in other words; one finding is its file, code and agent.
fn findings(base: &[Found], head: &[Found]) -> (Vec<Found>, Vec<Found>, Vec<Found>) {
    let key = |f: &Found| (f.path.clone(), f.code, f.agent);
    let before: BTreeMap<_, &Found> = base.iter().map(|f| (key(f), f)).collect();
    let after: BTreeMap<_, &Found> = head.iter().map(|f| (key(f), f)).collect();
    let new = head.iter().filter(|f| !before.contains_key(&key(f))).cloned().collect();
    let gone = base.iter().filter(|f| !after.contains_key(&key(f))).cloned().collect();
    let changed = head
        .iter()
        .filter(|f| before.get(&key(f)).is_some_and(|b| b.message != f.message || b.level != f.level))
        .cloned()
        .collect();
    (new, gone, changed)
}
