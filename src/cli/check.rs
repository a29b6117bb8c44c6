//! `instructions-lsp check`: lint every candidate file and every directory's chain in trees.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use super::args::{CheckArgs, EXIT_USAGE, FailOn, Format, settings_from_args, tree_settings_args};
use crate::chain::agents;
use crate::chain::lint::{self, Finding, Severity};
use crate::chain::settings::{Env, Settings};
use crate::chain::source::read_prefix_within;
use crate::paths;
use crate::session::check;

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
    let (settings_args, agent) = tree_settings_args(&args.settings);
    let settings = match settings_from_args(&settings_args, &Env::from_process()) {
        Ok(s) => s,
        Err(message) => {
            eprintln!("instructions-lsp check: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut roots = Vec::new();
    // With --changed: the whole project, and where the changed files change what agents see.
    let mut reach: Option<Vec<PathBuf>> = None;
    if args.changed {
        let project = crate::chain::confine::git_root(&cwd).unwrap_or(&cwd).to_path_buf();
        let mut scopes = Vec::new();
        for f in &args.paths {
            match crate::paths::absolute(f) {
                Ok(abs) => {
                    let scope = crate::session::project::reach_of_change(&abs);
                    // Findings name real paths.
                    scopes.push(std::fs::canonicalize(&scope).unwrap_or(scope));
                }
                Err(e) => return usage(&format!("{}: {e}", f.display())),
            }
        }
        roots.push(project);
        reach = Some(scopes);
    } else {
        let here = [PathBuf::from(".")];
        for path in if args.paths.is_empty() { &here[..] } else { &args.paths[..] } {
            match super::args::directory(path) {
                Ok(abs) => roots.push(abs),
                Err(e) => return usage(&e),
            }
        }
    }
    let explicit = match (agent, &args.settings.profile) {
        (Some(name), _) => Some(format!("--profile {name}")),
        (None, Some(p)) => Some(format!("--profile {p}")),
        (None, None) if !settings.targeted => Some("--set profiles".to_string()),
        _ => None,
    };
    let (mut config_fixed, mut config_files) = (0, std::collections::BTreeSet::new());
    let mut checked = loop {
        // (Each time with nothing of the last run's reading kept: a fix may have changed it.)
        let run = || check(&roots, &settings, explicit.as_deref());
        match agents::with_repo_cache(&Default::default(), run) {
            Ok(r) => break r,
            // A misspelt name in `instructions-lsp.toml` stops the check; `--fix` writes the one
            // meant and checks again (a few times: one name per run is said).
            Err(e) if args.fix && config_fixed < 8 => {
                let finding = crate::chain::config::config_finding(&e, crate::chain::config::DETECTED_INSTEAD);
                let Some(f) = finding.filter(|f| f.fix.is_some()) else { return usage(&e) };
                let (fixed, in_files, problems) = fix(std::slice::from_ref(&f), &cwd);
                if fixed == 0 {
                    problems.iter().for_each(|p| eprintln!("warning: {}", paths::printable(p)));
                    return usage(&e);
                }
                config_fixed += fixed;
                config_files.extend(in_files);
            }
            Err(e) => return usage(&e),
        }
    };
    let within = |findings: &mut Vec<Finding>| {
        if let Some(scopes) = &reach {
            findings.retain(|f| scopes.iter().any(|s| f.path.starts_with(s)));
        }
    };
    within(&mut checked.findings);
    if args.fix {
        // A fix can show what the text hid (an `applyTo` list joined is checked as patterns):
        // fixed again until nothing is left to fix, as linters do, ten passes at most.
        let (mut fixed, mut files) = (config_fixed, config_files);
        for _ in 0..10 {
            let (now, in_files, problems) = fix(&checked.findings, &cwd);
            for p in &problems {
                eprintln!("warning: {}", paths::printable(p));
            }
            if now == 0 {
                break;
            }
            fixed += now;
            files.extend(in_files);
            // What is left, as a check of the files as they are now says it (nothing of the
            // last run's reading kept).
            let again = || check(&roots, &settings, explicit.as_deref());
            checked = match agents::with_repo_cache(&Default::default(), again) {
                Ok(r) => r,
                Err(e) => return usage(&e),
            };
            within(&mut checked.findings);
        }
        let s = |n: usize| if n == 1 { "" } else { "s" };
        eprintln!("fixed {fixed} finding{} in {} file{}", s(fixed), files.len(), s(files.len()));
    }
    for c in &checked.checked_for {
        eprintln!("{}", paths::printable(&c.line));
    }
    for w in &checked.warnings {
        eprintln!("warning: {}", paths::printable(w));
    }
    // The project's real root, once: each finding's file is confined to it.
    let project = crate::chain::confine::git_root(&cwd).unwrap_or(&cwd);
    let base = std::fs::canonicalize(project).ok();
    let located: Vec<Located> = std::mem::take(&mut checked.findings)
        .into_iter()
        .map(|f| locate(f, &cwd, &settings, base.as_deref()))
        .collect();
    let output = match args.format {
        Format::Text => text(&located),
        Format::Json => json_output(&located, &checked, &settings, &cwd),
        Format::Github => github(&located),
        Format::Sarif => sarif(&located, &cwd),
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

/// Applies the safe fixes of `findings` to their files: how many findings it fixed, in which
/// files, and what it could not write. A file that leads out of the project (through a link) is
/// not written.
fn fix(findings: &[Finding], cwd: &Path) -> (usize, Vec<PathBuf>, Vec<String>) {
    let mut by_file: std::collections::BTreeMap<&Path, Vec<&lint::Fix>> = Default::default();
    for f in findings {
        if let Some(fix) = f.fix.as_ref().filter(|x| x.in_fix_all()) {
            by_file.entry(&f.path).or_default().push(fix);
        }
    }
    let (mut fixed, mut files, mut problems) = (0, Vec::new(), Vec::new());
    for (path, fixes) in by_file {
        let shown = shown(path, cwd);
        if let Some(real) = crate::chain::confine::leaves_project(path) {
            problems.push(format!("{shown}: not fixed: it leads out of the project, to {}", real.display()));
            continue;
        }
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{shown}: not fixed: {e}"));
                continue;
            }
        };
        let edits = lint::fix_all(fixes, &text);
        if edits.is_empty() {
            continue;
        }
        match std::fs::write(path, lint::apply(&text, &edits)) {
            Ok(()) => {
                fixed += edits.len();
                files.push(path.to_path_buf());
            }
            Err(e) => problems.push(format!("{shown}: not fixed: {e}")),
        }
    }
    (fixed, files, problems)
}

fn usage(message: &str) -> ExitCode {
    eprintln!("instructions-lsp check: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// What `check` found: the findings, the warnings about what could not be walked, and, per
/// tree, which agents were checked for and why.
pub struct Checked {
    pub findings: Vec<Finding>,
    pub warnings: Vec<String>,
    pub checked_for: Vec<CheckedFor>,
}

/// The profiles one tree was checked for, and why.
pub struct CheckedFor {
    pub path: PathBuf,
    pub agents: Vec<String>,
    /// The line said on stderr ("checking for Codex: detected from AGENTS.md; …").
    pub line: String,
    /// Why, as a word: `config`, `detected`, or the flag or setting that named them.
    pub reason: String,
}

/// Walks the trees (honouring `.gitignore`) and returns the findings, deduplicated and
/// sorted, the warnings about what could not be walked, and which agents each tree was checked
/// for. Without `explicit` profiles, each tree is checked for the agents its project targets.
pub fn check(roots: &[PathBuf], settings: &Settings, explicit: Option<&str>) -> Result<Checked, String> {
    let mut out = Checked { findings: Vec::new(), warnings: Vec::new(), checked_for: Vec::new() };
    for root in roots {
        let walked = check::walk(root, settings);
        let selection = if settings.targeted && explicit.is_none() {
            let t = crate::session::project::targets_of(root, &settings.root_markers, Some(&walked.names))?;
            let reason = match &t.source {
                crate::chain::targets::Source::Config(_) => "config".to_string(),
                crate::chain::targets::Source::Detected(_) => "detected".to_string(),
                crate::chain::targets::Source::Explicit(how) => how.clone(),
            };
            out.checked_for.push(CheckedFor {
                path: root.clone(),
                agents: t.agents.clone(),
                line: t.describe("check"),
                reason,
            });
            check::Selection { profiles: t.agents.clone(), targets: Some(t), targeted: true }
        } else {
            let names: Vec<&str> = settings
                .profiles
                .iter()
                .map(|p| if agents::NAMES.contains(&p.as_str()) { agents::display_name(p) } else { p.as_str() })
                .collect();
            let how = explicit.unwrap_or("--set profiles");
            out.checked_for.push(CheckedFor {
                path: root.clone(),
                agents: settings.profiles.clone(),
                line: format!("checking for {} ({how})", names.join(", ")),
                reason: how.to_string(),
            });
            // The profiles are named, but the repository's settings for them still apply: a
            // configuration that cannot be used is an error when an agent is checked for.
            let targets = crate::session::project::targets_of(root, &settings.root_markers, Some(&walked.names));
            let agent_named = settings.profiles.iter().any(|p| agents::NAMES.contains(&p.as_str()));
            let targets = if agent_named { Some(targets?) } else { targets.ok() };
            check::Selection { profiles: settings.profiles.clone(), targets, targeted: false }
        };
        let tree = check::check_walked(root, walked, settings, &selection);
        // A package's configuration that cannot be used stops `check` as the root's does.
        if let Some(e) = tree.config_errors.first() {
            return Err(e.clone());
        }
        let cwd = std::env::current_dir().unwrap_or_else(|_| root.clone());
        for c in &tree.configured {
            let names: Vec<&str> = c.agents.iter().map(|a| agents::display_name(a)).collect();
            let config = shown(&c.config, &cwd);
            let line = if c.named {
                format!("checking `{}` for {}: named in {config}", shown(&c.dir, &cwd), names.join(", "))
            } else {
                format!("checking `{}` with the settings of {config}", shown(&c.dir, &cwd))
            };
            out.checked_for.push(CheckedFor {
                path: c.dir.clone(),
                agents: c.agents.clone(),
                line,
                reason: "config".into(),
            });
        }
        out.findings.extend(tree.findings);
        out.warnings.extend(tree.warnings);
    }
    out.findings.sort_by(|a, b| {
        (&a.path, check::SpanKey::of(a.span), a.code).cmp(&(&b.path, check::SpanKey::of(b.span), b.code))
    });
    Ok(out)
}

fn locate(finding: Finding, cwd: &Path, settings: &Settings, base: Option<&Path>) -> Located {
    let bytes = read_prefix_within(&finding.path, settings.max_file_bytes, base);
    let (start, end) = finding.span.byte_range(&bytes);
    let (line, column) = lint::line_col(&bytes, start);
    let (end_line, end_column) = lint::line_col(&bytes, end);
    let display = shown(&finding.path, cwd);
    Located { display, line, column, end_line, end_column, finding }
}

/// A path as `check` prints it: relative to the working directory (`../AGENTS.md` for a file above
/// it, as editors and CI annotations take it); whole only when the two share no directory.
fn shown(path: &Path, cwd: &Path) -> String {
    paths::slash_join(&paths::relative(path, cwd))
}

/// The bytes of a path as SARIF names it: its own (a name that is not UTF-8 keeps its bytes,
/// so that the URI resolves to the file), `/` between names.
fn path_bytes(path: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        paths::slash_join(path).into_bytes()
    }
}

fn text(located: &[Located]) -> String {
    let mut out = String::new();
    for l in located {
        let _ = writeln!(
            out,
            "{}:{}:{}: {}[{}]: {}",
            // A name holding a newline would start a forged line (one a CI's problem matcher
            // reads as a finding of another file).
            paths::printable(&l.display),
            l.line,
            l.column,
            l.finding.severity().name(),
            l.finding.code.name(),
            paths::printable(&l.finding.message)
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

fn json_output(located: &[Located], checked: &Checked, settings: &Settings, cwd: &Path) -> String {
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
                "agent": l.finding.agent,
                "related": l.finding.related.as_ref().map(|r| json!({"path": shown(&r.path, cwd), "message": r.message})),
                "fix": l.finding.fix.as_ref().map(|f| json!({"title": f.title, "safe": f.in_fix_all()})),
            })
        })
        .collect();
    let checked_for: Vec<_> = checked
        .checked_for
        .iter()
        .map(|c| {
            // What each agent gets started there: its size in bytes and tokens.
            let views = crate::session::profiles::sizes(&c.path, &c.agents, &settings.agent_sets);
            json!({"path": shown(&c.path, cwd), "agents": c.agents, "reason": c.reason, "message": c.line, "views": views})
        })
        .collect();
    let doc = json!({"checkedFor": checked_for, "findings": findings, "warnings": checked.warnings});
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

/// The URI base the SARIF results are relative to: the directory `check` ran in (the
/// repository's root in CI).
const SRCROOT: &str = "%SRCROOT%";

/// A relative path as a URI reference: every byte but unreserved characters and `/`
/// percent-encoded.
fn uri_reference(path: &[u8]) -> String {
    let mut out = String::new();
    for &b in path {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// SARIF 2.1.0, for code-scanning dashboards: one run, the finding codes as its rules.
fn sarif(located: &[Located], cwd: &Path) -> String {
    let level = |s: Severity| match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Information | Severity::Hint => "note",
    };
    let help = concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/protocol.md#diagnostics");
    let rules: Vec<_> = lint::Code::ALL
        .iter()
        .map(|c| {
            json!({
                "id": c.name(),
                "shortDescription": {"text": c.summary()},
                "helpUri": help,
                "defaultConfiguration": {"level": level(c.severity())},
            })
        })
        .collect();
    let location =
        |path: &Path| json!({"uri": uri_reference(&path_bytes(&paths::relative(path, cwd))), "uriBaseId": SRCROOT});
    let results: Vec<_> = located
        .iter()
        .map(|l| {
            let mut result = json!({
                "ruleId": l.finding.code.name(),
                "ruleIndex": lint::Code::ALL.iter().position(|c| *c == l.finding.code).unwrap_or(0),
                "level": level(l.finding.severity()),
                "message": {"text": l.finding.message},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": location(&l.finding.path),
                        "region": {
                            "startLine": l.line,
                            "startColumn": l.column,
                            "endLine": l.end_line,
                            "endColumn": l.end_column,
                        },
                    },
                }],
            });
            if let Some(agent) = l.finding.agent {
                result["properties"] = json!({"agent": agent});
            }
            if let Some(r) = &l.finding.related {
                result["relatedLocations"] = json!([{
                    "id": 1,
                    "physicalLocation": {"artifactLocation": location(&r.path)},
                    "message": {"text": r.message},
                }]);
            }
            result
        })
        .collect();
    let mut root = crate::paths::path_to_uri(cwd);
    if !root.ends_with('/') {
        root.push('/');
    }
    let doc = json!({
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "instructions-lsp",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": env!("CARGO_PKG_REPOSITORY"),
                    "rules": rules,
                },
            },
            "originalUriBaseIds": {SRCROOT: {"uri": root}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}
