//! What a change does to every agent: the one answer behind `instructions-lsp diff BASE [HEAD]`.
//!
//! Each side (a git revision read from the object database, or the working tree) is laid out as
//! a skeleton in a temporary directory (in memory where the system has one): every file whose
//! text an agent or this tool may read (instruction files, rules, settings, ignore files,
//! Markdown an import may name), with its text, and the directories that hold them. The other
//! files and directories are not written: the side's listing of the repository names them, so
//! that Copilot's `applyTo` and Cursor's `globs` still match them. Nothing of the
//! repository is checked out or written. Both skeletons are then checked as `check` checks a
//! tree, and each agent's view from each place where an agent starts on either side (see
//! [`super::starts`]; a folder the other side holds but left out of its skeleton is made there,
//! and each class of folders is compared through its example folder) is compared: files that enter or leave it, sizes and cuts
//! that move, rules that attach elsewhere, findings that appear or disappear. Directories that
//! change the same way are grouped, so that a monorepo reads in a few lines.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::chain::agents::{self, AgentView, Status};
use crate::chain::lint::{self, Finding, Severity};
use crate::chain::settings::Settings;
use crate::chain::source::read_prefix;
use crate::chain::targets::Targets;
use crate::paths;

use super::check::{self, Selection};

mod follow;
mod mentions;
mod objects;
mod scratch;
mod skeleton;
use scratch::{LayOut, in_scratch, scratch_places};
use skeleton::{kept_names, materialize};

/// One side of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Revision {
    /// A git revision (`main`, `HEAD~1`, a commit id).
    Commit(String),
    /// The files in the working tree now (what `.gitignore` leaves), staged or not.
    WorkingTree,
}

impl Revision {
    pub fn label(&self) -> String {
        match self {
            Revision::Commit(r) => r.clone(),
            Revision::WorkingTree => "the working tree".to_string(),
        }
    }
}

/// Everything a change does to the agents.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    pub base: String,
    pub head: String,
    /// The profiles compared: on both sides, the agents either side is written for (or those
    /// named on the command line).
    pub agents: Vec<String>,
    /// Which agents each side is written for, and why, in `check`'s words.
    pub checked_for: CheckedFor,
    /// The instruction files an agent reads on either side whose text changed.
    pub files: Vec<FileChange>,
    /// Directories that change the same way for one agent, most directories first.
    pub groups: Vec<Group>,
    /// Places where agents start only on the head side, or only on the base side.
    pub added_dirs: Vec<String>,
    pub removed_dirs: Vec<String>,
    /// Findings whose file, code and agent only the head side has, only the base side, or both
    /// with other words (a cut that moves).
    pub new_findings: Vec<Found>,
    pub gone_findings: Vec<Found>,
    pub changed_findings: Vec<Found>,
    /// What laying out the sides skipped, and why (a crafted tree naming one file twice).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Diff {
    /// Whether no agent's view and no finding changes.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
            && self.new_findings.is_empty()
            && self.gone_findings.is_empty()
            && self.changed_findings.is_empty()
            && self.added_dirs.is_empty()
            && self.removed_dirs.is_empty()
    }

    /// Whether the head side has a finding at or above `threshold` the base side has not.
    pub fn has_new(&self, threshold: Severity) -> bool {
        self.new_findings.iter().any(|f| f.level <= threshold)
    }
}

#[derive(Debug, Serialize)]
pub struct CheckedFor {
    pub base: String,
    pub head: String,
}

/// An instruction file whose text changed: its size on each side (`None`: not there).
#[derive(Debug, Serialize)]
pub struct FileChange {
    pub path: String,
    pub before: Option<u64>,
    pub after: Option<u64>,
}

/// One agent, the directories where it starts that change alike, and how.
#[derive(Debug, Serialize)]
pub struct Group {
    pub agent: &'static str,
    pub dirs: Vec<DirBytes>,
    pub changes: Vec<Change>,
}

/// What an agent started in a directory receives on each side, in bytes.
#[derive(Debug, Serialize)]
pub struct DirBytes {
    pub dir: String,
    pub before: usize,
    pub after: usize,
    /// `dir` stands for a class of folders (see [`crate::session::starts::Class`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<ClassOf>,
}

/// The folders a view from one of them stands for: every folder below `below` without the
/// agent's `own` file of its own, `packageRoots` package roots and `named` folders `starts`
/// names among them. Their view differs from `below`'s (Claude Code's imports from outside the
/// folder it starts in).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassOf {
    pub below: String,
    pub package_roots: usize,
    pub named: usize,
    pub own: String,
}

