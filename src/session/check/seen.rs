//! What each agent does with each file over every view of a checked tree.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::chain::lint::Finding;

/// What one agent does with one file over every view of the tree.
#[derive(Default)]
pub(super) struct Seen {
    /// Some view started in the tree gets it (whole or cut).
    pub(super) at_start: bool,
    /// Where the first such view was started, when not at the tree's root.
    pub(super) started_in: Option<PathBuf>,
    /// The view started at the tree's root gets it.
    pub(super) from_root: bool,
    /// The first directory whose read makes the agent load it.
    pub(super) on_read: Option<PathBuf>,
    /// How the agent treats it when nothing has loaded it yet (a rule waiting for a read, …).
    pub(super) how: Option<String>,
    /// How a rule loaded at start attaches (a wildcard pattern), in words.
    pub(super) attaches: Option<String>,
    /// Findings, with the labels of the directories that made each.
    pub(super) findings: Vec<(Finding, Vec<String>)>,
}

/// [`Seen`] of each file (by its path's bytes: every file of every view is looked up, and a
/// path's order is only needed once, at the end) and agent.
#[derive(Default)]
pub(super) struct SeenFiles {
    /// Where each path's entries are in `by_agent`.
    index: HashMap<std::ffi::OsString, usize, foldhash::fast::RandomState>,
    by_agent: Vec<BTreeMap<&'static str, Seen>>,
}

impl SeenFiles {
    /// The file's entry for `agent`, made when new.
    pub(super) fn at(&mut self, path: &Path, agent: &'static str) -> &mut Seen {
        // (Looked up before it is made: most lookups find it, and `entry` would copy the path.)
        let i = match self.index.get(path.as_os_str()) {
            Some(&i) => i,
            None => {
                self.index.insert(path.as_os_str().to_owned(), self.by_agent.len());
                self.by_agent.push(BTreeMap::new());
                self.by_agent.len() - 1
            }
        };
        self.by_agent[i].entry(agent).or_default()
    }

    /// Every entry, in the order of path and agent.
    pub(super) fn into_sorted(self) -> Vec<((PathBuf, &'static str), Seen)> {
        let mut paths = vec![std::ffi::OsString::new(); self.by_agent.len()];
        for (path, i) in self.index {
            paths[i] = path;
        }
        let mut out: Vec<_> = paths
            .into_iter()
            .zip(self.by_agent)
            .flat_map(|(path, by_agent)| {
                let path = PathBuf::from(path);
                by_agent.into_iter().map(move |(agent, s)| ((path.clone(), agent), s))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

impl Seen {
    pub(super) fn add(&mut self, f: Finding, label: &str) {
        match self.findings.iter_mut().find(|(g, _)| g.code == f.code && g.span == f.span && g.message == f.message) {
            Some((_, labels)) => labels.push(label.to_string()),
            None => self.findings.push((f, vec![label.to_string()])),
        }
    }
}
