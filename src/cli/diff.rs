//! `instructions-lsp diff BASE [HEAD]`: what a change does to each agent's view, as text, JSON
//! or Markdown for a pull request. The comparison is `session::diff`'s; this edge only words it.

use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;

use super::args::{DiffArgs, DiffFailOn, DiffFormat, EXIT_USAGE, settings_from_args, tree_settings_args};
use crate::chain::lint::Severity;
use crate::chain::settings::Env;
use crate::paths;
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
        eprintln!("instructions-lsp diff: warning: {}", paths::printable(w));
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
    // (A revision's path in an error can hold a newline.)
    eprintln!("instructions-lsp diff: {}", paths::printable(message));
    ExitCode::from(EXIT_USAGE)
}

use crate::chain::words::number;

/// Past this many changed files, the summary lists them one a line (text) or folds them (Markdown).
const FILES_ON_ONE_LINE: usize = 12;

fn bytes(n: usize) -> String {
    crate::chain::words::bytes(n as u64)
}

/// How the output sets what a revision or the command line names (a path, a glob, a branch):
/// such a name can hold a newline, a backtick or markup, and must not forge lines, leave its
/// code span or add HTML to a pull request's comment.
#[derive(Clone, Copy)]
enum Style {
    Text,
    Markdown,
}

impl Style {
    /// A name as code: in text between backticks, in Markdown a code span that no backtick in
    /// the name closes; control characters escaped in both, so that it stays on its line.
    fn code(self, name: &str) -> String {
        let name = paths::printable(name);
        match self {
            Style::Text => format!("`{name}`"),
            Style::Markdown => {
                // (A span is closed by a run of as many backticks as opened it; a space on each
                // side, which Markdown takes away, keeps a backtick at an end from joining the
                // fence.)
                let longest = name.split(|c| c != '`').map(str::len).max().unwrap_or(0);
                let fence = "`".repeat(longest + 1);
                let ends = |c: char| name.starts_with(c) || name.ends_with(c);
                let spaced = (name.starts_with(' ') && name.ends_with(' ') && !name.trim().is_empty()) || ends('`');
                let pad = if spaced || name.is_empty() { " " } else { "" };
                format!("{fence}{pad}{name}{pad}{fence}")
            }
        }
    }

    /// Other words a revision or the command line gives, in running text: control characters
    /// escaped, and in Markdown every character that could start markup or HTML.
    fn words(self, text: &str) -> String {
        let text = paths::printable(text);
        match self {
            Style::Text => text.into_owned(),
            Style::Markdown => {
                let mut out = String::with_capacity(text.len());
                for c in text.chars() {
                    if matches!(c, '\\' | '`' | '*' | '_' | '<' | '>' | '|' | '[' | ']' | '#' | '&') {
                        out.push('\\');
                    }
                    out.push(c);
                }
                out
            }
        }
    }

    /// Globs as code, one after the other.
    fn globs(self, globs: &[String]) -> String {
        globs.iter().map(|g| self.code(g)).collect::<Vec<_>>().join(", ")
    }
}

/// A file as a line of a group names it: each directory's own file, or one of the repository.
fn file_name(file: &Place, dirs: &[&str], st: Style) -> String {
    match (file.own, dirs) {
        (true, [dir]) => st.code(&format!("{dir}/{}", file.path)),
        (true, _) => format!("their own {}", st.code(&file.path)),
        (false, _) => st.code(&file.path),
    }
}

/// What an agent does with a file, in a few words (`dirs`: where, for a file named from there).
fn state_words(s: &State, dirs: &[&str], st: Style) -> String {
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
        let _ = write!(out, " of {}", st.globs(&s.globs));
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
        let by = file_name(&Place { path: by.clone(), own: s.by_own }, dirs, st);
        let _ = write!(out, "{space}{how} {by}");
    }
    if let Some(budget) = &s.budget {
        let _ = write!(out, " by the {}", st.words(budget));
    }
    out
}

