//! Claude Code: its profile (the layers of a directory, at start and on a read), fallback files
//! that give way to primary ones or repeat them, and its `<system-reminder>` messages.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use crate::chain::model::env::AgentEnv;
use crate::chain::model::env::in_claude_rules;
use crate::chain::model::profile::{
    AgentProfile, Budget, Fallbacks, FrontMatter, GlobalRule, Imports, Join, Layer, LayerKind, Nested, Order, Pick,
    Root,
};
use crate::chain::model::view::{AgentFile, Entry, Role, Scope, Status};
use crate::chain::text::read::{READ_CAP, js_trim, read_capped};

/// The Claude Code profile for `env`.
pub(crate) fn profile(env: &AgentEnv) -> AgentProfile {
    const PROJECT: &str = "project instructions, checked into the codebase";
    const LOCAL: &str = "user's private project instructions, not checked in";
    let layer = |path, kind, role, label| Layer { path, kind, role, label };
    let layers = [
        layer("CLAUDE.md", LayerKind::File, Role::Primary, PROJECT),
        layer(".claude/CLAUDE.md", LayerKind::File, Role::Primary, PROJECT),
        layer(".claude/rules", LayerKind::Rules, Role::Neutral, PROJECT),
        layer("AGENTS.md", LayerKind::File, Role::Fallback, PROJECT),
        layer(".claude/AGENTS.md", LayerKind::File, Role::Fallback, PROJECT),
        layer("CLAUDE.local.md", LayerKind::File, Role::Primary, LOCAL),
    ];
    AgentProfile {
        name: "claude",
        mirrors: "Claude Code 2.1.332",
        candidates: Vec::new(),
        global: vec![vec![
            PathBuf::from("/etc/claude-code/CLAUDE.md"),
            env.home_join(".claude/CLAUDE.md"),
            env.home_join(".claude/rules"),
        ]],
        global_labels: vec![
            "organization-managed policy instructions",
            "user's private global instructions for all projects",
            "user's private global instructions for all projects",
        ],
        front_matter: FrontMatter::StripWithSpace,
        hide_block_comments: true,
        global_rule: GlobalRule::Labelled,
        pick: Pick::Layers,
        // The same layers, ordered as Claude Code loads them at start and on a read.
        layers: layers.to_vec(),
        lazy_layers: [0, 1, 5, 2, 3, 4].map(|i| layers[i].clone()).to_vec(),
        root: Root::BelowFsRoot,
        order: Order::RootFirst,
        nested: Nested::Walk { pick: Pick::Layers, upto_root: false, deepest_first: false },
        imports: Imports::Listed,
        budget: Budget::None,
        join: Join::Own(join),
        fallbacks: Some(Fallbacks { hide: hide_fallbacks, drop_repeating: drop_repeating_fallbacks }),
        drop_blank: true,
        ..AgentProfile::base(env.home.clone())
    }
}

/// Fallback files (Claude Code's `AGENTS.md`) from `files[from..]` give way when a primary file
/// with text has loaded (anywhere in `files`): they are shadowed by the first one.
fn hide_fallbacks(files: &mut [AgentFile], from: usize, drop_blank: bool) {
    if !files.iter().skip(from).any(|f| f.role == Role::Fallback) {
        return;
    }
    let has_text = |f: &AgentFile| {
        read_capped(&f.path, READ_CAP).is_ok_and(|(d, _)| {
            let t = String::from_utf8_lossy(&d);
            if drop_blank { !js_trim(&t).is_empty() } else { !t.is_empty() }
        })
    };
    // A CLAUDE file with text loaded at start hides every AGENTS.md, then and on every read.
    let at_start = files[..from].iter().find(|f| f.role == Role::Primary && f.status == Status::Loaded && has_text(f));
    if from > 0 && at_start.is_none() {
        // Otherwise, on a read, Claude Code decides per directory (observed with 2.1.332): a
        // directory's AGENTS.md loads unless that directory has a CLAUDE file of its own (a
        // CLAUDE.md, even blank; a CLAUDE.local.md only with text), whatever a deeper directory of
        // the same read loads.
        for f in files.iter_mut().skip(from).filter(|f| f.role == Role::Fallback && f.status == Status::Loaded) {
            let Some(mut base) = f.path.parent().map(std::path::Path::to_path_buf) else { continue };
            if base.file_name().is_some_and(|n| n == ".claude") {
                base.pop();
            }
            let own = [base.join("CLAUDE.md"), base.join(".claude/CLAUDE.md")]
                .into_iter()
                .find(|p| crate::chain::repo::memo::stat(p).is_some_and(|m| m.is_file))
                .or_else(|| {
                    let local = base.join("CLAUDE.local.md");
                    let probe = AgentFile::new(local.clone(), f.scope, Status::Loaded);
                    (crate::chain::repo::memo::stat(&local).is_some_and(|m| m.is_file) && has_text(&probe))
                        .then_some(local)
                });
            if let Some(own) = own {
                f.status = Status::Shadowed;
                f.by = Some(own);
            }
        }
        return;
    }
    let primary = files.iter().find(|f| f.role == Role::Primary && f.status == Status::Loaded && has_text(f));
    let Some(primary) = primary.map(|f| f.path.clone()) else { return };
    for f in files.iter_mut().skip(from).filter(|f| f.role == Role::Fallback && f.status == Status::Loaded) {
        f.status = Status::Shadowed;
        f.by = Some(primary.clone());
    }
}

