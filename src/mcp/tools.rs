//! The MCP server's tools over the engine's sessions: their definitions (names, descriptions,
//! input schemas), the checking of their arguments, and what each answers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::chain::agents::{self, AgentEnv};
use crate::chain::settings::{Env, Profile, Settings};
use crate::chain::source::FileCache;
use crate::paths::path_to_uri;
use crate::session::ledger::{self, Batch, Reason};
use crate::session::own::Own;
use crate::session::profiles::{Fresh, ProfileResult};
use crate::session::{Resumed, Session};

use super::roots::Roots;

pub const FOR: &str = "instructions_for";
pub const TOUCH: &str = "instructions_touch";
pub const TRANSITIONS: &str = "instructions_transitions";
/// Every tool of the server.
pub const TOOL_NAMES: &[&str] = &[FOR, TOUCH, TRANSITIONS];

/// The MCP clients that are agents with a profile here: the name each gives in `clientInfo`
/// at `initialize` (as their sources spell it), and its profile.
pub const CLIENTS: &[(&str, &str)] = &[
    ("claude-code", "claude"),
    ("codex-mcp-client", "codex"),
    ("gemini-cli-mcp-client", "gemini"),
    ("opencode", "opencode"),
];

/// The agent profile of the MCP client called `name` (its `clientInfo.name`), if it is one of
/// [`CLIENTS`].
pub fn client_agent(name: &str) -> Option<&'static str> {
    CLIENTS.iter().find(|(client, _)| *client == name).map(|(_, agent)| *agent)
}

/// The kinds of file access a touch reports; the engine treats them alike (each reaches the
/// directories on the file's way), the kind is for the record.
const KINDS: &[&str] = &["read", "write", "edit"];

/// The sessions of one MCP connection, one per client root, and what they share.
pub struct Connection {
    env: Env,
    agent_env: AgentEnv,
    /// The engine's settings for every session (`--profile dsh|ds4`, `--set`).
    settings: Settings,
    /// The profile `instructions_for` answers for when the call names none.
    default_profile: String,
    /// Where ledgers go: `<stateDir>/mcp`, beside the language server's but apart from them, so
    /// that an editor and an agent working in one folder do not overwrite each other's ledger.
    state_dir: Option<PathBuf>,
    cache: FileCache,
    /// The client's roots: asked at the first call, and again at the first call after they
    /// changed (kept until then).
    roots: Roots,
    sessions: BTreeMap<PathBuf, Session>,
    /// By root, the client's agent and the files it loaded by itself so far (see
    /// [`crate::session::own`]): left out of what `instructions_touch` and
    /// `instructions_transitions` return to it.
    own: BTreeMap<PathBuf, (String, BTreeSet<PathBuf>)>,
    /// Ledger files that could not be written, warned about once each.
    unwritable: std::collections::BTreeSet<PathBuf>,
}

/// A tool's answer: the text for the model and the structured result.
pub struct Answer {
    pub text: String,
    pub structured: Value,
}

impl Answer {
    /// The block text first (when there is one), then the metadata as compact JSON (the
    /// structured result without the texts it repeats), and the structured result itself.
    pub fn into_result(self) -> CallToolResult {
        let mut meta = self.structured.clone();
        strip_texts(&mut meta);
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(ContentBlock::text(self.text));
        }
        content.push(ContentBlock::text(meta.to_string()));
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(self.structured);
        result
    }
}

/// Removes the block texts from a structured result (they are the first content block already).
fn strip_texts(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for key in ["text", "parts"] {
                m.remove(key);
            }
            m.values_mut().for_each(strip_texts);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_texts),
        _ => {}
    }
}