/// One change in words; `many`: said of several directories (plural verbs).
fn change_words(c: &Change, dirs: &[&str], st: Style) -> String {
    let many = dirs.len() > 1;
    let verb = |one: &str, several: &str| if many { several.to_string() } else { one.to_string() };
    match c {
        Change::Enters { file, before, after } => {
            let was = before.as_ref().map(|b| format!("; before: {}", state_words(b, dirs, st))).unwrap_or_default();
            format!("{} {} ({}{was})", verb("gains", "gain"), file_name(file, dirs, st), state_words(after, dirs, st))
        }
        Change::Leaves { file, before, after } => {
            let now = match after {
                Some(a) => state_words(a, dirs, st),
                None => "no longer read".to_string(),
            };
            format!(
                "{} {} ({now}; before: {})",
                verb("loses", "lose"),
                file_name(file, dirs, st),
                state_words(before, dirs, st)
            )
        }
        Change::Resized { file, before, after } => {
            let name = file_name(file, dirs, st);
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
                    st.words(after.budget.as_deref().unwrap_or("budget")),
                    number(after.included_bytes.unwrap_or(0)),
                ),
                ("truncated", "loaded") => {
                    format!(
                        "{name} is no longer cut: {} (before: {})",
                        state_words(after, dirs, st),
                        state_words(before, dirs, st)
                    )
                }
                ("truncated", "truncated") => {
                    format!(
                        "the cut of {name} moves: {} (before: {})",
                        state_words(after, dirs, st),
                        state_words(before, dirs, st)
                    )
                }
                _ if was != now => format!(
                    "{name} {} from {} to {}",
                    if now > was { "grows" } else { "shrinks" },
                    number(was),
                    bytes(now as usize)
                ),
                _ => format!("{name}: {} (before: {})", state_words(after, dirs, st), state_words(before, dirs, st)),
            }
        }
        Change::Treated { file, before, after } => {
            let name = file_name(file, dirs, st);
            match (before, after) {
                (Some(b), Some(a)) if b.status == a.status && (b.globs != a.globs || b.matching != a.matching) => {
                    let reach = |s: &State| match s.matching {
                        Some(n) => {
                            format!(
                                "{} file{} ({})",
                                number(n as u64),
                                if n == 1 { "" } else { "s" },
                                st.globs(&s.globs)
                            )
                        }
                        None => format!("the files of {}", st.globs(&s.globs)),
                    };
                    format!("{name} attaches to {} instead of {}", reach(a), reach(b))
                }
                (Some(b), Some(a)) => {
                    format!("{name}: {} (before: {})", state_words(a, dirs, st), state_words(b, dirs, st))
                }
                (None, Some(a)) if a.status == "shadowed" => {
                    let name = match name.strip_prefix("their own ") {
                        Some(own) => format!("their new {own}"),
                        None => format!("the new {name}"),
                    };
                    format!("{} {name} ({})", verb("ignores", "ignore"), state_words(a, dirs, st))
                }
                (None, Some(a)) => format!("{name} is new: {}", state_words(a, dirs, st)),
                (Some(b), None) => format!("{name} is gone (before: {})", state_words(b, dirs, st)),
                (None, None) => format!("{name} changes"),
            }
        }
        Change::Text => "the text changes (the same files, the same sizes)".to_string(),
    }
}

