//! What the server's handlers and its background work share: the state behind one lock, the
//! client handle, the file cache, the watcher, and the remembered answers (the background work
//! itself is `background.rs` and `diagnostics.rs`, as `Shared`'s methods). It imports no handler.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;
use tokio::sync::Notify;
use tower_lsp_server::Client;

use super::state::Workspace;
use crate::chain::agents::{self, AgentEnv};
use crate::chain::source::FileCache;
use crate::session::profiles::{AgentAnswer, Views};
use crate::watch::DirWatcher;

/// Shared between the server and its background tasks.
pub struct Shared {
    /// The client, for notifications, registrations and diagnostics.
    pub(super) client: Client,
    pub(super) state: Mutex<Workspace>,
    pub cache: FileCache,
    pub(super) refresh: Notify,
    pub(super) shutdown: AtomicBool,
    pub(super) watcher: Mutex<Option<DirWatcher>>,
    /// Bumped by every event that may change an answer (documents, touches, files, settings).
    pub(super) generation: std::sync::atomic::AtomicU64,
    /// Warm `instructions/effective` answers, valid for one generation while watching.
    pub(super) memo: Memo<(PathBuf, Option<PathBuf>), Value>,
    /// Agent views, remembered like `memo` once every directory they read is watched.
    pub(super) views: Memo<ViewKey, Arc<AgentAnswer>>,
    /// `instructions/effective` answers with `profile`, remembered the same way.
    pub(super) profile_memo: Memo<(PathBuf, String, Option<PathBuf>, bool), Value>,
    /// Directories remembered answers read beyond the sessions' own: watched too, and a change
    /// in one is an event.
    pub(super) read_dirs: Mutex<std::collections::BTreeSet<Arc<Path>>>,
    /// The repositories' listings the agents' searches use (see [`agents::RepoIndex`]), by base:
    /// kept only once every directory of theirs is watched, and forgotten when a file is made
    /// or removed in one (see [`Shared::forget_outdated_listings`]).
    pub(super) listings: Mutex<std::collections::HashMap<PathBuf, Arc<agents::RepoIndex>>>,
    /// The directories of the listings, watched for files made or removed.
    pub(super) listing_dirs: Mutex<std::collections::HashMap<PathBuf, Arc<[Arc<Path>]>>>,
    /// `read_dirs` grew since the watches were last set (see [`Shared::rewatch`]).
    pub(super) rewatch: AtomicBool,
    /// Bumped whenever `read_dirs` or `listing_dirs` grow.
    pub(super) dirs_generation: std::sync::atomic::AtomicU64,
    /// What the watches were last set from (see [`Shared::update_watches`]).
    pub(super) last_watch: Mutex<Option<(u64, u64, super::state::WatchMarks)>>,
    /// Bumped by every change on disk the server hears of: the checked trees (see
    /// [`Shared::tree`]) follow the disk, not the buffers or the touches (a tree is also
    /// computed again for other settings).
    pub(super) disk_generation: std::sync::atomic::AtomicU64,
    /// What the last diagnostics pass placed in each file (see [`Placed`]).
    pub(super) placed: Mutex<std::collections::HashMap<PathBuf, Placed>>,
    /// What `check` says of each session's folder, by folder, with what it was computed for.
    pub(super) trees: Memo<PathBuf, Arc<(TreeInputs, Arc<crate::session::check::Tree>, Listings)>>,
    /// Held while the repositories are walked whole (see [`finish_walks`]): an answer that
    /// depends on the agents a repository targets waits for the walk instead of answering from
    /// the names near its root, so that it says what `check` says.
    pub(super) walks: tokio::sync::Mutex<()>,
    pub(super) agent_env: AgentEnv,
    /// The names the agents look for in directories outside a project (see
    /// [`Shared::read_by_memo`]): their file and folder names, and each part of their global paths.
    pub(super) global_names: BTreeSet<String>,
    /// Remembered `instructions/effective` answers as sent, by their params as JSON: the
    /// transport answers from here without routing, cloning or serializing (see
    /// `handlers::custom::remembered_answer`).
    pub(super) sent: Memo<String, Arc<[u8]>>,
    /// Folders whose settings to pull, in order, by one task (see `handlers::workspace`).
    pub(super) pulls: tokio::sync::mpsc::UnboundedSender<Vec<PathBuf>>,
    /// The receiving end of `pulls`, taken by the pull task when it starts at `initialized`.
    pub(super) pull_queue: Mutex<Option<tokio::sync::mpsc::UnboundedReceiver<Vec<PathBuf>>>>,
}

