//! `instructions-lsp check`: lint every candidate file and every directory's chain in trees.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use super::{CheckArgs, EXIT_USAGE, FailOn, Format, SettingsArgs, settings_from_args};
use crate::chain::agents;
use crate::chain::discover::{Discovery, Scope};
use crate::chain::lint::{self, Finding, Severity, Span};
use crate::chain::render::SectionStyle;
use crate::chain::settings::{Env, Settings};
use crate::chain::source::{FileCache, read_prefix};
use crate::paths;
use crate::session::{RenderedFiles, render_files};

/// A finding placed in its file for output.
#[derive(Debug)]
pub struct Located {
    pub display: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub finding: Finding,
}

pub fn run(args: &CheckArgs) -> ExitCode {
    // `--profile codex` (an agent): check what that agent gets, as `profiles=["codex"]` does.
    let agent = args.settings.profile.as_deref().filter(|p| agents::NAMES.contains(p));
    let mut settings_args = SettingsArgs { profile: args.settings.profile.clone(), set: args.settings.set.clone() };
    if let Some(name) = agent {
        settings_args.profile = None;
        settings_args.set.push(format!("profiles=[\"{name}\"]"));
    }
    let settings = match settings_from_args(&settings_args, &Env::from_process()) {
        Ok(s) => s,
        Err(message) => {
            eprintln!("instructions-lsp check: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut roots = Vec::new();
    for path in &args.paths {
        match super::directory(path) {
            Ok(abs) => roots.push(abs),
            Err(e) => return usage(&e),
        }
    }
    let explicit = match (agent, &args.settings.profile) {
        (Some(name), _) => Some(format!("--profile {name}")),
        (None, Some(p)) => Some(format!("--profile {p}")),
        (None, None) if !settings.targeted => Some("--set profiles".to_string()),
        _ => None,
    };
    let (findings, warnings, said) = match check(&roots, &settings, explicit.as_deref()) {
        Ok(r) => r,
        Err(e) => return usage(&e),
    };
    for line in &said {
        eprintln!("{line}");
    }
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let located: Vec<Located> = findings.into_iter().map(|f| locate(f, &cwd, &settings)).collect();
    let output = match args.format {
        Format::Text => text(&located),
        Format::Json => json_output(&located, &warnings, &said),
        Format::Github => github(&located),
    };
    let mut out = std::io::stdout().lock();
    if out.write_all(output.as_bytes()).and_then(|()| out.flush()).is_err() {
        return ExitCode::from(EXIT_USAGE);
    }
    if args.format == Format::Text {
        eprintln!("{}", summary(&located));
    }
    let threshold = match args.fail_on {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Never => None,
    };
    match threshold {
        Some(t) if located.iter().any(|l| l.finding.severity() <= t) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("instructions-lsp check: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// What `check` found: the findings, the warnings about what could not be walked, and the lines
/// that say which agents were checked for.
pub type Checked = (Vec<Finding>, Vec<String>, Vec<String>);

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
struct Walked {
    dirs: BTreeSet<PathBuf>,
    names: BTreeSet<String>,
    unreadable: Vec<Finding>,
    warnings: Vec<String>,
}

fn walk(root: &Path, names: &BTreeSet<String>) -> Walked {
    let mut w = Walked { dirs: BTreeSet::new(), names: BTreeSet::new(), unreadable: Vec::new(), warnings: Vec::new() };
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walker {
        match entry {
            Ok(e) => {
                let Some(name) = e.file_name().to_str() else { continue };
                let detected = !crate::chain::targets::detect([name]).0.is_empty();
                if detected {
                    w.names.insert(name.to_string());
                }
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                if !is_dir
                    && (names.contains(name) || detected)
                    && let Some(parent) = e.path().parent()
                {
                    w.dirs.insert(paths::normalize(parent));
                }
            }
            Err(e) => match (error_path(&e), e.io_error()) {
                (Some(path), Some(io)) => {
                    // The system's words, without the walker's wrapping.
                    let text = io.to_string();
                    let why = text.rsplit_once(": ").map_or(text.as_str(), |(_, w)| w);
                    w.unreadable.push(Finding {
                        path: path.to_path_buf(),
                        code: lint::Code::UnreadableDirectory,
                        span: Span::FirstLine,
                        message: format!(
                            "cannot read this directory ({why}): the instruction files in it are not checked"
                        ),
                        related: None,
                    })
                }
                _ => w.warnings.push(format!("skipped: {e}")),
            },
        }
    }
    w
}

/// Walks the trees (honouring `.gitignore`) and returns the findings, deduplicated and
/// sorted, the warnings about what could not be walked, and the lines that say which agents
/// were checked for. Without `explicit` profiles, each tree is checked for the agents it targets.
pub fn check(roots: &[PathBuf], settings: &Settings, explicit: Option<&str>) -> Result<Checked, String> {
    let agent_env = agents::AgentEnv::from_process();
    let mut findings = Vec::new();
    let mut warnings = Vec::new();
    let mut said = Vec::new();
    for root in roots {
        // Directories holding a file of the session's profile or of any agent's.
        let mut names: BTreeSet<String> = settings.all_names().map(str::to_string).collect();
        for n in agents::NAMES {
            if let Some(p) = agents::profile(n, &agent_env, &agents::Overrides::default()) {
                names.extend(p.candidates.iter().map(|c| c.rsplit('/').next().unwrap_or(c).to_string()));
            }
        }
        names.extend(agents::FILE_NAMES.iter().map(|s| s.to_string()));
        let walked = walk(root, &names);
        warnings.extend(walked.warnings);
        let (profiles, targets) = if settings.targeted && explicit.is_none() {
            let t = crate::chain::targets::Targets::resolve(root, walked.names.iter().map(String::as_str))?;
            said.push(t.describe("check"));
            (t.agents.clone(), Some(t))
        } else {
            let names: Vec<&str> = settings
                .profiles
                .iter()
                .map(|p| if agents::NAMES.contains(&p.as_str()) { agents::display_name(p) } else { p.as_str() })
                .collect();
            said.push(format!("checking for {} ({})", names.join(", "), explicit.unwrap_or("--set profiles")));
            (settings.profiles.clone(), None)
        };
        let own = profiles.iter().any(|p| p == settings.profile.name());
        let agent_profiles: Vec<agents::AgentProfile> = profiles
            .iter()
            .filter_map(|n| {
                let o = targets.as_ref().map(|t| t.overrides(n)).unwrap_or_default();
                agents::profile(n, &agent_env, &o)
            })
            .collect();
        findings.extend(walked.unreadable);
        findings.extend(check_dirs(&walked.dirs, root, settings, own, &agent_profiles));
    }
    findings.sort_by(|a, b| (&a.path, SpanKey::of(a.span), a.code).cmp(&(&b.path, SpanKey::of(b.span), b.code)));
    Ok((findings, warnings, said))
}

/// The findings of every directory's chain in one tree.
fn check_dirs(
    dirs: &BTreeSet<PathBuf>,
    root: &Path,
    settings: &Settings,
    own: bool,
    agent_profiles: &[agents::AgentProfile],
) -> Vec<Finding> {
    let roots = [root.to_path_buf()];
    let roots = &roots[..];
    let cache = FileCache::new();
    let inside = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    // Group identical findings of different chains: (path, code, span) -> finding, folders.
    let mut grouped: BTreeMap<(PathBuf, lint::Code, SpanKey), (Finding, Vec<String>)> = BTreeMap::new();
    // Files some selected agent gets, from some directory.
    let mut reached: BTreeSet<PathBuf> = BTreeSet::new();
    for dir in dirs {
        let disc = Discovery::new(settings, &cache, None, dir);
        let label = match disc.heading(dir) {
            h if h.is_empty() => "`.` (the project root)".to_string(),
            h => format!("`{h}`"),
        };
        let mut found = Vec::new();
        if own {
            let scan = disc.scan_dir(dir, Scope::Project);
            found.extend(lint::skip_findings(&scan.skipped, settings, |p| disc.heading(p)));
            for f in &scan.files {
                found.extend(lint::content_findings(&f.path, &f.file.text, settings.frame));
            }
            let chain = disc.baseline();
            let RenderedFiles { files, rendered } = render_files(settings, chain.files, SectionStyle::Initial);
            reached.extend(files.iter().map(|f| f.path.clone()));
            found.extend(lint::chain_findings(&label, &files, &rendered, settings.budget_bytes));
        }
        for p in agent_profiles {
            let view = agents::load(p, dir, &[]);
            reached.extend(view.files.iter().filter(|f| f.status.reaches()).map(|f| f.path.clone()));
            // What an agent started here misses is worth saying only where it is started.
            let started = dir == root || starts_here(p, dir);
            let missed: Vec<&Path> = view
                .files
                .iter()
                .filter(|f| !started && f.status == agents::Status::Outside)
                .map(|f| f.path.as_path())
                .collect();
            found.extend(agents::view_findings(&view, dir).into_iter().filter(|f| !missed.contains(&f.path.as_path())));
        }
        for f in found.into_iter().filter(|f| inside(&f.path)) {
            let key = (f.path.clone(), f.code, SpanKey::of(f.span));
            grouped.entry(key).or_insert_with(|| (f, Vec::new())).1.push(label.clone());
        }
    }
    not_read(grouped.into_values().collect(), &reached)
        .into_iter()
        .map(|(mut f, labels)| {
            if labels.len() > 1
                && matches!(
                    f.code,
                    lint::Code::Omitted | lint::Code::Truncated | lint::Code::Duplicate | lint::Code::AgentCut
                )
            {
                let more = labels.len() - 1;
                let _ = write!(f.message, " (also in {more} other director{})", if more == 1 { "y" } else { "ies" });
            }
            f
        })
        .collect()
}

/// A file every selected agent ignores for another, and none gets from any directory, is a
/// problem: its `agentIgnored` findings become one `notRead` warning (see [`agents::not_read`]).
fn not_read(grouped: Vec<(Finding, Vec<String>)>, reached: &BTreeSet<PathBuf>) -> Vec<(Finding, Vec<String>)> {
    let warnings = agents::not_read(grouped.iter().map(|(f, _)| f), reached);
    let mut out: Vec<(Finding, Vec<String>)> = grouped
        .into_iter()
        .filter(|(f, _)| !(f.code == lint::Code::AgentIgnored && warnings.iter().any(|w| w.path == f.path)))
        .collect();
    out.extend(warnings.into_iter().map(|f| (f, Vec::new())));
    out
}

/// Whether `dir` holds something agent `p` reads there (one of its file names, or the first
/// folder of a layer such as `.claude/`): only then is what the agent misses when started in
/// `dir` worth a warning. Nobody starts Claude Code in `.github` because Copilot's file lives
/// there.
fn starts_here(p: &agents::AgentProfile, dir: &Path) -> bool {
    let first = |path: &str| path.split('/').next().map(str::to_string).unwrap_or_default();
    p.candidates
        .iter()
        .map(|c| first(c))
        .chain(p.layers.iter().chain(&p.lazy_layers).map(|l| first(l.path)))
        .any(|name| !name.is_empty() && std::fs::symlink_metadata(dir.join(name)).is_ok())
}

/// Orders and groups spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct SpanKey(usize, usize, u8);

impl SpanKey {
    fn of(span: Span) -> Self {
        match span {
            Span::FirstLine => Self(0, 0, 0),
            Span::Bytes { start, end } => Self(start, end, 1),
            Span::ToEnd { start } => Self(start, usize::MAX, 2),
        }
    }
}

fn locate(finding: Finding, cwd: &Path, settings: &Settings) -> Located {
    let bytes = read_prefix(&finding.path, settings.max_file_bytes);
    let (start, end) = finding.span.byte_range(&bytes);
    let (line, column) = lint::line_col(&bytes, start);
    let (end_line, end_column) = lint::line_col(&bytes, end);
    let display = match finding.path.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => paths::slash_join(rel),
        _ => paths::slash_join(&finding.path),
    };
    Located { display, line, column, end_line, end_column, finding }
}

fn text(located: &[Located]) -> String {
    let mut out = String::new();
    for l in located {
        let _ = writeln!(
            out,
            "{}:{}:{}: {}[{}]: {}",
            l.display,
            l.line,
            l.column,
            l.finding.severity().name(),
            l.finding.code.name(),
            l.finding.message
        );
    }
    out
}

/// "1 finding: 1 warning", "3 findings: 1 error, 2 infos", "0 findings".
fn summary(located: &[Located]) -> String {
    let count = |s: Severity| located.iter().filter(|l| l.finding.severity() == s).count();
    let words = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let parts: Vec<String> = [
        (Severity::Error, "error", "errors"),
        (Severity::Warning, "warning", "warnings"),
        (Severity::Information, "info", "infos"),
        (Severity::Hint, "hint", "hints"),
    ]
    .iter()
    .filter(|(s, ..)| count(*s) > 0)
    .map(|(s, one, many)| words(count(*s), one, many))
    .collect();
    let total = words(located.len(), "finding", "findings");
    if parts.is_empty() { total } else { format!("{total}: {}", parts.join(", ")) }
}

fn json_output(located: &[Located], warnings: &[String], said: &[String]) -> String {
    let findings: Vec<_> = located
        .iter()
        .map(|l| {
            json!({
                "path": l.display,
                "line": l.line,
                "column": l.column,
                "endLine": l.end_line,
                "endColumn": l.end_column,
                "severity": l.finding.severity().name(),
                "code": l.finding.code.name(),
                "message": l.finding.message,
                "related": l.finding.related.as_ref().map(|r| json!({"path": paths::slash_join(&r.path), "message": r.message})),
            })
        })
        .collect();
    let doc = json!({"checkedFor": said, "findings": findings, "warnings": warnings});
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// GitHub Actions workflow commands; properties and data escaped as the runner expects.
fn github(located: &[Located]) -> String {
    let data = |s: &str| s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A");
    let prop = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    for l in located {
        let level = match l.finding.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information | Severity::Hint => "notice",
        };
        let _ = writeln!(
            out,
            "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            prop(&l.display),
            l.line,
            l.column,
            l.end_line,
            l.end_column,
            prop(&format!("instructions[{}]", l.finding.code.name())),
            data(&l.finding.message)
        );
    }
    out
}
