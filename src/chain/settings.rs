//! Settings (docs/settings.md): profiles, defaults, validation that keeps the last good value.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use super::model::env::Env;

/// A named set of defaults; explicit keys override it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Dsh,
    Ds4,
}

impl Profile {
    pub const NAMES: &'static [&'static str] = &["dsh", "ds4"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "dsh" => Some(Self::Dsh),
            "ds4" => Some(Self::Ds4),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Dsh => "dsh",
            Self::Ds4 => "ds4",
        }
    }
}

/// The envelope of a rendered block (docs/rendering.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    WorkspaceContext,
    SystemReminder,
}

impl Frame {
    pub fn name(self) -> &'static str {
        match self {
            Self::WorkspaceContext => "workspace-context",
            Self::SystemReminder => "system-reminder",
        }
    }
}

/// How a symlinked candidate is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymlinkPolicy {
    Skip,
    WithinRoot,
    Follow,
}

impl SymlinkPolicy {
    pub fn name(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::WithinRoot => "withinRoot",
            Self::Follow => "follow",
        }
    }
}

/// The one user-global instruction file and how it is headed in a block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalFile {
    pub path: PathBuf,
    pub heading: String,
}

/// Fully resolved settings of one session (or one CLI run).
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub profile: Profile,
    pub candidates: Vec<String>,
    pub local_candidates: Vec<String>,
    pub dsh_home: PathBuf,
    pub global_file: Option<GlobalFile>,
    pub root_markers: Vec<String>,
    pub budget_bytes: i64,
    pub max_file_bytes: u64,
    pub frame: Frame,
    pub symlinks: SymlinkPolicy,
    pub dedupe_trimmed: bool,
    pub watch: bool,
    pub state_dir: Option<PathBuf>,
    /// The profiles whose diagnostics are published (docs/targets.md): this session's own `profile`
    /// (its engine findings) and any agent profile of `agents::NAMES`.
    pub profiles: Vec<String>,
    /// Neither `profile` nor `profiles` was set: the agents the repository targets (see
    /// [`crate::chain::targets`]) stand in for `profiles`.
    pub targeted: bool,
    /// `profile` was set: the user chose the engine's rules, so editors show its blocks first
    /// (otherwise they show the agents the session publishes).
    pub profile_chosen: bool,
    /// Candidate entries that were dropped as invalid (empty, `.`, `..`, path separators).
    pub ignored_candidates: Vec<String>,
    /// What these settings set that the agents' profiles read too (`baselineMaxBytes`,
    /// `instructionFileCandidates`), only where they were set: every edge hands it to each
    /// agent over the repository's `instructions-lsp.toml` (`session::project::overrides`).
    pub agent_sets: crate::chain::model::env::Overrides,
}

/// One problem found while reading settings: the key, and what was wrong with its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsProblem {
    pub key: String,
    pub message: String,
    /// True for keys this server does not know at all (the CLI treats them as usage errors).
    pub unknown_key: bool,
}

impl fmt::Display for SettingsProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "setting `{}`: {}", self.key, self.message)
    }
}

/// The largest `maxFileBytes` accepted: a workspace cannot make the server read a file of any
/// size whole.
pub const MAX_FILE_BYTES_CAP: u64 = 16 * 1024 * 1024;

/// Every key of docs/settings.md.
pub const KEYS: &[&str] = &[
    "profile",
    "instructionFileCandidates",
    "localInstructionFileCandidates",
    "dshHome",
    "globalInstructionFile",
    "projectRootMarkers",
    "baselineMaxBytes",
    "maxFileBytes",
    "frame",
    "symlinks",
    "dedupeTrimmed",
    "watch",
    "stateDir",
    "profiles",
];

/// Keys that editor clients keep in the same `instructions` section for themselves.
pub const CLIENT_KEYS: &[&str] = &["server", "trace", "logLevel"];

impl Settings {
    /// The defaults of a profile.
    pub fn defaults(profile: Profile, env: &Env) -> Self {
        Self::parse(
            &Value::Object(Map::from_iter([("profile".to_string(), Value::String(profile.name().into()))])),
            None,
            env,
        )
        .0
    }

