//! `instructions-lsp compare`: what each agent working in PATH gets, side by side: by default
//! the agents the repository targets (see [`crate::chain::targets`]), or the profiles named.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;
use serde_json::Value;

use super::args::{CompareArgs, EXIT_USAGE};
use crate::chain::agents::{self, AgentFile, Status};
use crate::chain::settings::{Env, Profile, Settings};
use crate::chain::source::FileCache;
use crate::chain::targets::Targets;
use crate::paths;
use crate::session::Session;

/// A file an agent gets only in part.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cut {
    pub path: String,
    pub included_bytes: u64,
    pub bytes: u64,
    /// The line of the first byte the agent does not get.
    pub line: usize,
}

/// What one profile loads.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub profile: String,
    /// How the agent is called ("Claude Code").
    pub name: String,
    pub mirrors: String,
    /// Files that reach the agent (whole or cut).
    pub files: Vec<String>,
    /// Bytes of what the agent gets, in all.
    pub bytes: usize,
    /// The same in tokens (see [`crate::chain::tokens`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<crate::chain::tokens::Tokens>,
    /// Bytes of each message or block the agent adds, in order: what it gets at start, then what
    /// each read adds (each within the budget on its own).
    pub parts: Vec<usize>,
    /// Files omitted or truncated (both lists below).
    pub cut: Vec<String>,
    pub truncated: Vec<Cut>,
    pub omitted: Vec<String>,
    /// Files that lose to another file.
    pub shadowed: Vec<String>,
    /// Other files the agent does not take, with the reason (`oversized`, `linked-outside`, …).
    pub skipped: Vec<String>,
    /// Rules that load only when a touch reaches a matching file, with their globs.
    pub waits: Vec<String>,
    /// Files the agent tells the model of, for it to read when it judges them relevant
    /// (Copilot's instructions without `applyTo`, Cursor's agent-requested rules).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_request: Vec<String>,
    /// Rules that reach the agent only when the user names them (Cursor).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub manual: Vec<String>,
    /// Why the agent loads nothing, when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The imports the agent does not load from outside the folder it starts in, each in the
    /// words of `check`'s finding (with the fix that works in every folder, when there is one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub imports_skipped: Vec<String>,
    /// The budget, in words, when the profile has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// The parts are one request's attachments, whatever was read (VS Code's), not what the
    /// agent gets at start and then per read.
    #[serde(skip)]
    pub one_request: bool,
}

