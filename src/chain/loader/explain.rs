//! What the agents do differently, in words: one sentence per file an agent does not get whole,
//! and those sentences as findings (`agentCut`, `agentIgnored`, `linkOutside`).

use std::path::Path;

use crate::chain::model::fix::{Change, Fix};
use crate::chain::model::names::display_name;
use crate::chain::model::profile::AgentProfile;
use crate::chain::model::view::{AgentFile, AgentView, RuleProblem, RuleProblemKind, Status};
use crate::chain::repo::project::has_git;
use crate::chain::text::imports;
use crate::chain::text::read;
use crate::chain::words::size_words;

/// [`AgentView::import_boundary`] of an agent that loads no import from outside its working
/// directory (Claude Code).
pub const IMPORT_BOUNDARY_CWD: &str = "its working directory";

/// The files `view`'s agent loads only because of the folder it was started in: for an agent
/// that loads no import from outside its working directory (Claude Code), the project's files
/// it imports. Started in a folder below, with no file of its own there, it loads the same
/// view less those of them outside that folder; every other rule of the view holds wherever
/// below it the agent starts. Empty: the view holds in every folder below its own.
pub fn bounded_by_start(view: &AgentView) -> Vec<&Path> {
    if view.import_boundary != IMPORT_BOUNDARY_CWD {
        return Vec::new();
    }
    // Every project file's import it loads lies in its working directory; the user's own
    // files' imports (in the home directory) load wherever it starts.
    view.files
        .iter()
        .filter(|f| {
            f.scope == crate::chain::model::view::Scope::Import && f.status.reaches() && f.path.starts_with(&view.cwd)
        })
        .map(|f| f.path.as_path())
        .collect()
}

/// The line (1-based) of the first byte an agent does not get of a truncated file, as the file
/// is on disk now.
pub fn cut_line(file: &AgentFile) -> usize {
    let text = crate::chain::text::read::text_prefix(&file.path, file.included_bytes);
    crate::chain::lint::line_col(&text, file.included_bytes as usize).0
}

