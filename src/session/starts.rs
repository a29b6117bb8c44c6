//! Where agents start in a tree, decided once for `check`, `diff` and the server's diagnostics.
//!
//! People start an agent at the repository's root, in a package, or in whatever folder their
//! terminal is in. The places judged are: the tree's root; every folder that holds an
//! instruction file or an agent's folder (the *starts*, where each agent's view is worked out);
//! every package root (a folder with a project manifest: `Cargo.toml`, `package.json`, …); and
//! the folders a repository names in `instructions-lsp.toml` (`starts = ["services/*"]`). Below
//! each start, any other folder is judged as one class: an agent started in a folder without
//! files of its own gets the view of its nearest start, except where its rules depend on the
//! folder it starts in (Claude Code's imports from outside it, see
//! [`agents::bounded_by_start`]). Then one view, from one member of the class, stands for all
//! of them; no view is worked out per folder.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::chain::agents::{self, AgentProfile, AgentView};
use crate::chain::settings::Settings;
use crate::paths;

use super::walk::{Configured, Selection, Walked};
pub use super::walk::{MANIFESTS, is_manifest, manifest_globs, startable};

/// Why a folder without files of its own is a place of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// It holds a project manifest.
    PackageRoot,
    /// `starts` in `instructions-lsp.toml` names it.
    Named,
}

/// Where agents start in a walked tree, and which agents (see the module's documentation).
pub struct Starts {
    /// The tree's project root (the tree's root when the project is outside it).
    pub project: PathBuf,
    /// Where each agent's view is worked out: the tree's root and every folder with files of
    /// its own (one inside an agent's configuration folder stands for the folder that holds it).
    pub dirs: BTreeSet<PathBuf>,
    /// Package roots and named folders, whether or not they hold files of their own.
    pub places: BTreeMap<PathBuf, Kind>,
    /// The places without files of their own below each start of `dirs` (their nearest).
    members: BTreeMap<PathBuf, Vec<(PathBuf, Kind)>>,
    runs: Agents,
}

impl Starts {
    /// The agents started in `dir` (any directory of the tree) run as.
    pub fn agents_at(&self, dir: &Path) -> &[AgentProfile] {
        self.runs.at(dir)
    }

    /// Whether `dir` is a package root or a named start: a place where people start agents even
    /// without files of an agent there.
    pub fn is_place(&self, dir: &Path) -> bool {
        self.places.contains_key(dir)
    }

    /// The configurations below the tree's root that decide for the folders below them.
    pub fn configured(&self) -> &[Configured] {
        &self.runs.configured
    }

    /// Configurations below the tree's root that cannot be used.
    pub fn config_errors(&self) -> &[String] {
        &self.runs.errors
    }

    /// The folders below `start` where `view` (its agent's view there) does not hold, as one
    /// class: `None` when the view holds in every folder below (the usual case), or when no
    /// folder below is a place without files of its own.
    pub fn class(&self, start: &Path, view: &AgentView) -> Option<Class> {
        let bounded = agents::bounded_by_start(view);
        if bounded.is_empty() {
            return None;
        }
        // A folder that holds a file the view imports loads it when started there: judged
        // apart, on its own.
        let holds_import = |dir: &Path| bounded.iter().any(|f| f.starts_with(dir));
        let members = self.members.get(start).map(Vec::as_slice).unwrap_or_default();
        type Places<'a> = Vec<&'a (PathBuf, Kind)>;
        let (apart, rest): (Places, Places) = members.iter().partition(|(dir, _)| holds_import(dir));
        let count = |kind: Kind| rest.iter().filter(|(_, k)| *k == kind).count();
        let example = match rest.first() {
            Some((dir, _)) => Some(dir.clone()),
            None => plain_folder(start, |d| self.dirs.contains(d) || holds_import(d)),
        }?;
        Some(Class {
            start: start.to_path_buf(),
            example,
            package_roots: count(Kind::PackageRoot),
            named: count(Kind::Named),
            apart: apart.into_iter().map(|(d, _)| d.clone()).collect(),
            bounded: bounded.into_iter().map(Path::to_path_buf).collect(),
        })
    }
}

/// Where agents start in a checked tree, as an editor's sidebar and a client show it: how many
/// places of each kind, and each class of folders where an agent misses what its start gets.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The folders below the tree's root with files of their own: with the root, where views
    /// are worked out.
    pub with_files: usize,
    /// Package roots and folders named in `starts` without files of their own.
    pub package_roots: usize,
    pub named: usize,
    pub classes: Vec<ClassSaid>,
}

