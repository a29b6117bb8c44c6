//! What goes wrong in a tree, for every agent it is checked for: the one answer behind
//! `instructions-lsp check`, the language server's diagnostics and its hovers.
//!
//! Every directory holding an instruction file is a place where an agent may be started
//! (except inside an agent's configuration folder: nobody starts Claude Code in
//! `.claude/skills/x`). Each agent's view from each such directory, and, for agents that load
//! nested files on a read, the view from the tree's root after a read in it, say what the agent
//! does with each file. Those are folded into one statement per file and agent: a file the agent
//! loads by any route (at start, through an import, on a read) is never "ignored" by it, and one
//! file gets at most one finding per agent.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::chain::agents::{self, AgentProfile, AgentView, Status};
use crate::chain::discover::{Discovery, Scope};
use crate::chain::lint::{self, Code, Finding, Span};
use crate::chain::render::SectionStyle;
use crate::chain::settings::Settings;
use crate::chain::source::FileCache;
use crate::paths;

use super::starts::{ClassSaid, Missed, Starts, starts};
pub(crate) use super::walk::checked_names;
use super::walk::walk_on;
pub use super::walk::{Configured, Cores, Selection, Unwritten, Walked, walk, walk_with};
use super::{RenderedFiles, render_files};

mod engine;
mod seen;
use engine::engine_view;
pub use engine::engine_view_at;
use seen::SeenFiles;

/// What one agent does with one file, in the words of its finding when it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub agent: &'static str,
    /// A sentence that starts with the agent's name ("Codex cuts this file at line 3, …",
    /// "opencode loads this file when it reads a file in `docs`").
    pub text: String,
    /// The finding that says the same, if any.
    pub code: Option<Code>,
}

/// The result of checking one tree.
#[derive(Debug, Default)]
pub struct Tree {
    /// Deduplicated and sorted.
    pub findings: Vec<Finding>,
    /// What could not be walked.
    pub warnings: Vec<String>,
    /// Per file, what each agent checked for does with it.
    pub statements: BTreeMap<PathBuf, Vec<Statement>>,
    /// The configurations below the tree's root that decide for the directories below them.
    pub configured: Vec<Configured>,
    /// Configurations below the tree's root that cannot be used: below them the tree's agents
    /// are checked (the server logs them; `check` stops, as for the root's own).
    pub config_errors: Vec<String>,
    /// Where agents start in the tree, and what they miss in folders without files of their own.
    pub starts: super::starts::Summary,
}

/// How many agents' views each thread works out in one go in a check (see `check_dirs`): enough
/// to keep every core busy, few enough that their texts do not pile up.
const VIEWS_PER_THREAD: usize = 64;

/// Walks `root` and checks it for `selection` on one core (the server's checks).
pub fn check_tree(root: &Path, settings: &Settings, selection: &Selection) -> Tree {
    let walked = walk_on(root, settings, &[], Cores::One);
    check_walked_on(root, walked, settings, selection, None, Cores::One)
}

