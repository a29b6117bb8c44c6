//! `instructions-lsp diff BASE [HEAD]`: what a change does to each agent's view, as text, JSON
//! or Markdown for a pull request. The comparison is `session::diff`'s; this edge only words it.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use super::{DiffArgs, DiffFailOn, DiffFormat, EXIT_USAGE, settings_from_args, tree_settings_args};
use crate::chain::lint::Severity;
use crate::chain::settings::Env;
use crate::session::diff::{self, Change, Diff, Found, Group, Place, Revision, State};

pub fn run(args: &DiffArgs) -> ExitCode {
    let (settings_args, _) = tree_settings_args(&args.settings);
    let settings = match settings_from_args(&settings_args, &Env::from_process()) {
        Ok(s) => s,
        Err(message) => return usage(&message),
    };
    let explicit = args.settings.profile.is_some() || !settings.targeted;
    let base = Revision::Commit(args.base.clone());
    let head = args.head.clone().map_or(Revision::WorkingTree, Revision::Commit);
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return usage(&format!("the current directory: {e}")),
    };
    let mut d = match diff::diff(&cwd, &base, &head, &settings, explicit) {
        Ok(d) => d,
        Err(e) => return usage(&e),
    };
    if let Some(name) = args.base_name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        d.base = name.to_string();
    }
    if let Some(name) = args.head_name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        d.head = name.to_string();
    }
    for w in &d.warnings {
        eprintln!("instructions-lsp diff: warning: {w}");
    }
    let format = if args.json { DiffFormat::Json } else { args.format };
    let output = match format {
        DiffFormat::Text => text(&d),
        DiffFormat::Markdown => markdown(&d),
        DiffFormat::Json => serde_json::to_string_pretty(&d).unwrap_or_default() + "\n",
    };
    let mut out = std::io::stdout().lock();
    if out.write_all(output.as_bytes()).and_then(|()| out.flush()).is_err() {
        return ExitCode::from(EXIT_USAGE);
    }
    let threshold = match args.fail_on {
        DiffFailOn::NewWarning => Some(Severity::Warning),
        DiffFailOn::NewError => Some(Severity::Error),
        DiffFailOn::Never => None,
    };
    match threshold {
        Some(t) if d.has_new(t) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("instructions-lsp diff: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// 35112 as "35,112".
fn number(n: impl Into<u64>) -> String {
    let digits = n.into().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn bytes(n: usize) -> String {
    format!("{} byte{}", number(n as u64), if n == 1 { "" } else { "s" })
}

/// A file as a line of a group names it: each directory's own file, or one of the repository.
fn file_name(file: &Place, dirs: &[&str]) -> String {
    match (file.own, dirs) {
        (true, [dir]) => format!("`{dir}/{}`", file.path),
        (true, _) => format!("their own `{}`", file.path),
        (false, _) => format!("`{}`", file.path),
    }
}

/// What an agent does with a file, in a few words (`dirs`: where, for a file named from there).
fn state_words(s: &State, dirs: &[&str]) -> String {
    let mut out = match s.status.as_str() {
        "loaded" => match s.bytes {
            Some(n) => format!("whole, {}", bytes(n as usize)),
            None => "whole".to_string(),
        },
        "truncated" => match (s.included_bytes, s.bytes) {
            (Some(inc), Some(n)) => format!("cut at {} of {}", number(inc), bytes(n as usize)),
            _ => "cut".to_string(),
        },
        "omitted" => "left out".to_string(),
        "shadowed" => "ignored".to_string(),
        "waiting" => "waits for a read".to_string(),
        "outside" => "not loaded, outside the directory where the agent starts".to_string(),
        other => other.replace('-', " "),
    };
    if !s.globs.is_empty() {
        let _ = write!(out, " of `{}`", s.globs.join("`, `"));
    }
    if let Some(n) = s.matching {
        let _ = write!(out, " ({} matching file{})", number(n as u64), if n == 1 { "" } else { "s" });
    }
    if let Some(by) = &s.by {
        let how = match s.status.as_str() {
            "shadowed" => "for",
            "loaded" | "truncated" | "outside" => ", imported by",
            _ => "by",
        };
        let space = if how.starts_with(',') { "" } else { " " };
        let by = file_name(&Place { path: by.clone(), own: s.by_own }, dirs);
        let _ = write!(out, "{space}{how} {by}");
    }
    if let Some(budget) = &s.budget {
        let _ = write!(out, " by the {budget}");
    }
    out
}

/// One change in words; `many`: said of several directories (plural verbs).
fn change_words(c: &Change, dirs: &[&str]) -> String {
    let many = dirs.len() > 1;
    let verb = |one: &str, several: &str| if many { several.to_string() } else { one.to_string() };
    match c {
        Change::Enters { file, before, after } => {
            let was = before.as_ref().map(|b| format!("; before: {}", state_words(b, dirs))).unwrap_or_default();
            format!("{} {} ({}{was})", verb("gains", "gain"), file_name(file, dirs), state_words(after, dirs))
        }
        Change::Leaves { file, before, after } => {
            let now = match after {
                Some(a) => state_words(a, dirs),
                None => "no longer read".to_string(),
            };
            format!(
                "{} {} ({now}; before: {})",
                verb("loses", "lose"),
                file_name(file, dirs),
                state_words(before, dirs)
            )
        }
        Change::Resized { file, before, after } => {
            let name = file_name(file, dirs);
            // A file that reaches the agent on both sides is said with its sizes.
            let (was, now) = (before.bytes.unwrap_or(0), after.bytes.unwrap_or(0));
            if before.bytes.is_none() {
                // Each directory's own file, each with its own sizes.
                return format!("{name} {} size (each directory's bytes below)", verb("changes", "change"));
            }
            match (before.status.as_str(), after.status.as_str()) {
                ("loaded", "truncated") => format!(
                    "{name} grew from {} to {}, past the {}: cut at {}",
                    number(was),
                    bytes(now as usize),
                    after.budget.as_deref().unwrap_or("budget"),
                    number(after.included_bytes.unwrap_or(0)),
                ),
                ("truncated", "loaded") => {
                    format!(
                        "{name} is no longer cut: {} (before: {})",
                        state_words(after, dirs),
                        state_words(before, dirs)
                    )
                }
                ("truncated", "truncated") => {
                    format!(
                        "the cut of {name} moves: {} (before: {})",
                        state_words(after, dirs),
                        state_words(before, dirs)
                    )
                }
                _ if was != now => format!(
                    "{name} {} from {} to {}",
                    if now > was { "grows" } else { "shrinks" },
                    number(was),
                    bytes(now as usize)
                ),
                _ => format!("{name}: {} (before: {})", state_words(after, dirs), state_words(before, dirs)),
            }
        }
        Change::Treated { file, before, after } => {
            let name = file_name(file, dirs);
            match (before, after) {
                (Some(b), Some(a)) if b.status == a.status && (b.globs != a.globs || b.matching != a.matching) => {
                    let reach = |s: &State| match s.matching {
                        Some(n) => format!(
                            "{} file{} (`{}`)",
                            number(n as u64),
                            if n == 1 { "" } else { "s" },
                            s.globs.join("`, `")
                        ),
                        None => format!("the files of `{}`", s.globs.join("`, `")),
                    };
                    format!("{name} attaches to {} instead of {}", reach(a), reach(b))
                }
                (Some(b), Some(a)) => format!("{name}: {} (before: {})", state_words(a, dirs), state_words(b, dirs)),
                (None, Some(a)) if a.status == "shadowed" => {
                    let name = match name.strip_prefix("their own ") {
                        Some(own) => format!("their new {own}"),
                        None => format!("the new {name}"),
                    };
                    format!("{} {name} ({})", verb("ignores", "ignore"), state_words(a, dirs))
                }
                (None, Some(a)) => format!("{name} is new: {}", state_words(a, dirs)),
                (Some(b), None) => format!("{name} is gone (before: {})", state_words(b, dirs)),
                (None, None) => format!("{name} changes"),
            }
        }
        Change::Text => "the text changes (the same files, the same sizes)".to_string(),
    }
}

/// "`a`, `b`, `c` and 209 more".
fn dir_list(dirs: &[&str]) -> String {
    const SHOWN: usize = 3;
    let shown: Vec<String> = dirs.iter().take(SHOWN).map(|d| format!("`{d}`")).collect();
    match dirs.len().saturating_sub(SHOWN) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// One line per group: who, where, what.
fn group_line(g: &Group) -> String {
    let dirs: Vec<&str> = g.dirs.iter().map(|d| d.dir.as_str()).collect();
    let name = diff::profile_name(g.agent);
    let what: Vec<String> = g.changes.iter().map(|c| change_words(c, &dirs)).collect();
    match g.dirs.as_slice() {
        [one] => format!(
            "{name} started in `{}` ({} → {}): {}",
            one.dir,
            number(one.before as u64),
            bytes(one.after),
            what.join("; ")
        ),
        _ => format!("{name}, {} directories ({}): {}", g.dirs.len(), dir_list(&dirs), what.join("; ")),
    }
}

/// The findings as lines: those that say the same of several files (each package's own file left
/// out) make one line that names the first files and counts the others.
fn finding_lines(found: &[Found]) -> Vec<String> {
    let mut same: Vec<(&Found, Vec<&str>)> = Vec::new();
    for f in found {
        match same.iter_mut().find(|(g, _)| (g.severity, g.code, &g.message) == (f.severity, f.code, &f.message)) {
            Some((_, paths)) => paths.push(&f.path),
            None => same.push((f, Vec::new())),
        }
    }
    same.into_iter()
        .map(|(f, more)| {
            let also = match more.len() {
                0 => String::new(),
                n => {
                    let named: Vec<&str> = more.iter().take(2).copied().collect();
                    let rest = if n > 2 { format!(" and {} more", n - 2) } else { String::new() };
                    format!(" (also {}{rest})", named.join(", "))
                }
            };
            format!("{}:{}:{}{also}: {}[{}]: {}", f.path, f.line, f.column, f.severity, f.code, f.message)
        })
        .collect()
}

fn file_line(f: &diff::FileChange) -> String {
    match (f.before, f.after) {
        (Some(b), Some(a)) => format!("`{}`: {} → {}", f.path, number(b), bytes(a as usize)),
        (None, Some(a)) => format!("`{}`: new, {}", f.path, bytes(a as usize)),
        (Some(b), None) => format!("`{}`: removed (it had {})", f.path, bytes(b as usize)),
        (None, None) => format!("`{}`", f.path),
    }
}

/// The lines every format says: which agents, then the summary, then the findings.
struct Said {
    header: Vec<String>,
    files: Vec<String>,
    groups: Vec<String>,
    dirs: Vec<String>,
    findings: Vec<(&'static str, Vec<String>)>,
}

fn said(d: &Diff) -> Said {
    let mut header = vec![format!("{} → {}", d.base, d.head)];
    if d.checked_for.base == d.checked_for.head {
        header.push(d.checked_for.head.clone());
    } else {
        header.push(format!("{}: {}", d.base, d.checked_for.base));
        header.push(format!("{}: {}", d.head, d.checked_for.head));
    }
    let mut dirs = Vec::new();
    if !d.added_dirs.is_empty() {
        let list: Vec<&str> = d.added_dirs.iter().map(String::as_str).collect();
        dirs.push(format!("new directories where agents start: {}", dir_list(&list)));
    }
    if !d.removed_dirs.is_empty() {
        let list: Vec<&str> = d.removed_dirs.iter().map(String::as_str).collect();
        dirs.push(format!("directories removed: {}", dir_list(&list)));
    }
    let findings = [
        ("new findings", &d.new_findings),
        ("findings gone", &d.gone_findings),
        ("findings changed", &d.changed_findings),
    ]
    .into_iter()
    .filter(|(_, list)| !list.is_empty())
    .map(|(title, list)| (title, finding_lines(list)))
    .collect();
    Said {
        header,
        files: d.files.iter().map(file_line).collect(),
        groups: d.groups.iter().map(group_line).collect(),
        dirs,
        findings,
    }
}

fn nothing(d: &Diff) -> String {
    let names: Vec<&str> = d.agents.iter().map(|a| diff::profile_name(a)).collect();
    let verb = if names.len() == 1 { "gets" } else { "get" };
    format!("No agent's view changes: {} {verb} the same files, bytes and findings.", names.join(", "))
}

fn text(d: &Diff) -> String {
    let s = said(d);
    let mut out = s.header.join("\n") + "\n";
    if d.is_empty() {
        let _ = writeln!(out, "{}", nothing(d));
    }
    if !s.files.is_empty() {
        let _ = writeln!(out, "files changed: {}", s.files.join("; "));
    }
    for line in s.groups.iter().chain(&s.dirs) {
        let _ = writeln!(out, "{line}");
    }
    for (title, lines) in &s.findings {
        let _ = writeln!(out, "{title}:");
        for l in lines {
            let _ = writeln!(out, "  {l}");
        }
    }
    if d.groups.iter().any(|g| g.dirs.len() > 1) {
        let _ = writeln!(out, "directories (bytes before → after):");
        for g in d.groups.iter().filter(|g| g.dirs.len() > 1) {
            let _ = writeln!(out, "  {}:", diff::profile_name(g.agent));
            for dir in &g.dirs {
                let _ = writeln!(out, "    `{}`: {} → {}", dir.dir, number(dir.before as u64), bytes(dir.after));
            }
        }
    }
    out
}

/// For a pull request's comment or a job summary.
fn markdown(d: &Diff) -> String {
    let s = said(d);
    let mut out = String::from("### Instruction files: what this change does to each agent\n\n");
    let mut header: Vec<String> = s.header.iter().map(|h| md(h)).collect();
    // A revision in code; a name in words (`--base-name`, "the working tree") as it is: a
    // revision never holds a space.
    let quoted = |label: &str| if label.contains(' ') { label.to_string() } else { format!("`{label}`") };
    header[0] = format!("{} → {}", quoted(&d.base), quoted(&d.head));
    let _ = writeln!(out, "{}\n", header.join("<br>\n"));
    if d.is_empty() {
        let _ = writeln!(out, "{}\n", nothing(d));
    }
    if !s.files.is_empty() {
        let _ = writeln!(out, "Files changed: {}\n", s.files.join("; "));
    }
    for (g, line) in d.groups.iter().zip(&s.groups) {
        let name = diff::profile_name(g.agent);
        let _ = writeln!(out, "- **{name}**{}", md(line.strip_prefix(name).unwrap_or(line)));
    }
    for line in &s.dirs {
        let _ = writeln!(out, "- {}", md(line));
    }
    if !s.groups.is_empty() || !s.dirs.is_empty() {
        out.push('\n');
    }
    for (title, lines) in &s.findings {
        let _ = writeln!(out, "**{}{}**\n", title[..1].to_uppercase(), &title[1..]);
        for l in lines {
            let _ = writeln!(out, "- `{}`", l.replace('`', "'"));
        }
        out.push('\n');
    }
    if d.groups.iter().any(|g| g.dirs.len() > 1) {
        let count: usize = d.groups.iter().map(|g| g.dirs.len()).sum();
        let _ = writeln!(out, "<details><summary>Every directory ({count})</summary>\n");
        let _ = writeln!(out, "| agent | directory | bytes before | bytes after |\n| --- | --- | ---: | ---: |");
        for g in &d.groups {
            for dir in &g.dirs {
                let _ = writeln!(
                    out,
                    "| {} | `{}` | {} | {} |",
                    diff::profile_name(g.agent),
                    dir.dir.replace('|', "\\|"),
                    number(dir.before as u64),
                    number(dir.after as u64)
                );
            }
        }
        out.push_str("\n</details>\n");
    }
    out
}

/// Text for Markdown outside code spans: the characters that would start markup escaped.
fn md(line: &str) -> String {
    // Code spans (`…`) stay as they are; elsewhere `*`, `_`, `<`, `|` and `[` are escaped.
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        }
        if !in_code && matches!(c, '*' | '_' | '<' | '>' | '|' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
