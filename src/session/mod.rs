//! One session: a workspace folder (or a CLI run), its settings, the nested scopes that touches
//! reached, and the views derived from the engine.

pub mod view;

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use crate::chain::discover::{Chain, ChainFile, Discovery, SkippedFile};
use crate::chain::lint::{self, Finding};
use crate::chain::render::{self, Item, Rendered, SectionStyle};
use crate::chain::settings::Settings;
use crate::chain::source::{Buffers, FileCache};
use crate::paths::path_to_uri;
use view::{Block, EffectiveResult, Skipped};

/// Files rendered together as one block.
#[derive(Clone, Debug)]
pub struct RenderedFiles {
    pub files: Vec<ChainFile>,
    pub rendered: Rendered,
}

impl RenderedFiles {
    pub fn block(&self) -> Block {
        Block::new(&self.files, &self.rendered)
    }
}

/// Everything a session's agents get now, computed once and viewed many ways.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub chain: Chain,
    pub baseline: RenderedFiles,
    pub nested: Vec<RenderedFiles>,
    /// What the reached nested directories hold but do not load.
    pub nested_skipped: Vec<SkippedFile>,
}

impl Snapshot {
    /// Every file on the session's chain, baseline then nested.
    pub fn files(&self) -> impl Iterator<Item = &ChainFile> {
        self.baseline.files.iter().chain(self.nested.iter().flat_map(|n| n.files.iter()))
    }

    /// Every skipped candidate, baseline then nested.
    pub fn skipped(&self) -> impl Iterator<Item = &SkippedFile> {
        self.chain.skipped.iter().chain(&self.nested_skipped)
    }
}

/// Renders files as one block of a session.
pub fn render_files(settings: &Settings, files: Vec<ChainFile>, style: SectionStyle) -> RenderedFiles {
    let items: Vec<Item> = files.iter().map(|f| Item { heading: &f.heading, content: &f.file.text }).collect();
    let rendered = render::render(&render::Request {
        frame: settings.frame,
        budget_bytes: settings.budget_bytes,
        items: &items,
        style,
        notices: &[],
    });
    RenderedFiles { files, rendered }
}

/// A workspace folder's state over time.
#[derive(Clone, Debug)]
pub struct Session {
    pub folder: PathBuf,
    pub settings: Settings,
    pub seq: u64,
    /// Nested directories that touches reached.
    reached: BTreeSet<PathBuf>,
    /// Nested files delivered to the agent (a file cut to nothing is not delivered).
    delivered: HashSet<PathBuf>,
    /// The nested files of each touch that delivered something, in order.
    batches: Vec<Vec<PathBuf>>,
}

impl Session {
    pub fn new(folder: &Path, settings: Settings) -> Self {
        Self {
            folder: crate::paths::normalize(folder),
            settings,
            seq: 0,
            reached: BTreeSet::new(),
            delivered: HashSet::new(),
            batches: Vec::new(),
        }
    }

    pub fn discovery<'a>(&'a self, cache: &'a FileCache, buffers: Option<&'a Buffers>) -> Discovery<'a> {
        Discovery::new(&self.settings, cache, buffers, &self.folder)
    }

    /// The nested directories reached so far.
    pub fn reached(&self) -> impl Iterator<Item = &Path> {
        self.reached.iter().map(PathBuf::as_path)
    }

    /// The files a touch of `file` would add now (not yet delivered, not on the baseline).
    fn new_files(&self, disc: &Discovery<'_>, baseline: &Chain, file: &Path) -> (Vec<PathBuf>, Vec<ChainFile>) {
        let mut dirs = Vec::new();
        let mut files: Vec<ChainFile> = Vec::new();
        for (dir, scan) in disc.nested(file) {
            dirs.push(dir);
            for f in scan.files {
                let known = self.delivered.contains(&f.path)
                    || baseline.files.iter().any(|b| b.path == f.path)
                    || files.iter().any(|g| g.path == f.path);
                if !known {
                    files.push(f);
                }
            }
        }
        (dirs, files)
    }

    /// Records a touch; returns the block of the nested files it adds, if any.
    pub fn touch(&mut self, cache: &FileCache, file: &Path) -> Option<RenderedFiles> {
        let disc = self.discovery(cache, None);
        let baseline = disc.baseline();
        let (dirs, files) = self.new_files(&disc, &baseline, file);
        self.reached.extend(dirs);
        if files.is_empty() {
            return None;
        }
        let out = render_files(&self.settings, files, SectionStyle::Additional);
        let delivered: Vec<PathBuf> = out
            .files
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                let included = out.rendered.included_bytes(*i, f.file.text.len());
                !out.rendered.disabled && !out.rendered.omitted.contains(i) && (included > 0 || f.file.text.is_empty())
            })
            .map(|(_, f)| f.path.clone())
            .collect();
        if delivered.is_empty() {
            return Some(out);
        }
        self.delivered.extend(delivered.iter().cloned());
        self.batches.push(delivered);
        Some(out)
    }

    /// What the session's agents get now: the baseline and the current content of every
    /// nested file delivered so far, one block per touch batch.
    pub fn snapshot(&self, cache: &FileCache, buffers: Option<&Buffers>) -> Snapshot {
        let disc = self.discovery(cache, buffers);
        let chain = disc.baseline();
        let baseline = render_files(&self.settings, chain.files.clone(), SectionStyle::Initial);
        let mut nested_skipped = Vec::new();
        let mut current: Vec<ChainFile> = Vec::new();
        for dir in &self.reached {
            let scan = disc.scan_dir(dir, crate::chain::discover::Scope::Nested);
            nested_skipped.extend(scan.skipped);
            current.extend(scan.files);
        }
        let nested = self
            .batches
            .iter()
            .map(|batch| {
                let files: Vec<ChainFile> =
                    batch.iter().filter_map(|p| current.iter().find(|f| &f.path == p).cloned()).collect();
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
        let file = crate::paths::normalize(file);
        if file == self.folder || !file.starts_with(&self.folder) {
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