/// Hands each agent's view from each directory where it starts, as a check computed it, to
/// its caller: the directory, the agent, the view.
/// A view of a class of folders (see [`super::starts::Class`]) comes with its class, from the
/// class's example folder.
pub type Keep<'a> = &'a mut dyn FnMut(&Path, &'static str, &AgentView, Option<&super::starts::Class>);

/// Checks a walked tree for `selection`.
pub fn check_walked(root: &Path, walked: Walked, settings: &Settings, selection: &Selection) -> Tree {
    check_walked_on(root, walked, settings, selection, None, Cores::All)
}

/// [`check_walked`] from the `starts` of the tree (see [`starts`]), handing `keep` each agent's
/// view from each directory where it starts (what `diff` compares, with those starts).
pub fn check_walked_keeping(
    root: &Path,
    walked: Walked,
    settings: &Settings,
    selection: &Selection,
    starts: &Starts,
    keep: Keep,
) -> Tree {
    check_walked_from(root, walked, settings, selection, starts, Some(keep), Cores::All)
}

fn check_walked_on(
    root: &Path,
    walked: Walked,
    settings: &Settings,
    selection: &Selection,
    keep: Option<Keep>,
    cores: Cores,
) -> Tree {
    let starts = starts(root, &walked, settings, selection);
    check_walked_from(root, walked, settings, selection, &starts, keep, cores)
}

fn check_walked_from(
    root: &Path,
    walked: Walked,
    settings: &Settings,
    selection: &Selection,
    starts: &Starts,
    keep: Option<Keep>,
    cores: Cores,
) -> Tree {
    let own = selection.profiles.iter().any(|p| p == settings.profile.name());
    // Every view of the tree searches one listing of the repository.
    let repo = agents::RepoCache::current().unwrap_or_default();
    if let Some(index) = walked.repo {
        repo.insert(index);
    }
    let (mut findings, statements, classes) =
        agents::with_repo_cache(&repo, || check_dirs(root, settings, own, starts, keep, cores));
    findings.extend(walked.unreadable);
    // What the repository accepts, or leaves out, is said by no edge.
    super::decisions::retain(&mut findings);
    let mut warnings: Vec<String> = walked.warnings.into_iter().map(|(w, _)| w).collect();
    if crate::chain::config::Exclusions::of(root).excludes(root, true) {
        warnings.push(format!(
            "{} is left out by `exclude` in the repository's instructions-lsp.toml: nothing in it is reported",
            root.display()
        ));
    }
    findings.sort_by(|a, b| (&a.path, SpanKey::of(a.span), a.code).cmp(&(&b.path, SpanKey::of(b.span), b.code)));
    Tree {
        findings,
        warnings,
        statements,
        configured: starts.configured().to_vec(),
        config_errors: starts.config_errors().to_vec(),
        starts: starts.summary(classes),
    }
}

/// `f` of each job, in the jobs' order, spread over `cores`; each thread in the
/// caller's repository scope, so that the views share one listing and one memo of the file
/// system.
fn on_cores<J: Sync, T: Send>(cores: Cores, jobs: &[J], f: impl Fn(&J) -> T + Sync) -> Vec<T> {
    let threads = cores.threads().min(jobs.len());
    if threads <= 1 {
        return jobs.iter().map(f).collect();
    }
    let scope_cache = agents::RepoCache::current();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<Option<T>> = std::iter::repeat_with(|| None).take(jobs.len()).collect();
    let done: Vec<Vec<(usize, T)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let work = || {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(job) = jobs.get(i) else { break };
                            mine.push((i, f(job)));
                        }
                        mine
                    };
                    match &scope_cache {
                        Some(c) => agents::with_repo_cache(c, work),
                        None => work(),
                    }
                })
            })
            .collect();
        // A thread that panicked loses its jobs: they are done again below, on this one.
        workers.into_iter().filter_map(|w| w.join().ok()).collect()
    });
    for (i, v) in done.into_iter().flatten() {
        out[i] = Some(v);
    }
    out.into_iter().zip(jobs).map(|(v, job)| v.unwrap_or_else(|| f(job))).collect()
}

/// The order in which one file's findings for one agent are kept: the first one present wins.
const PRIORITY: &[Code] = &[
    Code::AgentCut,
    Code::ImportOutside,
    Code::LinkOutside,
    Code::AgentRule,
    Code::AttachedTwice,
    Code::DeadPattern,
    Code::AgentIgnored,
];