/// What a pass placed its diagnostics in a file that is not open from: the next pass takes
/// them from what was published while the file's findings (their hash), size and time of change
/// are the same (placing means reading the file: a monorepo's pass places findings in thousands
/// of files, and an author typing in one file changes the findings of few).
pub(super) struct Placed {
    pub(super) findings: u64,
    pub(super) stamp: Option<(std::time::SystemTime, u64)>,
    pub(super) encoding: super::convert::Encoding,
}

/// (folder, profile, its overrides, touched paths).
type ViewKey = (PathBuf, String, agents::Overrides, Vec<PathBuf>);

/// What a checked tree was computed for: the agents named, those detected, and the settings.
type TreeInputs = (Vec<String>, Option<crate::chain::targets::Targets>, crate::chain::settings::Settings);

/// The listings of the repositories a tree was checked with: true while the tree is.
type Listings = Vec<Arc<agents::RepoIndex>>;

/// How long `shutdown` or the end of the process waits for ledgers to reach the disk: long
/// enough for thousands of fsyncs, bounded so a hung file system cannot keep the process.
const LEDGER_FLUSH_LIMIT: std::time::Duration = std::time::Duration::from_secs(120);

/// Answers remembered for one generation each (an event moves the generation on, and the answer
/// is stale): at most [`MEMO_ENTRIES_MAX`], past which it starts afresh, so that a client asking
/// about any number of paths does not grow the server.
pub struct Memo<K, V> {
    map: Mutex<std::collections::HashMap<K, (u64, V)>>,
}

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Self { map: Mutex::new(std::collections::HashMap::new()) }
    }
}

impl<K: std::hash::Hash + Eq, V: Clone> Memo<K, V> {
    /// The answer remembered for `key` at `generation`.
    pub fn get(&self, key: &K, generation: u64) -> Option<V> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get(key).filter(|(g, _)| *g == generation).map(|(_, v)| v.clone())
    }

    /// Remembers `value` for `key` at `generation`.
    pub fn put(&self, key: K, generation: u64, value: V) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MEMO_ENTRIES_MAX && !map.contains_key(&key) {
            map.clear();
        }
        map.insert(key, (generation, value));
    }
}

/// What the trees of one diagnostics pass share (see [`Shared::tree_in`]).
pub struct PassScope {
    /// The disk generation it was made at: a change on disk ends it.
    generation: u64,
    epoch: Option<u64>,
    /// The repositories' listings made or used by its trees so far.
    listings: Vec<Arc<agents::RepoIndex>>,
}

/// The most entries a memo keeps before it starts afresh (answers are per folder, profile and
/// preview: a client asking about any number of paths does not grow the server).
pub const MEMO_ENTRIES_MAX: usize = 256;

/// The most directories remembered answers may add to the watched ones; past it answers are
/// computed each time instead.
const READ_DIRS_MAX: usize = 16_384;

/// The most directories the repositories' listings may add to the watched ones; past it a
/// listing is made again for each request instead.
const LISTING_DIRS_MAX: usize = 65_536;

