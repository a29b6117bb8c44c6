//! `instructions-lsp effective`: the blocks an agent gets.

use std::io::Write;
use std::process::ExitCode;

use super::{EXIT_USAGE, EffectiveArgs, settings_from_args};
use crate::chain::settings::Env;
use crate::chain::source::FileCache;
use crate::session::Session;

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

/// What `effective` prints: the blocks separated by a blank line (or JSON), newline-terminated;
/// nothing at all when nothing loads.
pub fn effective(args: &EffectiveArgs) -> Result<String, String> {
    let folder = super::directory(&args.path)?;
    let touched = super::touches(&args.touch, &folder)?;
    if let Some(profile) = super::agent_profile(&args.settings)? {
        let view = crate::chain::agents::load(&profile, &folder, &touched);
        if args.json {
            return serde_json::to_string_pretty(&view).map(|j| j + "\n").map_err(|e| e.to_string());
        }
        return Ok(if view.text.is_empty() { String::new() } else { view.text + "\n" });
    }
    let settings = settings_from_args(&args.settings, &Env::from_process())?;
    let cache = FileCache::new();
    let mut session = Session::new(&folder, settings);
    for file in &touched {
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
