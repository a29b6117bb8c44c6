//! What one profile, or every profile (`"all"`), loads in a session's folder after its touches,
//! in one shape for the engine's profiles and the agents': the answer of the server's
//! `instructions/effective` with `profile` and of the MCP tool `instructions_for`.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::chain::agents::{self, AgentView};
use crate::chain::settings::{Env, Profile, Settings};
use crate::chain::source::FileCache;
use crate::chain::tokens::{self, Tokens};
use crate::paths::path_to_uri;
use crate::session::Session;
use crate::session::answer::EffectiveResult;

/// One agent's view of a folder and the findings it makes.
pub struct AgentAnswer {
    pub view: AgentView,
    pub findings: Vec<crate::chain::lint::Finding>,
    /// What the view read (see [`agents::dirs_read`]); `None` when it cannot be remembered.
    pub dirs: Option<BTreeSet<PathBuf>>,
}

/// Where the answers get agents' views: the language server remembers them while it watches
/// what they read; a one-shot caller (the MCP server, the CLI) computes each.
pub trait Views {
    fn cache(&self) -> &FileCache;
    /// The view of agent `name` in `folder` after the `touched` files; `None` for a name that
    /// is not an agent. `watch`: the caller may remember it while what it read is watched.
    fn agent_view(
        &self,
        name: &str,
        overrides: &agents::Overrides,
        folder: &Path,
        touched: &[PathBuf],
        watch: bool,
    ) -> Option<Arc<AgentAnswer>>;

    /// Where agents start in `session`'s folder and what they miss in folders without files of
    /// their own (see [`crate::session::starts`]), when the caller has checked the folder's
    /// tree: the language server does for its diagnostics, and forgets the tree, and every
    /// answer it remembered, when anything changes on disk.
    fn starts(&self, _session: &Session) -> Option<crate::session::starts::Summary> {
        None
    }
}

/// [`Views`] that computes every view afresh.
pub struct Fresh<'a> {
    pub cache: &'a FileCache,
    pub agent_env: &'a agents::AgentEnv,
    /// One listing of each repository for all the views of the answer.
    pub repo: Arc<agents::RepoCache>,
}

impl Views for Fresh<'_> {
    fn cache(&self) -> &FileCache {
        self.cache
    }

    fn agent_view(
        &self,
        name: &str,
        overrides: &agents::Overrides,
        folder: &Path,
        touched: &[PathBuf],
        _watch: bool,
    ) -> Option<Arc<AgentAnswer>> {
        let profile = agents::profile(name, self.agent_env, overrides)?;
        let view = agents::with_repo_cache(&self.repo, || agents::load(&profile, folder, touched));
        let findings = agents::view_findings(&view, folder);
        Some(Arc::new(AgentAnswer { view, findings, dirs: None }))
    }
}

/// One profile's answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileResult {
    pub profile: String,
    /// The agent's name for people ("Claude Code"); the profile's own for `dsh` and `ds4`.
    pub name: String,
    /// What the rules mirror: the agent release, or the seeds' rules for `dsh` and `ds4`.
    pub mirrors: String,
    /// How every edge heads this answer ([`agents::title`]): "Codex CLI 0.171.0 (codex)".
    pub headline: String,
    /// Why the text is empty, when it is ([`agents::why_nothing`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nothing: Option<String>,
    /// The text the agent gets: its `parts` joined by a blank line.
    pub text: String,
    /// The separate messages or blocks the agent adds, in order (for `dsh` and `ds4`, the
    /// blocks).
    pub parts: Vec<String>,
    pub bytes: usize,
    /// The size of `parts` in tokens (see [`crate::chain::tokens`]); absent when the encoding
    /// cannot be loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    pub files: Vec<ProfileFile>,
    /// The imports the agent does not load because of the folder it starts in, each in the
    /// words `effective` and `compare` print (see [`skipped_imports`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub imports_skipped: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileFile {
    pub uri: String,
    /// Named from the project root when inside it, else whole (the `uri` names it whole).
    pub path: String,
    pub scope: String,
    pub status: String,
    pub bytes: u64,
    pub included_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The globs a `waiting` rule waits for (a touch of a matching file loads it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub globs: Vec<String>,
}