/// One class of folders (see [`Class`]) for one agent, and the files it misses there, each with
/// the sentence `check` says about it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassSaid {
    pub profile: String,
    /// The agent's name for people ("Claude Code").
    pub name: String,
    /// The folders, in words: "any folder below `.` without its own `CLAUDE.md` (such as …)".
    pub folders: String,
    /// The start they are below and the folder that stands for them, named from the project root.
    pub start: String,
    pub example: String,
    pub package_roots: usize,
    pub named: usize,
    pub misses: Vec<Missed>,
}

/// A file a class of folders misses, and `check`'s finding about it there.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Missed {
    pub uri: String,
    pub path: String,
    pub message: String,
}

impl Starts {
    /// The summary of these places, with the `classes` a check found.
    pub fn summary(&self, classes: Vec<ClassSaid>) -> Summary {
        let without_files =
            |kind: Kind| self.places.iter().filter(|(d, k)| **k == kind && !self.dirs.contains(*d)).count();
        Summary {
            // The tree's root is always one of `dirs`.
            with_files: self.dirs.len().saturating_sub(1),
            package_roots: without_files(Kind::PackageRoot),
            named: without_files(Kind::Named),
            classes,
        }
    }
}

/// The name of an agent's own instruction file, as a class of folders "without its own" says it:
/// its first candidate (`AGENTS.md`), else its first layer's (Claude Code's `CLAUDE.md`).
pub fn own_file(p: &AgentProfile) -> &str {
    match p.candidates.first() {
        Some(c) => c,
        None => p.layers.first().map_or(p.name, |l| l.path.rsplit('/').next().unwrap_or(l.path)),
    }
}

/// The folders below a start where one agent's view differs from the start's (see
/// [`Starts::class`]): every folder below without files of its own, but those `apart`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    /// The start they are below.
    pub start: PathBuf,
    /// The folder whose view stands for the class: a package root, else a named start, else
    /// any folder.
    pub example: PathBuf,
    /// How many package roots and named starts the class holds (the example among them).
    pub package_roots: usize,
    pub named: usize,
    /// Places below the start that hold a file the start's view imports: each judged on its own.
    pub apart: Vec<PathBuf>,
    /// The files the start's view gets only because it starts there (see
    /// [`agents::bounded_by_start`]): those the class misses outside its folders.
    pub bounded: Vec<PathBuf>,
}

impl Class {
    /// The class in words, for a sentence "Claude Code, started in …, does not load": "any
    /// folder below `.` without its own `CLAUDE.md` (such as `crates/uv` and 41 other package
    /// roots)". `shown` names a folder; `own` is the agent's own file name.
    pub fn words(&self, shown: impl Fn(&Path) -> String, own: &str) -> String {
        class_words(&shown(&self.start), &shown(&self.example), self.package_roots, self.named, own, |n| {
            format!("`{n}`")
        })
    }
}

/// A class of folders in words (see [`Class::words`]), each name set by `code`: every edge says
/// a class the same way.
pub fn class_words(
    below: &str,
    example: &str,
    package_roots: usize,
    named: usize,
    own: &str,
    code: impl Fn(&str) -> String,
) -> String {
    let first = code(example);
    let such_as = match (package_roots, named) {
        (0, 0) => first,
        (1, _) => format!("the package root {first}"),
        (n, _) if n > 1 => format!("{first} and {} other package roots", n - 1),
        (_, 1) => format!("{first}, named in `starts`"),
        (_, n) => format!("{first} and {} other folders named in `starts`", n - 1),
    };
    format!("any folder below {} without its own {} (such as {such_as})", code(below), code(own))
}

/// The first folder directly below `start` (by name) where someone may start an agent and that
/// `skip` does not leave out, honouring `.gitignore`: `None` when there is none.
fn plain_folder(start: &Path, skip: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    let excluded = crate::chain::config::Exclusions::of(start);
    let mut walk = crate::chain::confine::walker(start, move |e| {
        e.file_name() != "node_modules" && (e.depth() == 0 || !excluded.excludes(e.path(), true))
    });
    walk.hidden(true).max_depth(Some(1)).follow_links(false);
    crate::chain::confine::entries(&mut walk, usize::MAX)
        .into_iter()
        .filter(|e| e.depth() == 1 && e.file_type().is_some_and(|t| t.is_dir()))
        .map(|e| e.into_path())
        .find(|d| !skip(d))
}