/// A file as a change names it: relative to the directory where the agent starts when it lies
/// in that directory (`own`: each package's own `AGENTS.md` is the same change), else from the
/// repository's root.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Place {
    pub path: String,
    pub own: bool,
}

/// What the agent does with a file on one side.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    pub status: String,
    /// The file's size and how much of it the agent gets; `None` where a change says it of each
    /// directory's own file (each has its own size: the directories still change alike).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub included_bytes: Option<u64>,
    /// The file it loses to, or that imports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// `by` is named from the directory where the agent starts: each directory's own file.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub by_own: bool,
    /// The globs a rule attaches by, and how many files of the repository they match.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub globs: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matching: Option<usize>,
    /// The agent's budget, when it cuts or leaves the file out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
}

impl State {
    /// The same without the sizes.
    fn without_sizes(&self) -> Self {
        Self { bytes: None, included_bytes: None, ..self.clone() }
    }

    /// How the agent treats a file it does not load, whatever its size.
    fn treatment(&self) -> (&str, Option<&String>, bool, &[String], Option<usize>) {
        (&self.status, self.by.as_ref(), self.by_own, &self.globs, self.matching)
    }

    fn reaches(&self) -> bool {
        self.status == Status::Loaded.as_str() || self.status == Status::Truncated.as_str()
    }
}

/// One change of one agent's view in one directory.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Change {
    /// The file no longer reaches the agent; `after` is what the agent does with it now.
    Leaves { file: Place, before: State, after: Option<State> },
    /// The file reaches the agent now (whole or cut); `before` is what the agent did with it.
    Enters { file: Place, before: Option<State>, after: State },
    /// The file reaches the agent on both sides, with other bytes or another cut.
    Resized { file: Place, before: State, after: State },
    /// The file does not reach the agent on either side, and the agent treats it otherwise (a
    /// rule that waits for other files, a file now shadowed by another).
    Treated { file: Place, before: Option<State>, after: Option<State> },
    /// The same files, with other text.
    Text,
}

impl Change {
    /// The change as directories that change alike share it: a directory's own file that
    /// reaches the agent on both sides said without its sizes.
    fn without_own_sizes(&self) -> Change {
        match self {
            Change::Resized { file, before, after } if file.own && before.status == after.status => {
                Change::Resized { file: file.clone(), before: before.without_sizes(), after: after.without_sizes() }
            }
            other => other.clone(),
        }
    }
}

/// A finding on one side, placed in its file.
#[derive(Clone, Debug, Serialize)]
pub struct Found {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub severity: &'static str,
    #[serde(skip)]
    pub level: Severity,
    pub code: &'static str,
    pub agent: Option<&'static str>,
    pub message: String,
}

/// A view as the diff compares it: each file of the repository it names, and its text.
struct ViewSummary {
    files: BTreeMap<String, State>,
    bytes: usize,
    /// Of the text (`None`: not worked out, as the other side's text has another length).
    digest: Option<[u8; 32]>,
}

/// A profile as people read it: the agent's name ("Claude Code"), or the engine's own (`dsh`).
pub fn profile_name(profile: &str) -> &str {
    if agents::NAMES.contains(&profile) { agents::display_name(profile) } else { profile }
}

/// One side, checked.
struct Side {
    root: PathBuf,
    targets: Option<Targets>,
    walked: Option<check::Walked>,
    explicit: bool,
    warnings: Vec<String>,
    /// The revision's directories the skeleton left out (they hold nothing kept), with `/`.
    unwritten_dirs: BTreeSet<String>,
}

/// Why `spec` names a range or a set of commits rather than one revision (`A..B`, `A...B`,
/// `HEAD^!`, `HEAD^@`, `HEAD^-`), which git's revision syntax allows and one side of a
/// comparison cannot be; `None` for a single revision.
fn range_words(spec: &str) -> Option<&'static str> {
    if spec.contains("..") {
        Some("a range of commits, not one revision")
    } else if spec.ends_with("^!") || spec.ends_with("^@") || spec.contains("^-") {
        Some("a set of commits (git's `^!`, `^@` or `^-`), not one revision")
    } else {
        None
    }
}

