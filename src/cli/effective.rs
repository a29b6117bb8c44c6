//! `instructions-lsp effective`: what an agent working in a directory gets. By default each
//! agent the repository targets (as `check` and `compare` choose them), `--profile P` one
//! profile: an agent's exact text, or the `dsh`/`ds4` blocks.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Map, Value};

use super::args::{EXIT_USAGE, EffectiveArgs, settings_from_args};
use crate::chain::agents;
use crate::chain::settings::{Env, Profile, Settings};
use crate::chain::source::FileCache;
use crate::chain::targets::Targets;
use crate::session::Session;
use crate::session::profiles::{self, ProfileResult};

pub fn run(args: &EffectiveArgs) -> ExitCode {
    match effective(args) {
        Ok(text) => {
            let mut out = std::io::stdout().lock();
            if out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_err() {
                return ExitCode::from(EXIT_USAGE);
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("instructions-lsp effective: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// What `effective` prints, newline-terminated; nothing at all when nothing loads.
pub fn effective(args: &EffectiveArgs) -> Result<String, String> {
    let folder = super::args::directory(&args.path)?;
    let touched = super::args::touches(&args.touch, &folder)?;
    // `--set profile=P` is `--profile P`, as the setting is everywhere else.
    let from_set = crate::session::options::set_object(&args.settings.set)?
        .get("profile")
        .and_then(|v| v.as_str().map(str::to_string));
    match args.settings.profile.clone().or(from_set).as_deref() {
        Some(p) if Profile::parse(p).is_some() => engine(args, &folder, &touched),
        Some(p) if !agents::NAMES.contains(&p) => Err(format!(
            "unknown profile `{p}`; expected one of {}",
            crate::session::options::profile_names().join(", ")
        )),
        Some(p) => {
            let (targets, sets) = repository(&folder, &args.settings.set)?;
            let view = agent_view(p, &folder, &touched, targets.as_ref(), &sets)?;
            say_skipped_imports(&view, &folder);
            if args.json {
                // The answer every edge gives: files named from the project root (with their
                // `uri`), as in the list without `--profile` and the server's answer.
                let root = project_root_of(&folder);
                let show = crate::session::project::display_paths(&root);
                let answer = profiles::from_agent(&view, &show).with_tokens();
                return serde_json::to_string_pretty(&answer).map(|j| j + "\n").map_err(|e| e.to_string());
            }
            Ok(if view.text.is_empty() { String::new() } else { view.text + "\n" })
        }
        None => targeted(args, &folder, &touched),
    }
}

/// The folder's targets (its project's configuration and files) and `--set`.
fn repository(folder: &Path, set: &[String]) -> Result<(Option<Targets>, Map<String, Value>), String> {
    let markers = Settings::defaults(Profile::Dsh, &Env::from_process()).root_markers;
    let targets = crate::session::project::targets_of(folder, &markers, None)?;
    let mut sets = crate::session::options::set_object(set)?;
    // Said as `--profile` already.
    sets.remove("profile");
    Ok((Some(targets), sets))
}

/// One agent's view in `folder` after the touches, with its project's configuration and `--set`.
fn agent_view(
    name: &str,
    folder: &Path,
    touched: &[PathBuf],
    targets: Option<&Targets>,
    sets: &Map<String, Value>,
) -> Result<agents::AgentView, String> {
    let from_sets = crate::session::options::agent_overrides(name, &Value::Object(sets.clone()), false)?;
    let o = crate::session::project::overrides(targets, name, Some(&from_sets));
    let profile = agents::profile(name, &agents::AgentEnv::from_process(), &o)
        .ok_or_else(|| format!("unknown profile `{name}`"))?;
    let view = agents::load(&profile, folder, touched);
    if let Some(why) = &view.nothing {
        // An empty answer says why, beside it (stdout stays the agent's exact text).
        eprintln!("{} loads nothing here: {why}", agents::display_name(name));
    }
    Ok(view)
}

/// Without `--profile`: what each agent the repository targets receives. One agent: exactly its
/// text; several: each under a one-line header; `--json`: a list of their answers.
fn targeted(args: &EffectiveArgs, folder: &Path, touched: &[PathBuf]) -> Result<String, String> {
    let (targets, sets) = repository(folder, &args.settings.set)?;
    let Some(targets) = targets else { return Ok(String::new()) };
    // A key no profile takes, or a bad value, is said in the engine's words first.
    crate::session::options::settings_from(None, &args.settings.set, &Env::from_process())?;
    if let Some(key) = sets.keys().find(|k| !agent_key(k)) {
        return Err(format!(
            "--set {key} is a setting of the dsh and ds4 blocks; add --profile dsh (the agents take baselineMaxBytes and instructionFileCandidates)"
        ));
    }
    eprintln!("{}", targets.describe("show"));
    if targets.agents.is_empty() {
        eprintln!("(`--profile dsh` shows the dsh block, `--profile codex` what Codex would load)");
        return Ok(if args.json { "[]\n".into() } else { String::new() });
    }
    let root = project_root_of(folder);
    let show = crate::session::project::display_paths(&root);
    let mut answers: Vec<ProfileResult> = Vec::new();
    for name in &targets.agents {
        let view = agent_view(name, folder, touched, Some(&targets), &sets)?;
        say_skipped_imports(&view, folder);
        answers.push(profiles::from_agent(&view, &show));
    }
    // Sizes where they are shown: the headers of several agents, and the JSON.
    if args.json || answers.len() > 1 {
        answers = answers.into_iter().map(ProfileResult::with_tokens).collect();
    }
    if args.json {
        return serde_json::to_string_pretty(&answers).map(|j| j + "\n").map_err(|e| e.to_string());
    }
    if let [one] = answers.as_slice() {
        return Ok(if one.text.is_empty() { String::new() } else { format!("{}\n", one.text) });
    }
    let mut out = String::new();
    for (i, a) in answers.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let size = if a.text.is_empty() {
            "loads nothing here".to_string()
        } else {
            match a.tokens {
                Some(t) => format!("{}, {}", crate::chain::words::bytes(a.bytes as u64), t.words()),
                None => crate::chain::words::bytes(a.bytes as u64),
            }
        };
        out.push_str(&format!("==> {}: {size} <==\n", a.headline));
        if !a.text.is_empty() {
            out.push_str(&a.text);
            out.push('\n');
        }
    }
    Ok(out)
}

/// Says on stderr, one line each, the imports the agent does not load from outside the folder it
/// starts in (stdout stays the agent's exact text).
fn say_skipped_imports(view: &agents::AgentView, folder: &Path) {
    let root = project_root_of(folder);
    for skipped in profiles::skipped_imports(view, crate::session::project::display_paths(&root)) {
        eprintln!("note: {}", crate::paths::printable(&skipped));
    }
}

/// The project root `folder` belongs to, by the default root markers.
fn project_root_of(folder: &Path) -> PathBuf {
    crate::chain::discover::project_root(folder, &Settings::defaults(Profile::Dsh, &Env::from_process()).root_markers)
}

/// Whether an agent reads `--set key`.
fn agent_key(key: &str) -> bool {
    matches!(key, "baselineMaxBytes" | "instructionFileCandidates") || agents::COPILOT_SETTINGS.contains(&key)
}

/// `--profile dsh|ds4`: the blocks of the engine, separated by a blank line (or the
/// `instructions/effective` result as JSON).
fn engine(args: &EffectiveArgs, folder: &Path, touched: &[PathBuf]) -> Result<String, String> {
    let settings = settings_from_args(&args.settings, &Env::from_process())?;
    let cache = FileCache::new();
    let mut session = Session::new(folder, settings);
    for file in touched {
        session.touch(&cache, file);
    }
    if args.json {
        let result = session.effective(&cache, None, None);
        let json = serde_json::to_string_pretty(&result).map_err(|e| e.to_string())?;
        return Ok(json + "\n");
    }
    let snapshot = session.snapshot(&cache, None);
    // What cannot be read is not silently left out: the block stays the agent's exact block, and
    // stderr says what is missing from it.
    for s in snapshot.skipped().filter(|s| s.reason == crate::chain::source::SkipReason::Unreadable) {
        let why = match &s.detail {
            crate::chain::source::SkipDetail::Error(e) => e.clone(),
            _ => "unreadable".into(),
        };
        eprintln!("warning: {}: cannot be read ({why}); the block leaves it out", s.heading);
    }
    let blocks: Vec<&str> = std::iter::once(&snapshot.baseline)
        .chain(&snapshot.nested)
        .map(|r| r.rendered.text.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    if blocks.is_empty() {
        return Ok(String::new());
    }
    Ok(blocks.join("\n\n") + "\n")
}
