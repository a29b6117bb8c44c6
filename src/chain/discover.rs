//! Discovery (docs/discovery.md): the project root, the ancestor chain from the root to
//! the folder, the winner and overlays of each directory, and the nested scopes of a touch.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::settings::{Settings, SymlinkPolicy};
use super::source::{Buffers, FileCache, LoadedFile, Probe, ProbeOptions, SkipDetail, SkipReason};
use crate::paths;

/// Where a file of the chain comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Global,
    Project,
    Nested,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Self::Global => "global",
            Self::Project => "project",
            Self::Nested => "nested",
        }
    }
}

/// A directory's winner, or one of its overlays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Main,
    Overlay,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Overlay => "overlay",
        }
    }
}

/// A file that loads and takes part in a chain.
#[derive(Clone, Debug)]
pub struct ChainFile {
    pub path: PathBuf,
    /// The display path: relative to the project root with `/`, or the global heading.
    pub heading: String,
    pub scope: Scope,
    pub kind: Kind,
    pub file: Arc<LoadedFile>,
}

/// A candidate that exists but does not load, and why.
#[derive(Clone, Debug)]
pub struct SkippedFile {
    pub path: PathBuf,
    pub heading: String,
    pub scope: Scope,
    pub kind: Kind,
    pub reason: SkipReason,
    pub detail: SkipDetail,
    /// The file that wins over this one (`shadowed`, `duplicate`).
    pub shadowed_by: Option<PathBuf>,
}

/// What one directory holds.
#[derive(Clone, Debug, Default)]
pub struct DirScan {
    pub files: Vec<ChainFile>,
    pub skipped: Vec<SkippedFile>,
}

/// The baseline of one folder: global file, then root to folder.
#[derive(Clone, Debug)]
pub struct Chain {
    pub folder: PathBuf,
    pub project_root: PathBuf,
    pub files: Vec<ChainFile>,
    pub skipped: Vec<SkippedFile>,
}

/// The most bytes one chain loads (its project and nested files; the user's global file aside):
/// past it, the broadest files are `chainTooLarge`, judged by their size and never read. Thirty-two
/// files at the default `maxFileBytes`; a deep tree of large files otherwise costs its whole size
/// in memory for each folder and each answer.
pub const CHAIN_READ_CAP: u64 = 32 * 1024 * 1024;

/// The nearest ancestor-or-self of `folder` holding one of `markers`; the folder itself when
/// none does (or when there are no markers).
pub fn project_root(folder: &Path, markers: &[String]) -> PathBuf {
    if markers.is_empty() {
        return folder.to_path_buf();
    }
    folder
        .ancestors()
        // Remembered within a run of views (each directory's chain asks for the same ancestors).
        .find(|dir| markers.iter().any(|m| crate::chain::repo::memo::lstat_exists(&crate::paths::join(dir, m))))
        .unwrap_or(folder)
        .to_path_buf()
}

/// The directories from `root` down to `folder`, inclusive, broad to specific.
pub fn ancestor_dirs(root: &Path, folder: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        folder.ancestors().take_while(|dir| dir.starts_with(root)).map(Path::to_path_buf).collect();
    dirs.reverse();
    dirs
}

/// The nested scopes a touch of `file` reaches: the directories from just below `folder` down
/// to the file's parent, inclusive. Empty for the folder itself, its direct files, and paths
/// outside it.
pub fn nested_dirs(folder: &Path, file: &Path) -> Vec<PathBuf> {
    nested_dirs_while(folder, file, |_| true)
}

/// [`nested_dirs`], stopping before the first directory for which `keep` is false: a touch of a
/// made-up path as long as the client likes reaches only the directories that exist, and costs
/// no more than they do.
pub fn nested_dirs_while(folder: &Path, file: &Path, mut keep: impl FnMut(&Path) -> bool) -> Vec<PathBuf> {
    let Ok(relative) = file.strip_prefix(folder) else {
        return Vec::new();
    };
    let mut parts = relative.components().peekable();
    let mut dirs = Vec::new();
    let mut dir = folder.to_path_buf();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            break;
        }
        dir.push(part.as_os_str());
        if !keep(&dir) {
            break;
        }
        dirs.push(dir.clone());
    }
    dirs
}

/// One discovery pass over the disk (or buffers) for a folder and its project root.
pub struct Discovery<'a> {
    pub settings: &'a Settings,
    pub cache: &'a FileCache,
    pub buffers: Option<&'a Buffers>,
    pub folder: PathBuf,
    pub project_root: PathBuf,
    /// Resolved on first use: only `withinRoot` needs it.
    canonical_root: std::sync::OnceLock<PathBuf>,
    /// Directories found to lead out of the project through a link, by path (see [`Discovery::escapes`]).
    escapes: std::sync::Mutex<std::collections::HashMap<PathBuf, Option<PathBuf>>>,
}

