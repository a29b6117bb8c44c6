//! The command line's arguments (clap) and what every command makes of them: the folder, the
//! touched files, the settings from `--profile` and `--set`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::chain::settings::{Env, Settings};
use crate::session::options;

/// Exit code for usage and I/O errors.
pub const EXIT_USAGE: u8 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "instructions-lsp",
    version,
    about = "Shows, checks and serves the instruction files (AGENTS.md, CLAUDE.md, …) that coding agents read."
)]
pub struct Cli {
    /// Serve the language server on stdio (the default without a command).
    #[arg(long, global = false)]
    pub stdio: bool,
    /// Log level for stderr (error, warn, info, debug, trace); `RUST_LOG` also works.
    #[arg(long, value_name = "LEVEL", global = true)]
    pub log_level: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the language server on stdio.
    Serve,
    /// Print the block an agent working in PATH gets, plus the blocks that touches add.
    Effective(EffectiveArgs),
    /// Lint instruction files in whole trees and report problems.
    Check(CheckArgs),
    /// Compare what each agent the repository is written for loads in PATH (--profile P or --all
    /// for others).
    Compare(CompareArgs),
    /// Show what a change does to each agent's view between two git revisions (BASE and HEAD,
    /// or the working tree): files that enter or leave, bytes, cuts, findings.
    Diff(DiffArgs),
    /// Serve the Model Context Protocol on stdio, for agents: tools that give the instructions
    /// of the directories the agent works in, once each (see docs/mcp.md).
    Mcp(McpArgs),
    /// Answer an agent's hook (claude or codex): the event JSON on stdin, the instructions it
    /// should add on stdout. Never fails the agent's turn.
    #[command(after_help = HOOK_SNIPPETS)]
    Hook(HookArgs),
}

#[derive(Args, Debug)]
pub struct McpArgs {
    #[command(flatten)]
    pub settings: SettingsArgs,
}

/// What `hook --help` shows: the settings to paste into each agent.
pub const HOOK_SNIPPETS: &str = r#"Claude Code: in .claude/settings.json (or ~/.claude/settings.json)

  {
    "hooks": {
      "SessionStart": [
        { "hooks": [ { "type": "command", "command": "instructions-lsp hook claude" } ] }
      ],
      "PostToolUse": [
        { "matcher": "Read|Write|Edit|MultiEdit",
          "hooks": [ { "type": "command", "command": "instructions-lsp hook claude" } ] }
      ]
    }
  }

Codex: in ~/.codex/hooks.json (or .codex/hooks.json of a trusted project); then start codex and
trust them when it asks ("Hooks need review": "Trust all and continue"), or with /hooks

  {
    "hooks": {
      "SessionStart": [
        { "hooks": [ { "type": "command", "command": "instructions-lsp hook codex" } ] }
      ],
      "PostToolUse": [
        { "matcher": "apply_patch",
          "hooks": [ { "type": "command", "command": "instructions-lsp hook codex" } ] }
      ]
    }
  }

The session start adds the baseline block (profile dsh unless --profile ds4) without the files
the agent loads itself; each read or edit adds the block of the directories it newly reaches,
once per agent session, and a file changed or removed since it was given is replaced or
removed. State: hooks/ in the state directory (stateDir). Problems go to stderr and
hooks/hook.log there; the hook then answers nothing and exits 0."#;