/// "`a`, `b`, `c` and 209 more".
fn dir_list(dirs: &[&str], st: Style) -> String {
    const SHOWN: usize = 3;
    let shown: Vec<String> = dirs.iter().take(SHOWN).map(|d| st.code(d)).collect();
    match dirs.len().saturating_sub(SHOWN) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// One line per group: who, where, what.
fn group_line(g: &Group, st: Style) -> String {
    let dirs: Vec<&str> = g.dirs.iter().map(|d| d.dir.as_str()).collect();
    let name = diff::profile_name(g.agent);
    let what: Vec<String> = g.changes.iter().map(|c| change_words(c, &dirs, st)).collect();
    let place = |d: &diff::DirBytes| match &d.class {
        Some(c) => {
            crate::session::starts::class_words(&c.below, &d.dir, c.package_roots, c.named, &c.own, |n| st.code(n))
        }
        None => st.code(&d.dir),
    };
    match g.dirs.as_slice() {
        [one] => format!(
            "{name} started in {} ({} → {}): {}",
            place(one),
            number(one.before as u64),
            bytes(one.after),
            what.join("; ")
        ),
        _ => format!("{name}, {} directories ({}): {}", g.dirs.len(), dir_list(&dirs, st), what.join("; ")),
    }
}

/// The findings as lines: those that say the same of several files (each package's own file left
/// out) make one line that names the first files and counts the others. A path or message that
/// holds a control character has it escaped: each finding is one line.
fn finding_lines(found: &[Found]) -> Vec<String> {
    // A message that names the file's own folder's file (`pkg/AGENTS.md` for `pkg/CLAUDE.md`)
    // says the same as its neighbours' once that folder is taken out: each loads its own.
    let alike = |f: &Found| match f.path.rsplit_once('/') {
        Some((dir, _)) => f.message.replace(&format!("{dir}/"), ""),
        None => f.message.clone(),
    };
    let mut same: Vec<(&Found, String, Vec<&str>)> = Vec::new();
    for f in found {
        let key = alike(f);
        match same.iter_mut().find(|(g, k, _)| (g.severity, g.code, k) == (f.severity, f.code, &key)) {
            Some((_, _, paths)) => paths.push(&f.path),
            None => same.push((f, key, Vec::new())),
        }
    }
    let same: Vec<(&Found, Vec<&str>)> = same.into_iter().map(|(f, _, paths)| (f, paths)).collect();
    same.into_iter()
        .map(|(f, more)| {
            let also = match more.len() {
                0 => String::new(),
                n => {
                    let named: Vec<String> = more.iter().take(2).map(|p| paths::printable(p).into_owned()).collect();
                    let rest = if n > 2 { format!(" and {} more", n - 2) } else { String::new() };
                    format!(" (also {}{rest})", named.join(", "))
                }
            };
            let (path, message) = (paths::printable(&f.path), paths::printable(&f.message));
            format!("{path}:{}:{}{also}: {}[{}]: {message}", f.line, f.column, f.severity, f.code)
        })
        .collect()
}

fn file_line(f: &diff::FileChange, st: Style) -> String {
    let path = st.code(&f.path);
    match (f.before, f.after) {
        (Some(b), Some(a)) => format!("{path}: {} → {}", number(b), bytes(a as usize)),
        (None, Some(a)) => format!("{path}: new, {}", bytes(a as usize)),
        (Some(b), None) => format!("{path}: removed (it had {})", bytes(b as usize)),
        (None, None) => path,
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

fn said(d: &Diff, st: Style) -> Said {
    let (base, head) = (st.words(&d.base), st.words(&d.head));
    let mut header = vec![format!("{base} → {head}")];
    if d.checked_for.base == d.checked_for.head {
        header.push(st.words(&d.checked_for.head));
    } else {
        header.push(format!("{base}: {}", st.words(&d.checked_for.base)));
        header.push(format!("{head}: {}", st.words(&d.checked_for.head)));
    }
    let mut dirs = Vec::new();
    if !d.added_dirs.is_empty() {
        let list: Vec<&str> = d.added_dirs.iter().map(String::as_str).collect();
        dirs.push(format!("new directories where agents start: {}", dir_list(&list, st)));
    }
    if !d.removed_dirs.is_empty() {
        let list: Vec<&str> = d.removed_dirs.iter().map(String::as_str).collect();
        dirs.push(format!("directories removed: {}", dir_list(&list, st)));
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
        files: d.files.iter().map(|f| file_line(f, st)).collect(),
        groups: d.groups.iter().map(|g| group_line(g, st)).collect(),
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
    let s = said(d, Style::Text);
    let mut out = s.header.join("\n") + "\n";
    if d.is_empty() {
        let _ = writeln!(out, "{}", nothing(d));
    }
    match s.files.len() {
        0 => {}
        n if n <= FILES_ON_ONE_LINE => {
            let _ = writeln!(out, "files changed: {}", s.files.join("; "));
        }
        n => {
            // A monorepo's change of many files reads as a list, one file a line.
            let _ = writeln!(out, "files changed ({}):", number(n as u64));
            for f in &s.files {
                let _ = writeln!(out, "  {f}");
            }
        }
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
                let dir_name = Style::Text.code(&dir.dir);
                let _ = writeln!(out, "    {dir_name}: {} → {}", number(dir.before as u64), bytes(dir.after));
            }
        }
    }
    out
}

/// For a pull request's comment or a job summary.
fn markdown(d: &Diff) -> String {
    let st = Style::Markdown;
    let s = said(d, st);
    let mut out = String::from("### Instruction files: what this change does to each agent\n\n");
    let mut header = s.header;
    // A revision in code; a name in words (`--base-name`, "the working tree"): a revision never
    // holds a space.
    let quoted = |label: &str| if label.contains(' ') { at_line_start(&st.words(label)) } else { st.code(label) };
    header[0] = format!("{} → {}", quoted(&d.base), quoted(&d.head));
    let _ = writeln!(out, "{}\n", header.join("<br>\n"));
    if d.is_empty() {
        let _ = writeln!(out, "{}\n", nothing(d));
    }
    match s.files.len() {
        0 => {}
        n if n <= FILES_ON_ONE_LINE => {
            let _ = writeln!(out, "Files changed: {}\n", s.files.join("; "));
        }
        // A pull request's comment stays short on a monorepo: the first few files, the others
        // behind a summary a reviewer opens.
        n => {
            let (shown, rest) = s.files.split_at(FILES_ON_ONE_LINE);
            let _ = writeln!(
                out,
                "Files changed ({}): {}; and {} more\n",
                number(n as u64),
                shown.join("; "),
                number(rest.len() as u64)
            );
            let _ = writeln!(out, "<details><summary>Every file changed ({})</summary>\n", number(n as u64));
            for f in &s.files {
                let _ = writeln!(out, "- {f}");
            }
            let _ = writeln!(out, "\n</details>\n");
        }
    }
    for (g, line) in d.groups.iter().zip(&s.groups) {
        let name = diff::profile_name(g.agent);
        let _ = writeln!(out, "- **{name}**{}", line.strip_prefix(name).unwrap_or(line));
    }
    for line in &s.dirs {
        let _ = writeln!(out, "- {line}");
    }
    if !s.groups.is_empty() || !s.dirs.is_empty() {
        out.push('\n');
    }
    for (title, lines) in &s.findings {
        let _ = writeln!(out, "**{}{}**\n", title[..1].to_uppercase(), &title[1..]);
        for l in lines {
            let _ = writeln!(out, "- {}", st.code(&l.replace('`', "'")));
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
                    "| {} | {} | {} | {} |",
                    diff::profile_name(g.agent),
                    // (A table's cells end at `|`, inside a code span too.)
                    st.code(&dir.dir).replace('|', "\\|"),
                    number(dir.before as u64),
                    number(dir.after as u64)
                );
            }
        }
        out.push_str("\n</details>\n");
    }
    out
}