impl<'a> Discovery<'a> {
    pub fn new(settings: &'a Settings, cache: &'a FileCache, buffers: Option<&'a Buffers>, folder: &Path) -> Self {
        let folder = paths::normalize(folder);
        let project_root = project_root(&folder, &settings.root_markers);
        Self {
            settings,
            cache,
            buffers,
            folder,
            project_root,
            canonical_root: std::sync::OnceLock::new(),
            escapes: Default::default(),
        }
    }

    fn canonical_root(&self) -> &Path {
        self.canonical_root
            .get_or_init(|| fs::canonicalize(&self.project_root).unwrap_or_else(|_| self.project_root.clone()))
    }

    /// Where `dir` really is, when a directory link on its way from the project root leads out
    /// of the project; `None` for a directory inside it. Under `skip` and `withinRoot` nothing in
    /// such a directory loads (`follow` follows it knowingly). One `lstat` per directory, and a
    /// `realpath` only for links.
    pub fn escapes(&self, dir: &Path) -> Option<PathBuf> {
        if dir == self.project_root || !dir.starts_with(&self.project_root) {
            return None;
        }
        if let Some(known) = self.escapes.lock().unwrap_or_else(|e| e.into_inner()).get(dir) {
            return known.clone();
        }
        let via_parent = dir.parent().and_then(|p| self.escapes(p)).map(|real| match dir.file_name() {
            Some(name) => real.join(name),
            None => real,
        });
        let here = via_parent.or_else(|| {
            let is_link = fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
            if !is_link {
                return None;
            }
            match fs::canonicalize(dir) {
                Ok(real) if real.starts_with(self.canonical_root()) => None,
                Ok(real) => Some(real),
                // A dangling or looping link leads nowhere inside.
                Err(_) => Some(fs::read_link(dir).unwrap_or_default()),
            }
        });
        self.escapes.lock().unwrap_or_else(|e| e.into_inner()).insert(dir.to_path_buf(), here.clone());
        here
    }

    /// The display path of a project or nested file.
    pub fn heading(&self, path: &Path) -> String {
        match path.strip_prefix(&self.project_root) {
            Ok(rel) => paths::slash_join(rel),
            Err(_) => paths::slash_join(path),
        }
    }

    /// `room`: what the chain may still load (see [`CHAIN_READ_CAP`]); a file past it is
    /// `chainTooLarge`, judged by its size and never read.
    fn probe(&self, path: &Path, scope: Scope, room: u64) -> Probe {
        let symlinks = self.settings.symlinks;
        // The global file is the user's own: root confinement applies to repository files only.
        let root = (scope != Scope::Global && symlinks == SymlinkPolicy::WithinRoot).then(|| self.canonical_root());
        let max_file_bytes = self.settings.max_file_bytes.min(room);
        let opts = ProbeOptions { symlinks, max_file_bytes, root };
        match self.cache.probe(path, &opts, self.buffers) {
            Probe::Skipped(SkipReason::TooLarge, SkipDetail::Size(n)) if n <= self.settings.max_file_bytes => {
                Probe::Skipped(SkipReason::ChainTooLarge, SkipDetail::Size(n))
            }
            other => other,
        }
    }

    /// The winner and overlays of one directory, with everything that was skipped.
    pub fn scan_dir(&self, dir: &Path, scope: Scope) -> DirScan {
        self.scan_dir_within(dir, scope, u64::MAX)
    }

    /// The scans of `dirs`, in their order, loading at most [`CHAIN_READ_CAP`] bytes in all: the
    /// deepest directories first, as a budget keeps the most specific files, so what the cap
    /// leaves out is what a budget would have dropped first.
    pub fn scan_dirs(&self, dirs: &[(PathBuf, Scope)]) -> Vec<DirScan> {
        let mut order: Vec<usize> = (0..dirs.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse((dirs[i].0.components().count(), i)));
        let mut room = CHAIN_READ_CAP;
        let mut scans: Vec<Option<DirScan>> = (0..dirs.len()).map(|_| None).collect();
        for i in order {
            let (dir, scope) = &dirs[i];
            let scan = self.scan_dir_within(dir, *scope, room);
            room = room.saturating_sub(scan.files.iter().map(|f| f.file.text.len() as u64).sum());
            scans[i] = Some(scan);
        }
        scans.into_iter().flatten().collect()
    }