/// The repository holding `start` when its objects are named by SHA-256
/// (`extensions.objectFormat`), which the git library here does not read.
fn sha256_repository(start: &Path) -> Option<PathBuf> {
    let dir = start.ancestors().find(|d| d.join(".git").exists())?;
    let config = crate::chain::agents::read::read_capped(&dir.join(".git/config"), 64 * 1024).ok()?.0;
    let text = String::from_utf8_lossy(&config).to_ascii_lowercase();
    text.lines()
        .any(|l| {
            let l: String = l.split(['#', ';']).next().unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect();
            l == "objectformat=sha256"
        })
        .then(|| dir.to_path_buf())
}

/// Compares what the agents get on `base` and `head` of the git repository holding `start`.
/// `explicit`: the profiles of `settings` were named on the command line (else each side's
/// targets decide, both sides compared for the agents of either).
pub fn diff(
    start: &Path,
    base: &Revision,
    head: &Revision,
    settings: &Settings,
    explicit: bool,
) -> Result<Diff, String> {
    for rev in [base, head] {
        if let Revision::Commit(spec) = rev
            && let Some(why) = range_words(spec)
        {
            return Err(format!("{spec}: {why}; diff compares two revisions: `diff BASE HEAD`"));
        }
    }
    let repo = gix::discover(start).map_err(|e| match sha256_repository(start) {
        Some(dir) => format!(
            "{}: a SHA-256 git repository, which diff cannot read yet (SHA-1 repositories only); check, effective and compare work in it",
            dir.display()
        ),
        None => format!("{}: not in a git repository ({e})", start.display()),
    })?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| "the repository has no working tree (a bare repository); run diff in a clone".to_string())?;
    let workdir = std::fs::canonicalize(workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
    let keep = kept_names(settings);
    // Both sides laid out and walked at once: making the skeletons' files and directories is
    // mostly waiting on the file system.
    // (The other thread opens the repository again: gix's handles stay on the thread that made
    // them.)
    let git_dir = repo.git_dir().to_path_buf();
    // What one side reads of the object database the other finds read.
    let objects = objects::Objects::default();
    let lay_out = |repo: &gix::Repository, rev: &Revision, root: &Path| -> Result<Side, LayOut> {
        let laid = materialize(repo, &objects, &workdir, rev, root, &keep)?;
        let walked = Some(check::walk_with(root, settings, &laid.unwritten));
        let unwritten_dirs = laid.unwritten.iter().filter(|(_, is_dir)| *is_dir).map(|(d, _)| d.clone()).collect();
        Ok(Side { root: root.to_path_buf(), targets: None, walked, explicit, warnings: laid.warnings, unwritten_dirs })
    };
    let (_tmp, mut sides) = in_scratch(&scratch_places(&workdir, &git_dir), |tmp| {
        let tmp_root = std::fs::canonicalize(tmp).map_err(|e| LayOut::Scratch(format!("{}: {e}", tmp.display())))?;
        // Two names of one length: the agents' texts name the paths, and equal lengths keep the
        // sides' byte counts comparable.
        let (base_root, head_root) = (tmp_root.join("base"), tmp_root.join("head"));
        std::thread::scope(|scope| {
            let other = scope.spawn(|| {
                let repo = gix::open(&git_dir).map_err(|e| format!("{}: {e}", git_dir.display()))?;
                lay_out(&repo, head, &head_root)
            });
            let first = lay_out(&repo, base, &base_root);
            let second = other.join().unwrap_or_else(|_| {
                Err(LayOut::Other(format!("{}: laying out its files failed unexpectedly", head.label())))
            });
            Ok(vec![first?, second?])
        })
    })?;
    for (side, rev) in sides.iter_mut().zip([base, head]) {
        let names = side.walked.as_ref().map(|w| w.names.clone()).unwrap_or_default();
        let targets = crate::session::project::targets_of(&side.root, &settings.root_markers, Some(&names));
        side.targets = match (targets, explicit) {
            (Ok(t), _) => Some(t),
            (Err(_), true) => None,
            (Err(e), false) => return Err(format!("{}: {}", rev.label(), unrooted(&e, &side.root))),
        };
    }
    let profiles: Vec<String> = if explicit {
        settings.profiles.clone()
    } else {
        let either: BTreeSet<&str> =
            sides.iter().flat_map(|s| s.targets.iter().flat_map(|t| t.agents.iter().map(String::as_str))).collect();
        agents::NAMES.iter().filter(|n| either.contains(**n)).map(|n| n.to_string()).collect()
    };
    let checked_for = CheckedFor { base: sides[0].describe(&profiles), head: sides[1].describe(&profiles) };
    let warnings: Vec<String> = sides.iter_mut().flat_map(|s| std::mem::take(&mut s.warnings)).collect();
    let Ok([base_side, head_side]) = <[Side; 2]>::try_from(sides) else {
        return Err("a diff has two sides".to_string());
    };
    // Each side in a run of its own: what one side's views learn of the file system stays
    // theirs, and its views search the side's listing (which names the files not written).
    let (base_cache, head_cache) = (Default::default(), Default::default());
    let run =
        |side: Side, cache, other| agents::with_repo_cache(cache, || side.run(settings, &profiles, &workdir, other));
    let none = HashMap::new();
    let (mut base_out, base_starts) = run(base_side, &base_cache, &none)?;
    let lengths = base_out.kept.iter().map(|((dir, agent), v)| ((rel(&base_out.root, dir), *agent), v.bytes)).collect();
    let (mut head_out, head_starts) = run(head_side, &head_cache, &lengths)?;
    // The same places on both sides: where agents start on either, each place judged apart, and
    // each class of folders either side has (the head's words winning).
    let every: BTreeSet<String> =
        [&base_out.dirs, &head_out.dirs, &base_out.apart, &head_out.apart].into_iter().flatten().cloned().collect();
    let mut classes = std::mem::take(&mut base_out.classes);
    classes.extend(std::mem::take(&mut head_out.classes));
    classes.retain(|(dir, _), _| !every.contains(dir));
    // The engine's own profile is no agent: its views are asked of it apart.
    let engine = profiles.iter().any(|p| p == settings.profile.name()).then_some(settings);
    base_out.views = agents::with_repo_cache(&base_cache, || base_out.views_of(&base_starts, &every, &classes, engine));
    head_out.views = agents::with_repo_cache(&head_cache, || head_out.views_of(&head_starts, &every, &classes, engine));
    base_out.classes = classes;
    let mut out = compare(&base_out, &head_out);
    out.base = base.label();
    out.head = head.label();
    out.agents = profiles;
    out.checked_for = checked_for;
    out.warnings = warnings;
    Ok(out)
}