#[derive(Args, Debug)]
pub struct HookArgs {
    /// The agent whose event comes on stdin: claude or codex.
    pub agent: Option<String>,
    /// The rules of the blocks: dsh (the default) or ds4.
    #[arg(long, value_name = "P")]
    pub profile: Option<String>,
    /// Set a setting (stateDir, baselineMaxBytes, …); VALUE is JSON when it parses as JSON, else a
    /// string (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The directory the agents work in.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Print the rows as JSON (the line that says which agents goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// A file the agents have read (their nested and lazy files load); repeatable.
    #[arg(long = "touch", value_name = "FILE")]
    pub touch: Vec<PathBuf>,
    /// Compare these profiles instead of the agents the repository targets (repeatable): dsh,
    /// ds4, codex, claude, gemini, opencode, dsh-next, copilot, cursor, or all.
    #[arg(long, value_name = "P")]
    pub profile: Vec<String>,
    /// Compare every profile.
    #[arg(long)]
    pub all: bool,
    /// Set a setting for every row; VALUE is JSON when it parses as JSON, else a string
    /// (repeatable). Agents take baselineMaxBytes (their budget) and instructionFileCandidates
    /// (their file names).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

/// Settings flags shared by the commands.
#[derive(Args, Debug, Default)]
pub struct SettingsArgs {
    /// A named set of defaults: dsh or ds4; or an agent whose loading rules to mirror: codex,
    /// claude, gemini, opencode, dsh-next, copilot or cursor.
    #[arg(long, value_name = "P")]
    pub profile: Option<String>,
    /// Set a setting; VALUE is JSON when it parses as JSON, else a string (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

#[derive(Args, Debug)]
pub struct EffectiveArgs {
    /// The directory the agent works in.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// A file the agent touches (read, write or edit); repeatable, in order.
    #[arg(long, value_name = "FILE")]
    pub touch: Vec<PathBuf>,
    /// Print the `instructions/effective` result as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub settings: SettingsArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Github,
    /// SARIF 2.1.0, for code-scanning dashboards.
    Sarif,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffFailOn {
    /// A warning or an error finding the base revision does not have.
    NewWarning,
    /// An error finding the base revision does not have.
    NewError,
    /// Exit 0 whatever the findings.
    Never,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The revision the change starts from (a branch, a tag, a commit, `HEAD~1`).
    pub base: String,
    /// The revision to compare with it; without it, the working tree.
    pub head: Option<String>,
    /// How to print: text, a JSON document, or Markdown for a pull request.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// Print JSON (the same as `--format json`).
    #[arg(long)]
    pub json: bool,
    /// When the exit code is 1: a new warning (or error) finding, a new error, or never.
    #[arg(long, value_enum, default_value_t = DiffFailOn::Never)]
    pub fail_on: DiffFailOn,
    /// How the output names BASE (for example `main at 1a2b3c4`); by default the revision as given.
    #[arg(long, value_name = "NAME")]
    pub base_name: Option<String>,
    /// How the output names HEAD (for example `this pull request`); by default the revision as
    /// given, or "the working tree".
    #[arg(long, value_name = "NAME")]
    pub head_name: Option<String>,
    #[command(flatten)]
    pub settings: SettingsArgs,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Trees to check (the current directory when none is named; with --changed: the files a
    /// commit changes, and none changed reports nothing).
    pub paths: Vec<PathBuf>,
    /// PATHS are files a commit changes (as pre-commit passes them): the project of the current
    /// directory is checked, and what is reported is only what those files change, their own
    /// findings and those of the folders whose agents' views they change.
    #[arg(long)]
    pub changed: bool,
    /// How to print findings: `path:line:col: severity[code]: message` lines, a JSON document,
    /// GitHub Actions annotations, or SARIF 2.1.0.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// The lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Warning)]
    pub fail_on: FailOn,
    /// Apply every safe fix first (rename a misspelt front-matter key, join an `applyTo` list,
    /// drop a pattern that matches nothing, part an import from the punctuation after it), then
    /// report what is left.
    #[arg(long)]
    pub fix: bool,
    #[command(flatten)]
    pub settings: SettingsArgs,
}

/// A directory given on the command line, absolute; the error says what is wrong with it in the
/// system's words ("No such file or directory") or ours ("is not a directory").
pub fn directory(path: &std::path::Path) -> Result<PathBuf, String> {
    let abs = crate::paths::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match std::fs::metadata(&abs) {
        Ok(m) if m.is_dir() => Ok(abs),
        Ok(_) => Err(format!("{} is not a directory; give the directory the agent works in", path.display())),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// `--touch` files, absolute. A file that does not exist, or one outside `folder`, is accepted
/// (an agent may touch either) but said so on stderr, since it reaches less than one expects.
pub fn touches(files: &[PathBuf], folder: &std::path::Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for f in files {
        let abs = crate::paths::absolute(f).map_err(|e| format!("--touch {}: {e}", f.display()))?;
        // The repository holding `folder`: Copilot's workspace, where every attached file counts.
        let repository = folder.ancestors().find(|d| d.join(".git").exists());
        if !abs.starts_with(folder) && repository.is_some_and(|r| abs.starts_with(r)) {
            eprintln!(
                "warning: --touch {}: outside {}, so it reaches no instruction file for an agent working there; Copilot (VS Code), whose workspace is the repository, counts it",
                f.display(),
                folder.display()
            );
        } else if !abs.starts_with(folder) {
            eprintln!(
                "warning: --touch {}: outside {}, so it reaches no instruction file",
                f.display(),
                folder.display()
            );
        } else if std::fs::symlink_metadata(&abs).is_err() {
            eprintln!(
                "warning: --touch {}: no such file; it still reaches the directories on its way that exist",
                f.display()
            );
        }
        out.push(abs);
    }
    Ok(out)
}

/// The settings flags of a command that checks trees (`check`, `diff`): `--profile codex` (an
/// agent) checks what that agent gets, as `--set 'profiles=["codex"]'` does; with the agent's
/// name when `--profile` named one.
pub fn tree_settings_args(args: &SettingsArgs) -> (SettingsArgs, Option<&str>) {
    let agent = args.profile.as_deref().filter(|p| crate::chain::agents::NAMES.contains(p));
    let mut out = SettingsArgs { profile: args.profile.clone(), set: args.set.clone() };
    if let Some(name) = agent {
        out.profile = None;
        out.set.push(format!("profiles=[\"{name}\"]"));
    }
    (out, agent)
}

/// Builds settings from `--profile` and `--set`; every problem is a usage error.
pub fn settings_from_args(args: &SettingsArgs, env: &Env) -> Result<Settings, String> {
    let (settings, warnings) = options::settings_from(args.profile.as_deref(), &args.set, env)?;
    for w in warnings {
        eprintln!("warning: {w}");
    }
    Ok(settings)
}
