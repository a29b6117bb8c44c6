//! Loading: the user-global files, the project files, the files touches reach, then the budget
//! (Codex's, dsh-next's) or a whole read of every file with its imports, and the agent's join.
//! What an agent does its own way is a function value of its profile, called here unnamed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::chain::loader::find::{
    file_key, mark_linked_outside, pick_files, present, rule_files, touch_start, walk_dirs,
};
use crate::chain::model::profile::{AgentProfile, Budget, GlobalRule, Imports, Join, Nested, Order, Probe};
use crate::chain::model::view::{AgentFile, AgentView, Entry, Scope, Status};
use crate::chain::patterns::rule::{RuleMatcher, rule_base};
use crate::chain::repo::project::project_base;
use crate::chain::text::comments;
use crate::chain::text::front_matter::without_front_matter;
use crate::chain::text::imports;
use crate::chain::text::read::{self, READ_CAP, js_trim, read_into, read_string};
use crate::chain::words::size_words;

/// What the agent of `profile` loads working in `cwd`, after reading the `touched` files.
/// Every read is charged to one budget of [`read::VIEW_READ_CAP`] bytes.
pub fn load(profile: &AgentProfile, cwd: &Path, touched: &[PathBuf]) -> AgentView {
    let (mut view, repository) = crate::chain::repo::cache::searched(|| {
        read::with_budget(read::VIEW_READ_CAP, || load_within_budget(profile, cwd, touched))
    });
    view.repository = repository;
    view
}