/// One sentence on what `view`'s agent does with `file` when it does not get it whole, naming
/// the line where a cut falls; `None` when the agent gets the file whole.
/// `name` shows a path (relative to the folder, say).
pub fn explain(view: &AgentView, file: &AgentFile, name: impl Fn(&Path) -> String) -> Option<String> {
    let agent = display_name(view.profile);
    // Who spent the budget before this file, and how much each: a file that used 145 bytes is
    // not what crowded this one out. Codex's global file does not count against its budget.
    // Worked out only for a cut: the files before this one are looked at for each file, which a
    // view of hundreds of files (a deep chain, each past the read cap) made quadratic.
    let spent_by = || {
        let spent: Vec<String> = view
            .files
            .iter()
            .take_while(|f| f.path != file.path)
            .filter(|f| f.status.reaches() && f.included_bytes > 0)
            .filter(|f| view.global_in_budget || f.scope != crate::chain::model::view::Scope::Global)
            .map(|f| format!("{} ({})", name(&f.path), crate::chain::words::bytes(f.included_bytes)))
            .collect();
        let budget = view.budget.clone().unwrap_or_else(|| "budget".into());
        let by = if spent.is_empty() { String::new() } else { format!(" spent by {}", spent.join(", ")) };
        format!("{budget}{by}")
    };
    match file.status {
        Status::Truncated => {
            let line = cut_line(file);
            Some(format!(
                "{agent} cuts this file at line {line}, after {} of {} ({})",
                crate::chain::words::number(file.included_bytes),
                crate::chain::words::bytes(file.bytes),
                spent_by()
            ))
        }
        Status::Omitted => Some(format!("{agent} leaves this file out ({})", spent_by())),
        // A file that is the one loaded instead (a `CLAUDE.md` linked to `AGENTS.md`) reaches
        // the agent all the same.
        Status::Shadowed if same_file(&file.path, file.by.as_deref()) => None,
        Status::Shadowed => {
            // A winner in another directory is named so that nobody looks for it beside this
            // file ("CLAUDE.md" alone reads as the one next to it).
            let by = file.by.as_deref();
            let shown = by.map(&name).unwrap_or_default();
            let elsewhere = by.and_then(Path::parent) != file.path.parent();
            let shown = if elsewhere && !shown.contains('/') { format!("{shown} at the project root") } else { shown };
            Some(format!("{agent} ignores this file: it loads {shown} instead"))
        }
        Status::Oversized => Some(format!(
            "{agent} does not load this file: it is too large ({})",
            crate::chain::words::bytes(file.bytes)
        )),
        // Claude Code started in a subdirectory does not load what the root file imports from
        // outside it: the crate's session misses the repository's rules. Unless the file is
        // not there to load (`@ts-ignore` in prose, a name with a trailing comma: the agent
        // skips those without a word), or the agent loads it all the same by another route
        // (a rules folder, another importer).
        Status::Outside if !crate::chain::repo::memo::is_file(&file.path) || loaded_elsewhere(view, file) => None,
        Status::Outside => {
            let cwd = match name(&view.cwd) {
                n if n.is_empty() || Path::new(&n) == view.cwd => format!("`{}`", view.cwd.display()),
                n => format!("`{n}`"),
            };
            let by = file.by.as_deref().map(&name).unwrap_or_default();
            // Claude Code asks once per project, in an interactive session, whether to load
            // imports from outside its working directory; only runs that cannot ask (`claude
            // -p`, CI) go without them. Gemini CLI never loads an import outside the project.
            Some(if view.import_boundary == IMPORT_BOUNDARY_CWD {
                format!(
                    "{agent}, started in {cwd}, does not load this file, which {by} imports, in non-interactive runs (`claude -p`, CI): they load no import from outside the working directory (an interactive session asks once whether to allow it){}",
                    link_instead(view, file).unwrap_or_default()
                )
            } else {
                format!(
                    "{agent}, started in {cwd}, does not load this file, which {by} imports: it loads no import from outside {}",
                    view.import_boundary
                )
            })
        }
        Status::Duplicate => Some(format!("{agent} drops this file: its text repeats a file it already loads")),
        Status::LinkedOutside => Some(format!(
            "{agent} would load this link's target {}, outside the project; instructions-lsp does not read it",
            file.by.as_deref().map(|p| p.display().to_string()).unwrap_or_default()
        )),
        Status::Capped => Some(format!(
            "{agent} would load this file, but this view already read {} (instructions-lsp's cap for one agent); not read",
            size_words(read::VIEW_READ_CAP)
        )),
        Status::Waiting => {
            let when = format!("{agent} loads this rule when a file matching {} is read", globs_words(&file.globs));
            Some(match view.rule_reach.iter().find(|r| r.path == file.path) {
                Some(r) => match (&r.example, r.matching) {
                    (Some(e), 1) => format!("{when}: one file of the repository matches, `{}`", name(e)),
                    (Some(e), n) => format!("{when}: {n} files of the repository match, such as `{}`", name(e)),
                    (None, _) => format!("{when}: no file of the repository matches yet"),
                },
                None => when,
            })
        }
        Status::OnRequest => Some(format!(
            "{agent} does not attach this file on its own: it tells the model the file exists and the model reads it when it judges it relevant"
        )),
        Status::Manual => Some(format!("{agent} attaches this rule only when the user @-mentions it")),
        Status::Runaway => Some(format!(
            "{agent} inlines this file's @imports again wherever they appear, past {} in all; not mirrored (the agent itself would build a context this large or fail)",
            size_words(imports::EXPANSION_CAP)
        )),
        _ => None,
    }
}