fn schema(value: Value) -> Arc<JsonObject> {
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

/// The tools as `tools/list` shows them.
pub fn definitions() -> Vec<Tool> {
    let profiles: Vec<&str> = Profile::NAMES.iter().chain(agents::NAMES).copied().collect();
    let read_only = |title: &str| ToolAnnotations::with_title(title).read_only(true).destructive(false);
    vec![
        Tool::new(
            FOR,
            "The project instructions (AGENTS.md, CLAUDE.md and similar files) that apply to a directory or \
             file, as the blocks an agent working there should have: the baseline (the user-global file, then \
             the project root down to the workspace root), the nested blocks of directories reached so far, and, \
             for a path below the root, the block that working on it adds. Call it when a task starts and after \
             your context was compacted, with the directory you work in; it does not count as a touch. The \
             result lists each file with its status (loaded, truncated, omitted, shadowed), bytes and the bytes \
             kept after the budget cut. `profile` shows what another agent loads there instead.",
            schema(json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "An absolute path (or one relative to the workspace root) of the directory or file you work on."
                    },
                    "profile": {
                        "type": "string",
                        "enum": profiles,
                        "description": "Whose loading rules to follow: dsh or ds4 (this server's engine), or an agent (codex, claude, gemini, opencode, dsh-next, copilot, cursor). Default: the server's profile."
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            })),
        )
        .with_annotations(read_only("Instructions for a path")),
        Tool::new(
            TOUCH,
            "Report a file you read, write or edit, and get only what is new for you: the instructions of the \
             directories it newly reaches (nested AGENTS.md and the like), and replacements or removals of \
             instruction files that changed on disk since you were given them. Each block comes once per \
             session: an empty result means nothing new, so there is no need to touch the same directory again. \
             Follow the returned instructions for the files they govern.",
            schema(json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "An absolute path (or one relative to the workspace root) of the file you read, write or edit."
                    },
                    "kind": {
                        "type": "string",
                        "enum": KINDS,
                        "description": "What you do with the file."
                    }
                },
                "required": ["path", "kind"],
                "additionalProperties": false
            })),
        )
        .with_annotations(ToolAnnotations::with_title("Touch a file").read_only(false).destructive(false).idempotent(true)),
        Tool::new(
            TRANSITIONS,
            "Catch up after resuming or after your context was compacted: every batch of instruction changes \
             after `since` (the `seq` of the last answer you kept; 0 for everything), each with its set, replace \
             and remove changes, the files' SHA-256 digests and the block text to append, so that you get what \
             you missed without duplicates. When `since` is older than the log keeps, one `baseline` batch of \
             the whole current state comes instead (`reset`: true). Pass the result's `seq` next time.",
            schema(json!({
                "type": "object",
                "properties": {
                    "since": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "The seq of the last batch you have; 0 for everything."
                    },
                    "path": {
                        "type": "string",
                        "description": "A path inside the workspace root whose session to read; needed only when the client has several roots."
                    }
                },
                "required": ["since"],
                "additionalProperties": false
            })),
        )
        .with_annotations(read_only("Instruction changes since a seq")),
    ]
}

impl Connection {
    /// The core for `mcp`'s flags: `--profile` names the default profile (an agent's, or the
    /// engine's `dsh`/`ds4`), `--set` the engine's settings.
    pub fn from_args(profile: Option<&str>, set: &[String], env: Env) -> Result<Self, String> {
        let agent = profile.filter(|p| agents::NAMES.contains(p));
        let engine = if agent.is_some() { None } else { profile };
        let (settings, warnings) = crate::session::options::settings_from(engine, set, &env)?;
        for w in warnings {
            tracing::warn!("{w}");
        }
        let default_profile = agent.map_or_else(|| settings.profile.name().to_string(), str::to_string);
        Ok(Self {
            agent_env: AgentEnv::with_home(&env),
            env,
            state_dir: settings.state_dir.as_ref().map(|d| d.join("mcp")),
            settings,
            default_profile,
            cache: FileCache::new(),
            roots: Roots::default(),
            sessions: BTreeMap::new(),
            own: BTreeMap::new(),
            unwritable: std::collections::BTreeSet::new(),
        })
    }

    /// Whether the roots must be asked before the next call, `changes` roots changes having
    /// been seen (see [`Roots::stale`]).
    pub fn roots_stale(&self, changes: u64) -> bool {
        self.roots.stale(changes)
    }

    /// The client's answer to `roots/list` (see [`Roots::answered`]).
    pub fn roots_answered(&mut self, changes: u64, listed: Option<Vec<PathBuf>>, cwd: &Path) {
        self.roots.answered(changes, listed, cwd);
    }

    /// Runs tool `name` for `client`, the agent profile of the calling client when it is known
    /// (see [`client_agent`]); `Err` is a tool error whose message says what was wrong.
    pub fn call(&mut self, name: &str, args: &JsonObject, client: Option<&str>) -> Result<Answer, String> {
        match name {
            FOR => {
                check_keys(FOR, args, &["path", "profile"])?;
                self.instructions_for(args)
            }
            TOUCH => {
                check_keys(TOUCH, args, &["path", "kind"])?;
                self.touch(args, client)
            }
            TRANSITIONS => {
                check_keys(TRANSITIONS, args, &["since", "path"])?;
                self.transitions(args, client)
            }
            other => Err(format!("unknown tool `{other}`; this server has {}", TOOL_NAMES.join(", "))),
        }
    }

    fn roots(&self) -> &[PathBuf] {
        self.roots.list()
    }

