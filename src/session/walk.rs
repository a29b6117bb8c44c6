//! One walk of a tree, shared by `check`, `diff`, where agents start and the server's
//! diagnostics: the directories that hold instruction files, the names that show which agents
//! a repository is written for, its configuration files, its package roots (a folder with a
//! project manifest), what could not be read, and the repository's listing that the agents'
//! searches use. What the configuration leaves out (`exclude`) is listed but not checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::chain::agents;
use crate::chain::lint::{Code, Finding, Span};
use crate::chain::settings::Settings;
use crate::chain::targets::Targets;
use crate::paths;

/// The files that make a folder a package root, by name; and by ending, `*.csproj`, `*.fsproj`,
/// `*.vbproj` and `*.cabal` (see [`is_manifest`]).
pub const MANIFESTS: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "go.mod",
    "pyproject.toml",
    "setup.py",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "Gemfile",
    "composer.json",
    "pubspec.yaml",
    "Package.swift",
    "deno.json",
    "deno.jsonc",
    "mix.exs",
    "build.sbt",
    "project.clj",
    "dune-project",
    "rebar.config",
    "Project.toml",
];

/// The endings of the files that make a folder a package root, besides [`MANIFESTS`].
const MANIFEST_ENDINGS: &[&str] = &[".csproj", ".fsproj", ".vbproj", ".cabal"];

/// [`MANIFESTS`] and [`MANIFEST_ENDINGS`] as file globs, for a client that watches for us.
pub fn manifest_globs() -> impl Iterator<Item = String> {
    MANIFESTS.iter().map(|n| n.to_string()).chain(MANIFEST_ENDINGS.iter().map(|e| format!("*{e}")))
}

/// Whether a file named `name` makes its folder a package root.
pub fn is_manifest(name: &str) -> bool {
    MANIFESTS.contains(&name) || MANIFEST_ENDINGS.iter().any(|e| name.ends_with(e))
}

/// Whether a folder at `rel` (below the tree's root) may be a place where people start agents:
/// not in a hidden folder (`.git`, an agent's configuration folder, a tool's cache), nor in
/// `node_modules` (installed packages carry manifests of their own).
pub fn startable(rel: &Path) -> bool {
    rel.components().all(|c| {
        let name = c.as_os_str().to_string_lossy();
        !name.starts_with('.') && name != "node_modules"
    })
}

/// A nearer `instructions-lsp.toml` in a checked tree, and the agents started below it.
#[derive(Clone, Debug)]
pub struct Configured {
    pub dir: PathBuf,
    pub config: PathBuf,
    pub agents: Vec<String>,
    /// The agents are the file's own `agents` (else the tree's, with the file's settings).
    pub named: bool,
}

/// Which profiles a tree is checked for, and why.
#[derive(Clone, Debug)]
pub struct Selection {
    /// Profile names: agents, or the engine's `dsh` / `ds4`.
    pub profiles: Vec<String>,
    /// The repository's targets, when they chose the profiles (their overrides apply).
    pub targets: Option<Targets>,
    /// The profiles are the repository's choice (no `--profile`): below a nearer
    /// `instructions-lsp.toml` that names `agents`, those agents are checked instead.
    pub targeted: bool,
}

impl Selection {
    /// What `agent` runs with: the repository's configuration under `settings`' own.
    pub(super) fn overrides(&self, agent: &str, settings: &Settings) -> agents::Overrides {
        super::project::overrides(self.targets.as_ref(), agent, Some(&settings.agent_sets))
    }
}

/// The path an error of the walk is about, if it names one.
fn error_path(e: &ignore::Error) -> Option<&Path> {
    match e {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        _ => None,
    }
}

/// What one tree holds: the directories with an instruction file (of the profiles checked),
/// the instruction file names met (for detecting agents), and what could not be read.
pub struct Walked {
    pub dirs: BTreeSet<PathBuf>,
    pub names: BTreeSet<String>,
    /// The `instructions-lsp.toml` files met, by the directory holding them.
    pub(super) configs: BTreeMap<PathBuf, PathBuf>,
    /// The package roots met: folders holding a project manifest (see [`is_manifest`]).
    pub(super) packages: BTreeSet<PathBuf>,
    pub(super) unreadable: Vec<Finding>,
    /// What the walk skipped, in words, with the path it names when it names one.
    pub(super) warnings: Vec<(String, Option<PathBuf>)>,
    /// The repository's files as the agents' searches list them (see [`agents::RepoIndex`]),
    /// when the tree is a whole repository: its views search this listing instead of walking
    /// the tree again.
    pub(super) repo: Option<agents::RepoIndex>,
}