/// The findings and the statements of every directory's chain in one tree.
fn check_dirs(
    root: &Path,
    settings: &Settings,
    own: bool,
    starts: &Starts,
    mut keep: Option<Keep>,
    cores: Cores,
) -> (Vec<Finding>, BTreeMap<PathBuf, Vec<Statement>>, Vec<ClassSaid>) {
    let cache = FileCache::new();
    let project = starts.project.clone();
    // What agents started in the tree do with the project's files above it counts too (Codex
    // started in `pkg` cuts the root's AGENTS.md); files outside the project (the user's
    // global files) are not the repository's business.
    let inside = |p: &Path| p.starts_with(&project) || p.starts_with(root);
    let root_real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    // Agents name files by their real paths; findings are placed in the tree as walked.
    // (`None` when the tree as walked is its real path, as most often: then paths stay.)
    fn placed_in<'p>(p: &'p Path, root: &Path, root_real: Option<&Path>) -> std::borrow::Cow<'p, Path> {
        match root_real.and_then(|real| p.strip_prefix(real).ok()) {
            Some(rel) => root.join(rel).into(),
            None => p.into(),
        }
    }
    let root_real = (root_real != root).then_some(root_real);
    let show = super::project::display_paths(&project);
    let shown_dir = |dir: &Path| match dir.strip_prefix(&project) {
        Ok(rel) if !rel.as_os_str().is_empty() => paths::slash_join(rel),
        _ => ".".to_string(),
    };
    // The engine's own findings: (path, code, span) -> finding, directories.
    let mut grouped: BTreeMap<(PathBuf, Code, SpanKey), (Finding, Vec<String>)> = BTreeMap::new();
    // Per file and agent.
    let mut seen = SeenFiles::default();
    // The files each agent gets by identity: a link and its target are one file (a
    // `pkg/CLAUDE.md` linked to `pkg/AGENTS.md` hands the agent that file's text).
    let mut loaded_ids = BTreeSet::new();
    // And those a read loads, with the first directory whose read does.
    let mut read_ids: BTreeMap<(&'static str, (u64, u64)), PathBuf> = BTreeMap::new();
    // The classes of folders where an agent misses what its start gets.
    let mut classes: Vec<ClassSaid> = Vec::new();
    // Mentions that name no file, each once per agent.
    let mut mentions: BTreeMap<(PathBuf, SpanKey, &'static str), Finding> = BTreeMap::new();
    let mut budget_fixes = super::decisions::BudgetFixes::new();
    // Files the engine's profile gets, from some directory.
    let mut reached: BTreeSet<PathBuf> = BTreeSet::new();
    // Every agent's view from every start, and what a read there loads for the agents that
    // load nested files on a read, worked out on every core first: most of a check's time.
    let nested = |p: &AgentProfile, dir: &Path| {
        dir != project && (!matches!(p.nested, agents::Nested::None) || !p.lazy_layers.is_empty())
    };
    let mut jobs: Vec<(&Path, &AgentProfile, bool)> = Vec::new();
    for dir in &starts.dirs {
        for p in starts.agents_at(dir) {
            jobs.push((dir, p, false));
            if nested(p, dir) {
                jobs.push((dir, p, true));
            }
        }
    }
    let load = |(dir, p, read): &(&Path, &AgentProfile, bool)| match read {
        false => agents::load(p, dir, &[]),
        true => agents::load(p, &project, &[dir.join(".touch")]),
    };
    // Worked out a batch at a time, in the order they are taken below: the views of every
    // start at once would hold every agent's text from every directory (tens of megabytes on a
    // large tree, kept by the server's peak).
    let batch = cores.threads() * VIEWS_PER_THREAD;
    // On more than one core, the next batch is worked out while this thread takes in the one
    // before (a tenth of a check's time, which left the other cores idle).
    let ahead = cores.threads() > 1;
    let scope_cache = agents::RepoCache::current();
    let jobs = &jobs;
    let load = &load;
    std::thread::scope(|scope| {
        let compute = |from: usize| {
            let chunk = &jobs[from..(from + batch).min(jobs.len())];
            let cache = scope_cache.clone();
            move || match cache {
                Some(c) => agents::with_repo_cache(&c, || on_cores(cores, chunk, load)),
                None => on_cores(cores, chunk, load),
            }
        };
        let mut loaded: HashMap<(PathBuf, &'static str, bool), AgentView> = HashMap::new();
        let mut next_job = 0;
        let mut pending = (ahead && !jobs.is_empty()).then(|| scope.spawn(compute(0)));
        let mut take = |dir: &Path, p: &AgentProfile, read: bool| {
            let key = (dir.to_path_buf(), p.name, read);
            if !loaded.contains_key(&key) && next_job < jobs.len() {
                let end = (next_job + batch).min(jobs.len());
                let chunk = &jobs[next_job..end];
                // A worker that panicked loses its batch: it is worked out again here.
                let views = match pending.take() {
                    Some(handle) => handle.join().unwrap_or_else(|_| compute(next_job)()),
                    None => compute(next_job)(),
                };
                if ahead && end < jobs.len() {
                    pending = Some(scope.spawn(compute(end)));
                }
                for ((dir, p, read), view) in chunk.iter().zip(views) {
                    loaded.insert((dir.to_path_buf(), p.name, *read), view);
                }
                next_job = end;
            }
            loaded.remove(&key).unwrap_or_else(|| load(&(dir, p, read)))
        };
        for dir in &starts.dirs {
            let dir = dir.as_path();
            let disc = Discovery::new(settings, &cache, None, dir);
            let label = match disc.heading(dir) {
                h if h.is_empty() => "`.` (the project root)".to_string(),
                h => format!("`{h}`"),
            };
            if own {
                let mut found = Vec::new();
                let scan = disc.scan_dir(dir, Scope::Project);
                found.extend(lint::skip_findings(&scan.skipped, settings, |p| disc.heading(p)));
                for f in &scan.files {
                    found.extend(lint::content_findings(&f.path, &f.file.text, settings.frame));
                }
                let chain = disc.baseline();
                // What the chain's cap leaves out is not in the directory's own scan.
                let capped: Vec<_> = chain
                    .skipped
                    .iter()
                    .filter(|s| s.reason == crate::chain::source::SkipReason::ChainTooLarge)
                    .cloned()
                    .collect();
                found.extend(lint::skip_findings(&capped, settings, |p| disc.heading(p)));
                let RenderedFiles { files, rendered } = render_files(settings, chain.files, SectionStyle::Initial);
                reached.extend(files.iter().map(|f| f.path.clone()));
                found.extend(lint::chain_findings(&label, &files, &rendered, settings.budget_bytes));
                if let Some(k) = keep.as_mut() {
                    k(
                        dir,
                        settings.profile.name(),
                        &engine_view(settings, dir, &files, &rendered, &chain.skipped),
                        None,
                    );
                }
                for f in found.into_iter().filter(|f| inside(&f.path)) {
                    let key = (f.path.clone(), f.code, SpanKey::of(f.span));
                    grouped.entry(key).or_insert_with(|| (f, Vec::new())).1.push(label.clone());
                }
            }
            for p in starts.agents_at(dir) {
                let view = take(dir, p, false);
                // What an agent started here misses is worth saying only where it is started.
                let started = dir == root || starts_here(p, dir) || starts.is_place(dir);
                for f in &view.files {
                    if f.status.reaches() {
                        loaded_ids.extend(agents::file_key(&f.path).map(|k| (p.name, k)));
                    }
                    let entry = seen.at(&placed_in(&f.path, root, root_real.as_deref()), p.name);
                    if f.status.reaches() {
                        entry.at_start = true;
                        entry.attaches = entry.attaches.take().or_else(|| agents::attach_words(&view, f, &show));
                        if dir == root {
                            entry.from_root = true;
                        } else if entry.started_in.is_none() {
                            entry.started_in = Some(dir.to_path_buf());
                        }
                    } else if matches!(f.status, Status::Waiting | Status::OnRequest | Status::Manual) {
                        entry.how = entry.how.take().or_else(|| agents::explain(&view, f, &show));
                    }
                }
                if let Some(k) = keep.as_mut() {
                    k(dir, p.name, &view, None);
                }
                for mut f in agents::view_findings(&view, dir) {
                    if f.code == Code::AgentCut {
                        f.fix = super::decisions::budget_fix(&view, &f.path, &mut budget_fixes);
                    }
                    f.path = placed_in(&f.path, root, root_real.as_deref()).into_owned();
                    if !inside(&f.path) || (!started && f.code == Code::ImportOutside) {
                        continue;
                    }
                    let agent = f.agent.unwrap_or(p.name);
                    if f.code.at_token() {
                        // Each mention (or key) is a finding of its own, once whichever folder
                        // met it.
                        mentions.entry((f.path.clone(), SpanKey::of(f.span), agent)).or_insert(f);
                        continue;
                    }
                    seen.at(&f.path, agent).add(f, &label);
                }
                // The folders below where the agent's view does not hold (it imports files from
                // inside this one): one view for them all, and one per place that holds such a
                // file. They miss what they import from outside themselves.
                if let Some(class) = starts.class(dir, &view) {
                    let words = class.words(shown_dir, super::starts::own_file(p));
                    let mut misses = Vec::new();
                    let apart = class.apart.iter().map(|d| (d, format!("`{}`", shown_dir(d)), None));
                    for (at, place, said) in std::iter::once((&class.example, words.clone(), Some(&words))).chain(apart)
                    {
                        let there = agents::load(p, at, &[]);
                        if let Some(k) = keep.as_mut() {
                            // A place judged apart is a place of its own.
                            k(at, p.name, &there, said.map(|_| &class));
                        }
                        for mut f in agents::view_findings(&there, at) {
                            if f.code != Code::ImportOutside || !class.bounded.contains(&f.path) {
                                continue;
                            }
                            f.path = placed_in(&f.path, root, root_real.as_deref()).into_owned();
                            if !inside(&f.path) {
                                continue;
                            }
                            if let Some(words) = said {
                                f.message = started_in(&f.message, words);
                                misses.push(Missed {
                                    uri: paths::path_to_uri(&f.path),
                                    path: show(&f.path),
                                    message: f.message.clone(),
                                });
                            }
                            let agent = f.agent.unwrap_or(p.name);
                            seen.at(&f.path, agent).add(f, &place);
                        }
                    }
                    if !misses.is_empty() {
                        classes.push(ClassSaid {
                            profile: p.name.to_string(),
                            name: agents::display_name(p.name).to_string(),
                            folders: words,
                            start: shown_dir(&class.start),
                            example: shown_dir(&class.example),
                            package_roots: class.package_roots,
                            named: class.named,
                            misses,
                        });
                    }
                }
                // An agent that loads nested files on a read, started at the project root (also
                // when the tree checked is below it), reading here.
                if nested(p, dir) {
                    let read = take(dir, p, true);
                    for f in read.files.iter().filter(|f| f.status.reaches()) {
                        if let Some(k) = agents::file_key(&f.path) {
                            read_ids.entry((p.name, k)).or_insert_with(|| dir.to_path_buf());
                        }
                        let entry = seen.at(&placed_in(&f.path, root, root_real.as_deref()), p.name);
                        if entry.on_read.is_none() && !entry.at_start {
                            entry.on_read = Some(dir.to_path_buf());
                        }
                    }
                }
            }
        }
    });
    // A file that is one the agent gets under another name (a link) is got too: said as plainly
    // loaded, or loaded on the same read. Then the files some agent gets, by any route: an
    // `agentIgnored` file outside them is `notRead`.
    let mut seen = seen.into_sorted();
    for ((path, agent), s) in seen.iter_mut() {
        if s.at_start || s.on_read.is_some() {
            reached.insert(path.clone());
            continue;
        }
        let Some(key) = agents::file_key(path) else { continue };
        if loaded_ids.contains(&(*agent, key)) {
            s.at_start = true;
            s.from_root = true;
        } else {
            s.on_read = read_ids.get(&(*agent, key)).cloned();
        }
        if s.at_start || s.on_read.is_some() {
            reached.insert(path.clone());
        }
    }
    let mut kept: Vec<(Finding, Vec<String>)> = grouped.into_values().collect();
    let mut statements: BTreeMap<PathBuf, Vec<Statement>> = BTreeMap::new();
    for ((path, agent), s) in seen {
        let loaded = s.at_start || s.on_read.is_some();
        let name = agents::display_name(agent);
        let mut candidates: Vec<(Finding, Vec<String>)> =
            s.findings.into_iter().filter(|(f, _)| !(loaded && f.code == Code::AgentIgnored)).collect();
        candidates.sort_by_key(|(f, _)| PRIORITY.iter().position(|c| *c == f.code).unwrap_or(PRIORITY.len()));
        let finding = candidates.first().map(|(f, _)| f.code).map(|code| {
            let same: Vec<(Finding, Vec<String>)> = candidates.into_iter().filter(|(f, _)| f.code == code).collect();
            let (mut f, labels) = merge(same);
            also_in(&mut f, labels.len());
            (f, Vec::new())
        });
        let text = match (&finding, &s.on_read) {
            (Some((f, _)), _) => f.message.clone(),
            (None, _) if s.at_start => match s.started_in.as_deref().filter(|_| !s.from_root) {
                Some(dir) => format!("{name} loads this file when started in `{}`", shown_dir(dir)),
                None => s.attaches.clone().unwrap_or_else(|| format!("{name} loads this file")),
            },
            (None, Some(dir)) => {
                format!(
                    "{name}, started at the project root, loads this file when it reads a file in `{}`",
                    shown_dir(dir)
                )
            }
            (None, None) => match s.how {
                Some(how) => how,
                None => continue,
            },
        };
        if inside(&path) {
            statements.entry(path.clone()).or_default().push(Statement {
                agent,
                text,
                code: finding.as_ref().map(|(f, _)| f.code),
            });
        }
        kept.extend(finding);
    }
    kept.extend(mentions.into_values().map(|f| (f, Vec::new())));
    let warnings = agents::not_read(kept.iter().map(|(f, _)| f), &reached);
    for w in &warnings {
        for s in statements.get_mut(&w.path).into_iter().flatten() {
            if s.code == Some(Code::AgentIgnored) {
                s.code = Some(Code::NotRead);
            }
        }
    }
    kept.retain(|(f, _)| !(f.code == Code::AgentIgnored && warnings.iter().any(|w| w.path == f.path)));
    kept.extend(warnings.into_iter().map(|f| (f, Vec::new())));
    let findings = kept
        .into_iter()
        .map(|(mut f, labels)| {
            also_in(&mut f, labels.len());
            f
        })
        .collect();
    for list in statements.values_mut() {
        list.sort_by_key(|s| agents::NAMES.iter().position(|n| *n == s.agent));
    }
    (findings, statements, classes)
}

/// `message` ("Claude Code, started in `crates/uv`, does not load …") said of the folders
/// `words` name instead of the one it names.
fn started_in(message: &str, words: &str) -> String {
    const AT: &str = ", started in `";
    let Some(at) = message.find(AT) else { return message.to_string() };
    let from = at + AT.len();
    match message[from..].find("`, ") {
        Some(end) => format!("{}, started in {words}{}", &message[..at], &message[from + end + 1..]),
        None => message.to_string(),
    }
}

/// Says in a finding about a cut that `directories` directories make it, when more than one.
fn also_in(f: &mut Finding, directories: usize) {
    if directories > 1
        && matches!(f.code, Code::Omitted | Code::Truncated | Code::Duplicate | Code::AgentCut | Code::ImportOutside)
    {
        let more = directories - 1;
        let _ = write!(f.message, " (also in {more} other director{})", if more == 1 { "y" } else { "ies" });
    }
}

/// One finding of one code for one file and agent: the first directory's, counting the others;
/// a rule's problems (each a sentence of its own) joined.
fn merge(mut same: Vec<(Finding, Vec<String>)>) -> (Finding, Vec<String>) {
    let (mut first, mut labels) = same.remove(0);
    for (f, more) in same {
        if matches!(first.code, Code::AgentRule | Code::DeadPattern) {
            if !first.message.contains(&f.message) {
                let _ = write!(first.message, "; {}", f.message);
            }
        } else {
            labels.extend(more);
        }
    }
    labels.sort();
    labels.dedup();
    (first, labels)
}

/// Whether `dir` holds something agent `p` reads there (one of its file names, or the first
/// folder of a layer such as `.claude/`): only then is what the agent misses when started in
/// `dir` worth a warning. Nobody starts Claude Code in `.github` because Copilot's file lives
/// there.
fn starts_here(p: &AgentProfile, dir: &Path) -> bool {
    let first = |path: &str| path.split('/').next().map(str::to_string).unwrap_or_default();
    p.candidates
        .iter()
        .map(|c| first(c))
        .chain(p.layers.iter().chain(&p.lazy_layers).map(|l| first(l.path)))
        .any(|name| !name.is_empty() && std::fs::symlink_metadata(dir.join(name)).is_ok())
}

/// Orders and groups spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SpanKey(usize, usize, u8);

impl SpanKey {
    pub fn of(span: Span) -> Self {
        match span {
            Span::FirstLine => Self(0, 0, 0),
            Span::Bytes { start, end } => Self(start, end, 1),
            Span::ToEnd { start } => Self(start, usize::MAX, 2),
        }
    }
}
