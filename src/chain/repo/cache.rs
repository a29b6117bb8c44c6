//! One run's shared work: callers that compute many views of one repository (`check`, the
//! server) share a [`RepoCache`] with [`with_cache`]. The repository is then listed once, each
//! rule's globs compiled once and each rule file's problems worked out once, however many views
//! name them; and the file system's answers are kept for the scope (see [`memo`]). Without a
//! scope, each view lists the repository itself.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::chain::model::profile::GlobStyle;
use crate::chain::patterns::rule::RuleMatcher;
use crate::chain::repo::index::RepoIndex;
use crate::chain::repo::memo::{self, FastHash, PathMap, STATS_MAX};

/// A rule's globs compiled, `None` when none compiles.
type Compiled = Option<Arc<RuleMatcher>>;
type GlobsMap = HashMap<Vec<String>, Compiled, FastHash>;

/// Indexes shared by the views computed in one [`with_cache`] scope, by base.
#[derive(Default)]
pub struct RepoCache {
    indexes: Mutex<HashMap<PathBuf, Arc<RepoIndex>>>,
    /// Rules' globs compiled for touches, by style and globs: every view below a rules folder
    /// meets the same rules.
    /// (Keyed by style, then globs: a lookup borrows the globs instead of copying them.)
    matchers: Mutex<HashMap<GlobStyle, GlobsMap>>,
    /// What the file system said (see [`memo`]).
    fs: Arc<memo::FsMemo>,
    /// What each rule file's patterns came to (see [`rule_outcome`]), by profile, status and
    /// scope, then path, then project base; and how many there are.
    rule_outcomes: Mutex<(RuleOutcomes, usize)>,
}

/// See [`RepoCache::rule_outcomes`].
type RuleOutcomes = HashMap<RuleKey, PathMap<PathMap<Arc<RuleOutcome>>>>;