/// The names whose directories are checked: the engine's candidates and every agent's.
pub(crate) fn checked_names(settings: &Settings, agent_env: &agents::AgentEnv) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = settings.all_names().map(str::to_string).collect();
    for n in agents::NAMES {
        if let Some(p) = agents::profile(n, agent_env, &agents::Overrides::default()) {
            names.extend(p.candidates.iter().map(|c| c.rsplit('/').next().unwrap_or(c).to_string()));
        }
    }
    names.extend(agents::FILE_NAMES.iter().map(|s| s.to_string()));
    names
}

/// How many cores a check may take: all of them for a command the user waits for (`check`,
/// `diff`), one for the server's checks in the background, which must leave the other cores
/// to the requests an editor is waiting on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cores {
    One,
    All,
}

impl Cores {
    /// The threads to work on (at most eight).
    pub(super) fn threads(self) -> usize {
        match self {
            Cores::One => 1,
            Cores::All => {
                // Asked once: the answer reads the cgroup's files each time.
                static ALL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
                *ALL.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()).min(8))
            }
        }
    }
}

/// Walks a tree (honouring `.gitignore`) once, on every core.
pub fn walk(root: &Path, settings: &Settings) -> Walked {
    walk_on(root, settings, &[], Cores::All)
}

/// An entry of a repository that is not on the disk a walk reads (see [`walk_with`]): its path
/// relative to the root, with `/` between its names, and whether it is a directory.
pub type Unwritten = (String, bool);

/// [`walk`], with the repository's listing (what Copilot's and Cursor's globs are matched
/// against) holding `unwritten` too: entries `diff` leaves out of its skeletons because no
/// agent reads their text.
pub fn walk_with(root: &Path, settings: &Settings, unwritten: &[Unwritten]) -> Walked {
    walk_on(root, settings, unwritten, Cores::All)
}

pub(super) fn walk_on(root: &Path, settings: &Settings, unwritten: &[Unwritten], cores: Cores) -> Walked {
    let names = checked_names(settings, &agents::AgentEnv::from_process());
    // What the repository's configuration leaves out is walked for the listing (an agent's
    // patterns match its files, as the real agent's do), and left out of what is checked once
    // the walk has found every configuration file (see `Walked::finish`).
    let builder = || crate::chain::confine::walker(root, move |e| e.file_name() != ".git");
    if cores == Cores::One {
        let mut w = Walked::empty();
        let mut listing = agents::RepoListing::of(root);
        for entry in builder().build() {
            w.visit(root, &names, listing.as_mut(), entry);
        }
        return w.finish(root, listing, unwritten);
    }
    let (tx, rx) = std::sync::mpsc::channel::<(Walked, Option<agents::RepoListing>)>();
    // One part per thread of the walk, each sent back when its thread is done.
    struct Part {
        walked: Walked,
        listing: Option<agents::RepoListing>,
        tx: std::sync::mpsc::Sender<(Walked, Option<agents::RepoListing>)>,
    }
    impl Drop for Part {
        fn drop(&mut self) {
            let part = (std::mem::replace(&mut self.walked, Walked::empty()), self.listing.take());
            let _ = self.tx.send(part);
        }
    }
    let listing = agents::RepoListing::of(root);
    builder().build_parallel().run(|| {
        let mut part =
            Part { walked: Walked::empty(), listing: listing.as_ref().map(|l| l.empty_like()), tx: tx.clone() };
        let names = &names;
        Box::new(move |entry| {
            part.walked.visit(root, names, part.listing.as_mut(), entry);
            ignore::WalkState::Continue
        })
    });
    drop(tx);
    let mut w = Walked::empty();
    let mut listing = listing;
    for (part, part_listing) in rx {
        w.merge(part);
        listing = match (listing, part_listing) {
            (Some(mut l), Some(p)) => {
                l.merge(p);
                Some(l)
            }
            (l, _) => l,
        };
    }
    // The parts come in the order their threads end: the walk's answer does not depend on it.
    w.unreadable.sort_by(|a, b| a.path.cmp(&b.path));
    w.warnings.sort();
    w.finish(root, listing, unwritten)
}

