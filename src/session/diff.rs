//! What a change does to every agent: the one answer behind `instructions-lsp diff BASE [HEAD]`.
//!
//! Each side (a git revision read from the object database, or the working tree) is laid out as
//! a skeleton in a temporary directory (in memory where the system has one): every file whose
//! text an agent or this tool may read (instruction files, rules, settings, ignore files,
//! Markdown an import may name), with its text, and the directories that hold them. The other
//! files and directories are not written: the side's listing of the repository names them, so
//! that Copilot's `applyTo` and Cursor's `globs` still match them. Nothing of the
//! repository is checked out or written. Both skeletons are then checked as `check` checks a
//! tree, and each agent's view from each place where an agent starts on either side (see
//! [`super::starts`]; a folder the other side holds but left out of its skeleton is made there,
//! and each class of folders is compared through its example folder) is compared: files that enter or leave it, sizes and cuts
//! that move, rules that attach elsewhere, findings that appear or disappear. Directories that
//! change the same way are grouped, so that a monorepo reads in a few lines.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::chain::agents::{self, AgentView};
use crate::chain::lint::{self, Finding};
use crate::chain::settings::Settings;
use crate::chain::source::read_prefix;
use crate::chain::targets::Targets;

use super::check::{self, Selection};

mod answer;
mod compare;
mod follow;
mod mentions;
mod objects;
mod revision;
mod scratch;
mod skeleton;
pub use answer::*;
use compare::{Checked, rel, summary, unrooted};
pub use revision::Revision;
use scratch::{LayOut, in_scratch, scratch_places};
use skeleton::{kept_names, materialize};

/// One side, checked.
struct Side {
    root: PathBuf,
    targets: Option<Targets>,
    walked: Option<check::Walked>,
    explicit: bool,
    warnings: Vec<String>,
    /// The revision's directories the skeleton left out (they hold nothing kept), with `/`.
    unwritten_dirs: BTreeSet<String>,
}

/// Why `spec` names a range or a set of commits rather than one revision (`A..B`, `A...B`,
/// `HEAD^!`, `HEAD^@`, `HEAD^-`), which git's revision syntax allows and one side of a
/// comparison cannot be; `None` for a single revision.
fn range_words(spec: &str) -> Option<&'static str> {
    if spec.contains("..") {
        Some("a range of commits, not one revision")
    } else if spec.ends_with("^!") || spec.ends_with("^@") || spec.contains("^-") {
        Some("a set of commits (git's `^!`, `^@` or `^-`), not one revision")
    } else {
        None
    }
}

/// The repository holding `start` when its objects are named by SHA-256
/// (`extensions.objectFormat`), which the git library here does not read.
fn sha256_repository(start: &Path) -> Option<PathBuf> {
    let dir = start.ancestors().find(|d| d.join(".git").exists())?;
    let config = crate::chain::agents::read::read_capped(&dir.join(".git/config"), 64 * 1024).ok()?.0;
    let text = String::from_utf8_lossy(&config).to_ascii_lowercase();
    text.lines()
        .any(|l| {
            let l: String = l.split(['#', ';']).next().unwrap_or("").chars().filter(|c| !c.is_whitespace()).collect();
            l == "objectformat=sha256"
        })
        .then(|| dir.to_path_buf())
}