    fn scan_dir_within(&self, dir: &Path, scope: Scope, room: u64) -> DirScan {
        let mut scan = DirScan::default();
        if scope != Scope::Global
            && self.settings.symlinks != SymlinkPolicy::Follow
            && let Some(real) = self.escapes(dir)
        {
            for name in self.settings.candidates.iter().chain(&self.settings.local_candidates) {
                let path = dir.join(name);
                if self.exists(&path) {
                    let detail = SkipDetail::Target(real.join(name));
                    scan.skipped.push(self.skipped(path, scope, Kind::Main, SkipReason::OutsideRoot, detail, None));
                }
            }
            return scan;
        }
        let mut winner: Option<PathBuf> = None;
        for name in &self.settings.candidates {
            let path = dir.join(name);
            if let Some(win) = &winner {
                // Shadowed only needs to exist: nothing is read past the winner.
                if self.exists(&path) {
                    scan.skipped.push(self.skipped(
                        path,
                        scope,
                        Kind::Main,
                        SkipReason::Shadowed,
                        SkipDetail::None,
                        Some(win.clone()),
                    ));
                }
                continue;
            }
            match self.probe(&path, scope, room) {
                Probe::Absent => {}
                Probe::Skipped(reason, detail) => {
                    scan.skipped.push(self.skipped(path, scope, Kind::Main, reason, detail, None))
                }
                Probe::Loaded(file) => {
                    winner = Some(path.clone());
                    scan.files.push(ChainFile { heading: self.heading(&path), path, scope, kind: Kind::Main, file });
                }
            }
        }
        for name in &self.settings.local_candidates {
            let path = dir.join(name);
            if scan.files.iter().any(|f| f.path == path) || scan.skipped.iter().any(|s| s.path == path) {
                continue;
            }
            match self.probe(&path, scope, room) {
                Probe::Absent => {}
                Probe::Skipped(reason, detail) => {
                    scan.skipped.push(self.skipped(path, scope, Kind::Overlay, reason, detail, None))
                }
                Probe::Loaded(file) => {
                    let twin = self.settings.dedupe_trimmed.then(|| {
                        scan.files.iter().find(|f| f.file.text.trim() == file.text.trim()).map(|f| f.path.clone())
                    });
                    if let Some(Some(earlier)) = twin {
                        scan.skipped.push(self.skipped(
                            path,
                            scope,
                            Kind::Overlay,
                            SkipReason::Duplicate,
                            SkipDetail::None,
                            Some(earlier),
                        ));
                    } else {
                        scan.files.push(ChainFile {
                            heading: self.heading(&path),
                            path,
                            scope,
                            kind: Kind::Overlay,
                            file,
                        });
                    }
                }
            }
        }
        scan
    }

    fn exists(&self, path: &Path) -> bool {
        self.buffers.is_some_and(|b| b.contains_key(path)) || fs::symlink_metadata(path).is_ok()
    }

    fn skipped(
        &self,
        path: PathBuf,
        scope: Scope,
        kind: Kind,
        reason: SkipReason,
        detail: SkipDetail,
        shadowed_by: Option<PathBuf>,
    ) -> SkippedFile {
        let heading = match (scope, &self.settings.global_file) {
            (Scope::Global, Some(g)) => g.heading.clone(),
            _ => self.heading(&path),
        };
        SkippedFile { path, heading, scope, kind, reason, detail, shadowed_by }
    }

    /// The global file, if configured and loadable.
    fn global(&self, chain: &mut Chain) {
        let Some(global) = &self.settings.global_file else { return };
        match self.probe(&global.path, Scope::Global, u64::MAX) {
            Probe::Absent => {}
            Probe::Skipped(reason, detail) => {
                chain.skipped.push(self.skipped(global.path.clone(), Scope::Global, Kind::Main, reason, detail, None));
            }
            Probe::Loaded(file) => chain.files.push(ChainFile {
                path: global.path.clone(),
                heading: global.heading.clone(),
                scope: Scope::Global,
                kind: Kind::Main,
                file,
            }),
        }
    }

    /// The baseline: the global file, then every directory from the project root to the
    /// folder. Files are deduplicated by absolute path; the first occurrence wins.
    pub fn baseline(&self) -> Chain {
        self.baseline_and(std::iter::empty()).0
    }