impl Walked {
    /// The walk of `root` with its listing of the repository, which names `unwritten` too; what
    /// the configuration files (`root`'s and those found below it) leave out is dropped from
    /// what is checked, but stays in the listing.
    fn finish(mut self, root: &Path, mut listing: Option<agents::RepoListing>, unwritten: &[Unwritten]) -> Self {
        if let Some(l) = listing.as_mut() {
            for (rel, is_dir) in unwritten {
                l.add_unwritten(rel, *is_dir);
            }
        }
        self.repo = listing.map(agents::RepoIndex::from);
        let excluded = crate::chain::config::Exclusions::with_nested(
            root,
            self.configs.iter().map(|(d, f)| (d.as_path(), f.as_path())),
        );
        if !excluded.is_empty() {
            let out = |p: &Path, dir: bool| p != root && excluded.excludes(p, dir);
            let out_as_is = |p: &Path| p != root && excluded.excludes_as_found(p);
            self.dirs.retain(|d| !out(d, true));
            self.packages.retain(|d| !out(d, true));
            self.names.retain(|n| !out_as_is(&root.join(n)));
            self.unreadable.retain(|f| !out_as_is(&f.path));
            self.warnings.retain(|(_, path)| !path.as_deref().is_some_and(out_as_is));
            self.configs.retain(|d, _| !out(d, true));
        }
        self
    }

    fn empty() -> Self {
        Walked {
            dirs: BTreeSet::new(),
            names: BTreeSet::new(),
            configs: BTreeMap::new(),
            packages: BTreeSet::new(),
            unreadable: Vec::new(),
            warnings: Vec::new(),
            repo: None,
        }
    }

    /// Takes in one entry of the walk of `root`.
    fn visit(
        &mut self,
        root: &Path,
        names: &BTreeSet<String>,
        listing: Option<&mut agents::RepoListing>,
        entry: Result<ignore::DirEntry, ignore::Error>,
    ) {
        match entry {
            Ok(e) => {
                if let Some(l) = listing {
                    l.add(&e);
                }
                let Some(name) = e.file_name().to_str() else { return };
                let detected = !crate::chain::targets::detect([name]).0.is_empty();
                if detected && crate::chain::targets::counts(root, e.path(), name) {
                    // By its path, which detection names.
                    self.names.insert(e.path().strip_prefix(root).map_or_else(|_| name.to_string(), paths::slash_join));
                }
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                if !is_dir
                    && crate::chain::config::CONFIG_NAMES.contains(&name)
                    && let Some(parent) = e.path().parent()
                {
                    self.add_config(paths::normalize(parent), e.path().to_path_buf());
                }
                if !is_dir
                    && (names.contains(name) || detected)
                    && let Some(parent) = e.path().parent()
                {
                    self.dirs.insert(paths::normalize(parent));
                }
                if !is_dir
                    && is_manifest(name)
                    && let Some(parent) = e.path().parent()
                    && parent.strip_prefix(root).is_ok_and(startable)
                {
                    self.packages.insert(paths::normalize(parent));
                }
            }
            Err(e) => match (error_path(&e), e.io_error()) {
                (Some(path), Some(io)) => {
                    // The system's words, without the walker's wrapping.
                    let text = io.to_string();
                    let why = text.rsplit_once(": ").map_or(text.as_str(), |(_, w)| w);
                    self.unreadable.push(Finding {
                        path: path.to_path_buf(),
                        code: Code::UnreadableDirectory,
                        span: Span::FirstLine,
                        message: format!(
                            "cannot read this directory ({why}): the instruction files in it are not checked"
                        ),
                        related: None,
                        agent: None,
                        fix: None,
                    })
                }
                (path, _) => self.warnings.push((format!("skipped: {e}"), path.map(Path::to_path_buf))),
            },
        }
    }

    /// A configuration file met in `dir`: the first name of CONFIG_NAMES wins, as `find_config`
    /// looks, whichever the walk met first.
    fn add_config(&mut self, dir: PathBuf, file: PathBuf) {
        let first = file.file_name().is_some_and(|n| n == crate::chain::config::CONFIG_NAMES[0]);
        let kept = self.configs.entry(dir).or_insert_with(|| file.clone());
        if first {
            *kept = file;
        }
    }

    /// Takes in what another thread of the same walk found.
    fn merge(&mut self, other: Walked) {
        self.dirs.extend(other.dirs);
        self.names.extend(other.names);
        self.packages.extend(other.packages);
        for (dir, file) in other.configs {
            self.add_config(dir, file);
        }
        self.unreadable.extend(other.unreadable);
        self.warnings.extend(other.warnings);
    }
}
