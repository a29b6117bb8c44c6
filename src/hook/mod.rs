//! `instructions-lsp hook <agent>`: the lifecycle of [`crate::session`] inside Claude Code and
//! Codex, through the hooks they run on their own events (see `docs/hooks.md`).
//!
//! One process per event: the event JSON comes on stdin, the added context goes to stdout in the
//! agent's own output shape, and every problem is logged (stderr and `hooks/hook.log` in the state
//! directory) while the hook answers nothing and exits 0, so that it never fails the agent's turn.
//!
//! Each agent session (its `session_id`) keeps a ledger of its own, in the state directory beside
//! the language server's ledgers, in the same format: `session.restore` continues it, so a file
//! changed or removed since it was given becomes a `replace` or `remove`, and `session.touch`
//! gives each newly reached scope once. What the agent loads by itself (its own profile) is taken
//! out of every block by [`crate::session::own`], so the model sees each file once.

mod patch;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::chain::agents::AgentEnv;
use crate::chain::settings::Settings;
use crate::chain::source::{FileCache, sha256_hex};
use crate::session::Session;
use crate::session::ledger::{self, Batch};
use crate::session::own::Own;

/// The agents whose hooks this command answers.
pub const AGENTS: &[&str] = &["claude", "codex"];

/// The most stdin a hook reads: an event is a few kilobytes (a Write's content at most); more is
/// not an event of ours, and is ignored (said on stderr and in the log).
const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;
/// The longest path the hook follows, in bytes: Linux's `PATH_MAX` (the kernel refuses a longer
/// one), and what keeps a walk up a path's ancestors cheap (each is a copy of the path).
pub const MAX_PATH_BYTES: usize = 4096;
/// The most components a path the hook follows may have: far deeper than any project.
pub const MAX_PATH_COMPONENTS: usize = 256;
/// The log file is started again when it grows past this.
const MAX_LOG_BYTES: u64 = 1024 * 1024;

/// An agent that runs hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
}

impl Agent {
    /// The agent called `name` on the command line (`claude`, `codex`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "claude" => Some(Self::Claude),
            "codex" => Some(Self::Codex),
            _ => None,
        }
    }

    /// Its name, which is also the name of its agent profile.
    pub fn name(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
        }
    }
}

/// What an event asks of the hook.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ask {
    /// A session starts; `fresh` when the agent's context was cleared or compacted, so that what
    /// was given before is gone and the baseline is given again.
    Start { fresh: bool },
    /// A successful tool call touched these files.
    Touch(Vec<PathBuf>),
    /// Nothing to do (a failed call, another tool, another event), and why.
    Nothing(String),
}

/// One hook event of an agent, as far as the hook needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub session_id: String,
    /// The subagent whose tool call this is (`agent_id`): its context is not the main one's.
    pub agent_id: Option<String>,
    pub cwd: PathBuf,
    /// `hook_event_name`, repeated in the answer.
    pub name: String,
    pub ask: Ask,
    /// What of the event was left out (paths past the bounds, files past a patch's cap), to log.
    pub notes: Vec<String>,
}

/// Why a path is not followed: longer than [`MAX_PATH_BYTES`] or deeper than
/// [`MAX_PATH_COMPONENTS`]. Checked before the path is used: the cost of a path grows with the
/// square of its length (every ancestor is walked, each a copy of the path).
fn past_bounds(path: &Path) -> Option<String> {
    let bytes = path.as_os_str().len();
    if bytes > MAX_PATH_BYTES {
        return Some(format!("is {bytes} bytes long, past the {MAX_PATH_BYTES} the hook follows"));
    }
    // Counted lazily: a path within the byte bound has at most half as many components.
    let components = path.components().take(MAX_PATH_COMPONENTS + 1).count();
    (components > MAX_PATH_COMPONENTS)
        .then(|| format!("has more than the {MAX_PATH_COMPONENTS} components the hook follows"))
}

/// A path for display in a log line: its start only, when it is long.
fn shown(path: &Path) -> String {
    let text = path.to_string_lossy();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.into_owned(),
    }
}

