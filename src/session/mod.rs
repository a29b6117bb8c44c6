//! One session: a workspace folder (or a CLI run), its settings, the nested scopes that touches
//! reached, and the views derived from the engine.

pub mod answer;
pub mod check;
pub mod complete;
pub mod decisions;
pub mod diff;
pub mod here;
pub mod ledger;
pub mod options;
pub mod own;
pub mod profiles;
pub mod project;
pub mod rename;
mod rendered;
pub mod starts;
pub mod typed;
pub mod walk;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use crate::chain::discover::{Chain, ChainFile, Discovery, Scope, SkippedFile};
use crate::chain::lint::{self, Finding};
use crate::chain::render::SectionStyle;
use crate::chain::settings::Settings;
use crate::chain::source::{Buffers, FileCache, SkipReason};
use crate::paths::path_to_uri;
use answer::{EffectiveResult, Skipped};
use ledger::{Action, Batch, Change, LEDGER_VERSION, LOG_LIMIT, Ledger, Reason, TransitionsResult, Visible};
use rendered::delivered;
pub use rendered::{RenderedFiles, Snapshot, render_files, render_with_notices};

/// The most touched files a session keeps for the agents' views (the reached directories are
/// kept whatever their number).
pub const TOUCHED_MAX: usize = 256;

/// How [`Session::resume`] started a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resumed {
    /// From this ledger (as it was read: a caller that compares keeps from rewriting it
    /// unchanged).
    Continued { from: Box<Ledger> },
    /// Afresh: there was no ledger, or the caller asked for a fresh start.
    Fresh,
    /// Afresh, because the ledger could not be used (why).
    Replaced(String),
}

/// A workspace folder's state over time.
#[derive(Clone, Debug)]
pub struct Session {
    pub folder: PathBuf,
    pub settings: Settings,
    pub seq: u64,
    /// Nested directories that touches reached.
    reached: BTreeSet<PathBuf>,
    /// `reached` in the order it grew, so that a watcher adds only what a touch reached instead
    /// of comparing every directory on each touch (see [`Session::reached_after`]).
    reached_order: Vec<PathBuf>,
    /// Tells this `reached` from another's: another session's, or this one's before a ledger
    /// replaced it (see [`Session::reached_mark`]).
    reached_id: u64,
    /// The files touched, most recent last, each once (at most [`TOUCHED_MAX`]): a touch is a
    /// file, so that a rule whose globs match `src/app.ts` attaches after a read of it.
    touched: Vec<PathBuf>,
    /// What the agent has been given, by path (a file cut to nothing is not given).
    visible: BTreeMap<PathBuf, Visible>,
    /// The nested files of each batch that delivered some, in order.
    groups: Vec<Vec<PathBuf>>,
    log: VecDeque<Batch>,
    /// Files the budget kept out of their batch, by digest: offered again only when they change,
    /// a touch reaches them again, or the settings change (never as a side effect of another
    /// file's event, which would hand the agent more than one block's budget).
    pending: BTreeMap<PathBuf, String>,
    /// The lifecycle runs (the language server); the CLI computes views only.
    started: bool,
    /// The agents the repository targets (see [`Session::refresh_targets_with`]).
    targets: Option<crate::chain::targets::Targets>,
    /// What was wrong with the configuration when the targets were last found.
    config_problem: Option<String>,
}