/// Markdown words that begin a line, with what would make the line a list item or a heading's
/// underline escaped (`#`, `>` and the others are escaped by [`Style::words`]).
fn at_line_start(words: &str) -> String {
    let digits = words.len() - words.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    match words[digits..].chars().next() {
        Some('-' | '+' | '=') if digits == 0 => format!("\\{words}"),
        Some('.' | ')') if digits > 0 => format!("{}\\{}", &words[..digits], &words[digits..]),
        _ => words.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name set as a Markdown code span reads back whole, as CommonMark reads a span: no
    /// backtick in it closes the span, and it stays on one line.
    #[test]
    fn a_markdown_code_span_holds_any_name_whole() {
        for name in ["pkg", "a`b", "`x`", "``", "a``b`", " x ", "   ", "x\ny", "<b>|</b>"] {
            let span = Style::Markdown.code(name);
            let open = span.len() - span.trim_start_matches('`').len();
            let close = span.len() - span.trim_end_matches('`').len();
            assert_eq!(open, close, "{span}");
            let inner = &span[open..span.len() - close];
            // (One space is taken from each end when both ends have one and not all is space.)
            let stripped = inner.starts_with(' ') && inner.ends_with(' ') && !inner.trim().is_empty();
            let content = if stripped { &inner[1..inner.len() - 1] } else { inner };
            assert_eq!(content, paths::printable(name), "{span}");
            assert!(!inner.split(|c| c != '`').any(|run| run.len() == open), "{span}");
            assert!(!span.contains('\n'), "{span}");
        }
        assert_eq!(Style::Text.code("a\nb"), "`a\\nb`");
        assert_eq!(Style::Markdown.words("<b> [x](y) *z*"), "\\<b\\> \\[x\\](y) \\*z\\*");
        assert_eq!(at_line_start("- x"), "\\- x");
        assert_eq!(at_line_start("12. x"), "12\\. x");
        assert_eq!(at_line_start("main at 1a2b3c4"), "main at 1a2b3c4");
    }
}