fn text_field<'a>(v: &'a Value, key: &str) -> Result<&'a str, String> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| format!("the event has no string field `{key}`"))
}

/// Whether a tool call failed, by what its response says: Claude Code sends failures as
/// `PostToolUseFailure` (never here), but a response object may still say `is_error` or
/// `success: false`; Codex's `apply_patch` response starts `Exit code: N`.
fn failed(response: Option<&Value>) -> bool {
    match response {
        Some(Value::Object(o)) => {
            o.get("is_error").and_then(Value::as_bool) == Some(true)
                || o.get("success").and_then(Value::as_bool) == Some(false)
                || o.get("exit_code").and_then(Value::as_i64).is_some_and(|c| c != 0)
        }
        Some(Value::String(s)) => s
            .strip_prefix("Exit code: ")
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit() && c != '-').next())
            .is_some_and(|code| code != "0"),
        _ => false,
    }
}

/// Reads an event of `agent` from its JSON.
pub fn parse_event(agent: Agent, input: &[u8]) -> Result<Event, String> {
    let v: Value = serde_json::from_slice(input).map_err(|e| format!("the event is not JSON: {e}"))?;
    if !v.is_object() {
        return Err("the event is not a JSON object".into());
    }
    let session_id = text_field(&v, "session_id")?.to_string();
    if session_id.is_empty() {
        return Err("the event's session_id is empty".into());
    }
    let cwd = PathBuf::from(text_field(&v, "cwd")?);
    if let Some(why) = past_bounds(&cwd) {
        return Err(format!("the event's cwd `{}` {why}; the event is ignored", shown(&cwd)));
    }
    if !cwd.is_absolute() {
        return Err(format!("the event's cwd `{}` is not absolute", cwd.display()));
    }
    let mut notes = Vec::new();
    let cwd = crate::paths::normalize(&cwd);
    let name = text_field(&v, "hook_event_name")?.to_string();
    let ask = match name.as_str() {
        "SessionStart" => {
            let source = v.get("source").and_then(Value::as_str).unwrap_or("startup");
            Ask::Start { fresh: matches!(source, "clear" | "compact") }
        }
        "PostToolUse" => {
            let tool = text_field(&v, "tool_name")?;
            let input = v.get("tool_input").unwrap_or(&Value::Null);
            if failed(v.get("tool_response")) {
                Ask::Nothing(format!("{tool} failed"))
            } else {
                match (agent, tool) {
                    (Agent::Claude, "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit") => {
                        let path = ["file_path", "notebook_path"]
                            .iter()
                            .find_map(|k| input.get(k).and_then(Value::as_str))
                            .ok_or_else(|| format!("the {tool} call has no file_path"))?;
                        Ask::Touch(vec![crate::paths::normalize(&cwd.join(path))])
                    }
                    (Agent::Codex, "apply_patch") => {
                        let text = ["command", "input", "patch"]
                            .iter()
                            .find_map(|k| input.get(k).and_then(Value::as_str))
                            .or_else(|| input.as_str())
                            .ok_or_else(|| "the apply_patch call has no patch text".to_string())?;
                        let named = patch::touched(text, &cwd);
                        if named.more > 0 {
                            notes.push(format!(
                                "the patch names {} more files than the {} the hook follows in one event; \
                                 those were left out",
                                named.more,
                                patch::MAX_FILES
                            ));
                        }
                        Ask::Touch(named.paths)
                    }
                    _ => Ask::Nothing(format!("{tool} is not a read or an edit the hook follows")),
                }
            }
        }
        other => Ask::Nothing(format!("{other} is not an event the hook answers")),
    };
    let ask = match ask {
        Ask::Touch(mut paths) => {
            paths.retain(|p| match past_bounds(p) {
                Some(why) => {
                    notes.push(format!("the touched path `{}` {why}; left out", shown(p)));
                    false
                }
                None => true,
            });
            Ask::Touch(paths)
        }
        other => other,
    };
    let agent_id = v.get("agent_id").and_then(Value::as_str).filter(|a| !a.is_empty()).map(str::to_string);
    Ok(Event { session_id, agent_id, cwd, name, ask, notes })
}