    /// Resolves a settings object. A key with a bad value keeps its value from `previous`
    /// (or the profile default) and yields a problem; nothing here fails as a whole.
    pub fn parse(value: &Value, previous: Option<&Settings>, env: &Env) -> (Self, Vec<SettingsProblem>) {
        let mut problems = Vec::new();
        let empty = Map::new();
        let obj = match value {
            Value::Object(map) => map,
            Value::Null => &empty,
            other => {
                problems.push(SettingsProblem {
                    key: "instructions".into(),
                    message: format!("expected an object of settings, got {}", kind_of(other)),
                    unknown_key: false,
                });
                &empty
            }
        };
        for key in obj.keys() {
            if !KEYS.contains(&key.as_str()) && !CLIENT_KEYS.contains(&key.as_str()) {
                problems.push(SettingsProblem {
                    key: key.clone(),
                    message: format!("unknown setting; known settings are {}", KEYS.join(", ")),
                    unknown_key: true,
                });
            }
        }
        let set = |k: &str| obj.get(k).is_some_and(|v| !v.is_null());
        let targeted = !set("profile") && !set("profiles");
        let profile_chosen = set("profile");
        let mut r = Reader { obj, problems: &mut problems };

        let profile = pick(
            r.get("profile", |v| match v.as_str().and_then(Profile::parse) {
                Some(p) => Ok(p),
                None => Err(format!("unknown profile {}; expected one of {}", v, Profile::NAMES.join(", "))),
            }),
            || Profile::Dsh,
            previous.map(|p| p.profile),
        );
        let ds4 = profile == Profile::Ds4;

        let mut ignored_candidates = Vec::new();
        let candidates = pick(
            r.get("instructionFileCandidates", |v| candidate_list(v, &mut ignored_candidates)),
            || vec!["AGENTS.md".to_string(), "CLAUDE.md".to_string()],
            previous.map(|p| p.candidates.clone()),
        );
        let local_candidates = pick(
            r.get("localInstructionFileCandidates", |v| candidate_list(v, &mut ignored_candidates)),
            || if ds4 { vec!["AGENTS.local.md".to_string()] } else { Vec::new() },
            previous.map(|p| p.local_candidates.clone()),
        );

        let dsh_home = pick(
            r.get("dshHome", |v| match v.as_str() {
                Some(s) if !s.is_empty() => absolute_setting_path(s, env),
                _ => Err(format!("expected a directory path, got {v}")),
            }),
            || match &env.dsh_home {
                Some(d) => expand_home(d, env),
                None => env.home.as_ref().map_or_else(|| PathBuf::from(".dsh"), |h| h.join(".dsh")),
            },
            previous.map(|p| p.dsh_home.clone()),
        );
        let global_file = pick_nullable(
            r.get_nullable("globalInstructionFile", |v| match v.as_str() {
                Some(s) if !s.is_empty() => {
                    absolute_setting_path(s, env).map(|path| GlobalFile { heading: tildify(&path, env), path })
                }
                _ => Err(format!("expected a file path or null, got {v}")),
            }),
            || {
                let is_default_home = env.home.as_ref().is_some_and(|h| h.join(".dsh") == dsh_home);
                let heading = if is_default_home { "~/.dsh/AGENTS.md" } else { "$DSH_HOME/AGENTS.md" };
                Some(GlobalFile { path: dsh_home.join("AGENTS.md"), heading: heading.to_string() })
            },
            previous.map(|p| p.global_file.clone()),
        );

        let root_markers = pick(
            r.get("projectRootMarkers", |v| string_list(v, "marker names")),
            || vec![".git".to_string()],
            previous.map(|p| p.root_markers.clone()),
        );
        let budget_bytes = pick(
            r.get("baselineMaxBytes", |v| {
                v.as_i64().ok_or_else(|| format!("expected an integer number of bytes, got {v}"))
            }),
            || 65536,
            previous.map(|p| p.budget_bytes),
        );
        let max_file_bytes = pick(
            r.get("maxFileBytes", |v| match v.as_u64() {
                Some(n) if n <= MAX_FILE_BYTES_CAP => Ok(n),
                Some(n) => Err(format!("{n} bytes is more than this server reads of one file ({MAX_FILE_BYTES_CAP})")),
                None => Err(format!("expected a non-negative integer number of bytes, got {v}")),
            }),
            || 1_048_576,
            previous.map(|p| p.max_file_bytes),
        );
        let frame = pick(
            r.get("frame", |v| match v.as_str() {
                Some("workspace-context") => Ok(Frame::WorkspaceContext),
                Some("system-reminder") => Ok(Frame::SystemReminder),
                _ => Err(format!("expected \"workspace-context\" or \"system-reminder\", got {v}")),
            }),
            || if ds4 { Frame::SystemReminder } else { Frame::WorkspaceContext },
            previous.map(|p| p.frame),
        );
        let symlinks = pick(
            r.get("symlinks", |v| match v.as_str() {
                Some("skip") => Ok(SymlinkPolicy::Skip),
                Some("withinRoot") => Ok(SymlinkPolicy::WithinRoot),
                Some("follow") => Ok(SymlinkPolicy::Follow),
                _ => Err(format!("expected \"skip\", \"withinRoot\" or \"follow\", got {v}")),
            }),
            || if ds4 { SymlinkPolicy::WithinRoot } else { SymlinkPolicy::Skip },
            previous.map(|p| p.symlinks),
        );
        let dedupe_trimmed = pick(r.get("dedupeTrimmed", bool_value), || ds4, previous.map(|p| p.dedupe_trimmed));
        let watch = pick(r.get("watch", bool_value), || true, previous.map(|p| p.watch));
        let state_dir = pick_nullable(
            r.get_nullable("stateDir", |v| match v.as_str() {
                Some(s) if !s.is_empty() => absolute_setting_path(s, env),
                _ => Err(format!("expected a directory path or null, got {v}")),
            }),
            || {
                let base = env
                    .xdg_state_home
                    .as_ref()
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .or_else(|| env.home.as_ref().map(|h| h.join(".local").join("state")));
                base.map(|b| b.join("instructions-lsp"))
            },
            previous.map(|p| p.state_dir.clone()),
        );

        let profiles = pick(
            r.get("profiles", |v| {
                let known = |n: &str| Profile::parse(n).is_some() || crate::chain::model::names::NAMES.contains(&n);
                let names = v.as_array().and_then(|a| a.iter().map(|x| x.as_str().filter(|n| known(n))).collect());
                names.map(|n: Vec<&str>| n.into_iter().map(str::to_string).collect()).ok_or_else(|| {
                    let all: Vec<&str> =
                        Profile::NAMES.iter().chain(crate::chain::model::names::NAMES).copied().collect();
                    format!("expected an array of profile names from {}, got {v}", all.join(", "))
                })
            }),
            || vec![profile.name().to_string()],
            previous.map(|p| p.profiles.clone()),
        );

        // Only what was set: a default budget of the engine is no budget of an agent's.
        let agent_sets = crate::chain::model::env::Overrides {
            max_bytes: match set("baselineMaxBytes") {
                true => u64::try_from(budget_bytes).ok(),
                false => previous.and_then(|p| p.agent_sets.max_bytes),
            },
            candidates: match set("instructionFileCandidates") {
                true => Some(candidates.clone()),
                false => previous.and_then(|p| p.agent_sets.candidates.clone()),
            },
            editor: Default::default(),
        };
        let settings = Self {
            agent_sets,
            profile,
            profiles,
            targeted,
            profile_chosen,
            candidates,
            local_candidates,
            dsh_home,
            global_file,
            root_markers,
            budget_bytes,
            max_file_bytes,
            frame,
            symlinks,
            dedupe_trimmed,
            watch,
            state_dir,
            ignored_candidates,
        };
        (settings, problems)
    }