impl Side {
    fn selection(&self, profiles: &[String]) -> Selection {
        Selection { profiles: profiles.to_vec(), targets: self.targets.clone(), targeted: !self.explicit }
    }

    fn describe(&self, profiles: &[String]) -> String {
        match &self.targets {
            Some(t) if !self.explicit && t.agents.is_empty() => {
                let names: Vec<&str> = profiles.iter().map(|p| agents::display_name(p)).collect();
                format!("no instruction file of an agent yet; compared for {} as on the other side", names.join(", "))
            }
            Some(t) if !self.explicit => {
                let mut line = t.describe("compare");
                let extra: Vec<&str> =
                    profiles.iter().filter(|p| !t.agents.contains(p)).map(|p| agents::display_name(p)).collect();
                if !extra.is_empty() {
                    line.push_str(&format!(" (compared for {} too, which the other side targets)", extra.join(", ")));
                }
                line
            }
            _ => {
                let names: Vec<&str> = profiles.iter().map(|p| profile_name(p)).collect();
                format!("comparing for {} (named on the command line)", names.join(", "))
            }
        }
    }

    /// Checks the side: its findings, and where and which agents start.
    fn run(
        mut self,
        settings: &Settings,
        profiles: &[String],
        workdir: &Path,
        other: &HashMap<(String, &'static str), usize>,
    ) -> Result<(Checked, super::starts::Starts), String> {
        let walked = self.walked.take().ok_or("the side was checked twice")?;
        let selection = self.selection(profiles);
        let starts = super::starts::starts(&self.root, &walked, settings, &selection);
        let dirs: BTreeSet<String> = starts.dirs.iter().map(|d| rel(&self.root, d)).collect();
        // Each view summed up as the check hands it over: kept whole, every agent's text from
        // every directory of both sides would be held at once.
        // (A text whose length differs from the other side's differs: it is not hashed.)
        let mut kept = BTreeMap::new();
        let (mut classes, mut apart) = (BTreeMap::new(), BTreeSet::new());
        let mut keep = |dir: &Path, agent: &'static str, view: &AgentView, class: Option<&super::starts::Class>| {
            let at = rel(&self.root, dir);
            let other = other.get(&(at.clone(), agent));
            let summed = summary(&self.root, workdir, view, |bytes| other.is_none_or(|&b| b == bytes));
            kept.insert((dir.to_path_buf(), agent), summed);
            match class {
                Some(c) => {
                    let profile = starts.agents_at(dir).iter().find(|p| p.name == agent);
                    let own = profile.map_or(agent, super::starts::own_file).to_string();
                    let below = rel(&self.root, &c.start);
                    classes.insert((at, agent), ClassOf { below, package_roots: c.package_roots, named: c.named, own });
                }
                None if !dirs.contains(&at) => drop(apart.insert(at)),
                None => {}
            }
        };
        let tree = check::check_walked_keeping(&self.root, walked, settings, &selection, &starts, &mut keep);
        if let Some(e) = tree.config_errors.first() {
            return Err(unrooted(e, &self.root));
        }
        // The findings come by path: each file is read once for all of its own.
        let mut text: Option<(&Path, Vec<u8>)> = None;
        let mut findings = Vec::with_capacity(tree.findings.len());
        for f in &tree.findings {
            if text.as_ref().is_none_or(|(p, _)| *p != f.path) {
                text = Some((&f.path, read_prefix(&f.path, settings.max_file_bytes)));
            }
            findings.push(self.found(f, text.as_ref().map_or(&[], |(_, b)| b)));
        }
        let checked = Checked {
            root: self.root.clone(),
            workdir: workdir.to_path_buf(),
            dirs,
            apart,
            classes,
            unwritten_dirs: self.unwritten_dirs,
            views: BTreeMap::new(),
            findings,
            kept,
        };
        Ok((checked, starts))
    }