/// The answer on stdout: the agent's shape for added context (the same for both agents).
pub fn output(event_name: &str, context: &str) -> String {
    json!({"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": context}}).to_string()
}

impl Event {
    /// What one context of the model is known by: the session, or a subagent of it (a subagent
    /// has a context of its own, which has been given nothing yet).
    pub fn context_key(&self) -> String {
        match &self.agent_id {
            Some(a) => format!("{}\n{a}", self.session_id),
            None => self.session_id.clone(),
        }
    }
}

/// Where one context keeps its state: `<stateDir>/hooks/<agent>/<SHA-256 of its key>`.
pub fn session_dir(state_dir: &Path, agent: Agent, key: &str) -> PathBuf {
    state_dir.join("hooks").join(agent.name()).join(sha256_hex(key.as_bytes()))
}

/// Holds an exclusive lock on the session's directory while alive: hooks of parallel tool calls
/// of one session take turns, so that none gives a block another already gave. The directory
/// itself is locked (no lock file to create: a file creation costs more than the rest of a hook
/// that has nothing to say). Elsewhere than Unix there is no lock.
struct Lock {
    _dir: Option<std::fs::File>,
}

impl Lock {
    fn take(dir: &Path) -> Result<Self, String> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
                .open(dir)
                .map_err(|e| format!("cannot open {}: {e}", dir.display()))?;
            // Released when the file closes.
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
                .map_err(|e| format!("cannot lock {}: {e}", dir.display()))?;
            Ok(Self { _dir: Some(file) })
        }
        #[cfg(not(unix))]
        {
            let _ = dir;
            Ok(Self { _dir: None })
        }
    }
}

/// What a session keeps besides its ledger, in `hook.json`: its folder (the `cwd` of its first
/// event: an agent may change its working directory, as Claude Code follows a `cd` of its shell,
/// and the session stays one, so nothing is given again under another folder) and the files the
/// agent loaded by itself so far (a file it loaded that is gone now is still its own: its removal
/// is not ours to announce).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionFile {
    folder: Option<PathBuf>,
    #[serde(default)]
    agent_files: BTreeSet<PathBuf>,
}

impl SessionFile {
    const NAME: &'static str = "hook.json";

    fn load(dir: &Path) -> Self {
        ledger::read_state_file(&dir.join(Self::NAME), ledger::MAX_LEDGER_BYTES)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    fn save(&self, dir: &Path) -> Result<(), String> {
        let json = serde_json::to_vec(self).map_err(|e| e.to_string())?;
        write_atomic(dir, &dir.join(Self::NAME), &json)
    }
}

fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".hook-")
        .tempfile_in(dir)
        .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
    tmp.write_all(bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    tmp.persist(path).map_err(|e| format!("cannot replace {}: {}", path.display(), e.error))?;
    Ok(())
}