/// A new identity for a session's `reached` (see [`Session::reached_mark`]).
fn next_reached_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Session {
    pub fn new(folder: &Path, settings: Settings) -> Self {
        Self {
            folder: crate::paths::normalize(folder),
            settings,
            seq: 0,
            reached: BTreeSet::new(),
            reached_order: Vec::new(),
            reached_id: next_reached_id(),
            touched: Vec::new(),
            visible: BTreeMap::new(),
            groups: Vec::new(),
            log: VecDeque::new(),
            pending: BTreeMap::new(),
            started: false,
            targets: None,
            config_problem: None,
        }
    }

    /// The project root of the folder, under the session's markers.
    pub fn project_root(&self) -> PathBuf {
        crate::chain::discover::project_root(&self.folder, &self.settings.root_markers)
    }

    /// Finds the agents the repository targets again: its `instructions-lsp.toml`, else what
    /// `names` (the instruction file names below the project root, see
    /// [`crate::chain::targets::names_below`], walked once for all sessions of one repository)
    /// show. A configuration that cannot be used is reported, and detection stands in for it.
    pub fn refresh_targets_with(&mut self, names: &std::collections::BTreeSet<String>) -> Option<String> {
        use crate::chain::targets::{self, Targets};
        let (targets, problem) = match Targets::resolve(&self.folder, names.iter().map(String::as_str)) {
            Ok(t) => (t, None),
            Err(e) => {
                let (agents, evidence) = targets::detect(names.iter().map(String::as_str));
                let t = Targets {
                    agents: agents.iter().map(|a| a.to_string()).collect(),
                    config: None,
                    source: targets::Source::Detected(evidence),
                };
                (t, Some(e))
            }
        };
        self.targets = Some(targets);
        problem
    }

    /// [`Session::refresh_targets_with`], logging a configuration that cannot be used and
    /// keeping it as a finding on its file (see [`Session::config_problem`]).
    pub fn refresh_targets_logged(&mut self, names: &std::collections::BTreeSet<String>) {
        let problem = self.refresh_targets_with(names);
        if let Some(e) = &problem {
            tracing::warn!("{}: {e}; {}", self.folder.display(), crate::chain::config::DETECTED_INSTEAD);
        }
        self.config_problem = problem;
    }

    /// The session's configuration that cannot be used, as a finding on its file (the editor
    /// shows it where `check` stops with it).
    pub fn config_problem(&self) -> Option<crate::chain::lint::Finding> {
        let problem = self.config_problem.as_deref()?;
        crate::chain::config::config_finding(problem, crate::chain::config::DETECTED_INSTEAD)
    }

    /// Whether a change at `path` may change which agents the repository targets: its
    /// configuration, an instruction file of an agent not targeted yet, or one that is gone.
    pub fn changes_targets(&self, path: &Path) -> bool {
        use crate::chain::targets;
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
        if crate::chain::config::CONFIG_NAMES.contains(&name) {
            return true;
        }
        let (agents, _) = targets::detect([name]);
        if agents.is_empty() {
            return false;
        }
        let known = self.targets.as_ref().map(|t| &t.agents);
        !path.exists() || agents.iter().any(|a| !known.is_some_and(|k| k.iter().any(|x| x == a)))
    }

    /// The agents the repository targets, once found.
    pub fn targets(&self) -> Option<&crate::chain::targets::Targets> {
        self.targets.as_ref()
    }

    /// The profiles whose findings this session publishes: `profiles` when set (or `profile`'s),
    /// else the agents the repository targets.
    pub fn profiles(&self) -> Vec<String> {
        match (&self.targets, self.settings.targeted) {
            (Some(t), true) => t.agents.clone(),
            _ => self.settings.profiles.clone(),
        }
    }

    /// What `agent`'s view is worked out with: the repository's configuration, under the
    /// session's settings (`--set`, the editor's), as every edge shows an agent's view.
    pub fn overrides(&self, agent: &str) -> crate::chain::agents::Overrides {
        project::overrides(self.targets.as_ref(), agent, Some(&self.settings.agent_sets))
    }

    /// What the real `agent` runs with when it loads files itself: the repository's
    /// configuration only (the settings budget what this server serves, not the agent).
    pub fn configured_overrides(&self, agent: &str) -> crate::chain::agents::Overrides {
        project::overrides(self.targets.as_ref(), agent, None)
    }

    pub fn discovery<'a>(&'a self, cache: &'a FileCache, buffers: Option<&'a Buffers>) -> Discovery<'a> {
        Discovery::new(&self.settings, cache, buffers, &self.folder)
    }

    pub fn is_started(&self) -> bool {
        self.started
    }

    /// The files a touch of `file` would add now (not yet given, not on the baseline).
    fn new_files(&self, disc: &Discovery<'_>, baseline: &Chain, file: &Path) -> (Vec<PathBuf>, Vec<ChainFile>) {
        let mut dirs = Vec::new();
        let mut files: Vec<ChainFile> = Vec::new();
        for (dir, scan) in disc.nested(file) {
            dirs.push(dir);
            for f in scan.files {
                let known = self.visible.contains_key(&f.path)
                    || baseline.files.iter().any(|b| b.path == f.path)
                    || files.iter().any(|g| g.path == f.path);
                if !known {
                    files.push(f);
                }
            }
        }
        (dirs, files)
    }

    fn push_batch(&mut self, reason: Reason, changes: Vec<Change>, text: String) -> Batch {
        // Never wraps: a loaded ledger's seq is at most `ledger::MAX_SEQ`, far below the end.
        self.seq = self.seq.saturating_add(1);
        let batch = Batch { seq: self.seq, reason, changes, text };
        self.log.push_back(batch.clone());
        while self.log.len() > LOG_LIMIT {
            self.log.pop_front();
        }
        batch
    }

    /// Starts the lifecycle: the `baseline` batch (none for an empty chain).
    pub fn start(&mut self, cache: &FileCache) -> Option<Batch> {
        self.started = true;
        let chain = self.discovery(cache, None).baseline();
        let out = render_files(&self.settings, chain.files, SectionStyle::Initial);
        let given = delivered(&out);
        self.note_pending(&out, &given);
        let mut changes = Vec::new();
        for i in given {
            let v = Visible::of(&out.files[i]);
            changes.push(v.change(Action::Set));
            self.visible.insert(v.path.clone(), v);
        }
        if changes.is_empty() {
            return None;
        }
        Some(self.push_batch(Reason::Baseline, changes, out.rendered.text))
    }

    /// Records which files of a rendered batch the budget kept out, and forgets the given ones.
    fn note_pending(&mut self, out: &RenderedFiles, given: &[usize]) {
        for (i, f) in out.files.iter().enumerate() {
            if given.contains(&i) {
                self.pending.remove(&f.path);
            } else {
                self.pending.insert(f.path.clone(), f.file.sha256.clone());
            }
        }
    }

    /// Records a touch; returns the block of the nested files it adds, if any. With the
    /// lifecycle running, files that reach the agent make a `touch` batch.
    pub fn touch(&mut self, cache: &FileCache, file: &Path) -> Option<RenderedFiles> {
        let disc = self.discovery(cache, None);
        let baseline = disc.baseline();
        let (dirs, files) = self.new_files(&disc, &baseline, file);
        for d in dirs {
            if self.reached.insert(d.clone()) {
                self.reached_order.push(d);
            }
        }
        if crate::paths::starts_with(file, &self.folder) && file != self.folder {
            self.touched.retain(|f| f != file);
            self.touched.push(file.to_path_buf());
            if self.touched.len() > TOUCHED_MAX {
                self.touched.remove(0);
            }
        }
        if files.is_empty() {
            return None;
        }
        let out = render_files(&self.settings, files, SectionStyle::Additional);
        let given = delivered(&out);
        self.note_pending(&out, &given);
        if given.is_empty() {
            return Some(out);
        }
        let mut changes = Vec::new();
        let mut group = Vec::new();
        for i in given {
            let v = Visible::of(&out.files[i]);
            changes.push(v.change(Action::Set));
            group.push(v.path.clone());
            self.visible.insert(v.path.clone(), v);
        }
        self.groups.push(group);
        if self.started {
            self.push_batch(Reason::Touch, changes, out.rendered.text.clone());
        }
        Some(out)
    }

    /// The files touched, in order, for agent profiles (which match their rules' globs against
    /// them and walk up from their directories); then a path in each reached directory that no
    /// kept file lies in (older touches past [`TOUCHED_MAX`]), so every reached scope stays
    /// reached.
    pub fn touched_paths(&self) -> Vec<PathBuf> {
        let mut out = self.touched.clone();
        for d in &self.reached {
            if !self.touched.iter().any(|f| f.starts_with(d)) {
                out.push(d.join(".touch"));
            }
        }
        out
    }

    /// What should be visible now: the baseline, then the files of reached nested directories;
    /// with every skipped candidate.
    fn desired(&self, cache: &FileCache) -> (Vec<ChainFile>, Vec<SkippedFile>) {
        let disc = self.discovery(cache, None);
        let (chain, reached) = disc.baseline_and(&self.reached);
        let mut files = chain.files;
        let mut skipped = chain.skipped;
        for scan in reached {
            crate::chain::discover::append_unique(&mut files, scan.files);
            skipped.extend(scan.skipped);
        }
        (files, skipped)
    }

    /// Brings what the agent was given in line with the disk: `set` for new files, `replace`
    /// for changed digests, `remove` for files that are gone (never for a file that merely
    /// cannot be read now). Returns the batch, if anything changed.
    pub fn reconcile(&mut self, cache: &FileCache, reason: Reason) -> Option<Batch> {
        let (desired, skipped) = self.desired(cache);
        if reason == Reason::Config {
            // New settings (a larger budget, say) may let what was kept out in now.
            self.pending.clear();
        }
        self.pending.retain(|p, _| desired.iter().any(|f| &f.path == p));
        let mut pending: Vec<(ChainFile, Action)> = Vec::new();
        for f in &desired {
            match self.visible.get(&f.path) {
                None if self.pending.get(&f.path) == Some(&f.file.sha256) => {}
                None => pending.push((f.clone(), Action::Set)),
                Some(v) if v.sha256 != f.file.sha256 => pending.push((f.clone(), Action::Replace)),
                Some(_) => {}
            }
        }
        let unreadable = |p: &Path| skipped.iter().any(|s| s.path == p && s.reason == SkipReason::Unreadable);
        let removed: Vec<Visible> = self
            .visible
            .values()
            .filter(|v| !desired.iter().any(|f| f.path == v.path) && !unreadable(&v.path))
            .cloned()
            .collect();
        if pending.is_empty() && removed.is_empty() {
            return None;
        }
        let notices: Vec<String> = removed.iter().map(|v| format!("Instructions removed: {}", v.heading)).collect();
        let (files, actions): (Vec<ChainFile>, Vec<Action>) = pending.into_iter().unzip();
        let out = render_with_notices(&self.settings, files, SectionStyle::Updated, &notices);
        let given = delivered(&out);
        self.note_pending(&out, &given);
        let mut changes = Vec::new();
        let mut group = Vec::new();
        for i in given {
            let v = Visible::of(&out.files[i]);
            changes.push(v.change(actions[i]));
            if actions[i] == Action::Set && out.files[i].scope == Scope::Nested {
                group.push(v.path.clone());
            }
            self.visible.insert(v.path.clone(), v);
        }
        for v in &removed {
            changes.push(v.change(Action::Remove));
            self.visible.remove(&v.path);
        }
        if !group.is_empty() {
            self.groups.push(group);
        }
        if changes.is_empty() {
            return None;
        }
        Some(self.push_batch(reason, changes, out.rendered.text))
    }

    /// The `instructions/transitions` result: every batch after `since`, or, when `since` is
    /// older than the log or newer than `seq`, one `baseline` batch of the whole current state.
    pub fn transitions(&self, cache: &FileCache, since: u64) -> TransitionsResult {
        let folder = path_to_uri(&self.folder);
        let oldest = self.log.front().map_or(self.seq.saturating_add(1), |b| b.seq);
        if since <= self.seq && since.saturating_add(1) >= oldest {
            let batches = self.log.iter().filter(|b| b.seq > since).cloned().collect();
            return TransitionsResult { folder, seq: self.seq, reset: false, batches };
        }
        let (files, _) = self.desired(cache);
        let out = render_files(&self.settings, files, SectionStyle::Initial);
        let changes = delivered(&out).into_iter().map(|i| Visible::of(&out.files[i]).change(Action::Set)).collect();
        let batch = Batch { seq: self.seq, reason: Reason::Baseline, changes, text: out.rendered.text };
        TransitionsResult { folder, seq: self.seq, reset: true, batches: vec![batch] }
    }

    /// Starts the lifecycle where it left off, the same way for every edge: from `waiting` (a
    /// ledger not yet on disk) or the ledger of `state_dir`, unless `fresh`; else a `baseline`
    /// batch. A ledger that cannot be used is said in the result, and the session starts afresh
    /// (the next save replaces it).
    pub fn resume(
        &mut self,
        cache: &FileCache,
        state_dir: Option<&Path>,
        waiting: Option<Ledger>,
        fresh: bool,
    ) -> (Option<Batch>, Resumed) {
        let loaded = match (waiting, state_dir) {
            (_, _) if fresh => Ok(None),
            (Some(l), _) => Ok(Some(l)),
            (None, Some(dir)) => ledger::load(dir, &self.folder),
            (None, None) => Ok(None),
        };
        match loaded {
            Ok(Some(l)) => {
                let from = Box::new(l.clone());
                (self.restore(l, cache), Resumed::Continued { from })
            }
            Ok(None) => (self.start(cache), Resumed::Fresh),
            Err(e) => (self.start(cache), Resumed::Replaced(e)),
        }
    }

    /// What persists of this session.
    pub fn ledger(&self) -> Ledger {
        Ledger {
            version: LEDGER_VERSION,
            folder: self.folder.clone(),
            seq: self.seq,
            visible: self.visible.values().cloned().collect(),
            reached: self.reached.iter().cloned().collect(),
            touched: self.touched.clone(),
            groups: self.groups.clone(),
            batches: self.log.iter().cloned().collect(),
            pending: self
                .pending
                .iter()
                .map(|(path, sha256)| ledger::Pending { path: path.clone(), sha256: sha256.clone() })
                .collect(),
        }
    }

    /// Continues from a ledger: its `seq`, what was given, the reached scopes and the log; then
    /// a `restart` batch with what differs on disk now.
    pub fn restore(&mut self, ledger: Ledger, cache: &FileCache) -> Option<Batch> {
        self.started = true;
        self.seq = ledger.seq;
        self.visible = ledger.visible.into_iter().map(|v| (v.path.clone(), v)).collect();
        self.reached = ledger.reached.into_iter().collect();
        self.reached_order = self.reached.iter().cloned().collect();
        self.reached_id = next_reached_id();
        // Only files below the folder, as a touch records them (a ledger is input).
        self.touched = ledger.touched.into_iter().filter(|f| crate::paths::starts_with(f, &self.folder)).collect();
        let extra = self.touched.len().saturating_sub(TOUCHED_MAX);
        self.touched.drain(..extra);
        self.groups = ledger.groups;
        self.pending = ledger.pending.into_iter().map(|p| (p.path, p.sha256)).collect();
        self.log = ledger.batches.into_iter().collect();
        while self.log.len() > LOG_LIMIT {
            self.log.pop_front();
        }
        self.reconcile(cache, Reason::Restart)
    }

    /// The directories to watch: every ancestor of the folder (for root markers and the
    /// baseline), every reached nested directory, and the global file's directory (or its
    /// nearest existing ancestor, so that its creation is seen).
    pub fn watched_dirs(&self) -> BTreeSet<PathBuf> {
        let mut dirs: BTreeSet<PathBuf> = self.folder.ancestors().map(Path::to_path_buf).collect();
        dirs.extend(self.reached.iter().cloned());
        dirs.extend(self.global_watch_dir());
        dirs
    }

    /// The directory watched for the global file: its own, or its nearest existing ancestor
    /// (so that its creation is seen).
    pub fn global_watch_dir(&self) -> Option<PathBuf> {
        let g = self.settings.global_file.as_ref()?;
        g.path.ancestors().skip(1).find(|d| d.is_dir()).map(Path::to_path_buf)
    }

    /// Which `reached` this is and how far it grew: while the first stays the same, the
    /// directories reached since a mark are [`Session::reached_after`] its second.
    pub fn reached_mark(&self) -> (u64, usize) {
        (self.reached_id, self.reached_order.len())
    }

    /// The directories reached after the first `n`, in the order they were reached.
    pub fn reached_after(&self, n: usize) -> &[PathBuf] {
        self.reached_order.get(n..).unwrap_or(&[])
    }

    /// Whether a changed path can affect this session.
    pub fn is_relevant(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let agents_on = self.profiles().iter().any(|p| crate::chain::agents::NAMES.contains(&p.as_str()));
        let config = crate::chain::config::CONFIG_NAMES.contains(&name);
        self.settings.all_names().any(|n| n == name)
            || ((agents_on || self.settings.targeted)
                && (crate::chain::agents::is_agent_path(path) || starts::is_manifest(name)))
            || config
            || self.settings.root_markers.iter().any(|m| m == name)
            || self.settings.global_file.as_ref().is_some_and(|g| g.path.starts_with(path))
            || self.folder.starts_with(path)
            || self.reached.iter().any(|d| d.starts_with(path))
    }

    /// What the session's agents get now: the baseline and the current content of every
    /// nested file given so far, one block per batch that gave nested files.
    pub fn snapshot(&self, cache: &FileCache, buffers: Option<&Buffers>) -> Snapshot {
        let disc = self.discovery(cache, buffers);
        let (chain, reached) = disc.baseline_and(&self.reached);
        let baseline = render_files(&self.settings, chain.files.clone(), SectionStyle::Initial);
        let mut nested_skipped = Vec::new();
        let mut current: Vec<ChainFile> = Vec::new();
        for scan in reached {
            nested_skipped.extend(scan.skipped);
            current.extend(scan.files);
        }
        let nested = self
            .groups
            .iter()
            .map(|group| {
                let files: Vec<ChainFile> =
                    group.iter().filter_map(|p| current.iter().find(|f| &f.path == p).cloned()).collect();
                render_files(&self.settings, files, SectionStyle::Additional)
            })
            .filter(|r| !r.files.is_empty())
            .collect();
        Snapshot { chain, baseline, nested, nested_skipped }
    }

    /// The block a touch of `file` would add now; `None` when it is not below the folder.
    pub fn preview(
        &self,
        cache: &FileCache,
        buffers: Option<&Buffers>,
        snapshot: &Snapshot,
        file: &Path,
    ) -> Option<RenderedFiles> {
        // Re-spelt under the folder so that discovery's prefix stripping sees the folder's case.
        let file = crate::paths::within(&crate::paths::normalize(file), &self.folder)?;
        if file == self.folder {
            return None;
        }
        let disc = self.discovery(cache, buffers);
        let (_, files) = self.new_files(&disc, &snapshot.chain, &file);
        Some(render_files(&self.settings, files, SectionStyle::Additional))
    }

    /// The `instructions/effective` result.
    pub fn effective(&self, cache: &FileCache, buffers: Option<&Buffers>, preview: Option<&Path>) -> EffectiveResult {
        let snapshot = self.snapshot(cache, buffers);
        let preview = preview.and_then(|p| self.preview(cache, buffers, &snapshot, p)).map(|r| r.block());
        EffectiveResult {
            folder: path_to_uri(&self.folder),
            project_root: path_to_uri(&snapshot.chain.project_root),
            seq: self.seq,
            budget_bytes: self.settings.budget_bytes,
            baseline: snapshot.baseline.block(),
            nested: snapshot.nested.iter().map(RenderedFiles::block).collect(),
            preview,
            skipped: snapshot.skipped().map(Skipped::new).collect(),
        }
    }

    /// How diagnostics name this session: its folder's name, as editors show folders.
    pub fn folder_label(&self) -> String {
        let name = self
            .folder
            .file_name()
            .map_or_else(|| self.folder.display().to_string(), |n| n.to_string_lossy().into_owned());
        format!("`{name}`")
    }

    /// Findings of the chain: budget cuts and duplicates of every block of the session.
    pub fn chain_findings(&self, snapshot: &Snapshot) -> Vec<Finding> {
        let label = self.folder_label();
        let budget = self.settings.budget_bytes;
        let mut out = lint::chain_findings(&label, &snapshot.baseline.files, &snapshot.baseline.rendered, budget);
        for n in &snapshot.nested {
            out.extend(lint::chain_findings(&label, &n.files, &n.rendered, budget));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::settings::{Env, Profile};
    use std::fs;

    fn settings(home: &Path) -> Settings {
        Settings::defaults(Profile::Dsh, &Env { home: Some(home.to_path_buf()), ..Env::default() })
    }

    #[test]
    fn a_warm_computation_over_an_unchanged_tree_reads_no_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("r");
        fs::create_dir_all(root.join(".git")).expect("git");
        fs::create_dir_all(root.join("a/b")).expect("dirs");
        fs::write(root.join("AGENTS.md"), "root").expect("write");
        fs::write(root.join("a/CLAUDE.md"), "a").expect("write");
        fs::write(root.join("a/b/AGENTS.md"), "b").expect("write");
        let cache = FileCache::new();
        let mut session = Session::new(&root.join("a"), settings(dir.path()));
        session.touch(&cache, &root.join("a/b/file.rs"));
        let first = session.effective(&cache, None, None);
        let reads = cache.reads();
        assert_eq!(reads, 3);
        let second = session.effective(&cache, None, None);
        assert_eq!(cache.reads(), reads, "nothing is read again");
        assert_eq!(first, second);
        fs::write(root.join("a/CLAUDE.md"), "a, changed").expect("write");
        let third = session.effective(&cache, None, None);
        assert_eq!(cache.reads(), reads + 1, "only the changed file is read again");
        assert!(third.baseline.rendered.contains("a, changed"));
    }

    #[test]
    fn a_nested_file_cut_to_nothing_is_not_delivered_and_a_later_touch_delivers_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("r");
        fs::create_dir_all(root.join(".git")).expect("git");
        fs::create_dir_all(root.join("a")).expect("dirs");
        fs::write(root.join("a/AGENTS.md"), "x".repeat(400)).expect("write");
        let cache = FileCache::new();
        let mut s = settings(dir.path());
        s.budget_bytes = 120;
        let mut session = Session::new(&root, s);
        let out = session.touch(&cache, &root.join("a/f.rs")).expect("a block");
        assert_eq!(out.rendered.truncated.map(|t| t.included_bytes), Some(0));
        assert!(session.snapshot(&cache, None).nested.is_empty());
        session.settings.budget_bytes = 65536;
        let out = session.touch(&cache, &root.join("a/g.rs")).expect("delivered now");
        assert_eq!(out.files.len(), 1);
        assert!(session.touch(&cache, &root.join("a/h.rs")).is_none(), "exactly once");
        assert_eq!(session.snapshot(&cache, None).nested.len(), 1);
    }

    #[test]
    fn preview_shows_only_files_not_yet_reached() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("r");
        fs::create_dir_all(root.join(".git")).expect("git");
        fs::create_dir_all(root.join("a/b")).expect("dirs");
        fs::write(root.join("a/AGENTS.md"), "a").expect("write");
        fs::write(root.join("a/b/AGENTS.md"), "b").expect("write");
        let cache = FileCache::new();
        let mut session = Session::new(&root, settings(dir.path()));
        session.touch(&cache, &root.join("a/x.rs"));
        let e = session.effective(&cache, None, Some(&root.join("a/b/y.rs")));
        let preview = e.preview.expect("preview");
        let paths: Vec<&str> = preview.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["a/b/AGENTS.md"]);
        assert!(session.effective(&cache, None, Some(&dir.path().join("elsewhere.rs"))).preview.is_none());
    }
}