    /// Every file name that may hold instructions in a directory: candidates, then overlays.
    pub fn all_names(&self) -> impl Iterator<Item = &str> {
        self.candidates.iter().chain(&self.local_candidates).map(String::as_str)
    }
}

/// What one key of a settings object held.
enum Field<T> {
    Absent,
    Null,
    Good(T),
    Bad,
}

/// The value of a key: its own when good, the profile default when absent (or null), the
/// previous value when bad.
fn pick<T>(field: Field<T>, default: impl FnOnce() -> T, previous: Option<T>) -> T {
    match field {
        Field::Good(t) => t,
        Field::Absent | Field::Null => default(),
        Field::Bad => previous.unwrap_or_else(default),
    }
}

/// Like [`pick`] for keys where `null` means "disabled".
fn pick_nullable<T>(field: Field<T>, default: impl FnOnce() -> Option<T>, previous: Option<Option<T>>) -> Option<T> {
    match field {
        Field::Good(t) => Some(t),
        Field::Null => None,
        Field::Absent => default(),
        Field::Bad => previous.unwrap_or_else(default),
    }
}

struct Reader<'a> {
    obj: &'a Map<String, Value>,
    problems: &'a mut Vec<SettingsProblem>,
}

impl Reader<'_> {
    fn get<T>(&mut self, key: &str, parse: impl FnOnce(&Value) -> Result<T, String>) -> Field<T> {
        match self.get_nullable(key, parse) {
            Field::Null => Field::Absent,
            other => other,
        }
    }

    fn get_nullable<T>(&mut self, key: &str, parse: impl FnOnce(&Value) -> Result<T, String>) -> Field<T> {
        match self.obj.get(key) {
            None => Field::Absent,
            Some(Value::Null) => Field::Null,
            Some(v) => match parse(v) {
                Ok(t) => Field::Good(t),
                Err(message) => {
                    self.problems.push(SettingsProblem { key: key.into(), message, unknown_key: false });
                    Field::Bad
                }
            },
        }
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn bool_value(v: &Value) -> Result<bool, String> {
    v.as_bool().ok_or_else(|| format!("expected true or false, got {v}"))
}

fn string_list(v: &Value, what: &str) -> Result<Vec<String>, String> {
    let Some(items) = v.as_array() else {
        return Err(format!("expected an array of {what}, got {}", kind_of(v)));
    };
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("expected an array of {what}, but an entry is {}", kind_of(item)))
        })
        .collect()
}

