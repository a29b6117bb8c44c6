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
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => match paths::absolute(path) {
                Ok(abs) => roots.push(abs),
                Err(e) => return usage(&format!("{}: {e}", path.display())),
            },
            Ok(_) => return usage(&format!("{} is not a directory", path.display())),
            Err(e) => return usage(&format!("{}: {e}", path.display())),
        }
    }
    let (findings, warnings) = check(&roots, &settings);
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let located: Vec<Located> = findings.into_iter().map(|f| locate(f, &cwd, &settings)).collect();
    let output = match args.format {
        Format::Text => text(&located),
        Format::Json => json_output(&located, &warnings),
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

/// Walks the trees (honouring `.gitignore`) and returns the findings, deduplicated and
/// sorted, plus warnings about what could not be walked.
pub fn check(roots: &[PathBuf], settings: &Settings) -> (Vec<Finding>, Vec<String>) {
    let own = settings.profiles.iter().any(|p| p == settings.profile.name());
    let agent_env = agents::AgentEnv::from_process();
    let agent_profiles: Vec<agents::AgentProfile> = settings
        .profiles
        .iter()
        .filter_map(|n| agents::profile(n, &agent_env, &agents::Overrides::default()))
        .collect();
    // Directories holding a file of the session's profile or of an enabled agent's.
    let mut names: BTreeSet<&str> = settings.all_names().collect();
    for p in &agent_profiles {
        names.extend(p.candidates.iter().map(|c| c.rsplit('/').next().unwrap_or(c)));
    }
    let mut dirs = BTreeSet::new();
    let mut warnings = Vec::new();
    for root in roots {
        let walker = ignore::WalkBuilder::new(root)
            .hidden(false)
            .require_git(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walker {
            match entry {
                Ok(e) => {
                    let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                    if !is_dir && e.file_name().to_str().is_some_and(|n| names.contains(n)) {
                        if let Some(parent) = e.path().parent() {
                            dirs.insert(paths::normalize(parent));
                        }
                    }
                }
                Err(e) => warnings.push(format!("skipped: {e}")),
            }
        }
    }
    let cache = FileCache::new();
    let inside = |p: &Path| roots.iter().any(|r| p.starts_with(r));
    // Group identical findings of different chains: (path, code, span) -> finding, folders.
    let mut grouped: BTreeMap<(PathBuf, lint::Code, SpanKey), (Finding, Vec<String>)> = BTreeMap::new();
    for dir in &dirs {
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
            found.extend(lint::chain_findings(&label, &files, &rendered, settings.budget_bytes));
        }
        for p in &agent_profiles {
            found.extend(agents::findings(p.name, &agent_env, dir, &[]));
        }
        for f in found.into_iter().filter(|f| inside(&f.path)) {
            let key = (f.path.clone(), f.code, SpanKey::of(f.span));
            grouped.entry(key).or_insert_with(|| (f, Vec::new())).1.push(label.clone());
        }
    }
    let findings = grouped
        .into_values()
        .map(|(mut f, labels)| {
            if labels.len() > 1
                && matches!(
                    f.code,
                    lint::Code::Omitted | lint::Code::Truncated | lint::Code::Duplicate | lint::Code::AgentCut
                )
            {
                let _ = write!(f.message, " (also in {} more directories below)", labels.len() - 1);
            }
            f
        })
        .collect();
    (findings, warnings)
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

fn summary(located: &[Located]) -> String {
    let count = |s: Severity| located.iter().filter(|l| l.finding.severity() == s).count();
    format!(
        "{} findings: {} errors, {} warnings, {} infos, {} hints",
        located.len(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Information),
        count(Severity::Hint)
    )
}

fn json_output(located: &[Located], warnings: &[String]) -> String {
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
    let doc = json!({"findings": findings, "warnings": warnings});
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