/// The size of what one agent gets when it starts in a folder, touching nothing.
#[derive(Debug, Serialize)]
pub struct Size {
    pub agent: String,
    pub bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
}

/// What each of `names` (agents; other names are passed over) gets started in `dir`, with the
/// settings its project's configuration gives it and `set` (the caller's): the sizes
/// `check --format json` reports.
pub fn sizes(dir: &Path, names: &[String], set: &agents::Overrides) -> Vec<Size> {
    let env = agents::AgentEnv::from_process();
    names
        .iter()
        .filter_map(|name| {
            let o = super::project::merged(super::project::configured_overrides(dir, name), Some(set));
            let view = agents::load(&agents::profile(name, &env, &o)?, dir, &[]);
            let bytes = view.parts.iter().map(String::len).sum();
            let tokens = tokens::of_parts(view.profile, view.parts.iter().map(String::as_str));
            Some(Size { agent: name.clone(), bytes, tokens })
        })
        .collect()
}

/// Every name `profile` accepts.
pub fn names() -> Vec<&'static str> {
    Profile::NAMES.iter().chain(agents::NAMES).copied().chain(["all", "targets"]).collect()
}

/// The answer for `name` in `session`'s folder, or what was wrong with `name`. `preview`, a
/// path below the folder, counts as one more touch: what each agent loads once it reads it.
/// `tokens`: each profile's size in tokens too (the first count loads the encoding, see
/// [`crate::chain::tokens`]). With it, the directories it read (`None` when it cannot be
/// remembered), so that it can be remembered while they are watched.
pub fn answer(
    session: &Session,
    views: &dyn Views,
    name: &str,
    env: &Env,
    preview: Option<&Path>,
    tokens: bool,
) -> Result<(Value, Option<BTreeSet<PathBuf>>), String> {
    let q = Query {
        session,
        views,
        env,
        preview,
        tokens,
        dirs: RefCell::new(Some(BTreeSet::new())),
        root: std::cell::OnceCell::new(),
    };
    let value = q.answer(name)?;
    Ok((value, q.dirs.into_inner()))
}

/// One profile's answer (an engine profile or an agent), as [`answer`] gives it in `"all"`;
/// with its size in tokens when `tokens` (the first count loads the encoding, 0.1 s).
pub fn one(
    session: &Session,
    views: &dyn Views,
    name: &str,
    env: &Env,
    preview: Option<&Path>,
    tokens: bool,
) -> Result<ProfileResult, String> {
    let q = Query { session, views, env, preview, tokens, dirs: RefCell::new(None), root: Default::default() };
    q.one(name)
}

impl Query<'_> {
    fn answer(&self, name: &str) -> Result<Value, String> {
        let (q, session) = (self, self.session);
        let to_value = |v: Result<Value, serde_json::Error>| v.map_err(|e| e.to_string());
        if name == "all" || name == "targets" {
            // `targets`: the profiles the session publishes (the agents the repository targets,
            // unless `profiles` names others); every agent when there is none.
            let mut chosen: Vec<String> = if name == "all" {
                Profile::NAMES.iter().chain(agents::NAMES).map(|s| s.to_string()).collect()
            } else {
                session.profiles()
            };
            if chosen.is_empty() {
                chosen = agents::NAMES.iter().map(|s| s.to_string()).collect();
            }
            let mut all = Vec::new();
            for p in &chosen {
                all.push(q.one(p)?);
            }
            let folder = path_to_uri(&session.folder);
            let selected = session.profiles();
            let said = match session.targets() {
                Some(t) if session.settings.targeted => t.describe("show"),
                _ => format!("showing {} (the `profiles` setting)", selected.join(", ")),
            };
            // What an editor shows first: the selected agents, unless the user chose the
            // engine's rules with `profile`.
            let view = if session.settings.profile_chosen || selected.is_empty() { "engine" } else { "agents" };
            let mut answer = serde_json::json!({
                "folder": folder,
                "selected": selected,
                "selectedBecause": said,
                "view": view,
                "profiles": all,
            });
            if let Some(starts) = q.views.starts(session) {
                // The places judged come from the folder's checked tree, which is as fresh as a
                // remembered answer: both are forgotten when anything changes on disk.
                answer["starts"] = to_value(serde_json::to_value(starts))?;
            }
            return Ok(answer);
        }
        if let Some(p) = Profile::parse(name) {
            return to_value(serde_json::to_value(q.engine(p)));
        }
        let mut r = to_value(serde_json::to_value(q.one(name)?))?;
        if let Some(obj) = r.as_object_mut() {
            obj.insert("folder".into(), Value::String(path_to_uri(&session.folder)));
        }
        Ok(r)
    }
}