/// Compares what the agents get on `base` and `head` of the git repository holding `start`.
/// `explicit`: the profiles of `settings` were named on the command line (else each side's
/// targets decide, both sides compared for the agents of either).
pub fn diff(
    start: &Path,
    base: &Revision,
    head: &Revision,
    settings: &Settings,
    explicit: bool,
) -> Result<Diff, String> {
    for rev in [base, head] {
        if let Revision::Commit(spec) = rev
            && let Some(why) = range_words(spec)
        {
            return Err(format!("{spec}: {why}; diff compares two revisions: `diff BASE HEAD`"));
        }
    }
    let repo = gix::discover(start).map_err(|e| match sha256_repository(start) {
        Some(dir) => format!(
            "{}: a SHA-256 git repository, which diff cannot read yet (SHA-1 repositories only); check, effective and compare work in it",
            dir.display()
        ),
        None => format!("{}: not in a git repository ({e})", start.display()),
    })?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| "the repository has no working tree (a bare repository); run diff in a clone".to_string())?;
    let workdir = std::fs::canonicalize(workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
    let keep = kept_names(settings);
    // Both sides laid out and walked at once: making the skeletons' files and directories is
    // mostly waiting on the file system.
    // (The other thread opens the repository again: gix's handles stay on the thread that made
    // them.)
    let git_dir = repo.git_dir().to_path_buf();
    // What one side reads of the object database the other finds read.
    let objects = objects::Objects::default();
    let lay_out = |repo: &gix::Repository, rev: &Revision, root: &Path| -> Result<Side, LayOut> {
        let laid = materialize(repo, &objects, &workdir, rev, root, &keep)?;
        let walked = Some(check::walk_with(root, settings, &laid.unwritten));
        let unwritten_dirs = laid.unwritten.iter().filter(|(_, is_dir)| *is_dir).map(|(d, _)| d.clone()).collect();
        Ok(Side { root: root.to_path_buf(), targets: None, walked, explicit, warnings: laid.warnings, unwritten_dirs })
    };
    let (_tmp, mut sides) = in_scratch(&scratch_places(&workdir, &git_dir), |tmp| {
        let tmp_root = std::fs::canonicalize(tmp).map_err(|e| LayOut::Scratch(format!("{}: {e}", tmp.display())))?;
        // Two names of one length: the agents' texts name the paths, and equal lengths keep the
        // sides' byte counts comparable.
        let (base_root, head_root) = (tmp_root.join("base"), tmp_root.join("head"));
        std::thread::scope(|scope| {
            let other = scope.spawn(|| {
                let repo = gix::open(&git_dir).map_err(|e| format!("{}: {e}", git_dir.display()))?;
                lay_out(&repo, head, &head_root)
            });
            let first = lay_out(&repo, base, &base_root);
            let second = other.join().unwrap_or_else(|_| {
                Err(LayOut::Other(format!("{}: laying out its files failed unexpectedly", head.label())))
            });
            Ok(vec![first?, second?])
        })
    })?;
    for (side, rev) in sides.iter_mut().zip([base, head]) {
        let names = side.walked.as_ref().map(|w| w.names.clone()).unwrap_or_default();
        let targets = crate::session::project::targets_of(&side.root, &settings.root_markers, Some(&names));
        side.targets = match (targets, explicit) {
            (Ok(t), _) => Some(t),
            (Err(_), true) => None,
            (Err(e), false) => return Err(format!("{}: {}", rev.label(), unrooted(&e, &side.root))),
        };
    }
    let profiles: Vec<String> = if explicit {
        settings.profiles.clone()
    } else {
        let either: BTreeSet<&str> =
            sides.iter().flat_map(|s| s.targets.iter().flat_map(|t| t.agents.iter().map(String::as_str))).collect();
        agents::NAMES.iter().filter(|n| either.contains(**n)).map(|n| n.to_string()).collect()
    };
    let checked_for = CheckedFor { base: sides[0].describe(&profiles), head: sides[1].describe(&profiles) };
    let warnings: Vec<String> = sides.iter_mut().flat_map(|s| std::mem::take(&mut s.warnings)).collect();
    let Ok([base_side, head_side]) = <[Side; 2]>::try_from(sides) else {
        return Err("a diff has two sides".to_string());
    };
    // Each side in a run of its own: what one side's views learn of the file system stays
    // theirs, and its views search the side's listing (which names the files not written).
    let (base_cache, head_cache) = (Default::default(), Default::default());
    let run =
        |side: Side, cache, other| agents::with_repo_cache(cache, || side.run(settings, &profiles, &workdir, other));
    let none = HashMap::new();
    let (mut base_out, base_starts) = run(base_side, &base_cache, &none)?;
    let lengths = base_out.kept.iter().map(|((dir, agent), v)| ((rel(&base_out.root, dir), *agent), v.bytes)).collect();
    let (mut head_out, head_starts) = run(head_side, &head_cache, &lengths)?;
    // The same places on both sides: where agents start on either, each place judged apart, and
    // each class of folders either side has (the head's words winning).
    let every: BTreeSet<String> =
        [&base_out.dirs, &head_out.dirs, &base_out.apart, &head_out.apart].into_iter().flatten().cloned().collect();
    let mut classes = std::mem::take(&mut base_out.classes);
    classes.extend(std::mem::take(&mut head_out.classes));
    classes.retain(|(dir, _), _| !every.contains(dir));
    // The engine's own profile is no agent: its views are asked of it apart.
    let engine = profiles.iter().any(|p| p == settings.profile.name()).then_some(settings);
    base_out.views = agents::with_repo_cache(&base_cache, || base_out.views_of(&base_starts, &every, &classes, engine));
    head_out.views = agents::with_repo_cache(&head_cache, || head_out.views_of(&head_starts, &every, &classes, engine));
    base_out.classes = classes;
    let mut out = compare::compare(&base_out, &head_out);
    out.base = base.label();
    out.head = head.label();
    out.agents = profiles;
    out.checked_for = checked_for;
    out.warnings = warnings;
    Ok(out)
}