/// Claude Code drops a fallback file (or a file it imports) that repeats what is already there
/// (observed with 2.1.332): at start, when its trimmed text is that of a project rule, as when
/// `AGENTS.md` is also linked into `.claude/rules/`; on a read, when it is that of any project
/// file loaded at start. The user's own files do not count.
fn drop_repeating_fallbacks(entries: &mut [Entry]) {
    let texts = |rules_only: bool| -> HashSet<String> {
        entries
            .iter()
            .filter(|e| e.file.batch == 0 && e.file.scope != Scope::Global && e.file.status.reaches())
            .filter(|e| !rules_only || (e.file.scope == Scope::Project && in_claude_rules(&e.file.path)))
            .map(|e| js_trim(&e.text).to_string())
            .collect()
    };
    let (rules, at_start) = (texts(true), texts(false));
    for e in entries.iter_mut().filter(|e| e.file.role == Role::Fallback && e.file.status.reaches()) {
        let seen = if e.file.batch == 0 { &rules } else { &at_start };
        if seen.contains(js_trim(&e.text)) {
            e.file.status = Status::Duplicate;
            e.file.included_bytes = 0;
        }
    }
}

/// Claude Code's messages: one `<system-reminder>` of `Contents of <path> (<label>):` sections
/// (texts trimmed) for the files loaded at start, then one per file a read loads (text as is;
/// fallback files through a tool hook).
fn join(_: &AgentProfile, entries: &[Entry]) -> Vec<String> {
    // Imports follow their importer, and load when it does: at start, or on a read.
    let mut at_start = Vec::new();
    let mut reads: BTreeMap<u32, (Vec<String>, Vec<String>)> = Default::default();
    let mut batch = 0;
    for e in entries {
        if e.file.scope != Scope::Import {
            // A rule of any scope that a read woke loads with that read.
            batch = e.file.batch;
        }
        if !e.file.status.reaches() || e.text.is_empty() {
            continue;
        }
        let path = e.file.path.display();
        if batch == 0 {
            let label = e.file.label.unwrap_or("instructions");
            at_start.push(format!("Contents of {path} ({label}):\n\n{}", js_trim(&e.text)));
        } else if e.file.role == Role::Fallback {
            // Claude Code's AGENTS.md support adds these through a tool hook.
            reads.entry(batch).or_default().1.push(format!("Contents of {path}:\n\n{}", e.text));
        } else {
            let reminder = format!("<system-reminder>\nContents of {path}:\n\n{}\n</system-reminder>", e.text);
            reads.entry(batch).or_default().0.push(reminder);
        }
    }
    let mut parts = Vec::new();
    if !at_start.is_empty() {
        parts.push(format!("<system-reminder>\n{CLAUDE_INTRO}\n\n{}\n</system-reminder>", at_start.join("\n\n")));
    }
    for (_, (reminders, hooked)) in reads {
        parts.extend(reminders);
        if !hooked.is_empty() {
            parts.push(format!("tool.call hook additional context: {}", hooked.join("\n")));
        }
    }
    parts
}

/// What Claude Code says before the instruction files it loads at start.
const CLAUDE_INTRO: &str = "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.";