fn load_within_budget(profile: &AgentProfile, cwd: &Path, touched: &[PathBuf]) -> AgentView {
    let cwd = crate::chain::repo::memo::real_path(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let base = project_base(&cwd);
    let mut files: Vec<AgentFile> = Vec::new();

    // User-global files.
    let mut globals = Vec::new();
    match profile.global_rule {
        GlobalRule::FirstNonEmpty => {
            for path in profile.global.iter().flatten() {
                if !present(Probe::Lstat, path) {
                    continue;
                }
                globals.push(AgentFile::new(path.clone(), Scope::Global, Status::Loaded));
                if read_string(path).is_ok_and(|t| !t.trim().is_empty()) {
                    break;
                }
            }
        }
        GlobalRule::All(probe) => {
            for path in profile.global.iter().flatten().filter(|p| present(probe, p)) {
                globals.push(AgentFile::new(path.clone(), Scope::Global, Status::Loaded));
            }
        }
        GlobalRule::Labelled => {
            for (i, path) in profile.global.iter().flatten().enumerate() {
                let label = profile.global_labels.get(i).copied();
                let found = if crate::chain::repo::memo::is_dir(path) {
                    rule_files(path, Scope::Global)
                } else if present(Probe::StatFile, path) {
                    vec![AgentFile::new(path.clone(), Scope::Global, Status::Loaded)]
                } else {
                    Vec::new()
                };
                for mut f in found {
                    f.label = label;
                    globals.push(f);
                }
            }
        }
        GlobalRule::ByPick => {}
        GlobalRule::FirstGroup => {
            for group in &profile.global {
                let found: Vec<&PathBuf> = group.iter().filter(|p| present(Probe::Exists, p)).collect();
                if !found.is_empty() {
                    globals.extend(found.into_iter().map(|p| AgentFile::new(p.clone(), Scope::Global, Status::Loaded)));
                    break;
                }
            }
        }
    }

    // Project files.
    let dirs = walk_dirs(&profile.root, &cwd);
    let root = dirs.first().cloned().unwrap_or_else(|| cwd.clone());
    let mut project = pick_files(profile, profile.pick, &dirs, Scope::Project);
    mark_linked_outside(&mut project, 0, &base);
    hide_fallbacks(profile, &mut project, 0);
    match profile.order {
        Order::RootFirst => {}
        Order::CwdFirst => {
            let (mut won, lost): (Vec<_>, Vec<_>) = project.into_iter().partition(|f| f.status != Status::Shadowed);
            won.reverse();
            won.extend(lost);
            project = won;
        }
        Order::Sorted => {
            let mut seen = HashSet::new();
            project.retain(|f| f.status == Status::Shadowed || file_key(&f.path).is_none_or(|k| seen.insert(k)));
            project.sort_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
        }
    }
    files.extend(globals);
    files.extend(project);

    // Files reached by touches: waiting rules they wake, and (with `Nested::Walk`) the files of
    // the directories on their way.
    if matches!(profile.nested, Nested::Walk { .. }) || files.iter().any(|f| f.status == Status::Waiting) {
        // Each waiting rule's globs, compiled once for all touches.
        let compiled: std::cell::RefCell<std::collections::HashMap<PathBuf, Option<std::sync::Arc<RuleMatcher>>>> =
            Default::default();
        for (n, t) in touched.iter().enumerate() {
            let t = crate::chain::repo::memo::real_path(t).unwrap_or_else(|_| t.clone());
            let reach = if profile.one_request { &root } else { &cwd };
            if !t.starts_with(reach) || t == *reach {
                continue;
            }
            let batch = u32::try_from(n + 1).unwrap_or(u32::MAX);
            let wakes = |f: &AgentFile| {
                f.status == Status::Waiting && {
                    let mut cache = compiled.borrow_mut();
                    let m = cache
                        .entry(f.path.clone())
                        .or_insert_with(|| crate::chain::repo::cache::matcher(profile.glob_style, &f.globs));
                    m.as_ref().is_some_and(|m| m.matches(&rule_base(&f.path, f.scope, &cwd), &t))
                }
            };
            // Claude Code's order for one read: the user's own rules that match, the files of
            // the directories between (each folder's waiting rules after its others), then the
            // matching rules of the directories loaded at start.
            let wake = |files: &mut Vec<AgentFile>, batch: u32, which: &dyn Fn(&AgentFile) -> bool| {
                wake(files, batch, profile.one_request, which)
            };
            wake(&mut files, batch, &|f| f.scope == Scope::Global && wakes(f));
            let Nested::Walk { pick, upto_root, deepest_first } = profile.nested else {
                wake(&mut files, batch, &|f| f.scope == Scope::Project && wakes(f));
                continue;
            };
            let Some(start) = touch_start(&t) else {
                wake(&mut files, batch, &|f| f.scope == Scope::Project && wakes(f));
                continue;
            };
            let stop = if upto_root { &root } else { &cwd };
            let mut walk: Vec<PathBuf> = start
                .ancestors()
                .take_while(|d| d.starts_with(stop) && (upto_root || *d != cwd.as_path()))
                .map(Path::to_path_buf)
                .collect();
            walk.reverse();
            let mut found = pick_files(profile, pick, &walk, Scope::Nested);
            if deepest_first {
                found.reverse();
            }
            let first_new = files.len();
            let same = |a: &AgentFile, b: &AgentFile| {
                a.path == b.path
                    || (profile.nested_by_identity && file_key(&a.path).is_some_and(|k| file_key(&b.path) == Some(k)))
            };
            for mut f in found {
                // Each file once (already loaded, or already met on an earlier touch), and never
                // the touched file itself; a rule met before waits for its own touch.
                if f.path == t {
                    continue;
                }
                if let Some(i) = files.iter().position(|k| same(k, &f)) {
                    if wakes(&files[i]) {
                        let mut woken = files.remove(i);
                        (woken.status, woken.batch) = (Status::Loaded, batch);
                        files.push(woken);
                    }
                    continue;
                }
                f.batch = batch;
                files.push(f);
            }
            mark_linked_outside(&mut files, first_new, &base);
            for f in files.iter_mut().skip(first_new).filter(|f| wakes(f)) {
                f.status = Status::Loaded;
            }
            hide_fallbacks(profile, &mut files, first_new);
            wake(&mut files, batch, &|f| f.scope == Scope::Project && wakes(f));
        }
    }

    if let Some(after) = profile.after_touches {
        after(profile, &root, &mut files);
    }

    let budget_words = match profile.budget {
        Budget::None => None,
        Budget::SharedRootFirst { max_bytes, .. } => Some(format!("{} shared budget", size_words(max_bytes))),
        Budget::Block { max_bytes, .. } => Some(format!("{} budget", size_words(max_bytes))),
    };
    let mut missing = Vec::new();
    let (files, parts) = match &profile.budget {
        Budget::SharedRootFirst { max_bytes, cut } => cut(&cwd, files, *max_bytes),
        Budget::Block { max_bytes, max_source_bytes, global_display, fit } => {
            fit(files, &root, global_display, *max_bytes, *max_source_bytes)
        }
        Budget::None => unbudgeted(profile, &cwd, files, &mut missing),
    };
    let text = parts.join("\n\n");
    let mut files = once_each(files);
    // A file that loses to another is never read, but its size is what a reader of the view
    // wants to see (not "0 of 0 bytes"); unless it leads out of the project, which nothing
    // measures.
    let inside =
        |f: &AgentFile| f.scope == Scope::Global || crate::chain::loader::find::outside(&f.path, &base).is_none();
    for f in files.iter_mut().filter(|f| f.status == Status::Shadowed && f.bytes == 0 && inside(f)) {
        f.bytes = crate::chain::repo::memo::stat(&f.path).map_or(0, |m| m.len);
    }
    let global_in_budget = matches!(profile.budget, Budget::Block { .. });
    let nothing = text.is_empty().then(|| crate::chain::loader::explain::why_nothing(profile));
    let (mut rule_problems, rule_reach) = crate::chain::loader::rules::problems(profile, &files, &base);
    rule_problems.extend(missing.into_iter().map(|m| crate::chain::loader::explain::missing_import(profile, m, &base)));
    AgentView {
        profile: profile.name,
        mirrors: profile.mirrors,
        files,
        text,
        nothing,
        parts,
        budget: budget_words,
        global_in_budget,
        import_boundary: match profile.imports {
            Imports::Listed => crate::chain::loader::explain::IMPORT_BOUNDARY_CWD,
            _ => "the project root",
        },
        rule_problems,
        rule_reach,
        repository: None,
        cwd: cwd.clone(),
    }
}

/// Loads the waiting files `wakes` picks, in order, as files touch `batch` reached: they move to
/// the end, after what earlier touches loaded, unless they keep their place (`in_place`).
fn wake(files: &mut Vec<AgentFile>, batch: u32, in_place: bool, wakes: &dyn Fn(&AgentFile) -> bool) {
    if in_place {
        for f in files.iter_mut().filter(|f| wakes(f)) {
            (f.status, f.batch) = (Status::Loaded, batch);
        }
        return;
    }
    let (mut woken, rest): (Vec<_>, Vec<_>) = std::mem::take(files).into_iter().partition(|f| wakes(f));
    *files = rest;
    for f in &mut woken {
        (f.status, f.batch) = (Status::Loaded, batch);
    }
    files.extend(woken);
}

/// Each file once: a file the agent gets (through an import, say: a `CLAUDE.md` that imports
/// `@AGENTS.md` gives Claude Code the `AGENTS.md` it would otherwise skip as a fallback) is not
/// also listed as one it ignores, nor as a rule still waiting for a read (a `CLAUDE.md` that
/// imports a rule with `paths:` loads it at start, and no read loads it again).
fn once_each(files: Vec<AgentFile>) -> Vec<AgentFile> {
    let reached: std::collections::HashSet<PathBuf> =
        files.iter().filter(|f| f.status.reaches()).map(|f| f.path.clone()).collect();
    files
        .into_iter()
        .filter(|f| !matches!(f.status, Status::Shadowed | Status::Waiting) || !reached.contains(&f.path))
        .collect()
}

/// Reads every file whole (up to [`READ_CAP`]), resolves imports and joins.
/// The mentions that look like files but name none go to `missing`.
fn unbudgeted(
    profile: &AgentProfile,
    cwd: &Path,
    files: Vec<AgentFile>,
    missing: &mut Vec<imports::Missing>,
) -> (Vec<AgentFile>, Vec<String>) {
    let mut entries: Vec<Entry> = Vec::new();
    let mut seen_imports: Vec<PathBuf> = Vec::new();
    for mut file in files {
        if file.status != Status::Loaded {
            entries.push(Entry { file, text: String::new() });
            continue;
        }
        // Claude Code loads a file once (by its path, observed with 2.1.332): a rule or a
        // nested file an earlier file has already imported is not loaded again, at start or
        // on a read; it stays listed as that import.
        if matches!(profile.imports, Imports::Listed) && seen_imports.contains(&file.path) {
            continue;
        }
        let Some(mut text) = read_into(&mut file, READ_CAP) else {
            entries.push(Entry { file, text: String::new() });
            continue;
        };
        let body = without_front_matter(&text, profile.front_matter);
        if body.len() != text.len() {
            text = body.to_string();
        }
        if profile.hide_block_comments
            && let std::borrow::Cow::Owned(shown) = comments::hide_block_comments(&text)
        {
            text = shown;
        }
        let blank = if profile.drop_blank { js_trim(&text).is_empty() } else { text.is_empty() };
        if blank {
            file.status = Status::Empty;
            entries.push(Entry { file, text: String::new() });
            continue;
        }
        file.included_bytes = file.bytes;
        let dir = file.path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
        match profile.imports {
            Imports::None => entries.push(Entry { file, text }),
            Imports::Inline => {
                let mut imported = Vec::new();
                let mut work = imports::Work::default();
                let expanded = imports::gemini_expand(&text, &dir, &file.path, &[], 0, &mut imported, &mut work);
                missing.append(&mut work.missing);
                let Some(expanded) = expanded else {
                    file.status = Status::Runaway;
                    file.included_bytes = 0;
                    entries.push(Entry { file, text: String::new() });
                    continue;
                };
                entries.push(Entry { file, text: expanded });
                // Listed for the reader; their text is already inside the importer's.
                entries.extend(imported.into_iter().map(|file| Entry { file, text: String::new() }));
            }
            Imports::Listed => {
                seen_imports.push(file.path.clone());
                // A project file's imports must stay inside the working directory (Claude Code
                // asks before loading others, and loads none without asking); the user's own
                // files import from anywhere.
                let boundary = (file.scope != Scope::Global).then_some(cwd);
                let ctx = imports::ClaudeImports {
                    home: profile.home.as_deref(),
                    boundary,
                    label: file.label,
                    role: file.role,
                    steps: Default::default(),
                    missing: Default::default(),
                };
                let imported = ctx.resolve(&text, &dir, &file.path, 0, &mut seen_imports);
                missing.append(&mut ctx.missing.take());
                let batch = file.batch;
                entries.push(Entry { file, text });
                entries.extend(imported.into_iter().map(|(mut file, text)| {
                    file.batch = batch;
                    Entry { file, text }
                }));
            }
        }
    }
    if let Some(fallbacks) = &profile.fallbacks {
        (fallbacks.drop_repeating)(&mut entries);
    }
    let parts = match profile.join {
        Join::Own(join) => join(profile, &entries),
        // A profile whose budget joins always has that budget (Codex's, dsh-next's).
        Join::ByBudget => Vec::new(),
    };
    (entries.into_iter().map(|e| e.file).collect(), parts)
}

/// The fallback files of `files[from..]` that give way, as the profile's agent decides.
fn hide_fallbacks(profile: &AgentProfile, files: &mut [AgentFile], from: usize) {
    if let Some(fallbacks) = &profile.fallbacks {
        (fallbacks.hide)(files, from, profile.drop_blank);
    }
}