impl Shared {
    /// Everything empty, for a server of `client` with the environment `env`.
    pub fn new(client: Client, env: crate::chain::settings::Env) -> Self {
        let (pulls, pull_queue) = tokio::sync::mpsc::unbounded_channel();
        Self {
            pulls,
            pull_queue: Mutex::new(Some(pull_queue)),
            client,
            cache: FileCache::new(),
            refresh: Notify::new(),
            shutdown: AtomicBool::new(false),
            watcher: Mutex::new(None),
            generation: std::sync::atomic::AtomicU64::new(0),
            memo: Memo::default(),
            views: Memo::default(),
            profile_memo: Memo::default(),
            read_dirs: Mutex::new(std::collections::BTreeSet::new()),
            listings: Mutex::new(std::collections::HashMap::new()),
            listing_dirs: Mutex::new(std::collections::HashMap::new()),
            rewatch: AtomicBool::new(false),
            dirs_generation: std::sync::atomic::AtomicU64::new(0),
            last_watch: Mutex::new(None),
            disk_generation: std::sync::atomic::AtomicU64::new(0),
            placed: Mutex::new(std::collections::HashMap::new()),
            trees: Memo::default(),
            walks: tokio::sync::Mutex::new(()),
            global_names: global_names(&AgentEnv::with_home(&env)),
            agent_env: AgentEnv::with_home(&env),
            sent: Memo::default(),
            state: Mutex::new(Workspace::new(env)),
        }
    }
    pub fn state(&self) -> MutexGuard<'_, Workspace> {
        // A panic while holding the lock leaves state that is still usable: keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Watches exactly the directories the sessions need now. True when some cannot be watched
    /// (the inotify limit, say), so the client should report changes instead.
    pub(super) fn update_watches(&self) -> bool {
        if self.watcher.lock().unwrap_or_else(|e| e.into_inner()).is_none() {
            return false;
        }
        // Every touch announces, and a repository's listing adds its every directory: the
        // whole set is worked out again only when what it is made of may have changed. When
        // only touches reached new directories, those are added, at a cost that does not grow
        // with the directories reached before (a burst of touches would otherwise be quadratic);
        // a change on disk moves nothing but where a global file is watched, which the marks
        // hold, and makes directories asked for before (setting tens of thousands of
        // directories again took 100 ms per edit).
        let dirs_gen = self.dirs_generation.load(Ordering::SeqCst);
        let disk_gen = self.disk_generation.load(Ordering::SeqCst);
        let mut last = self.last_watch.lock().unwrap_or_else(|e| e.into_inner());
        let (marks, new, disk_moved) = {
            let st = self.state();
            let marks = st.watch_marks();
            let before = last.as_ref().filter(|(before_gen, _, _)| *before_gen == dirs_gen);
            let new = before.and_then(|(_, _, before)| st.reached_since(before, &marks));
            (marks, new, before.is_some_and(|(_, disk, _)| *disk != disk_gen))
        };
        if let Some(new) = new {
            let mut watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
            let Some(w) = watcher.as_mut() else { return false };
            if !new.is_empty() {
                w.add(new.into_iter().map(Arc::from));
            }
            if disk_moved {
                w.add_made();
            }
            *last = Some((dirs_gen, disk_gen, marks));
            return !w.is_complete();
        }
        let dirs = self.watched_dirs();
        let mut watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
        let Some(w) = watcher.as_mut() else { return false };
        w.set(dirs);
        *last = Some((dirs_gen, disk_gen, marks));
        !w.is_complete()
    }

    /// The sessions' directories and those remembered answers read.
    pub(super) fn watched_dirs(&self) -> std::collections::BTreeSet<Arc<Path>> {
        let mut dirs: std::collections::BTreeSet<Arc<Path>> =
            self.state().watched_dirs().into_iter().map(Arc::from).collect();
        dirs.extend(self.read_dirs.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned());
        for listed in self.listing_dirs.lock().unwrap_or_else(|e| e.into_inner()).values() {
            dirs.extend(listed.iter().cloned());
        }
        dirs
    }