    /// The roots for an error: a few of them, then how many more (a client may list
    /// thousands, and every error would carry them all).
    fn roots_list(&self) -> String {
        const SHOWN: usize = 3;
        let roots = self.roots();
        let mut out = roots.iter().take(SHOWN).map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ");
        if roots.len() > SHOWN {
            let number = |n: usize| crate::chain::words::number(n as u64);
            out.push_str(&format!(" and {} more: {} roots", number(roots.len() - SHOWN), number(roots.len())));
        }
        out
    }

    /// A path argument as the root whose session it belongs to and the absolute path: a
    /// `file://` URI, an absolute path, or one relative to the (only) root.
    fn resolve(&self, raw: &str) -> Result<(PathBuf, PathBuf), String> {
        if raw.trim().is_empty() {
            return Err("`path` is empty; give an absolute path, or one relative to the workspace root".into());
        }
        let given = if raw.starts_with("file:") {
            crate::paths::uri_to_path(raw).ok_or_else(|| format!("`{raw}` is not a local file:// URI"))?
        } else {
            PathBuf::from(raw)
        };
        let path = if given.is_absolute() {
            crate::paths::normalize(&given)
        } else {
            let [root] = self.roots() else {
                return Err(format!(
                    "`{raw}` is relative, and the client has several roots ({}); give an absolute path",
                    self.roots_list()
                ));
            };
            let path = crate::paths::normalize(&root.join(&given));
            if !crate::paths::starts_with(&path, root) {
                return Err(format!("`{raw}` escapes the workspace root {}; give a path inside it", root.display()));
            }
            path
        };
        let root = self
            .roots()
            .iter()
            .filter(|r| crate::paths::starts_with(&path, r))
            .max_by_key(|r| r.components().count())
            .ok_or_else(|| {
                format!(
                    "{} is outside every workspace root of this session ({}); give a path inside one of them",
                    path.display(),
                    self.roots_list()
                )
            })?
            .clone();
        let path = crate::paths::within(&path, &root).unwrap_or(path);
        Ok((root, path))
    }

    /// Brings the root's session up to date before a call: starts it (continuing its ledger
    /// when there is one, with a `restart` batch of what changed meanwhile), or reconciles it
    /// with the disk (a changed file is replaced, a deleted one removed). Returns the batches
    /// this made.
    fn prepare(&mut self, root: &Path) -> Vec<Batch> {
        if let Some(session) = self.sessions.get_mut(root) {
            return session.reconcile(&self.cache, Reason::Change).into_iter().collect();
        }
        let mut session = Session::new(root, self.settings.clone());
        let names = crate::chain::targets::names_below(&session.project_root());
        session.refresh_targets_logged(&names);
        let (batch, how) = session.resume(&self.cache, self.state_dir.as_deref(), None, false);
        match how {
            Resumed::Continued { from } => tracing::info!("{}: continuing from seq {}", root.display(), from.seq),
            Resumed::Replaced(e) => {
                tracing::warn!("{}: {e}; starting afresh (the ledger will be replaced)", root.display());
            }
            Resumed::Fresh => {}
        }
        self.sessions.insert(root.to_path_buf(), session);
        batch.into_iter().collect()
    }

    /// Writes the root's ledger (after a call that added batches).
    fn persist(&mut self, root: &Path) {
        let (Some(dir), Some(session)) = (&self.state_dir, self.sessions.get(root)) else { return };
        let file = ledger::ledger_path(dir, &session.folder);
        match ledger::save(dir, &session.ledger()) {
            Ok(()) => {
                self.unwritable.remove(&file);
            }
            Err(e) => {
                if self.unwritable.insert(file) {
                    tracing::warn!("{}: cannot persist the session ({e}); it goes on in memory", root.display());
                }
            }
        }
    }

    /// [`Self::prepare`], then `f` on the session; persists when anything was added.
    fn with_session<T>(
        &mut self,
        root: &Path,
        f: impl FnOnce(&mut Session, &FileCache, &mut Vec<Batch>) -> Result<T, String>,
    ) -> Result<T, String> {
        let mut batches = self.prepare(root);
        let Some(session) = self.sessions.get_mut(root) else {
            return Err(format!("no session for {}", root.display()));
        };
        let before = session.seq;
        let out = f(session, &self.cache, &mut batches);
        if !batches.is_empty() || session.seq != before {
            self.persist(root);
        }
        out
    }