    /// `f` as the diff says it; `bytes`: the text of its file.
    fn found(&self, f: &Finding, bytes: &[u8]) -> Found {
        let (start, _) = f.span.byte_range(bytes);
        let (line, column) = lint::line_col(bytes, start);
        Found {
            path: rel(&self.root, &f.path),
            line,
            column,
            severity: f.severity().name(),
            level: f.severity(),
            code: f.code.name(),
            agent: f.agent,
            message: unrooted(&f.message, &self.root),
        }
    }
}

/// One side checked: where agents start, their views there, the findings.
struct Checked {
    root: PathBuf,
    workdir: PathBuf,
    dirs: BTreeSet<String>,
    /// Places below a start judged on their own (they hold a file the start's view imports).
    apart: BTreeSet<String>,
    /// The example folder of each class of folders, per agent (see [`ClassOf`]).
    classes: BTreeMap<(String, &'static str), ClassOf>,
    /// The revision's directories the skeleton left out.
    unwritten_dirs: BTreeSet<String>,
    views: BTreeMap<(String, &'static str), ViewSummary>,
    findings: Vec<Found>,
    /// The views the check computed (from this side's own starts), summed up.
    kept: BTreeMap<(PathBuf, &'static str), ViewSummary>,
}

impl Checked {
    /// The views of every agent from `dirs` (the places of both sides) that this side has, the
    /// engine's (`engine`: its settings, when its profile is compared), and each agent's from
    /// the example folder of each of `classes`. A directory the skeleton left out is made first:
    /// it is in the revision, so an agent can start there.
    fn views_of(
        &mut self,
        starts: &super::starts::Starts,
        dirs: &BTreeSet<String>,
        classes: &BTreeMap<(String, &'static str), ClassOf>,
        engine: Option<&Settings>,
    ) -> BTreeMap<(String, &'static str), ViewSummary> {
        let mut out = BTreeMap::new();
        let (root, workdir) = (&self.root, &self.workdir);
        // Where an agent starts for `dir` on this side: a directory of the revision, laid out.
        let unwritten = &self.unwritten_dirs;
        let start = |dir: &str| {
            (holds(root, unwritten, dir) && skeleton::laid_dir(root, dir, true))
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
fn summary(root: &Path, workdir: &Path, view: &AgentView, hash: impl FnOnce(usize) -> bool) -> ViewSummary {
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
fn rel(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(r) if r.as_os_str().is_empty() => ".".to_string(),
        Ok(r) => paths::slash_join(r),
        Err(_) => paths::slash_join(path),
    }
}

/// A message with the skeleton's root taken out of the paths it names.
fn unrooted(message: &str, root: &Path) -> String {
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
    skeleton::laid_dir(root, dir, false) || unwritten.contains(dir)
}

/// The differences between two checked sides.
fn compare(base: &Checked, head: &Checked) -> Diff {
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