/// The context to add for `event`, or `None`; persists the session.
pub fn respond(agent: Agent, event: &Event, settings: &Settings, env: &AgentEnv) -> Result<Option<String>, String> {
    let touched = match &event.ask {
        Ask::Nothing(_) => return Ok(None),
        Ask::Start { .. } => Vec::new(),
        Ask::Touch(paths) => paths.clone(),
    };
    let state_dir = settings
        .state_dir
        .as_deref()
        .ok_or("no state directory (stateDir is null): the hook cannot remember what it gave")?;
    let dir = session_dir(state_dir, agent, &event.context_key());
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let _lock = Lock::take(&dir)?;
    let cache = FileCache::new();
    let as_loaded = SessionFile::load(&dir);
    let mut session_file = as_loaded.clone();
    // The folder kept in hook.json is input too (anyone able to write in stateDir): held to the
    // bounds of an event's cwd.
    if session_file.folder.as_deref().is_some_and(|f| !f.is_absolute() || past_bounds(f).is_some()) {
        log(Some(state_dir), "the session's folder in hook.json is not a path the hook follows; using the event's cwd");
        session_file.folder = None;
    }
    let folder = session_file.folder.get_or_insert_with(|| event.cwd.clone()).clone();
    let mut session = Session::new(&folder, settings.clone());
    // A new session, or a context that was cleared or compacted: the baseline again.
    let fresh = matches!(event.ask, Ask::Start { fresh: true });
    let (_, how) = session.resume(&cache, Some(&dir), None, fresh);
    let before = match how {
        crate::session::Resumed::Continued { from } => Some(*from),
        crate::session::Resumed::Fresh => None,
        crate::session::Resumed::Replaced(e) => {
            log(Some(state_dir), &format!("{e}; starting the session again"));
            None
        }
    };
    let since = before.as_ref().map_or(0, |l| l.seq);
    for file in &touched {
        session.touch(&cache, file);
    }
    let saved = session.ledger();
    // Most tool calls change nothing: then the ledger is not written again (no fsync).
    if before.as_ref() != Some(&saved) {
        ledger::save(&dir, &saved)?;
    }
    let new: Vec<&Batch> = saved.batches.iter().filter(|b| b.seq > since).collect();
    let mut texts: Vec<String> = Vec::new();
    if !new.is_empty() {
        let mut own = Own::new(agent.name(), std::mem::take(&mut session_file.agent_files));
        // The agent runs with what the repository's instructions-lsp.toml gives it (Codex's
        // file names, say): found from the folder up, without walking the project. Not with
        // the hook's `--set`, which budgets the blocks served, not the agent's own loading.
        let overrides = crate::session::project::configured_overrides(&folder, agent.name());
        own.add(env, &overrides, &folder, &touched);
        texts = new.iter().map(|b| own.trim(b, &session, &cache).batch.text).filter(|t| !t.is_empty()).collect();
        session_file.agent_files = own.into_files();
    }
    if session_file != as_loaded
        && let Err(e) = session_file.save(&dir)
    {
        log(Some(state_dir), &format!("cannot keep the session's folder and the agent's own files: {e}"));
    }
    Ok((!texts.is_empty()).then(|| texts.join("\n\n")))
}