    fn instructions_for(&mut self, args: &JsonObject) -> Result<Answer, String> {
        let raw = string_arg(args, "path", FOR)?.ok_or_else(|| missing("path", FOR))?;
        let name = string_arg(args, "profile", FOR)?.unwrap_or_else(|| self.default_profile.clone());
        let known: Vec<&str> = Profile::NAMES.iter().chain(agents::NAMES).copied().collect();
        if !known.contains(&name.as_str()) {
            return Err(format!("unknown profile `{name}`; expected one of {}", known.join(", ")));
        }
        let (root, path) = self.resolve(&raw)?;
        let (env, agent_env) = (self.env.clone(), self.agent_env.clone());
        let (result, seq, folder) = self.with_session(&root, |session, cache, _| {
            // A directory below the root shows what working on a file inside it adds.
            let preview =
                (path != session.folder).then(|| if path.is_dir() { path.join(".touch") } else { path.clone() });
            let result = profile_result(session, cache, &name, &env, &agent_env, preview.as_deref())?;
            Ok((result, session.seq, session.folder.clone()))
        })?;
        let mut structured = serde_json::to_value(&result).map_err(|e| e.to_string())?;
        if let Some(obj) = structured.as_object_mut() {
            // `text` is `parts` joined by a blank line: a client that hands the model the
            // structured result (Claude Code does) would give it every block twice.
            obj.remove("text");
            obj.insert("folder".into(), Value::String(path_to_uri(&folder)));
            obj.insert("path".into(), Value::String(path.display().to_string()));
            obj.insert("seq".into(), json!(seq));
        }
        let text = if result.text.is_empty() {
            // Why, in the words every edge uses.
            let why = result.nothing.as_deref().unwrap_or("no file it reads is on its way here");
            format!("{} loads nothing for {}: {why}.", result.name, path.display())
        } else {
            result.text
        };
        Ok(Answer { text, structured })
    }

    /// `batches` as `client` should get them: without the files it loads by itself (working in
    /// the root, having read what the session reached), and the paths of those left out, in
    /// order, each once. A batch left with nothing is dropped. For an unknown client: all.
    fn without_own(&mut self, client: Option<&str>, root: &Path, batches: Vec<Batch>) -> (Vec<Batch>, Vec<String>) {
        let (Some(agent), Some(session)) = (client, self.sessions.get(root)) else { return (batches, Vec::new()) };
        if batches.is_empty() {
            return (batches, Vec::new());
        }
        let known = self.own.remove(root).filter(|(a, _)| a == agent).map(|(_, files)| files).unwrap_or_default();
        let mut own = Own::new(agent, known);
        own.add(&self.agent_env, &session.configured_overrides(agent), &session.folder, &session.touched_paths());
        let mut left_out: Vec<String> = Vec::new();
        let mut kept = Vec::new();
        for batch in &batches {
            let trimmed = own.trim(batch, session, &self.cache);
            // Dropped only when emptied here (a reset's baseline of nothing stays, as for anyone).
            let emptied = trimmed.batch.changes.is_empty() && !trimmed.left_out.is_empty();
            for c in trimmed.left_out {
                if !left_out.contains(&c.path) {
                    left_out.push(c.path);
                }
            }
            if !emptied {
                kept.push(trimmed.batch);
            }
        }
        self.own.insert(root.to_path_buf(), (agent.to_string(), own.into_files()));
        (kept, left_out)
    }

    fn touch(&mut self, args: &JsonObject, client: Option<&str>) -> Result<Answer, String> {
        let raw = string_arg(args, "path", TOUCH)?.ok_or_else(|| missing("path", TOUCH))?;
        let kind = string_arg(args, "kind", TOUCH)?.ok_or_else(|| missing("kind", TOUCH))?;
        if !KINDS.contains(&kind.as_str()) {
            return Err(format!("{TOUCH}: `kind` is `{kind}`; expected one of {}", KINDS.join(", ")));
        }
        let (root, path) = self.resolve(&raw)?;
        let (batches, seq, folder) = self.with_session(&root, |session, cache, batches| {
            let before = session.seq;
            // A directory is reached itself, as a file inside it would reach it.
            let file = if path.is_dir() { path.join(".touch") } else { path.clone() };
            let added = session.touch(cache, &file);
            tracing::debug!("{kind} {}: {} new nested files", path.display(), added.map_or(0, |a| a.files.len()));
            if session.seq != before {
                batches.extend(session.transitions(cache, before).batches);
            }
            Ok((std::mem::take(batches), session.seq, session.folder.clone()))
        })?;
        let (batches, left_out) = self.without_own(client, &root, batches);
        let text = block_text(&batches);
        let structured = json!({
            "folder": path_to_uri(&folder),
            "path": path.display().to_string(),
            "kind": kind,
            "seq": seq,
            "client": client,
            "leftOut": left_out,
            "batches": batches,
        });
        Ok(Answer { text, structured })
    }