struct Query<'a> {
    session: &'a Session,
    views: &'a dyn Views,
    env: &'a Env,
    preview: Option<&'a Path>,
    /// Whether the answer gives sizes in tokens.
    tokens: bool,
    /// What the answer read so far; `None` once a part cannot be remembered.
    dirs: RefCell<Option<BTreeSet<PathBuf>>>,
    /// The session's project root, found once for every part of the answer (each walks up
    /// probing the root markers).
    root: std::cell::OnceCell<PathBuf>,
}

impl Query<'_> {
    /// Adds what a part read (`None`: it cannot be remembered, so neither can the answer).
    fn read(&self, dirs: Option<&BTreeSet<PathBuf>>) {
        let mut all = self.dirs.borrow_mut();
        match (all.as_mut(), dirs) {
            (Some(all), Some(dirs)) => all.extend(dirs.iter().cloned()),
            _ => *all = None,
        }
    }

    /// The engine's answer for profile `p`: the session's own, or a session with `p`'s defaults
    /// that reached the same directories.
    fn engine(&self, p: Profile) -> EffectiveResult {
        // The directories the engine reads: its session's (the folder's ancestors, the reached
        // directories, the global file's), and those on the way to the preview.
        let mut dirs = BTreeSet::new();
        if let Some(preview) = self.preview {
            let folder = &self.session.folder;
            let existing = preview.ancestors().skip(1).find(|d| d.is_dir()).unwrap_or(folder);
            dirs.extend(existing.ancestors().take_while(|d| d.starts_with(folder)).map(Path::to_path_buf));
        }
        if self.session.settings.profile == p {
            dirs.extend(self.session.watched_dirs());
            self.read(Some(&dirs));
            return self.session.effective(self.views.cache(), None, self.preview);
        }
        let mut other = Session::new(&self.session.folder, Settings::defaults(p, self.env));
        for t in self.session.touched_paths() {
            other.touch(self.views.cache(), &t);
        }
        dirs.extend(other.watched_dirs());
        self.read(Some(&dirs));
        other.effective(self.views.cache(), None, self.preview)
    }

    fn one(&self, name: &str) -> Result<ProfileResult, String> {
        let session = self.session;
        // Named from the project root, as every view names files (also when the folder is a
        // package below it).
        let root = self.root.get_or_init(|| session.project_root());
        let show = super::project::display_paths(root);
        if let Some(p) = Profile::parse(name) {
            let candidates = if session.settings.profile == p {
                session.settings.candidates.clone()
            } else {
                Settings::defaults(p, self.env).candidates
            };
            let r = from_engine(name, self.engine(p), &candidates);
            return Ok(if self.tokens { r.with_tokens() } else { r });
        }
        let mut touched = session.touched_paths();
        touched.extend(self.preview.map(Path::to_path_buf));
        let overrides = session.overrides(name);
        let Some(memo) = self.views.agent_view(name, &overrides, &session.folder, &touched, session.settings.watch)
        else {
            return Err(format!("unknown profile `{name}`; expected one of {}", names().join(", ")));
        };
        self.read(memo.dirs.as_ref());
        let r = from_agent(&memo.view, show);
        Ok(if self.tokens { r.with_tokens() } else { r })
    }
}

/// What an agent's view leaves out because of the folder it is started in, in the words of
/// `check`'s finding about each file (`AGENTS.md: Claude Code, started in `crates/uv`, does not
/// load this file, which CLAUDE.md imports, …`): the imports it does not load from outside its
/// working directory, unless it gets them by another route.
pub fn skipped_imports(view: &AgentView, show: impl Fn(&Path) -> String) -> Vec<String> {
    view.files
        .iter()
        .filter(|f| f.status == agents::Status::Outside)
        .filter_map(|f| agents::explain(view, f, &show).map(|said| format!("{}: {said}", show(&f.path))))
        .collect()
}

