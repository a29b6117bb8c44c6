//! The repository's files as the agents' searches see them (`.gitignore` honoured, hidden files
//! kept, `.git` and `node_modules` skipped, links to files counted), listed once and searched in
//! one pass for every rule at a time: what each pattern of each rule matches, and how many files
//! each rule reaches, are known from one visit of each file against one compiled set of all the
//! patterns.
//!
//! A run lists each repository once, and searches each rule once, in the scope of
//! `cache.rs`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::chain::model::profile::GlobStyle;
use crate::chain::patterns::globs::{Line, RuleSet};
use crate::chain::patterns::rule::{as_matched, vscode_glob, vscode_pattern};
use crate::chain::repo::listing::{Names, RepoListing};
use crate::chain::repo::memo::real_path;
use crate::chain::repo::project::project_walk;

/// The files of one repository below its base, or `None` when it holds more than
/// [`REPO_ENTRIES`](crate::chain::repo::listing::REPO_ENTRIES) entries; and the searches made in them.
pub struct RepoIndex {
    /// The base, a real path, with `/` separators as the VS Code style matches whole paths.
    base: PathBuf,
    base_text: String,
    /// The files, relative to `base`, `/`-separated, in walk order (a directory's entries after
    /// it); `None` when the repository is too large to list.
    files: Option<Names>,
    searches: Mutex<Searches>,
    /// Told when searches are done (see [`RepoIndex::search`]).
    searched: std::sync::Condvar,
    /// The directories holding the files (see [`RepoIndex::dirs`]), worked out when asked.
    dirs: std::sync::OnceLock<Arc<[Arc<Path>]>>,
    /// The directories the walk met, relative and `/`-separated, until `dirs` is worked out
    /// from them (only a server asks: `check` never does).
    walked_dirs: Mutex<Option<Names>>,
}

/// The searches made in a repository, and those a thread is making.
#[derive(Default)]
struct Searches {
    done: HashMap<SearchKey, Arc<Search>>,
    running: std::collections::HashSet<SearchKey>,
}

/// A pass of [`RepoIndex::search`] under way: when it ends (or panics), its keys are no longer
/// running, and the threads waiting look again.
struct Running<'a> {
    index: &'a RepoIndex,
    keys: &'a [&'a SearchKey],
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut state = self.index.searches.lock().unwrap_or_else(|e| e.into_inner());
        for k in self.keys {
            state.running.remove(*k);
        }
        drop(state);
        self.index.searched.notify_all();
    }
}

/// A rule's search: its glob style, the directory its gitignore-style globs start from, its
/// patterns.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct SearchKey {
    pub style: GlobStyle,
    pub rule_dir: PathBuf,
    pub globs: Vec<String>,
}

/// What one rule's patterns match in the repository.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Search {
    /// Per pattern, whether it alone matches some file.
    pub alive: Vec<bool>,
    /// How many files the rule's patterns together match, and the first of them (three at
    /// most, in byte order).
    pub matching: usize,
    pub examples: Vec<PathBuf>,
}

impl From<RepoListing> for RepoIndex {
    /// The index of what was added to `listing`.
    fn from(listing: RepoListing) -> Self {
        let (base, files, dirs) = listing.into_parts();
        let walked = files.is_some().then_some(dirs);
        RepoIndex::of(base, files, walked)
    }
}

impl RepoIndex {
    /// Lists the repository below `base` (one walk).
    pub fn list(base: &Path) -> Self {
        let base = real_path(base).unwrap_or_else(|_| base.to_path_buf());
        Self::walked(base.clone(), &mut project_walk(&base))
    }

    /// The listing of `walk`'s entries below `base`: each thread of the walk lists a part, and
    /// a part past the bound ends the walk.
    pub(crate) fn walked(base: PathBuf, walk: &mut ignore::WalkBuilder) -> Self {
        let mut listing = RepoListing::at(base);
        let parts = crate::chain::confine::walk_parts(
            walk,
            || listing.empty_like(),
            |part, e| {
                part.add(&e);
                part.is_listed()
            },
        );
        for part in parts {
            listing.merge(part);
        }
        listing.into()
    }