    /// The baseline and the scans of the nested directories `reached`, loading at most
    /// [`CHAIN_READ_CAP`] together (see [`Discovery::scan_dirs`]).
    pub fn baseline_and<'p>(&self, reached: impl IntoIterator<Item = &'p PathBuf>) -> (Chain, Vec<DirScan>) {
        let mut chain = Chain {
            folder: self.folder.clone(),
            project_root: self.project_root.clone(),
            files: Vec::new(),
            skipped: Vec::new(),
        };
        self.global(&mut chain);
        let ancestors = ancestor_dirs(&self.project_root, &self.folder);
        let project_dirs = ancestors.len();
        let dirs: Vec<(PathBuf, Scope)> = ancestors
            .into_iter()
            .map(|d| (d, Scope::Project))
            .chain(reached.into_iter().map(|d| (d.clone(), Scope::Nested)))
            .collect();
        let mut scans = self.scan_dirs(&dirs);
        let nested = scans.split_off(project_dirs);
        for scan in scans {
            append_unique(&mut chain.files, scan.files);
            chain.skipped.extend(scan.skipped);
        }
        (chain, nested)
    }

    /// The directories a touch of `file` reaches (those that exist), each scanned, in order,
    /// loading at most [`CHAIN_READ_CAP`] together (see [`Discovery::scan_dirs`]).
    pub fn nested(&self, file: &Path) -> Vec<(PathBuf, DirScan)> {
        let dirs: Vec<(PathBuf, Scope)> = nested_dirs_while(&self.folder, &paths::normalize(file), |d| d.is_dir())
            .into_iter()
            .map(|dir| (dir, Scope::Nested))
            .collect();
        let scans = self.scan_dirs(&dirs);
        dirs.into_iter().map(|(dir, _)| dir).zip(scans).collect()
    }
}

/// Appends files whose paths are not already present.
pub fn append_unique(files: &mut Vec<ChainFile>, more: Vec<ChainFile>) {
    for f in more {
        if !files.iter().any(|g| g.path == f.path) {
            files.push(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Forty nested 1 MiB files hold 40 MiB: the 32 deepest load, the 8 broadest are
    /// `chainTooLarge`, never read; a chain of small files loads whole.
    #[test]
    fn a_chain_loads_at_most_its_cap_keeping_the_deepest_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("r");
        let mut d = root.clone();
        let big = "y".repeat(1024 * 1024 - 1);
        for _ in 0..40 {
            std::fs::create_dir_all(&d).expect("mkdir");
            std::fs::write(d.join("AGENTS.md"), &big).expect("write");
            d = d.join("d");
        }
        std::fs::create_dir_all(root.join(".git")).expect("git");
        let env =
            crate::chain::settings::Env { home: Some(dir.path().join("home")), dsh_home: None, xdg_state_home: None };
        let settings = crate::chain::settings::Settings::defaults(crate::chain::settings::Profile::Dsh, &env);
        let cache = FileCache::new();
        let deepest = d.parent().expect("parent").to_path_buf();
        let chain = Discovery::new(&settings, &cache, None, &deepest).baseline();
        assert_eq!(chain.files.len(), 32, "{:?}", chain.skipped.iter().map(|s| s.reason).collect::<Vec<_>>());
        assert!(chain.files.last().is_some_and(|f| f.path == deepest.join("AGENTS.md")), "the deepest loads");
        let capped: Vec<_> = chain.skipped.iter().filter(|s| s.reason == SkipReason::ChainTooLarge).collect();
        assert_eq!(capped.len(), 8);
        assert_eq!(capped[0].path, root.join("AGENTS.md"), "the broadest is left out");
        let small = root.join("small/a/b");
        std::fs::create_dir_all(&small).expect("mkdir");
        for p in ["small", "small/a", "small/a/b"] {
            std::fs::write(root.join(p).join("AGENTS.md"), "rules").expect("write");
        }
        std::fs::create_dir_all(root.join("small/.git")).expect("git");
        let chain = Discovery::new(&settings, &cache, None, &small).baseline();
        assert_eq!(chain.files.len(), 3, "a chain of small files loads whole");
    }

    #[test]
    fn nested_dirs_stop_at_the_parent() {
        let folder = Path::new("/r/app");
        assert_eq!(
            nested_dirs(folder, Path::new("/r/app/a/b/c.rs")),
            [PathBuf::from("/r/app/a"), PathBuf::from("/r/app/a/b")]
        );
        assert!(nested_dirs(folder, Path::new("/r/app/main.rs")).is_empty());
        assert!(nested_dirs(folder, Path::new("/r/app")).is_empty());
        assert!(nested_dirs(folder, Path::new("/r/other/x.rs")).is_empty());
        assert!(nested_dirs(folder, Path::new("/r/application/x/y.rs")).is_empty());
    }

    #[test]
    fn ancestor_dirs_are_broad_to_specific() {
        assert_eq!(
            ancestor_dirs(Path::new("/r"), Path::new("/r/a/b")),
            [PathBuf::from("/r"), PathBuf::from("/r/a"), PathBuf::from("/r/a/b")]
        );
    }
}