impl ProfileResult {
    /// The same with its size in tokens.
    pub fn with_tokens(mut self) -> Self {
        self.tokens = tokens::of_parts(&self.profile, self.parts.iter().map(String::as_str));
        self
    }
}

/// An agent's view as an answer, without its size in tokens ([`ProfileResult::with_tokens`]).
pub fn from_agent(view: &AgentView, show: impl Fn(&Path) -> String) -> ProfileResult {
    ProfileResult {
        profile: view.profile.into(),
        name: agents::display_name(view.profile).into(),
        mirrors: view.mirrors.into(),
        headline: agents::title(view.profile, view.mirrors),
        nothing: view.nothing.clone(),
        // The parts are separate messages: the blank lines `text` puts between them are not
        // the agent's.
        bytes: view.parts.iter().map(String::len).sum(),
        tokens: None,
        text: view.text.clone(),
        parts: view.parts.clone(),
        budget: view.budget.clone(),
        imports_skipped: skipped_imports(view, &show),
        files: view
            .files
            .iter()
            .map(|f| ProfileFile {
                uri: path_to_uri(&f.path),
                path: show(&f.path),
                scope: serde_json::to_value(f.scope)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                status: f.status.as_str().into(),
                bytes: f.bytes,
                included_bytes: f.included_bytes,
                by: f.by.as_deref().map(&show),
                globs: f.globs.clone(),
            })
            .collect(),
    }
}

/// What the engine's profiles mirror, in words.
pub const ENGINE_MIRRORS: &str = "the seeds' rules (docs/discovery.md)";

/// The engine's budget of `budget_bytes`, in words.
pub fn engine_budget(budget_bytes: i64) -> String {
    match u64::try_from(budget_bytes) {
        Ok(b) if b > 0 => format!("{} budget per block", agents::size_words(b)),
        _ => "no budget: every block disabled".into(),
    }
}

pub fn from_engine(name: &str, r: EffectiveResult, candidates: &[String]) -> ProfileResult {
    // A preview counts as a touch, as it does for the agents.
    let blocks: Vec<_> = std::iter::once(&r.baseline).chain(&r.nested).chain(&r.preview).collect();
    let parts: Vec<String> = blocks.iter().map(|b| b.rendered.clone()).filter(|t| !t.is_empty()).collect();
    let text = parts.join("\n\n");
    let mut files: Vec<ProfileFile> = blocks
        .iter()
        .flat_map(|b| &b.files)
        .map(|f| ProfileFile {
            uri: f.uri.clone(),
            path: f.path.clone(),
            scope: f.scope.clone(),
            status: f.status.clone(),
            bytes: f.bytes,
            included_bytes: f.included_bytes,
            by: None,
            globs: Vec::new(),
        })
        .collect();
    let path_of = |uri: &String| files.iter().find(|f| &f.uri == uri).map_or_else(|| uri.clone(), |f| f.path.clone());
    let shadowed: Vec<ProfileFile> = r
        .skipped
        .iter()
        .filter(|s| s.reason == "shadowed")
        .map(|s| ProfileFile {
            uri: s.uri.clone(),
            path: s.path.clone(),
            scope: "project".into(),
            status: "shadowed".into(),
            // Never read, but shown with its size; one linked out of the project is not measured.
            bytes: crate::paths::uri_to_path(&s.uri)
                .filter(|p| crate::chain::confine::leaves_project(p).is_none())
                .and_then(|p| std::fs::metadata(p).ok())
                .map_or(0, |m| m.len()),
            included_bytes: 0,
            by: s.shadowed_by.as_ref().map(path_of),
            globs: Vec::new(),
        })
        .collect();
    files.extend(shadowed);
    ProfileResult {
        profile: name.into(),
        name: name.into(),
        mirrors: ENGINE_MIRRORS.into(),
        headline: agents::title(name, ENGINE_MIRRORS),
        nothing: text.is_empty().then(|| agents::nothing_of(candidates)),
        bytes: parts.iter().map(String::len).sum(),
        tokens: None,
        text,
        parts,
        budget: Some(engine_budget(r.budget_bytes)),
        files,
        imports_skipped: Vec::new(),
    }
}