/// The places of a walked tree where agents start (see [`Starts`]).
pub fn starts(root: &Path, walked: &Walked, settings: &Settings, selection: &Selection) -> Starts {
    let runs = Agents::of(root, &walked.configs, selection, settings, &agents::AgentEnv::from_process());
    let project = crate::chain::discover::project_root(root, &settings.root_markers);
    let project = if root.starts_with(&project) { project } else { root.to_path_buf() };
    // A directory in a configuration folder stands for the directory that holds the folder:
    // `.github/instructions` is read by an agent started beside `.github`.
    // Measured from the project root, so that checking `.claude/skills/x` itself starts no agent
    // inside `.claude` either.
    let mut dirs: BTreeSet<PathBuf> = walked.dirs.iter().map(|d| start_of(&project, d)).collect();
    // The tree's root is where `check D` starts one, files or not (beside the agent's folder
    // that holds it, for a tree inside one).
    dirs.insert(start_of(&project, root));
    let mut places: BTreeMap<PathBuf, Kind> = BTreeMap::new();
    for dir in named(root, &project, &walked.configs) {
        places.insert(dir, Kind::Named);
    }
    for dir in &walked.packages {
        places.entry(dir.clone()).or_insert(Kind::PackageRoot);
    }
    let mut members: BTreeMap<PathBuf, Vec<(PathBuf, Kind)>> = BTreeMap::new();
    for (dir, kind) in &places {
        if dirs.contains(dir) {
            continue;
        }
        if let Some(start) = dir.ancestors().skip(1).find(|a| dirs.contains(*a)) {
            members.entry(start.to_path_buf()).or_default().push((dir.clone(), *kind));
        }
    }
    // Package roots first, each kind by path: the first is the class's example.
    for list in members.values_mut() {
        list.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    }
    Starts { project, dirs, places, members, runs }
}

/// The most entries the patterns of `starts` are matched against, for all the tree's
/// configuration files together.
const NAMED_ENTRIES: usize = 100_000;

/// The folders that `starts` names in the tree's configuration files (each pattern relative to
/// its own file's folder), and in the nearest one above the tree's root inside its `project`:
/// only folders of the tree are listed, and none in a hidden folder or `node_modules`.
fn named(root: &Path, project: &Path, configs: &BTreeMap<PathBuf, PathBuf>) -> BTreeSet<PathBuf> {
    let mut files: Vec<(PathBuf, PathBuf)> = configs.iter().map(|(d, f)| (d.clone(), f.clone())).collect();
    if !configs.contains_key(root)
        && let Some(above) = crate::chain::config::find_config(root)
        && let Some(dir) = above.parent().filter(|d| d.starts_with(project))
    {
        files.push((dir.to_path_buf(), above));
    }
    let mut out = BTreeSet::new();
    let mut budget = NAMED_ENTRIES;
    for (dir, file) in files {
        // One that cannot be used is reported where the agents are chosen.
        let Ok(config) = crate::chain::config::load_config(&file) else { continue };
        let mut set = globset::GlobSetBuilder::new();
        for p in &config.starts {
            if let Ok(glob) = crate::chain::config_keys::start_pattern(p) {
                set.add(glob);
            }
        }
        let Ok(set) = set.build() else { continue };
        if set.is_empty() || budget == 0 {
            continue;
        }
        let depth = match config.starts.iter().any(|p| p.contains("**")) {
            true => None,
            false => config.starts.iter().map(|p| p.trim_end_matches('/').split('/').count()).max(),
        };
        // From the tree's root when the file is above it: nothing outside the tree is listed.
        let from = if root.starts_with(&dir) { root.to_path_buf() } else { dir.clone() };
        let below = from.strip_prefix(&dir).map(|r| r.components().count()).unwrap_or(0);
        // What the configuration files from `from` up, and those found below it, leave out.
        let below_from = configs.iter().filter(|(d, _)| d.starts_with(&from));
        let excluded =
            crate::chain::config::Exclusions::with_nested(&from, below_from.map(|(d, f)| (d.as_path(), f.as_path())));
        let mut walk = crate::chain::confine::walker(&from, move |e| {
            let dir = e.file_type().is_some_and(|t| t.is_dir());
            e.file_name() != "node_modules" && (e.depth() == 0 || !excluded.excludes(e.path(), dir))
        });
        walk.hidden(true).follow_links(false).max_depth(depth.map(|d| d.saturating_sub(below)));
        for e in crate::chain::confine::entries(&mut walk, budget) {
            budget -= 1;
            if !e.file_type().is_some_and(|t| t.is_dir()) {
                continue;
            }
            let Ok(rel) = e.path().strip_prefix(&dir) else { continue };
            if !rel.as_os_str().is_empty() && startable(rel) && set.is_match(rel) {
                out.insert(paths::normalize(e.path()));
            }
        }
    }
    out
}