pub fn run(args: &CompareArgs) -> ExitCode {
    match rows(args) {
        Ok((rows, line)) => {
            // Which agents, and why, on stderr as `check` says it: stdout is the comparison.
            eprintln!("{line}");
            if args.json {
                println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
            } else {
                print!("{}", text(&rows, !args.touch.is_empty()));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("instructions-lsp compare: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Which profiles to show, and the line that says why.
fn selection(args: &CompareArgs, folder: &Path) -> Result<(Vec<String>, Option<Targets>, String), String> {
    let all: Vec<String> = Profile::NAMES.iter().chain(agents::NAMES).map(|s| s.to_string()).collect();
    let markers = Settings::defaults(Profile::Dsh, &Env::from_process()).root_markers;
    // Profiles named by a flag still run with the repository's settings for them.
    let configured = || crate::session::project::targets_of(folder, &markers, None).ok();
    if args.all || args.profile.iter().any(|p| p == "all") {
        return Ok((all, configured(), "comparing every profile (--all)".into()));
    }
    if !args.profile.is_empty() {
        for p in &args.profile {
            if !all.contains(p) {
                return Err(format!("unknown profile `{p}`; expected one of {}, or all", all.join(", ")));
            }
        }
        let names: Vec<&str> = args.profile.iter().map(|p| agents::display_name(p)).collect();
        let shown: Vec<String> =
            args.profile.iter().zip(names).map(|(p, n)| if n == "The agent" { p.clone() } else { n.into() }).collect();
        return Ok((args.profile.clone(), configured(), format!("comparing {} (--profile)", shown.join(", "))));
    }
    let t = crate::session::project::targets_of(folder, &markers, None)?;
    let line = t.describe("compare");
    if t.agents.is_empty() {
        // Nothing to go by: show every agent, so the user sees what each would read.
        return Ok((agents::NAMES.iter().map(|s| s.to_string()).collect(), Some(t), line + "; showing every agent"));
    }
    Ok((t.agents.clone(), Some(t), line))
}

fn rows(args: &CompareArgs) -> Result<(Vec<Row>, String), String> {
    let folder = super::args::directory(&args.path)?;
    let touched = super::args::touches(&args.touch, &folder)?;
    let (profiles, targets, line) = selection(args, &folder)?;
    let sets = crate::session::options::set_object(&args.set)?;
    let env = Env::from_process();
    // Agents' files are named from the project root, as the engine's are.
    let markers = Settings::defaults(Profile::Dsh, &env).root_markers;
    let root = crate::chain::discover::project_root(&folder, &markers);
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let name = |p: &Path| match p.strip_prefix(&root) {
        Ok(rel) => paths::slash_join(rel),
        Err(_) => paths::slash_join(p),
    };
    let agent_env = agents::AgentEnv::from_process();
    let mut out = Vec::new();
    for p in &profiles {
        if let Some(profile) = Profile::parse(p) {
            out.push(engine_row(profile, &folder, &touched, &sets, &env)?);
            continue;
        }
        let from_sets = crate::session::options::agent_overrides(p, &Value::Object(sets.clone()), true)?;
        let o = crate::session::project::overrides(targets.as_ref(), p, Some(&from_sets));
        let Some(profile) = agents::profile(p, &agent_env, &o) else { continue };
        out.push(agent_row(&profile, &folder, &touched, &name));
    }
    Ok((out, line))
}

fn engine_row(
    profile: Profile,
    folder: &Path,
    touched: &[PathBuf],
    sets: &serde_json::Map<String, Value>,
    env: &Env,
) -> Result<Row, String> {
    let mut obj = sets.clone();
    obj.insert("profile".into(), Value::String(profile.name().into()));
    // Keys only agents take are not the engine's business.
    obj.remove("profiles");
    obj.retain(|k, _| !agents::COPILOT_SETTINGS.contains(&k.as_str()));
    let (settings, problems) = Settings::parse(&Value::Object(obj), None, env);
    if let Some(p) = problems.first() {
        return Err(p.to_string());
    }
    let cache = FileCache::new();
    let mut session = Session::new(folder, settings);
    for file in touched {
        session.touch(&cache, file);
    }
    let snap = session.snapshot(&cache, None);
    let mut row = Row {
        profile: profile.name().into(),
        name: profile.name().into(),
        mirrors: "the dsh and ds4 rules (docs/profiles.md)".into(),
        files: Vec::new(),
        bytes: 0,
        tokens: None,
        parts: Vec::new(),
        cut: Vec::new(),
        truncated: Vec::new(),
        omitted: Vec::new(),
        shadowed: Vec::new(),
        skipped: Vec::new(),
        waits: Vec::new(),
        on_request: Vec::new(),
        manual: Vec::new(),
        note: None,
        imports_skipped: Vec::new(),
        budget: Some(match u64::try_from(session.settings.budget_bytes) {
            Ok(b) if b > 0 => format!("{} budget per block", agents::size_words(b)),
            _ => "every block disabled".into(),
        }),
        one_request: false,
    };
    for block in std::iter::once(&snap.baseline).chain(&snap.nested) {
        let (files, r) = (&block.files, &block.rendered);
        for (i, f) in files.iter().enumerate() {
            if r.omitted.contains(&i) {
                row.omitted.push(f.heading.clone());
                continue;
            }
            row.files.push(f.heading.clone());
            if let Some(t) = r.truncated.filter(|t| t.index == i) {
                let bytes = f.file.bytes();
                let line = crate::chain::lint::line_col(f.file.text.as_bytes(), t.included_bytes).0;
                row.truncated.push(Cut {
                    path: f.heading.clone(),
                    included_bytes: t.included_bytes as u64,
                    bytes,
                    line,
                });
            }
        }
        if !r.text.is_empty() {
            row.parts.push(r.text.len());
        }
    }
    row.bytes = row.parts.iter().sum();
    let texts = std::iter::once(&snap.baseline).chain(&snap.nested).map(|b| b.rendered.text.as_str());
    row.tokens = crate::chain::tokens::of_parts(profile.name(), texts);
    row.cut = row.omitted.iter().chain(row.truncated.iter().map(|t| &t.path)).cloned().collect();
    for s in snap.chain.skipped.iter().chain(&snap.nested_skipped) {
        if s.shadowed_by.is_some() {
            row.shadowed.push(s.heading.clone());
        } else {
            row.skipped.push(format!("{} ({})", s.heading, s.reason.name()));
        }
    }
    if row.files.is_empty() && row.omitted.is_empty() {
        row.note = Some(format!(
            "loads nothing: none of {} is on the way from the project root",
            session.settings.all_names().collect::<Vec<_>>().join(", ")
        ));
    }
    Ok(row)
}

fn agent_row(
    profile: &agents::AgentProfile,
    folder: &Path,
    touched: &[PathBuf],
    name: &dyn Fn(&Path) -> String,
) -> Row {
    let view = agents::load(profile, folder, touched);
    let with = |statuses: &[Status]| -> Vec<&AgentFile> {
        view.files.iter().filter(|f| statuses.contains(&f.status)).collect()
    };
    let names = |files: Vec<&AgentFile>| -> Vec<String> { files.into_iter().map(|f| name(&f.path)).collect() };
    let truncated: Vec<Cut> = with(&[Status::Truncated])
        .into_iter()
        .map(|f| Cut {
            path: name(&f.path),
            included_bytes: f.included_bytes,
            bytes: f.bytes,
            line: agents::cut_line(f),
        })
        .collect();
    let omitted = names(with(&[Status::Omitted]));
    let other: &[Status] = &[
        Status::Oversized,
        Status::Unreadable,
        Status::Duplicate,
        Status::LinkedOutside,
        Status::Capped,
        Status::Runaway,
        Status::Outside,
        Status::Cycle,
        Status::TooDeep,
        Status::Empty,
    ];
    // (A mention that names no file, `@ts-ignore` in prose, is no file of the view.)
    // An import refused from outside that the agent loads by another route (a rules folder)
    // is no skip.
    let skipped = with(other)
        .into_iter()
        .filter(|f| f.status != Status::Outside || !agents::loaded_elsewhere(&view, f))
        .map(|f| format!("{} ({})", name(&f.path), f.status.as_str()))
        .collect();
    let note = view.nothing.as_ref().map(|why| format!("loads nothing: {why}"));
    Row {
        one_request: profile.one_request,
        profile: view.profile.into(),
        name: agents::display_name(view.profile).into(),
        mirrors: view.mirrors.into(),
        files: names(with(&[Status::Loaded, Status::Truncated])),
        // What the agent gets in all: its parts (separate messages), without the blank lines
        // this tool puts between them when it prints them together.
        bytes: view.parts.iter().map(String::len).sum(),
        tokens: crate::chain::tokens::of_parts(view.profile, view.parts.iter().map(String::as_str)),
        parts: view.parts.iter().map(String::len).collect(),
        cut: names(with(&[Status::Truncated, Status::Omitted])),
        truncated,
        omitted,
        // Once per file: not for a file the agent gets all the same (a link to what it loads),
        // nor for one already listed as an import it skips.
        shadowed: names(
            with(&[Status::Shadowed])
                .into_iter()
                .filter(|f| !agents::loaded_elsewhere(&view, f))
                .filter(|f| {
                    !with(&[Status::Outside]).iter().any(|o| o.path == f.path && !agents::loaded_elsewhere(&view, o))
                })
                .collect(),
        ),
        skipped,
        waits: with(&[Status::Waiting])
            .into_iter()
            .map(|f| format!("{} (for {})", name(&f.path), agents::globs_words(&f.globs)))
            .collect(),
        on_request: names(with(&[Status::OnRequest])),
        manual: names(with(&[Status::Manual])),
        note,
        imports_skipped: crate::session::profiles::skipped_imports(&view, name),
        budget: view.budget.clone(),
    }
}

/// One paragraph per profile, each list on its own line, so long lists never misalign.
fn text(rows: &[Row], touched: bool) -> String {
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        // Paragraphs separated by a blank line, none after the last.
        if i > 0 {
            out.push('\n');
        }
        let number = |b: &usize| crate::chain::words::number(*b as u64);
        let sum = |parts: &[usize]| parts.iter().map(number).collect::<Vec<_>>().join(" + ");
        let bytes = crate::chain::words::bytes(r.bytes as u64);
        let size = match r.parts.as_slice() {
            [] | [_] => bytes,
            parts if r.one_request => format!("{bytes} in one request of {} parts ({})", parts.len(), sum(parts)),
            [first, rest @ ..] if touched => format!(
                "{bytes} in {} messages ({} at start, then {} from the reads)",
                r.parts.len(),
                number(first),
                sum(rest)
            ),
            parts => format!("{bytes} in {} messages at start ({})", parts.len(), sum(parts)),
        };
        let size = match r.tokens.filter(|_| r.bytes > 0) {
            Some(t) => format!("{size}, {}", t.words()),
            None => size,
        };
        let size = match &r.budget {
            Some(b) => format!("{size}, {b}"),
            None => size,
        };
        // An agent by its release as a person says it ("Copilot in VS Code 1.139.1 (copilot)");
        // the engine's profiles by their rules.
        let title = agents::title(&r.profile, &r.mirrors);
        out.push_str(&format!("{title}: {size}\n"));
        let mut item = |label: &str, values: Vec<String>| {
            if !values.is_empty() {
                out.push_str(&format!("  {label:<10} {}\n", values.join(", ")));
            }
        };
        item("loads", r.files.clone());
        item(
            "truncated",
            r.truncated
                .iter()
                .map(|t| {
                    let (of, all) =
                        (crate::chain::words::number(t.included_bytes), crate::chain::words::bytes(t.bytes));
                    format!("{} ({of} of {all}, cut at line {})", t.path, t.line)
                })
                .collect(),
        );
        item("omitted", r.omitted.clone());
        item("ignores", r.shadowed.clone());
        item("skips", r.skipped.clone());
        item("waits", r.waits.clone());
        item("on request", r.on_request.clone());
        item("manual", r.manual.clone());
        if let Some(note) = &r.note {
            out.push_str(&format!("  {note}\n"));
        }
        for skipped in &r.imports_skipped {
            out.push_str(&format!("  note: {skipped}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_paragraphs_whatever_the_length_of_their_lists() {
        let long: Vec<String> = (0..30).map(|i| format!("packages/p{i}/AGENTS.md")).collect();
        let row = Row {
            profile: "codex".into(),
            name: "Codex".into(),
            mirrors: "Codex CLI 0.171.0".into(),
            files: long.clone(),
            bytes: 300,
            tokens: Some(crate::chain::tokens::Tokens { count: 80, exact: true }),
            parts: vec![200, 100],
            cut: vec![],
            truncated: vec![Cut { path: "AGENTS.md".into(), included_bytes: 10, bytes: 20, line: 2 }],
            omitted: vec![],
            shadowed: vec![],
            skipped: vec![],
            waits: vec![".claude/rules/api.md (for `src/api/**`)".into()],
            on_request: vec![],
            manual: vec![],
            note: None,
            imports_skipped: Vec::new(),
            budget: Some("32 KiB shared budget".into()),
            one_request: false,
        };
        let t = text(&[row], true);
        assert!(t.starts_with(
            "Codex CLI 0.171.0 (codex): 300 bytes in 2 messages (200 at start, then 100 from the reads), 80 tokens, 32 KiB shared budget\n"
        ));
        assert!(t.contains(&format!("  loads      {}\n", long.join(", "))));
        assert!(t.contains("  truncated  AGENTS.md (10 of 20 bytes, cut at line 2)\n"));
        assert!(t.contains("  waits      .claude/rules/api.md (for `src/api/**`)\n"));
    }
}