    /// An index of `files` (relative, `/`-separated) below the real path `base`, kept in byte
    /// order (a rule's example is the first file it matches in that order).
    pub(crate) fn of(base: PathBuf, files: Option<Names>, walked: Option<Names>) -> Self {
        let files = files.map(Names::sorted);
        let base_text = crate::paths::slash_join(&base);
        Self {
            base,
            base_text,
            files,
            searches: Mutex::new(Searches::default()),
            searched: std::sync::Condvar::new(),
            dirs: std::sync::OnceLock::new(),
            walked_dirs: Mutex::new(walked),
        }
    }

    /// Whether the repository was small enough to list.
    pub(crate) fn is_listed(&self) -> bool {
        self.files.is_some()
    }

    /// The base, a real path.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The directories a file made or removed in changes the listing: the base and every
    /// directory of the repository (when listed from a walk; else those holding a listed file);
    /// only the base when the repository is too large to list.
    /// Each is one allocation, shared with whoever watches it (the server's watcher).
    pub fn dirs(&self) -> &Arc<[Arc<Path>]> {
        self.dirs.get_or_init(|| {
            if let Some(walked) = self.walked_dirs.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let mut dirs: Vec<Arc<Path>> = walked.iter().map(|d| Arc::from(self.base.join(d))).collect();
                dirs.push(Arc::from(self.base.as_path()));
                dirs.sort_unstable();
                dirs.dedup();
                return dirs.into();
            }
            let mut out: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
            for f in self.files.iter().flat_map(Names::iter) {
                let mut at = f.len();
                while let Some(slash) = f[..at].rfind('/') {
                    if !out.insert(&f[..slash]) {
                        break;
                    }
                    at = slash;
                }
            }
            let mut dirs: Vec<Arc<Path>> = vec![Arc::from(self.base.as_path())];
            if self.files.is_some() {
                dirs.extend(out.into_iter().map(|d| Arc::from(self.base.join(d))));
            }
            dirs.sort_unstable();
            dirs.into()
        })
    }

    /// Whether `path`, made, removed or renamed, makes the listing wrong: a file listed that is
    /// gone, or an entry that is not listed, inside the repository (a directory made counts: the
    /// files it will hold are not listed).
    pub fn is_outdated_by(&self, path: &Path) -> bool {
        let Some(files) = self.files.as_ref() else { return false };
        let Ok(rel) = path.strip_prefix(&self.base) else { return false };
        if rel.components().any(|c| c.as_os_str() == ".git" || c.as_os_str() == "node_modules") {
            return false;
        }
        let rel = crate::paths::slash_join(rel);
        let listed = files.binary_search(&rel).is_ok();
        let listed_dir = self.dirs().binary_search_by(|d| (**d).cmp(path)).is_ok();
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => !listed_dir,
            Ok(_) => !listed,
            Err(_) => listed || listed_dir,
        }
    }

    /// The listed files whose name is `name` in any letter case, as absolute paths.
    pub(crate) fn named(&self, name: &str) -> Vec<PathBuf> {
        let files = self.files.iter().flat_map(Names::iter);
        files
            .filter(|f| f.rsplit('/').next().is_some_and(|n| n.eq_ignore_ascii_case(name)))
            .map(|f| self.base.join(f))
            .collect()
    }

    /// The searches of `keys`, those not made yet made together in one pass over the files;
    /// `None` when the repository is too large to list.
    ///
    /// The pass runs outside the lock: views on other threads search for other rules at the same
    /// time (Copilot's and Cursor's), and wait for a pass that another thread makes of theirs.
    pub(crate) fn search(&self, keys: &[SearchKey]) -> Option<Vec<Arc<Search>>> {
        let files = self.files.as_ref()?;
        let lock = || self.searches.lock().unwrap_or_else(|e| e.into_inner());
        let mut state = lock();
        loop {
            if let Some(all) = keys.iter().map(|k| state.done.get(k).cloned()).collect() {
                return Some(all);
            }
            let mut todo: Vec<&SearchKey> =
                keys.iter().filter(|k| !state.done.contains_key(*k) && !state.running.contains(*k)).collect();
            todo.dedup();
            if todo.is_empty() {
                // Another thread's pass: its end (or its panic, see `Running`) wakes this one.
                state = self.searched.wait(state).unwrap_or_else(|e| e.into_inner());
                continue;
            }
            state.running.extend(todo.iter().map(|k| (*k).clone()));
            drop(state);
            let running = Running { index: self, keys: &todo };
            let found = self.run(files, &todo);
            {
                // Its own guard, let go before `running` is (also when this panics).
                let mut done = lock();
                for (key, search) in todo.iter().zip(found) {
                    done.done.insert((*key).clone(), Arc::new(search));
                }
            }
            drop(running);
            state = lock();
        }
    }

    /// One pass over `files` for all `keys`: the VS Code-style patterns against each whole
    /// path, the gitignore-style ones against each path below their rule's directory and each
    /// directory on the way.
    fn run(&self, files: &Names, keys: &[&SearchKey]) -> Vec<Search> {
        // The top folders of the repository, and the folders of the base, which (nearly) every
        // path has: not worth a look-up of their own (see `RuleSet`).
        let mut common: std::collections::HashSet<String> =
            self.base.components().filter_map(|c| c.as_os_str().to_str()).map(str::to_ascii_lowercase).collect();
        let mut last = "";
        for f in files {
            if let Some((top, _)) = f.split_once('/')
                && top != last
            {
                common.insert(top.to_ascii_lowercase());
                last = top;
            }
        }
        let mut out: Vec<Search> =
            keys.iter().map(|k| Search { alive: vec![false; k.globs.len()], ..Search::default() }).collect();
        let mut found = |k: usize, rel: &str, out: &mut Vec<Search>| {
            let s = &mut out[k];
            s.matching += 1;
            if s.examples.len() < 3 {
                s.examples.push(self.base.join(rel));
            }
        };
        // VS Code: each pattern (with `**/` in front) against the whole path.
        let vscode: Vec<usize> = (0..keys.len()).filter(|&k| keys[k].style == GlobStyle::VsCode).collect();
        if !vscode.is_empty() {
            let mut owners = Vec::new();
            let mut patterns = Vec::new();
            for &k in &vscode {
                for (j, g) in keys[k].globs.iter().enumerate() {
                    // (A pattern VS Code's matcher would not parse matches nothing here either.)
                    patterns.push(vscode_pattern(g));
                    owners.push((k, j));
                }
            }
            if let Some(set) = RuleSet::new(&patterns, &vscode_glob, &common) {
                let mut hits = Vec::new();
                let mut whole = String::new();
                let mut rules = Vec::new();
                for rel in files {
                    whole.clear();
                    whole.push_str(&self.base_text);
                    whole.push('/');
                    whole.push_str(rel);
                    set.matches_into(&whole, &mut hits);
                    rules.clear();
                    for &h in &hits {
                        let (k, j) = owners[h];
                        out[k].alive[j] = true;
                        rules.push(k);
                    }
                    rules.sort_unstable();
                    rules.dedup();
                    for &k in &rules {
                        found(k, rel, &mut out);
                    }
                }
            }
        }
        // Gitignore style, per directory the rules start from.
        let mut by_dir: HashMap<&Path, Vec<usize>> = HashMap::new();
        for (k, key) in keys.iter().enumerate().filter(|(_, k)| k.style == GlobStyle::Gitignore) {
            by_dir.entry(key.rule_dir.as_path()).or_default().push(k);
        }
        for (dir, rules) in by_dir {
            self.run_gitignore((files, &common), dir, keys, &rules, &mut out, &mut found);
        }
        out
    }

    /// [`Self::run`] for the gitignore-style rules `rules` that start at `dir`: as the `ignore`
    /// package matches a path, a directory on the way that matches takes all below it, and of a
    /// rule's patterns the last that matches a path decides (a `!pattern` un-matches).
    fn run_gitignore(
        &self,
        (files, common): (&Names, &std::collections::HashSet<String>),
        dir: &Path,
        keys: &[&SearchKey],
        rules: &[usize],
        out: &mut Vec<Search>,
        found: &mut impl FnMut(usize, &str, &mut Vec<Search>),
    ) {
        let Ok(prefix) = dir.strip_prefix(&self.base) else { return };
        let prefix = crate::paths::slash_join(prefix);
        let mut owners: Vec<(usize, usize, Line)> = Vec::new();
        for &k in rules {
            for (j, g) in keys[k].globs.iter().enumerate() {
                if let Some(line) = Line::parse(as_matched(g)) {
                    owners.push((k, j, line));
                }
            }
        }
        let patterns: Vec<&str> = owners.iter().map(|(_, _, line)| line.pattern.as_str()).collect();
        let Some(set) = RuleSet::new(&patterns, &Line::glob, common) else { return };
        // The rules each directory on the way to the file before matches (relative to `dir`),
        // itself or by an ancestor, by where its path ends: the files are in byte order, so
        // a directory's files come one after another and each directory is matched once.
        let mut on_the_way: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut before = "";
        let mut hits = Vec::new();
        // Which rules a path matches by its own last matching pattern; marks the patterns alive.
        let at = |path: &str, is_dir: bool, out: &mut Vec<Search>, hits: &mut Vec<usize>| -> Vec<usize> {
            set.matches_into(path, hits);
            // Per rule, its last matching pattern in line order.
            let mut last: Vec<(usize, usize, bool)> = Vec::new();
            for &h in hits.iter() {
                let (k, j, line) = &owners[h];
                if line.dir_only && !is_dir {
                    continue;
                }
                if !line.whitelist {
                    out[*k].alive[*j] = true;
                }
                match last.iter_mut().find(|(r, _, _)| r == k) {
                    Some(entry) if entry.1 < *j => *entry = (*k, *j, line.whitelist),
                    Some(_) => {}
                    None => last.push((*k, *j, line.whitelist)),
                }
            }
            last.into_iter().filter(|(_, _, white)| !white).map(|(k, _, _)| k).collect()
        };
        for rel in files {
            let below = if prefix.is_empty() {
                Some(rel)
            } else {
                rel.strip_prefix(prefix.as_str()).and_then(|r| r.strip_prefix('/'))
            };
            let Some(below) = below else { continue };
            // The directories the file shares with the one before stay; the others are matched.
            let shared = below.bytes().zip(before.bytes()).take_while(|(a, b)| a == b).count();
            while on_the_way.last().is_some_and(|(end, _)| *end >= shared || below.as_bytes().get(*end) != Some(&b'/'))
            {
                on_the_way.pop();
            }
            let mut end = on_the_way.last().map_or(0, |(end, _)| end + 1);
            while let Some(slash) = below[end..].find('/') {
                let d = &below[..end + slash];
                let mut matched = on_the_way.last().map(|(_, m)| m.clone()).unwrap_or_default();
                matched.extend(at(d, true, out, &mut hits));
                matched.sort_unstable();
                matched.dedup();
                on_the_way.push((end + slash, matched));
                end += slash + 1;
            }
            before = below;
            let mut matched = on_the_way.last().map(|(_, m)| m.clone()).unwrap_or_default();
            matched.extend(at(below, false, out, &mut hits));
            matched.sort_unstable();
            matched.dedup();
            for k in matched {
                found(k, rel, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the `ignore` package says of `target` below `base` for a rule of gitignore lines
    /// (case ignored): a matching parent directory decides, else the path itself.
    fn ignore_package_matches(globs: &[String], base: &Path, target: &Path) -> bool {
        let mut builder = ignore::gitignore::GitignoreBuilder::new("");
        builder.case_insensitive(true).expect("case");
        for g in globs {
            let _ = builder.add_line(None, crate::chain::patterns::rule::as_matched(g));
        }
        let Ok(set) = builder.build() else { return false };
        let Ok(rel) = target.strip_prefix(base) else { return false };
        let parts: Vec<_> = rel.components().collect();
        let mut prefix = PathBuf::new();
        parts.iter().enumerate().any(|(i, part)| {
            prefix.push(part);
            set.matched(&prefix, i + 1 < parts.len()).is_ignore()
        })
    }

    /// The one-pass search, and the matcher of a touch, say of every pattern and path what the
    /// `ignore` package says of that pattern alone, and of a rule what its lines together say.
    #[test]
    fn gitignore_lines_match_as_the_ignore_package_matches_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = crate::chain::repo::memo::real_path(dir.path()).expect("real");
        let files = [
            "src/main.rs",
            "src/lib/deep/mod.rs",
            "docs/Guide.MD",
            "docs/a b/notes.txt",
            "README.md",
            "pkg/src/x.ts",
            "pkg/test/x.test.ts",
            "build/out.js",
            "a/build/b.js",
            // After a directory in byte order, one whose name starts with the other's.
            "a/buildx/c.js",
            "src2/notes.txt",
            "Deep/Src/x/y.RS",
            "pkg/src/deep/src/z.rs",
            "#hash.md",
            "!bang.md",
            "trailing .md",
        ];
        let patterns = [
            "*.rs",
            "src",
            "/src",
            "src/",
            "docs/*.md",
            "**/*.ts",
            "pkg/**",
            "pkg/**/*.test.ts",
            "/build",
            "build/",
            "!build",
            "\\#hash.md",
            "\\!bang.md",
            "# a comment",
            "trailing\\ .md",
            "*.md   ",
            "[a-c]/build",
            "DOCS/*.md",
            "**/*.MD",
            "src/**/*.rs",
            "Pkg/**/*.TS",
            "A/Build/",
            "nothing/here",
            "**",
            "",
            "/",
            "**/src/*.rs",
            "**/SRC/**/*.rs",
            "**/src/**",
            "**/Build/",
            "**/a b/*",
            "!**/src/**",
        ];
        for p in patterns {
            let key = SearchKey { style: GlobStyle::Gitignore, rule_dir: base.clone(), globs: vec![p.to_string()] };
            let index = RepoIndex::of(base.clone(), Some(files.iter().copied().collect()), None);
            let search = index.search(std::slice::from_ref(&key)).expect("listed");
            let m = crate::chain::patterns::rule::RuleMatcher::new(GlobStyle::Gitignore, &[p.to_string()]);
            let expected: Vec<&str> = files
                .iter()
                .copied()
                .filter(|f| ignore_package_matches(&[p.to_string()], &base, &base.join(f)))
                .collect();
            let touched: Vec<&str> =
                files.iter().copied().filter(|f| m.as_ref().is_some_and(|m| m.matches(&base, &base.join(f)))).collect();
            assert_eq!(touched, expected, "a touch, pattern {p:?}");
            let got: Vec<String> = files
                .iter()
                .filter(|f| {
                    let one = RepoIndex::of(base.clone(), Some([**f].into_iter().collect()), None);
                    one.search(std::slice::from_ref(&key)).is_some_and(|s| s[0].matching == 1)
                })
                .map(|f| f.to_string())
                .collect();
            assert_eq!(got, expected, "pattern {p:?}");
            assert_eq!(search[0].matching, expected.len(), "pattern {p:?}");
            assert_eq!(search[0].alive[0], !expected.is_empty(), "pattern {p:?}");
        }
        // Together: the last line that matches decides.
        let rule = vec!["pkg/**".to_string(), "!pkg/test".to_string(), "*.md".to_string()];
        let key = SearchKey { style: GlobStyle::Gitignore, rule_dir: base.clone(), globs: rule.clone() };
        let index = RepoIndex::of(base.clone(), Some(files.iter().copied().collect()), None);
        let search = index.search(std::slice::from_ref(&key)).expect("listed");
        let m = crate::chain::patterns::rule::RuleMatcher::new(GlobStyle::Gitignore, &rule).expect("compiles");
        let expected = files.iter().filter(|f| ignore_package_matches(&rule, &base, &base.join(f))).count();
        assert_eq!(files.iter().filter(|f| m.matches(&base, &base.join(f))).count(), expected, "a touch");
        assert_eq!(search[0].matching, expected);
        assert_eq!(search[0].alive, [true, false, true]);
    }

    /// Threads that search the same repository at once, for the same rules and for others,
    /// get what one thread searching alone gets.
    #[test]
    fn searches_from_many_threads_agree_with_one() {
        let base = PathBuf::from("/repo");
        let files: Vec<String> =
            (0..2_000).map(|i| format!("d{}/f{i}.{}", i % 37, ["ts", "md", "rs"][i % 3])).collect();
        let files: Names = files.iter().map(String::as_str).collect();
        let key = |globs: &[&str], style| SearchKey {
            style,
            rule_dir: base.clone(),
            globs: globs.iter().map(|g| g.to_string()).collect(),
        };
        let keys = [
            key(&["**/*.ts", "d3/**", "nothing/*.cbl"], GlobStyle::VsCode),
            key(&["*.md", "d5/", "!d5/f5.md"], GlobStyle::Gitignore),
            key(&["d1*/**/*.RS"], GlobStyle::Gitignore),
        ];
        let alone = RepoIndex::of(base.clone(), Some(files.clone()), None).search(&keys).expect("listed");
        let shared = RepoIndex::of(base.clone(), Some(files), None);
        std::thread::scope(|scope| {
            let threads: Vec<_> = (0..6)
                .map(|t| {
                    let (shared, keys, alone) = (&shared, &keys, &alone);
                    scope.spawn(move || {
                        // Each thread asks for one rule, then all of them.
                        let one = t % keys.len();
                        let got = shared.search(&keys[one..=one]).expect("listed");
                        assert_eq!(got[0], alone[one]);
                        assert_eq!(shared.search(keys).expect("listed"), *alone);
                    })
                })
                .collect();
            for t in threads {
                t.join().expect("thread");
            }
        });
        assert_eq!(alone[0].alive, [true, true, false]);
    }

    #[test]
    fn vscode_patterns_match_whole_paths_and_rules_below_another_folder_start_there() {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = crate::chain::repo::memo::real_path(dir.path()).expect("real");
        let files = ["src/a.ts", "src/b.TS", "web/src/c.ts", "README.md"];
        let index = RepoIndex::of(base.clone(), Some(files.iter().copied().collect()), None);
        let keys = [
            SearchKey {
                style: GlobStyle::VsCode,
                rule_dir: base.clone(),
                globs: vec!["src/*.ts".into(), "*.go".into(), "[".into()],
            },
            SearchKey { style: GlobStyle::Gitignore, rule_dir: base.join("web"), globs: vec!["src/*.ts".into()] },
        ];
        let s = index.search(&keys).expect("listed");
        // `**/src/*.ts`: both folders named src, in any case; `[` does not parse.
        assert_eq!((s[0].matching, s[0].alive.clone()), (3, vec![true, false, false]));
        assert_eq!(s[0].examples, ["src/a.ts", "src/b.TS", "web/src/c.ts"].map(|f| base.join(f)));
        assert_eq!((s[1].matching, s[1].examples.clone()), (1, vec![base.join("web/src/c.ts")]));
        // Asked again, from memory; too large a repository answers nothing.
        assert_eq!(index.search(&keys[..1]).expect("listed")[0], s[0]);
        assert!(RepoIndex::of(base, None, None).search(&keys).is_none());
    }
}