    fn transitions(&mut self, args: &JsonObject, client: Option<&str>) -> Result<Answer, String> {
        let since = match args.get("since") {
            None | Some(Value::Null) => return Err(missing("since", TRANSITIONS)),
            Some(v) => v.as_u64().ok_or_else(|| {
                format!("{TRANSITIONS}: `since` must be a whole number of at least 0 (a seq), got {v}")
            })?,
        };
        let root = match string_arg(args, "path", TRANSITIONS)? {
            Some(raw) => self.resolve(&raw)?.0,
            None => match self.roots() {
                [root] => root.clone(),
                _ => {
                    return Err(format!(
                        "{TRANSITIONS}: the client has several roots ({}); pass `path` inside the one you mean",
                        self.roots_list()
                    ));
                }
            },
        };
        let mut result = self.with_session(&root, |session, cache, _| {
            if since > session.seq {
                return Err(format!(
                    "{TRANSITIONS}: `since` is {since}, but this session is only at seq {}; pass the seq of an \
                     answer you got (or 0 for everything)",
                    session.seq
                ));
            }
            Ok(session.transitions(cache, since))
        })?;
        let (batches, left_out) = self.without_own(client, &root, std::mem::take(&mut result.batches));
        result.batches = batches;
        let text = block_text(&result.batches);
        let mut structured = serde_json::to_value(&result).map_err(|e| e.to_string())?;
        if let Some(obj) = structured.as_object_mut() {
            obj.insert("client".into(), json!(client));
            obj.insert("leftOut".into(), json!(left_out));
        }
        Ok(Answer { text, structured })
    }
}

/// What profile `name` gives in the session's folder after its touches (and `preview`): the
/// answer the language server gives (see [`crate::session::profiles`]).
fn profile_result(
    session: &Session,
    cache: &FileCache,
    name: &str,
    env: &Env,
    agent_env: &AgentEnv,
    preview: Option<&Path>,
) -> Result<ProfileResult, String> {
    crate::session::profiles::one(
        session,
        &Fresh { cache, agent_env, repo: Default::default() },
        name,
        env,
        preview,
        true,
    )
}

/// The blocks of batches, in order, separated by a blank line.
fn block_text(batches: &[Batch]) -> String {
    batches.iter().map(|b| b.text.as_str()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n\n")
}

fn missing(key: &str, tool: &str) -> String {
    format!("{tool}: `{key}` is required")
}

/// A string argument; `Ok(None)` when absent or null, `Err` when it is not a string.
fn string_arg(args: &JsonObject, key: &str, tool: &str) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("{tool}: `{key}` must be a string, got {other}")),
    }
}

/// Refuses arguments the tool does not take (a misspelt name would otherwise be ignored).
fn check_keys(tool: &str, args: &JsonObject, known: &[&str]) -> Result<(), String> {
    match args.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!("{tool}: unknown argument `{k}`; it takes {}", known.join(" and "))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_known_by_the_names_their_sources_give() {
        assert_eq!(client_agent("claude-code"), Some("claude"));
        assert_eq!(client_agent("codex-mcp-client"), Some("codex"));
        assert_eq!(client_agent("gemini-cli-mcp-client"), Some("gemini"));
        assert_eq!(client_agent("opencode"), Some("opencode"));
        assert_eq!(client_agent("mcp"), None, "the Python SDK's default name");
        assert_eq!(client_agent("Claude-Code"), None, "names are compared exactly");
        assert!(CLIENTS.iter().all(|(_, agent)| agents::NAMES.contains(agent)));
    }

    #[test]
    fn an_error_names_a_few_roots_and_how_many_there_are() {
        let mut c = Connection::from_args(None, &["stateDir=null".to_string()], Env::default()).expect("connection");
        let roots: Vec<PathBuf> = (0..20_000).map(|i| PathBuf::from(format!("/work/root{i:05}"))).collect();
        c.roots_answered(0, Some(roots), Path::new("/"));
        let Err(e) = c.resolve("/elsewhere/x") else { panic!("a path outside every root") };
        assert!(e.contains("(/work/root00000, /work/root00001, /work/root00002 and 19,997 more: 20,000 roots)"), "{e}");
        assert!(e.len() < 300, "{e}");
        let Err(e) = c.resolve("relative/x") else { panic!("relative with several roots") };
        assert!(e.len() < 300, "{e}");
    }
}