/// The fix that works wherever the agent starts, when a `CLAUDE.md` holds nothing but the import
/// of a file beside it (`@AGENTS.md`, the usual way to give Claude Code one `AGENTS.md`): a link
/// loads from every folder below, an import only where the agent may read outside its working
/// directory.
fn link_instead(view: &AgentView, file: &AgentFile) -> Option<String> {
    let by = file.by.as_deref()?;
    let name = |p: &Path| p.file_name().and_then(|n| n.to_str()).map(str::to_string);
    let (importer, imported) = (name(by)?, name(&file.path)?);
    // `@AGENTS.md` and a line end, give or take white space: no text of its own to lose.
    let only_the_import = view.files.iter().any(|f| f.path == by && f.bytes <= imported.len() as u64 + 4);
    (importer == "CLAUDE.md" && by.parent() == file.path.parent() && only_the_import).then(|| {
        format!("; make `{importer}` a link to `{imported}` (`ln -sf {imported} {importer}`) instead, which loads in every folder")
    })
}

/// What an agent, working in `cwd`, does differently with the files of its view: what it cuts,
/// leaves out or ignores, as findings (`agentCut`, `agentIgnored`, `linkOutside`). Agents read
/// the disk, so these follow saved files. Paths in messages are relative to the project root
/// (`.git`).
pub fn view_findings(view: &AgentView, cwd: &Path) -> Vec<crate::chain::lint::Finding> {
    use crate::chain::lint::{Code, Finding, Related, Span};
    let cwd_real = crate::chain::repo::memo::real_path(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let base = cwd_real.ancestors().find(|d| has_git(d)).unwrap_or(&cwd_real).to_path_buf();
    let show = |p: &Path| match p.strip_prefix(&base) {
        Ok(rel) if !rel.as_os_str().is_empty() => crate::paths::slash_join(rel),
        _ => p.display().to_string(),
    };
    let mut out = Vec::new();
    // A rule waiting for a matching file, or one the model reads when it wants, is the agent
    // working as designed: nothing to warn of. A rule nothing attaches is a rule problem.
    for f in view.files.iter().filter(|f| !matches!(f.status, Status::Waiting | Status::OnRequest | Status::Manual)) {
        let Some(message) = explain(view, f, show) else { continue };
        let cut = matches!(
            f.status,
            Status::Truncated | Status::Omitted | Status::Oversized | Status::Capped | Status::Runaway
        );
        let code = match f.status {
            Status::LinkedOutside => Code::LinkOutside,
            Status::Outside => Code::ImportOutside,
            _ if cut => Code::AgentCut,
            _ => Code::AgentIgnored,
        };
        out.push(Finding {
            path: f.path.clone(),
            code,
            span: if f.status == Status::Truncated {
                Span::ToEnd { start: f.included_bytes as usize }
            } else {
                Span::FirstLine
            },
            message,
            related: f.by.as_ref().filter(|_| f.status != Status::LinkedOutside).map(|p| Related {
                path: p.clone(),
                message: format!("{} loads this file", display_name(view.profile)),
            }),
            agent: Some(view.profile),
            fix: None,
        });
    }
    out.extend(view.rule_problems.iter().map(|p| Finding {
        path: p.path.clone(),
        code: match p.kind {
            RuleProblemKind::Never => Code::AgentRule,
            RuleProblemKind::DeadPattern => Code::DeadPattern,
            RuleProblemKind::AttachedTwice => Code::AttachedTwice,
            RuleProblemKind::MissingImport => Code::MissingImport,
            RuleProblemKind::FrontMatter => Code::FrontMatter,
            RuleProblemKind::UnknownKey => Code::UnknownKey,
        },
        span: p.at.map_or(Span::FirstLine, |(start, end)| Span::Bytes { start, end }),
        message: p.message.clone(),
        related: p.other.as_ref().map(|o| Related {
            path: o.clone(),
            message: format!("{} attaches the same text from this file", display_name(view.profile)),
        }),
        agent: Some(view.profile),
        fix: p.fix.clone(),
    }));
    out
}

/// An `@` mention of `m.importer` that names no file, as a problem placed at the mention (its
/// first occurrence after white space or at a line's start; the first line when the file holds
/// it no more). `base` names paths in the message.
pub fn missing_import(profile: &AgentProfile, m: crate::chain::text::imports::Missing, base: &Path) -> RuleProblem {
    let written = format!("@{}", m.mention);
    let text = crate::chain::text::read::text_prefix(&m.importer, 1 << 20);
    let at = memchr::memmem::find_iter(&text, written.as_bytes())
        .find(|&i| i == 0 || text[i - 1].is_ascii_whitespace())
        .map(|i| (i, i + written.len()));
    let looked = match m.looked.strip_prefix(base) {
        Ok(rel) => format!("`{}`", crate::paths::slash_join(rel)),
        Err(_) => format!("`{}`", m.looked.display()),
    };
    let what = match profile.imports {
        crate::chain::model::profile::Imports::Inline => "writes \"Import failed\" into the text instead",
        _ => "loads nothing for it, without a word",
    };
    // A name with prose's punctuation after it: the agent takes the punctuation as part of it.
    let trimmed = m.mention.trim_end_matches(crate::chain::text::imports::TRAILING);
    let meant = m.looked.to_str().and_then(|l| l.strip_suffix(&m.mention[trimmed.len()..]));
    let punctuation = &m.mention[trimmed.len()..];
    let (hint, fix) = match meant {
        Some(meant) if trimmed.len() < m.mention.len() && std::fs::symlink_metadata(meant).is_ok() => (
            format!("; the `{punctuation}` after it is part of the name: write `@{trimmed}` with a space after it"),
            at.map(|(start, end)| {
                Fix::replace(
                    format!("Put a space between `@{trimmed}` and `{punctuation}`"),
                    start,
                    end,
                    format!("@{trimmed} {punctuation}"),
                )
            }),
        ),
        // A file inside the project that the author may mean to write.
        _ => (
            String::new(),
            m.looked.strip_prefix(base).ok().filter(|_| at.is_some()).map(|rel| Fix {
                title: format!("Create `{}`", crate::paths::slash_join(rel)),
                change: Change::Create { path: m.looked.clone() },
            }),
        ),
    };
    let message =
        format!("`{written}` names no file: {} {what} (nothing at {looked}){hint}", display_name(profile.name));
    RuleProblem { at, fix, ..RuleProblem::new(m.importer, RuleProblemKind::MissingImport, message) }
}

/// How a file that loads at start gets there, in words (for hovers and lenses): the file that
/// imports it (or, for Copilot, links to it); for a rule, a wildcard pattern that attaches it
/// whatever is read. `None` for any other file. `show` names paths.
pub fn attach_words(view: &AgentView, file: &AgentFile, show: impl Fn(&Path) -> String) -> Option<String> {
    let name = display_name(view.profile);
    if let Some(by) = file.by.as_deref().filter(|_| file.status.reaches()) {
        // An import (Claude Code, Gemini CLI), or a file Copilot's instructions link to.
        let verb = if view.profile == "copilot" { "links to" } else { "imports" };
        return Some(format!("{name} loads this file, which `{}` {verb}", show(by)));
    }
    let wildcard: Vec<String> =
        file.globs.iter().filter(|g| crate::chain::patterns::rule::is_wildcard(g)).cloned().collect();
    (file.status.reaches() && file.batch == 0 && !wildcard.is_empty()).then(|| {
        format!(
            "{name} loads this rule at start, whatever is read: its pattern {} matches every file",
            globs_words(&wildcard)
        )
    })
}

/// Globs in words: `src/api/**` or `*.ts`, one of `a`, `b` and `c`.
pub fn globs_words(globs: &[String]) -> String {
    let quoted: Vec<String> = globs.iter().map(|g| format!("`{g}`")).collect();
    match quoted.as_slice() {
        [] => "its `paths:`".to_string(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Why an agent loads nothing where it starts, in words: "none of GEMINI.md is on its way here,
/// nor a global file of its own" (the names it looks for in each directory, or its layers').
pub fn why_nothing(profile: &AgentProfile) -> String {
    let names: Vec<String> = if profile.layers.is_empty() {
        profile.candidates.clone()
    } else {
        profile.layers.iter().map(|l| l.path.to_string()).collect()
    };
    nothing_of(&names)
}

/// [`why_nothing`] of an agent that looks for `names` in each directory (the engine's
/// candidates).
pub fn nothing_of(names: &[String]) -> String {
    match names {
        [] => "no file it reads is on its way here, nor a global file of its own".into(),
        names => format!("none of {} is on its way here, nor a global file of its own", names.join(", ")),
    }
}

/// How a header names what a profile mirrors, as a person says it: "Codex CLI 0.171.0",
/// "Copilot in VS Code 1.139.1", "DeepSeek Harness (next), dsh-agent-instructions 0.1.0-rc.8".
pub fn headline(profile: &str, mirrors: &str) -> String {
    let name = display_name(profile);
    if profile == "copilot" {
        // "VS Code 1.139.1 chat (microsoft/vscode@…, the workbench of code-server …)"
        return format!("Copilot in {}", mirrors.split(" chat").next().unwrap_or(mirrors));
    }
    if mirrors.starts_with(name) { mirrors.to_string() } else { format!("{name}, {mirrors}") }
}

/// How every edge heads a profile's answer: an agent by its release as a person says it, with
/// the profile to pass ("Copilot in VS Code 1.139.1 (copilot)"); the engine's profiles by their
/// rules ("dsh, the seeds' rules (docs/discovery.md)").
pub fn title(profile: &str, mirrors: &str) -> String {
    if crate::chain::settings::Profile::parse(profile).is_some() {
        format!("{profile}, {mirrors}")
    } else {
        format!("{} ({profile})", headline(profile, mirrors))
    }
}

/// The files that every selected agent ignores for another and none gets: a problem, not a
/// piece of information. `ignored` holds the agents' findings, `reached` every file some
/// selected agent gets. Returns one `notRead` warning per such file, saying what each agent
/// loads instead; the caller drops those files' `agentIgnored` findings.
pub fn not_read<'a>(
    ignored: impl IntoIterator<Item = &'a crate::chain::lint::Finding>,
    reached: &std::collections::BTreeSet<std::path::PathBuf>,
) -> Vec<crate::chain::lint::Finding> {
    use crate::chain::lint::{Code, Finding, Span};
    let mut by_path: std::collections::BTreeMap<&Path, Vec<&str>> = std::collections::BTreeMap::new();
    for f in ignored {
        if f.code == Code::AgentIgnored && !reached.contains(&f.path) {
            by_path.entry(&f.path).or_default().push(&f.message);
        }
    }
    by_path
        .into_iter()
        .map(|(path, messages)| Finding {
            path: path.to_path_buf(),
            code: Code::NotRead,
            span: Span::FirstLine,
            message: format!("no agent this repository is checked for reads this file: {}", messages.join("; ")),
            related: None,
            agent: None,
            fix: None,
        })
        .collect()
}

/// Whether `view`'s agent gets `file` (or a link to it, or its target) by some other entry,
/// or will when a matching file is read (a rule with `paths:`).
pub fn loaded_elsewhere(view: &AgentView, file: &AgentFile) -> bool {
    view.files
        .iter()
        .filter(|f| f.status.reaches() || f.status == Status::Waiting)
        .any(|f| f.path == file.path || same_file(&f.path, Some(&file.path)))
}

/// Whether `a` and `b` are one file (a link and its target, say).
fn same_file(a: &Path, b: Option<&Path>) -> bool {
    b.is_some_and(|b| {
        crate::chain::loader::find::file_key(a).is_some_and(|k| crate::chain::loader::find::file_key(b) == Some(k))
    })
}

#[cfg(test)]
mod tests {
    use super::globs_words;

    #[test]
    fn globs_read_as_a_list() {
        let words = |g: &[&str]| globs_words(&g.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(words(&["src/api/**"]), "`src/api/**`");
        assert_eq!(words(&["a", "b", "c"]), "`a`, `b` or `c`");
    }
}