/// Logs a problem: stderr, and `hooks/hook.log` in the state directory when there is one.
fn log(state_dir: Option<&Path>, message: &str) {
    eprintln!("instructions-lsp hook: {message}");
    let Some(dir) = state_dir.map(|d| d.join("hooks")) else { return };
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let path = dir.join("hook.log");
    let too_big = std::fs::symlink_metadata(&path).is_ok_and(|m| m.len() > MAX_LOG_BYTES);
    let mut options = std::fs::OpenOptions::new();
    options.create(true);
    if too_big {
        options.write(true).truncate(true);
    } else {
        options.append(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    if let Ok(mut f) = options.open(&path) {
        let _ = writeln!(f, "{secs} {message}");
    }
}

/// What `hook` does with its arguments and stdin: the answer to print, if any. Every error is
/// returned with the state directory to log it in (when known).
fn answer(
    agent: &str,
    settings: Result<Settings, String>,
    input: &[u8],
) -> Result<Option<String>, (Option<PathBuf>, String)> {
    let settings = settings.map_err(|e| (None, e))?;
    let state = settings.state_dir.clone();
    let fail = |e: String| (state.clone(), e);
    let agent = Agent::parse(agent)
        .ok_or_else(|| fail(format!("unknown agent `{agent}`; expected one of {}", AGENTS.join(", "))))?;
    let event = parse_event(agent, input).map_err(fail)?;
    for note in &event.notes {
        log(state.as_deref(), note);
    }
    let env = AgentEnv::from_process();
    let context = respond(agent, &event, &settings, &env).map_err(fail)?;
    Ok(context.map(|c| output(&event.name, &c)))
}

/// Runs `instructions-lsp hook <agent> [--profile P] [--set KEY=VALUE]…`: every problem is
/// logged, and the exit code is 0 but for an agent it does not know (1).
pub fn run_with(agent: &str, profile: Option<&str>, set: &[String]) -> ExitCode {
    // A hook set up without its agent (or with another's) is a mistake in the agent's settings:
    // said, with exit 1, which the agents show to the user without blocking the turn (Claude
    // Code takes exit 2 as blocking the tool call).
    if Agent::parse(agent).is_none() {
        let said = match agent {
            "" => "name the agent whose event comes on stdin: `instructions-lsp hook claude` or `instructions-lsp hook codex`".to_string(),
            other => format!("unknown agent `{other}`; expected one of {} (`instructions-lsp hook claude`)", AGENTS.join(", ")),
        };
        eprintln!("instructions-lsp hook: {said}; see `instructions-lsp hook --help`");
        let state = crate::session::options::settings_from(None, set, &crate::chain::settings::Env::from_process());
        log(state.ok().and_then(|(s, _)| s.state_dir).as_deref(), &said);
        return ExitCode::from(1);
    }
    let settings = match profile {
        Some(p) if crate::chain::settings::Profile::parse(p).is_none() => {
            Err(format!("hook --profile takes dsh or ds4, not `{p}`"))
        }
        _ => crate::session::options::settings_from(profile, set, &crate::chain::settings::Env::from_process())
            .map(|(s, _)| s),
    };
    run(agent, settings)
}

/// Runs `instructions-lsp hook <agent>` with its settings: always exit 0.
pub fn run(agent: &str, settings: Result<Settings, String>) -> ExitCode {
    let mut input = Vec::new();
    let state_dir = settings.as_ref().ok().and_then(|s| s.state_dir.as_deref());
    // One byte past the cap tells an event that is too large from one that fits exactly.
    if let Err(e) = std::io::stdin().lock().take(MAX_INPUT_BYTES + 1).read_to_end(&mut input) {
        log(state_dir, &format!("cannot read the event: {e}"));
        return ExitCode::SUCCESS;
    }
    if input.len() as u64 > MAX_INPUT_BYTES {
        let mib = MAX_INPUT_BYTES >> 20;
        log(
            state_dir,
            &format!(
                "the event is larger than {MAX_INPUT_BYTES} bytes ({mib} MiB), the most the hook reads; it is ignored"
            ),
        );
        return ExitCode::SUCCESS;
    }
    match answer(agent, settings, &input) {
        Ok(Some(text)) => {
            let mut out = std::io::stdout().lock();
            if let Err(e) =
                out.write_all(text.as_bytes()).and_then(|()| out.write_all(b"\n")).and_then(|()| out.flush())
            {
                eprintln!("instructions-lsp hook: cannot answer: {e}");
            }
        }
        Ok(None) => {}
        Err((state_dir, message)) => log(state_dir.as_deref(), &message),
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_calls_are_told_by_their_response() {
        assert!(failed(Some(&json!("Exit code: 1\nWall time: 0 seconds\nOutput:\nerror"))));
        assert!(!failed(Some(&json!("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess."))));
        assert!(failed(Some(&json!({"is_error": true}))));
        assert!(failed(Some(&json!({"success": false}))));
        assert!(!failed(Some(&json!({"type": "text", "file": {"filePath": "/x"}}))));
        assert!(!failed(None));
    }

    #[test]
    fn events_other_than_reads_and_edits_ask_nothing() {
        let ev = |v: Value| parse_event(Agent::Claude, v.to_string().as_bytes()).map(|e| e.ask);
        let base = json!({"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "cat a/AGENTS.md"}, "tool_response": {}});
        assert!(matches!(ev(base), Ok(Ask::Nothing(_))), "a shell command is never a touch");
        let read = json!({"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": {"file_path": "a/b.rs"}, "tool_response": {}});
        assert_eq!(ev(read), Ok(Ask::Touch(vec![PathBuf::from("/p/a/b.rs")])));
        let failure = json!({"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUseFailure",
            "tool_name": "Read", "tool_input": {"file_path": "/p/a/b.rs"}, "error": "no such file"});
        assert!(matches!(ev(failure), Ok(Ask::Nothing(_))));
        assert!(ev(json!({"cwd": "/p", "hook_event_name": "SessionStart"})).is_err());
        assert!(ev(json!({"session_id": "s", "cwd": "rel", "hook_event_name": "SessionStart"})).is_err());
        assert!(ev(json!([1])).is_err());
    }
}