/// A list of same-directory file names; invalid entries are dropped into `ignored`.
fn candidate_list(v: &Value, ignored: &mut Vec<String>) -> Result<Vec<String>, String> {
    let names = string_list(v, "file names")?;
    let mut kept = Vec::with_capacity(names.len());
    for name in names {
        if is_valid_candidate(&name) {
            if !kept.contains(&name) {
                kept.push(name);
            }
        } else {
            ignored.push(name);
        }
    }
    Ok(kept)
}

/// Candidates are same-directory file names: not empty, `.`, `..`, and without `/` or `\`.
pub fn is_valid_candidate(name: &str) -> bool {
    !(name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\\'))
}

/// Expands `~`, `~/…` and `~\…` to the home directory.
pub fn expand_home(s: &str, env: &Env) -> PathBuf {
    if let Some(home) = &env.home {
        if s == "~" {
            return home.clone();
        }
        if let Some(rest) = s.strip_prefix("~/").or_else(|| s.strip_prefix("~\\")) {
            return home.join(rest);
        }
    }
    PathBuf::from(s)
}

fn absolute_setting_path(s: &str, env: &Env) -> Result<PathBuf, String> {
    let path = expand_home(s, env);
    if path.is_absolute() {
        Ok(crate::paths::normalize(&path))
    } else {
        Err(format!("expected an absolute path or one starting with `~`, got \"{s}\""))
    }
}

/// The path with the home directory written as `~`, `/` separators.
fn tildify(path: &Path, env: &Env) -> String {
    if let Some(rest) = env.home.as_ref().and_then(|h| path.strip_prefix(h).ok()) {
        let rest = crate::paths::slash_join(rest);
        if rest.is_empty() { "~".to_string() } else { format!("~/{rest}") }
    } else {
        crate::paths::slash_join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env() -> Env {
        Env { home: Some("/home/u".into()), dsh_home: None, xdg_state_home: None }
    }

    #[test]
    fn dsh_defaults() {
        let s = Settings::defaults(Profile::Dsh, &env());
        assert_eq!(s.candidates, ["AGENTS.md", "CLAUDE.md"]);
        assert!(s.local_candidates.is_empty());
        assert_eq!(s.global_file.as_ref().map(|g| g.heading.as_str()), Some("~/.dsh/AGENTS.md"));
        assert_eq!(s.global_file.map(|g| g.path), Some(PathBuf::from("/home/u/.dsh/AGENTS.md")));
        assert_eq!(s.budget_bytes, 65536);
        assert_eq!(s.max_file_bytes, 1_048_576);
        assert_eq!(s.frame, Frame::WorkspaceContext);
        assert_eq!(s.symlinks, SymlinkPolicy::Skip);
        assert!(!s.dedupe_trimmed);
        assert_eq!(s.state_dir, Some(PathBuf::from("/home/u/.local/state/instructions-lsp")));
    }

    #[test]
    fn ds4_defaults_and_explicit_override() {
        let (s, problems) = Settings::parse(&json!({"profile": "ds4", "frame": "workspace-context"}), None, &env());
        assert!(problems.is_empty());
        assert_eq!(s.local_candidates, ["AGENTS.local.md"]);
        assert_eq!(s.frame, Frame::WorkspaceContext);
        assert_eq!(s.symlinks, SymlinkPolicy::WithinRoot);
        assert!(s.dedupe_trimmed);
    }

    #[test]
    fn dsh_home_env_changes_heading_and_tilde_expands() {
        let e = Env { dsh_home: Some("~/custom".into()), ..env() };
        let s = Settings::defaults(Profile::Dsh, &e);
        let g = s.global_file.expect("global file");
        assert_eq!(g.path, PathBuf::from("/home/u/custom/AGENTS.md"));
        assert_eq!(g.heading, "$DSH_HOME/AGENTS.md");
        let (s, _) = Settings::parse(&json!({"dshHome": "~\\win"}), None, &env());
        assert_eq!(s.dsh_home, PathBuf::from("/home/u/win"));
    }

    #[test]
    fn explicit_global_file_is_headed_by_its_path() {
        let (s, _) = Settings::parse(&json!({"globalInstructionFile": "~/notes/RULES.md"}), None, &env());
        assert_eq!(s.global_file.map(|g| g.heading), Some("~/notes/RULES.md".to_string()));
        let (s, _) = Settings::parse(&json!({"globalInstructionFile": "/etc/agents.md"}), None, &env());
        assert_eq!(s.global_file.map(|g| g.heading), Some("/etc/agents.md".to_string()));
        let (s, _) = Settings::parse(&json!({"globalInstructionFile": null}), None, &env());
        assert_eq!(s.global_file, None);
    }

    #[test]
    fn invalid_candidates_are_ignored_and_reported() {
        let (s, problems) = Settings::parse(
            &json!({"instructionFileCandidates": ["", ".", "..", "a/b", "a\\b", "CLAUDE.md", "AGENTS.md"]}),
            None,
            &env(),
        );
        assert!(problems.is_empty());
        assert_eq!(s.candidates, ["CLAUDE.md", "AGENTS.md"]);
        assert_eq!(s.ignored_candidates, ["", ".", "..", "a/b", "a\\b"]);
    }

    #[test]
    fn bad_values_keep_the_previous_value_and_say_what_was_wrong() {
        let (prev, _) = Settings::parse(&json!({"baselineMaxBytes": 700}), None, &env());
        let (s, problems) = Settings::parse(
            &json!({"baselineMaxBytes": "lots", "profile": "nope", "frame": 3, "bogus": 1}),
            Some(&prev),
            &env(),
        );
        assert_eq!(s.budget_bytes, 700);
        assert_eq!(s.profile, Profile::Dsh);
        assert_eq!(s.frame, Frame::WorkspaceContext);
        let keys: Vec<_> = problems.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["bogus", "profile", "baselineMaxBytes", "frame"]);
        assert!(problems[0].unknown_key);
        assert!(problems[1].message.contains("expected one of dsh, ds4"), "{}", problems[1]);
        assert!(problems[2].message.contains("integer"), "{}", problems[2]);
    }

    #[test]
    fn relative_paths_are_rejected() {
        let (s, problems) = Settings::parse(&json!({"stateDir": "state"}), None, &env());
        assert_eq!(s.state_dir, Some(PathBuf::from("/home/u/.local/state/instructions-lsp")));
        assert_eq!(problems.len(), 1);
        assert!(problems[0].message.contains("absolute"));
        let (s, _) = Settings::parse(&json!({"stateDir": null}), None, &env());
        assert_eq!(s.state_dir, None);
    }
}
