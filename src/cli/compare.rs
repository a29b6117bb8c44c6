//! `instructions-lsp compare`: one row per profile of what an agent working in PATH gets.

use std::process::ExitCode;

use serde::Serialize;

use super::{CompareArgs, EXIT_USAGE};
use crate::chain::agents::{self, Status};
use crate::chain::settings::{Env, Profile, Settings};
use crate::chain::source::FileCache;
use crate::paths;
use crate::session::Session;

/// What one profile loads.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub profile: String,
    /// Files that reach the agent (whole or cut).
    pub files: Vec<String>,
    /// Bytes of what the agent gets.
    pub bytes: usize,
    /// Files omitted or truncated by the budget.
    pub cut: Vec<String>,
    /// Candidates that lose to another file of their directory.
    pub shadowed: Vec<String>,
}

pub fn run(args: &CompareArgs) -> ExitCode {
    match rows(args) {
        Ok(rows) if args.json => {
            println!("{}", serde_json::to_string_pretty(&rows).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Ok(rows) => {
            print!("{}", table(&rows));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("instructions-lsp compare: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn rows(args: &CompareArgs) -> Result<Vec<Row>, String> {
    let folder = paths::absolute(&args.path).map_err(|e| format!("{}: {e}", args.path.display()))?;
    if !folder.is_dir() {
        return Err(format!("{} is not a directory", args.path.display()));
    }
    let env = Env::from_process();
    let mut out = Vec::new();
    for profile in [Profile::Dsh, Profile::Ds4] {
        let cache = FileCache::new();
        let mut session = Session::new(&folder, Settings::defaults(profile, &env));
        for file in &args.touch {
            session.touch(&cache, &paths::absolute(file).map_err(|e| format!("{}: {e}", file.display()))?);
        }
        let snap = session.snapshot(&cache, None);
        let mut row =
            Row { profile: profile.name().into(), files: Vec::new(), bytes: 0, cut: Vec::new(), shadowed: Vec::new() };
        for block in std::iter::once(&snap.baseline).chain(&snap.nested) {
            let (files, r) = (&block.files, &block.rendered);
            let cut = |i: &usize| files.get(*i).map(|f| f.heading.clone());
            let shown = files.iter().enumerate().filter(|(i, _)| !r.omitted.contains(i));
            row.files.extend(shown.map(|(_, f)| f.heading.clone()));
            row.bytes += r.text.len();
            row.cut.extend(r.omitted.iter().filter_map(cut).chain(r.truncated.map(|t| t.index).iter().filter_map(cut)));
        }
        let skipped = snap.chain.skipped.iter().chain(&snap.nested_skipped);
        row.shadowed = skipped.filter(|s| s.shadowed_by.is_some()).map(|s| s.heading.clone()).collect();
        out.push(row);
    }
    // Named from the project root, as the dsh rows are.
    let markers = Settings::defaults(Profile::Dsh, &env).root_markers;
    let root = crate::chain::discover::project_root(&folder, &markers);
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let name = |p: &std::path::Path| match p.strip_prefix(&root) {
        Ok(rel) => paths::slash_join(rel),
        Err(_) => paths::slash_join(p),
    };
    let agent_env = agents::AgentEnv::from_process();
    for profile_name in agents::NAMES {
        let Some(profile) = agents::profile(profile_name, &agent_env, &agents::Overrides::default()) else {
            continue;
        };
        let view = agents::load(&profile, &folder, &args.touch);
        let with = |statuses: &[Status]| {
            view.files.iter().filter(|f| statuses.contains(&f.status)).map(|f| name(&f.path)).collect()
        };
        out.push(Row {
            profile: view.profile.into(),
            files: with(&[Status::Loaded, Status::Truncated]),
            bytes: view.text.len(),
            cut: with(&[Status::Truncated, Status::Omitted]),
            shadowed: with(&[Status::Shadowed]),
        });
    }
    Ok(out)
}

fn table(rows: &[Row]) -> String {
    let list = |v: &[String]| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    let mut out = format!("{:<9} {:>7}  {:<40} {:<28} {}\n", "profile", "bytes", "files", "cut", "shadowed");
    for r in rows {
        out.push_str(&format!(
            "{:<9} {:>7}  {:<40} {:<28} {}\n",
            r.profile,
            r.bytes,
            list(&r.files),
            list(&r.cut),
            list(&r.shadowed)
        ));
    }
    out
}