impl Side {
    fn selection(&self, profiles: &[String]) -> Selection {
        Selection { profiles: profiles.to_vec(), targets: self.targets.clone(), targeted: !self.explicit }
    }

    fn describe(&self, profiles: &[String]) -> String {
        match &self.targets {
            Some(t) if !self.explicit && t.agents.is_empty() => {
                let names: Vec<&str> = profiles.iter().map(|p| agents::display_name(p)).collect();
                format!("no instruction file of an agent yet; compared for {} as on the other side", names.join(", "))
            }
            Some(t) if !self.explicit => {
                let mut line = t.describe("compare");
                let extra: Vec<&str> =
                    profiles.iter().filter(|p| !t.agents.contains(p)).map(|p| agents::display_name(p)).collect();
                if !extra.is_empty() {
                    line.push_str(&format!(" (compared for {} too, which the other side targets)", extra.join(", ")));
                }
                line
            }
            _ => {
                let names: Vec<&str> = profiles.iter().map(|p| profile_name(p)).collect();
                format!("comparing for {} (named on the command line)", names.join(", "))
            }
        }
    }

    /// Checks the side: its findings, and where and which agents start.
    fn run(
        mut self,
        settings: &Settings,
        profiles: &[String],
        workdir: &Path,
        other: &HashMap<(String, &'static str), usize>,
    ) -> Result<(Checked, super::starts::Starts), String> {
        let walked = self.walked.take().ok_or("the side was checked twice")?;
        let selection = self.selection(profiles);
        let starts = super::starts::starts(&self.root, &walked, settings, &selection);
        let dirs: BTreeSet<String> = starts.dirs.iter().map(|d| rel(&self.root, d)).collect();
        // Each view summed up as the check hands it over: kept whole, every agent's text from
        // every directory of both sides would be held at once.
        // (A text whose length differs from the other side's differs: it is not hashed.)
        let mut kept = BTreeMap::new();
        let (mut classes, mut apart) = (BTreeMap::new(), BTreeSet::new());
        let mut keep = |dir: &Path, agent: &'static str, view: &AgentView, class: Option<&super::starts::Class>| {
            let at = rel(&self.root, dir);
            let other = other.get(&(at.clone(), agent));
            let summed = summary(&self.root, workdir, view, |bytes| other.is_none_or(|&b| b == bytes));
            kept.insert((dir.to_path_buf(), agent), summed);
            match class {
                Some(c) => {
                    let profile = starts.agents_at(dir).iter().find(|p| p.name == agent);
                    let own = profile.map_or(agent, super::starts::own_file).to_string();
                    let below = rel(&self.root, &c.start);
                    classes.insert((at, agent), ClassOf { below, package_roots: c.package_roots, named: c.named, own });
                }
                None if !dirs.contains(&at) => drop(apart.insert(at)),
                None => {}
            }
        };
        let tree = check::check_walked_keeping(&self.root, walked, settings, &selection, &starts, &mut keep);
        if let Some(e) = tree.config_errors.first() {
            return Err(unrooted(e, &self.root));
        }
        // The findings come by path: each file is read once for all of its own.
        let mut text: Option<(&Path, Vec<u8>)> = None;
        let mut findings = Vec::with_capacity(tree.findings.len());
        for f in &tree.findings {
            if text.as_ref().is_none_or(|(p, _)| *p != f.path) {
                text = Some((&f.path, read_prefix(&f.path, settings.max_file_bytes)));
            }
            findings.push(self.found(f, text.as_ref().map_or(&[], |(_, b)| b)));
        }
        let checked = Checked {
            root: self.root.clone(),
            workdir: workdir.to_path_buf(),
            dirs,
            apart,
            classes,
            unwritten_dirs: self.unwritten_dirs,
            views: BTreeMap::new(),
            findings,
            kept,
        };
        Ok((checked, starts))
    }

    /// `f` as the diff says it; `bytes`: the text of its file.
    fn found(&self, f: &Finding, bytes: &[u8]) -> Found {
        let (start, _) = f.span.byte_range(bytes);
        let (line, column) = lint::line_col(bytes, start);
        Found {
            path: rel(&self.root, &f.path),
            line,
            column,
            severity: f.severity().name(),
            level: f.severity(),
            code: f.code.name(),
            agent: f.agent,
            message: unrooted(&f.message, &self.root),
        }
    }
}