/// A rule file's profile, status and scope: with its path and project base, all that its
/// problems depend on in one run.
pub(crate) type RuleKey = (&'static str, crate::chain::model::view::Status, crate::chain::model::view::Scope);

/// What `rules::problems` worked out for one rule file: the problems it finds before the
/// repository's search and after it (kept apart so that a view lists them in the same order
/// whether remembered or not), the rule's reach, and the repository searched, if any.
#[derive(Default)]
pub(crate) struct RuleOutcome {
    pub early: Vec<crate::chain::model::view::RuleProblem>,
    pub late: Vec<crate::chain::model::view::RuleProblem>,
    pub reach: Option<crate::chain::model::view::RuleReach>,
    pub searched: Option<PathBuf>,
}

impl RepoCache {
    /// Keeps `index` for its base (a walk made for another purpose that listed the repository),
    /// unless one is kept already.
    pub fn insert(&self, index: RepoIndex) {
        let mut map = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(index.base().to_path_buf()).or_insert_with(|| Arc::new(index));
    }

    /// Keeps `index`, listed before, for its base.
    pub fn insert_shared(&self, index: Arc<RepoIndex>) {
        let mut map = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        map.insert(index.base().to_path_buf(), index);
    }

    /// Every index listed or kept.
    pub fn indexes(&self) -> Vec<Arc<RepoIndex>> {
        self.indexes.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect()
    }

    /// The index of the repository whose base is `base`, when one was listed.
    pub fn get(&self, base: &Path) -> Option<Arc<RepoIndex>> {
        self.indexes.lock().unwrap_or_else(|e| e.into_inner()).get(base).cloned()
    }

    /// The scope's cache on this thread, if any.
    pub fn current() -> Option<Arc<RepoCache>> {
        CACHE.with(|c| c.borrow().clone())
    }

    fn get_or_list(&self, base: &Path) -> Arc<RepoIndex> {
        let real = memo::real_path(base).unwrap_or_else(|_| base.to_path_buf());
        if let Some(index) = self.indexes.lock().unwrap_or_else(|e| e.into_inner()).get(&real) {
            return index.clone();
        }
        // Listed outside the lock: another thread may list it too, and the first one is kept.
        let index = Arc::new(RepoIndex::list(&real));
        let mut map = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(real).or_insert(index).clone()
    }
}

thread_local! {
    static CACHE: RefCell<Option<Arc<RepoCache>>> = const { RefCell::new(None) };
    /// The base of the repository the view being computed searched (see [`searched`]).
    static SEARCHED: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// Runs `f` (the computation of one view), and says which repository's listing it searched.
pub(crate) fn searched<T>(f: impl FnOnce() -> T) -> (T, Option<PathBuf>) {
    let before = SEARCHED.with(|s| s.borrow_mut().take());
    let value = f();
    let base = SEARCHED.with(|s| std::mem::replace(&mut *s.borrow_mut(), before));
    (value, base)
}

/// Runs `f` with the views it computes on this thread sharing `cache`; the scope before is
/// restored after.
pub fn with_cache<T>(cache: &Arc<RepoCache>, f: impl FnOnce() -> T) -> T {
    memo::scoped(&CACHE, cache.clone(), || memo::with_memo(&cache.fs, f))
}

/// `globs` compiled in `style`: the scope's, else compiled now.
pub(crate) fn matcher(style: GlobStyle, globs: &[String]) -> Option<Arc<RuleMatcher>> {
    let Some(cache) = CACHE.with(|c| c.borrow().clone()) else {
        return RuleMatcher::new(style, globs).map(Arc::new);
    };
    if let Some(m) = cache.matchers.lock().unwrap_or_else(|e| e.into_inner()).get(&style).and_then(|m| m.get(globs)) {
        return m.clone();
    }
    let m = RuleMatcher::new(style, globs).map(Arc::new);
    let mut map = cache.matchers.lock().unwrap_or_else(|e| e.into_inner());
    if map.values().map(HashMap::len).sum::<usize>() >= MATCHERS_MAX {
        map.clear();
    }
    map.entry(style).or_default().entry(globs.to_vec()).or_insert(m).clone()
}

/// What another view of the scope worked out for the rule file at `path` (see [`RuleOutcome`]);
/// a repository it searched counts as searched by this view too.
pub(crate) fn rule_outcome(key: RuleKey, path: &Path, base: &Path) -> Option<Arc<RuleOutcome>> {
    let cache = CACHE.with(|c| c.borrow().clone())?;
    let map = &cache.rule_outcomes.lock().unwrap_or_else(|e| e.into_inner()).0;
    let known = map.get(&key)?.get(path.as_os_str())?.get(base.as_os_str())?.clone();
    if let Some(searched) = &known.searched {
        SEARCHED.with(|s| *s.borrow_mut() = Some(searched.clone()));
    }
    Some(known)
}

/// Keeps `outcome` for [`rule_outcome`].
pub(crate) fn keep_rule_outcome(key: RuleKey, path: &Path, base: &Path, outcome: RuleOutcome) -> Arc<RuleOutcome> {
    let outcome = Arc::new(outcome);
    let Some(cache) = CACHE.with(|c| c.borrow().clone()) else { return outcome };
    let mut guard = cache.rule_outcomes.lock().unwrap_or_else(|e| e.into_inner());
    let (map, count) = &mut *guard;
    if *count >= STATS_MAX {
        map.clear();
        *count = 0;
    }
    let by_base = map.entry(key).or_default().entry(path.as_os_str().to_owned()).or_default();
    if by_base.insert(base.as_os_str().to_owned(), outcome.clone()).is_none() {
        *count += 1;
    }
    outcome
}

/// Runs `f` in the scope `cache` (one that has read nothing yet: the listings it holds are
/// what it shares with other scopes) whose views read `texts` (an editor's unsaved buffers)
/// where they would read those files from the disk: what the agents would say once they are
/// saved.
pub fn with_texts<T>(cache: &Arc<RepoCache>, texts: &[(PathBuf, Arc<str>)], f: impl FnOnce() -> T) -> T {
    with_cache(cache, || {
        for (path, text) in texts {
            let data = text.as_bytes().to_vec();
            let size = data.len() as u64;
            memo::keep_read(path, memo::Read { data, size, limit: u64::MAX });
        }
        f()
    })
}

/// The most compiled rules a scope keeps (a server lives long; rules change).
const MATCHERS_MAX: usize = 4_096;

/// The index of the repository below `base`: the scope's, else a new listing.
pub(crate) fn index(base: &Path) -> Arc<RepoIndex> {
    let index = match CACHE.with(|c| c.borrow().clone()) {
        Some(cache) => cache.get_or_list(base),
        None => Arc::new(RepoIndex::list(base)),
    };
    SEARCHED.with(|s| *s.borrow_mut() = Some(index.base().to_path_buf()));
    index
}