/// The agents each start runs with: the tree's selection, and below each nearer
/// `instructions-lsp.toml` in the tree, that file's settings (and its `agents`, when the
/// repository chose the agents): a package's configuration holds in the package whether the
/// package or the whole repository is checked.
struct Agents {
    /// The tree's agents first, then one set per configuration below the tree's root.
    sets: Vec<Vec<AgentProfile>>,
    /// The directory of each configuration below the root, with its set.
    below: BTreeMap<PathBuf, usize>,
    configured: Vec<Configured>,
    /// Configurations below the root that cannot be used.
    errors: Vec<String>,
}

impl Agents {
    fn of(
        root: &Path,
        configs: &BTreeMap<PathBuf, PathBuf>,
        selection: &Selection,
        settings: &Settings,
        env: &agents::AgentEnv,
    ) -> Self {
        let set = |names: &[String], overrides: &dyn Fn(&str) -> agents::Overrides| -> Vec<AgentProfile> {
            names.iter().filter_map(|n| agents::profile(n, env, &overrides(n))).collect()
        };
        let mut sets = vec![set(&selection.profiles, &|n| selection.overrides(n, settings))];
        let mut below = BTreeMap::new();
        let mut configured = Vec::new();
        let mut errors = Vec::new();
        for dir in configs.keys().filter(|dir| dir.as_path() != root && dir.starts_with(root)) {
            // What decides there is what decides when `dir` itself is checked: its file, merged
            // with those above it up to the project root.
            match crate::chain::config::resolved_config(dir) {
                Ok(Some(config)) => {
                    let (names, named) = match (&config.agents, selection.targeted) {
                        (Some(named), true) => (named.clone(), true),
                        _ => (selection.profiles.clone(), false),
                    };
                    // Where the agents are named, else the package's own file (its settings).
                    let own = configs.get(dir).cloned().unwrap_or_else(|| config.path.clone());
                    let config_path = if named { config.path.clone() } else { own };
                    below.insert(dir.clone(), sets.len());
                    sets.push(set(&names, &|n| {
                        super::project::merged(config.overrides(n), Some(&settings.agent_sets))
                    }));
                    configured.push(Configured { dir: dir.clone(), config: config_path, agents: names, named });
                }
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
        Self { sets, below, configured, errors }
    }

    /// The agents started in `dir` run as: those of the nearest configuration on the way up to the
    /// tree's root.
    fn at(&self, dir: &Path) -> &[AgentProfile] {
        let nearest = dir.ancestors().find_map(|d| self.below.get(d));
        &self.sets[nearest.copied().unwrap_or(0)]
    }
}

/// Where an agent reading the files of `dir` is started: `dir` itself, or, inside an agent's
/// configuration folder, the directory that holds that folder.
fn start_of(root: &Path, dir: &Path) -> PathBuf {
    let Ok(rel) = dir.strip_prefix(root) else { return dir.to_path_buf() };
    let mut start = root.to_path_buf();
    for c in rel.components() {
        if c.as_os_str().to_str().is_some_and(|n| agents::CONFIG_FOLDERS.contains(&n)) {
            break;
        }
        start.push(c);
    }
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder named in the root's `starts` that a package's own file leaves out (`exclude`) is
    /// no place agents start.
    #[test]
    fn a_packages_exclude_leaves_out_folders_the_root_names_in_starts() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for d in [".git", "pkg/fixtures", "pkg/real"] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        std::fs::write(root.join("instructions-lsp.toml"), "starts = [\"pkg/*\"]\n").expect("write");
        std::fs::write(root.join("pkg/instructions-lsp.toml"), "exclude = [\"fixtures/\"]\n").expect("write");
        let configs: BTreeMap<PathBuf, PathBuf> =
            [root, &root.join("pkg")].into_iter().map(|d| (d.to_path_buf(), d.join("instructions-lsp.toml"))).collect();
        assert_eq!(named(root, root, &configs), BTreeSet::from([root.join("pkg/real")]));
    }
}