    /// A cache for the views of one request: the listings kept, and room for new ones.
    pub(super) fn repo_scope(&self) -> Arc<agents::RepoCache> {
        let cache = agents::RepoCache::default();
        for index in self.listings.lock().unwrap_or_else(|e| e.into_inner()).values() {
            cache.insert_shared(index.clone());
        }
        Arc::new(cache)
    }

    /// After a request computed with `cache` from watcher `epoch`: a new listing is kept when
    /// every directory of it was watched all along (nothing made or removed since could have
    /// gone unheard), else its directories are watched, so that the next one can be kept.
    pub(super) fn settle_listings(&self, cache: &agents::RepoCache, epoch: Option<u64>) {
        for index in cache.indexes() {
            let kept = self.listings.lock().unwrap_or_else(|e| e.into_inner()).get(index.base()).cloned();
            if kept.is_some_and(|k| Arc::ptr_eq(&k, &index)) {
                continue;
            }
            let watched = {
                let watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
                watcher
                    .as_ref()
                    .filter(|w| w.is_complete())
                    .is_some_and(|w| epoch == Some(w.epoch()) && index.dirs().iter().all(|d| w.watches(d)))
            };
            if watched {
                self.listings.lock().unwrap_or_else(|e| e.into_inner()).insert(index.base().to_path_buf(), index);
                continue;
            }
            // The newest listing of a repository names the directories to watch in it: one
            // made before names some that are gone.
            let mut listed = self.listing_dirs.lock().unwrap_or_else(|e| e.into_inner());
            if listed.get(index.base()).is_some_and(|d| Arc::ptr_eq(d, index.dirs())) {
                continue;
            }
            let others: usize = listed.iter().filter(|(base, _)| *base != index.base()).map(|(_, d)| d.len()).sum();
            if others + index.dirs().len() <= LISTING_DIRS_MAX {
                listed.insert(index.base().to_path_buf(), index.dirs().clone());
                self.dirs_generation.fetch_add(1, Ordering::SeqCst);
                self.rewatch.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Whether the listing of the repository at `base` in `cache` is one kept (see
    /// [`Shared::settle_listings`]): a view that searched it may be remembered.
    pub(super) fn listing_kept(&self, cache: &agents::RepoCache, base: &Path) -> bool {
        let kept = self.listings.lock().unwrap_or_else(|e| e.into_inner()).get(base).cloned();
        matches!((kept, cache.get(base)), (Some(k), Some(i)) if Arc::ptr_eq(&k, &i))
    }

    /// Forgets the listings a file made or removed at one of `changed` makes wrong; true when
    /// one was.
    pub(super) fn forget_outdated_listings(&self, changed: &[PathBuf]) -> bool {
        let mut listings = self.listings.lock().unwrap_or_else(|e| e.into_inner());
        let before = listings.len();
        listings.retain(|_, index| !changed.iter().any(|p| index.is_outdated_by(p)));
        listings.len() != before
    }

    /// The watcher's epoch when it sees every directory it was asked to; `None` when answers
    /// must not be remembered (no watcher, or some directory could not be watched).
    pub(super) fn watch_epoch(&self) -> Option<u64> {
        let watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
        watcher.as_ref().filter(|w| w.is_complete()).map(DirWatcher::epoch)
    }

    /// Whether an answer computed at `generation` and watcher `epoch`, from the directories
    /// `dirs`, may be remembered: nothing happened since, and every one of them was watched all
    /// along (the epoch did not move). When some is not watched yet it is watched once the
    /// caller calls [`Shared::rewatch`], so the next computation can be remembered.
    pub fn may_remember(&self, generation: u64, epoch: u64, dirs: &std::collections::BTreeSet<PathBuf>) -> bool {
        if self.generation.load(Ordering::SeqCst) != generation {
            return false;
        }
        let watched = {
            let watcher = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
            let Some(w) = watcher.as_ref().filter(|w| w.is_complete()) else { return false };
            w.epoch() == epoch && dirs.iter().all(|d| w.watches(d))
        };
        // Recorded even when watched already (for a session, say): a change in one of them is
        // what forgets the answer (see [`Shared::read_by_memo`]).
        let (recorded, grew) = {
            let mut read = self.read_dirs.lock().unwrap_or_else(|e| e.into_inner());
            let before = read.len();
            if before + dirs.len() <= READ_DIRS_MAX {
                let new: Vec<Arc<Path>> =
                    dirs.iter().filter(|d| !read.contains(d.as_path())).map(|d| Arc::from(d.as_path())).collect();
                read.extend(new);
            }
            (dirs.iter().all(|d| read.contains(d.as_path())), read.len() != before)
        };
        if grew {
            self.dirs_generation.fetch_add(1, Ordering::SeqCst);
            self.rewatch.store(true, Ordering::SeqCst);
        }
        watched && recorded
    }

    /// Watches what remembered answers asked for since the last time: once per request or
    /// diagnostics pass, not once per view (setting the watches looks at every session).
    pub fn rewatch(&self) {
        if self.rewatch.swap(false, Ordering::SeqCst) {
            // A directory that cannot be watched leaves the watcher incomplete, which is what
            // the next announce tells the client.
            let _ = self.update_watches();
        }
    }

    /// Whether a changed path lies in a directory a remembered answer read, and can change it.
    /// The agents walk up from a folder through directories outside the project (`/tmp`, the
    /// home directory), where they look for a few names only: there a change of another name
    /// (a busy `/tmp`, a shell's history) changes nothing, and costs nothing more than this
    /// lookup: the sessions' project roots and folders, and the names that matter outside them,
    /// are worked out only for a path in a directory that was read.
    pub(super) fn read_by_memo<'a>(
        &self,
        changed: &[PathBuf],
        sessions: impl Iterator<Item = &'a crate::session::Session>,
    ) -> bool {
        let read = self.read_dirs.lock().unwrap_or_else(|e| e.into_inner());
        let mut sessions = Some(sessions);
        let mut known: Option<(Vec<PathBuf>, BTreeSet<String>)> = None;
        changed.iter().any(|p| {
            let Some(dir) = [Some(p.as_path()), p.parent()].into_iter().flatten().find(|d| read.contains(*d)) else {
                return false;
            };
            let dir = if dir == p.as_path() { p.parent().unwrap_or(dir) } else { dir };
            let (roots, names) = known.get_or_insert_with(|| {
                let mut roots = Vec::new();
                let mut names = self.global_names.clone();
                for s in sessions.take().into_iter().flatten() {
                    roots.push(s.folder.clone());
                    roots.push(s.project_root());
                    names.extend(s.settings.all_names().map(str::to_string));
                    names.extend(s.settings.root_markers.iter().cloned());
                }
                (roots, names)
            });
            let outside = roots.iter().any(|r| r.as_path() != dir && r.starts_with(dir));
            !outside || roots.iter().any(|r| r.starts_with(p)) || name_matters_outside(p, names)
        })
    }

    /// Keeps a remembered answer as sent, for `handlers::custom::remembered_answer`.
    pub(super) fn remember_sent(&self, params: String, generation: u64, value: &Value) {
        let Ok(bytes) = serde_json::to_vec(value) else { return };
        self.sent.put(params, generation, Arc::from(bytes));
    }

    /// Something changed: memoized answers are stale.
    pub(super) fn answers_changed(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Something changed on disk (or in the settings): the checked trees are stale too.
    pub(super) fn disk_changed(&self) {
        self.disk_generation.fetch_add(1, Ordering::SeqCst);
        self.answers_changed();
    }

    /// What `instructions-lsp check FOLDER` says of a session's folder, for the agents the
    /// session publishes: the findings the server publishes and the statements its hovers make,
    /// so that the editor shows what CI will say. Remembered until the disk or the settings
    /// change.
    pub fn tree(&self, session: &crate::session::Session) -> Arc<crate::session::check::Tree> {
        self.tree_in(session, &mut None)
    }

    /// [`Shared::tree`] for one of the folders of a diagnostics pass: the trees of one pass
    /// share the repositories' listings in `scope` while the disk does not change, as one
    /// `check` shares them between its directories. Each folder listed
    /// the whole repository again before (its watches come after the pass): a workspace of a
    /// hundred folders in one repository of 20,000 directories took 90 s to settle.
    pub fn tree_in(
        &self,
        session: &crate::session::Session,
        scope: &mut Option<PassScope>,
    ) -> Arc<crate::session::check::Tree> {
        let selection = crate::session::check::Selection {
            profiles: session.profiles().into_iter().filter(|p| agents::NAMES.contains(&p.as_str())).collect(),
            // Named by `profiles` or detected, the agents run with the repository's settings.
            targets: session.targets().cloned(),
            targeted: session.targets().is_some() && session.settings.targeted,
        };
        let generation = self.disk_generation.load(Ordering::SeqCst);
        // Compared, not hashed or formatted: a diagnostics pass asks once per folder.
        if let Some(entry) = self.trees.get(&session.folder, generation) {
            let ((profiles, targets, settings), tree, _) = entry.as_ref();
            if *profiles == selection.profiles && *targets == selection.targets && *settings == session.settings {
                return tree.clone();
            }
        }
        let scope = match scope {
            Some(s) if s.generation == generation => s,
            _ => scope.insert(PassScope { generation, epoch: self.watch_epoch(), listings: Vec::new() }),
        };
        // A cache of its own (what the disk said of this tree's files is not kept for the
        // next), with the listings the pass made so far.
        let repo = self.repo_scope();
        for index in &scope.listings {
            if repo.get(index.base()).is_none() {
                repo.insert_shared(index.clone());
            }
        }
        let tree = agents::with_repo_cache(&repo, || {
            crate::session::check::check_tree(&session.folder, &session.settings, &selection)
        });
        let tree = Arc::new(tree);
        self.settle_listings(&repo, scope.epoch);
        for index in repo.indexes() {
            if !scope.listings.iter().any(|l| Arc::ptr_eq(l, &index)) {
                scope.listings.push(index);
            }
        }
        for e in &tree.config_errors {
            tracing::warn!("{e}; below it the agents of {} are checked", session.folder.display());
        }
        let inputs = (selection.profiles, selection.targets, session.settings.clone());
        self.trees.put(session.folder.clone(), generation, Arc::new((inputs, tree.clone(), repo.indexes())));
        tree
    }

    /// A cache for views over the editor's buffers in `folder` (see [`crate::session::typed`]):
    /// the listings its tree was checked with, kept or made, and nothing read from the disk.
    pub(super) fn typing_scope(&self, folder: &Path) -> Arc<agents::RepoCache> {
        let cache = self.repo_scope();
        let generation = self.disk_generation.load(Ordering::SeqCst);
        if let Some(entry) = self.trees.get(&folder.to_path_buf(), generation) {
            for index in &entry.2 {
                if cache.get(index.base()).is_none() {
                    cache.insert_shared(index.clone());
                }
            }
        }
        cache
    }

    /// Whether the watcher sees every directory that matters now, so that answers from memory
    /// stay true until an event says otherwise.
    pub(super) fn watching_all(&self) -> bool {
        self.watcher.lock().unwrap_or_else(|e| e.into_inner()).as_ref().is_some_and(DirWatcher::is_complete)
    }

    /// Waits (bounded) until every queued ledger is written; blocks, so never on the protocol
    /// thread's runtime without `spawn_blocking`.
    pub fn flush_ledgers(&self) {
        let writer = self.state().ledgers.clone();
        if !writer.flush(LEDGER_FLUSH_LIMIT) {
            tracing::warn!("ledgers still unwritten after {} s; giving up on them", LEDGER_FLUSH_LIMIT.as_secs());
        }
    }

    /// Whether `shutdown` was received (the exit code depends on it).
    pub fn shut_down(&self) -> bool {
        self.shutdown.load(Ordering::SeqCst)
    }
}

impl Views for Shared {
    fn cache(&self) -> &FileCache {
        &self.cache
    }

    /// From the folder's checked tree, the one its diagnostics come from.
    fn starts(&self, session: &crate::session::Session) -> Option<crate::session::starts::Summary> {
        Some(self.tree(session).starts.clone())
    }

    /// The view of agent `name` in `folder` after the `touched` files, with its findings: from
    /// memory when nothing happened since it was computed and every directory it read is
    /// watched (`watch`: the session lets the server watch). `None` for a name that is not an
    /// agent.
    fn agent_view(
        &self,
        name: &str,
        overrides: &agents::Overrides,
        folder: &Path,
        touched: &[PathBuf],
        watch: bool,
    ) -> Option<Arc<AgentAnswer>> {
        let generation = self.generation.load(Ordering::SeqCst);
        let epoch = if watch { self.watch_epoch() } else { None };
        let key = (folder.to_path_buf(), name.to_string(), overrides.clone(), touched.to_vec());
        if epoch.is_some()
            && let Some(answer) = self.views.get(&key, generation)
        {
            return Some(answer);
        }
        let profile = agents::profile(name, &self.agent_env, overrides)?;
        let repo = self.repo_scope();
        let view = agents::with_repo_cache(&repo, || agents::load(&profile, folder, touched));
        let findings = agents::view_findings(&view, folder);
        self.settle_listings(&repo, epoch);
        // A view that searched the repository holds as long as the listing it searched.
        let listed = view.repository.as_ref().is_none_or(|base| self.listing_kept(&repo, base));
        let dirs = epoch.filter(|_| listed).and_then(|_| agents::dirs_read(&profile, &view, touched));
        let memo = Arc::new(AgentAnswer { view, findings, dirs });
        if let (Some(epoch), Some(dirs)) = (epoch, &memo.dirs)
            && self.may_remember(generation, epoch, dirs)
        {
            self.views.put(key, generation, memo.clone());
        }
        Some(memo)
    }
}

/// Whether an agent walking up through the directory of `p` may look at `p`: an instruction
/// file or folder name, a Markdown file (a configured fallback name, an import), or one of
/// `names`.
fn name_matters_outside(p: &Path, names: &BTreeSet<String>) -> bool {
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else { return true };
    let lower = name.to_ascii_lowercase();
    names.contains(name)
        || agents::FILE_NAMES.contains(&name)
        || crate::chain::config::CONFIG_NAMES.contains(&name)
        || lower.ends_with(".md")
        || lower.ends_with(".mdc")
}

/// Gives the memory freed by a large piece of work back to the system. The C allocator keeps
/// what a thread freed for that thread's next allocations: a whole walk of a repository of
/// 20,000 directories left 20 MB resident, of which a few were still used, and the next work
/// on another thread added its own on top.
pub(super) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: no safe binding of glibc's malloc_trim exists (it is the C allocator's own call,
    // outside POSIX, so neither rustix nor std offers it). It has no preconditions: it only
    // returns free pages of the allocator's heaps to the system, under the allocator's own
    // locks, and touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The names agents look for outside a project: their candidates and layers, every part of their
/// global paths, and the usual root markers.
fn global_names(env: &AgentEnv) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = [".git", ".hg", ".jj", ".sl", ".svn"].iter().map(|s| s.to_string()).collect();
    let part = |p: &Path| -> Vec<String> {
        p.components().filter_map(|c| c.as_os_str().to_str().map(str::to_string)).collect()
    };
    for name in agents::NAMES {
        let Some(profile) = agents::profile(name, env, &agents::Overrides::default()) else { continue };
        for c in &profile.candidates {
            names.extend(part(Path::new(c)));
        }
        for layer in profile.layers.iter().chain(&profile.lazy_layers) {
            names.extend(part(Path::new(layer.path)));
        }
        for g in profile.global.iter().flatten() {
            names.extend(part(g));
        }
    }
    names
}
