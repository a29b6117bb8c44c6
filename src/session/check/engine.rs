//! The engine's own profile (`dsh`, `ds4`) as a check hands its views over: in an agent's shape.

use std::path::Path;

use crate::chain::agents::{self, AgentFile, AgentView, Status};
use crate::chain::discover::{ChainFile, Discovery, Scope, SkippedFile};
use crate::chain::render::{Rendered, SectionStyle};
use crate::chain::settings::Settings;
use crate::chain::source::{FileCache, SkipReason};
use crate::session::{RenderedFiles, render_files};

/// The engine's own view from `dir` (the `dsh` or `ds4` profile of `settings`), in an agent's
/// shape: it is no agent, so [`super::starts`] names no agent for it and a check's `keep` is
/// handed this instead, so that `diff` compares it as it compares the agents'.
pub fn engine_view_at(settings: &Settings, dir: &Path) -> AgentView {
    let cache = FileCache::new();
    let chain = Discovery::new(settings, &cache, None, dir).baseline();
    let RenderedFiles { files, rendered } = render_files(settings, chain.files, SectionStyle::Initial);
    engine_view(settings, dir, &files, &rendered, &chain.skipped)
}

/// [`engine_view_at`] from the start's block as rendered: its files as the budget leaves them,
/// and those a nearer candidate shadows (as `effective --profile dsh` lists them).
pub(super) fn engine_view(
    settings: &Settings,
    dir: &Path,
    files: &[ChainFile],
    rendered: &Rendered,
    skipped: &[SkippedFile],
) -> AgentView {
    let scope = |s: Scope| match s {
        Scope::Global => agents::Scope::Global,
        Scope::Project => agents::Scope::Project,
        Scope::Nested => agents::Scope::Nested,
    };
    let statuses = [Status::Loaded, Status::Truncated, Status::Omitted];
    let mut out: Vec<AgentFile> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let said = crate::session::answer::file_status(rendered, i);
            let status = statuses.into_iter().find(|s| s.as_str() == said).unwrap_or(Status::Loaded);
            let mut file = AgentFile::new(f.path.clone(), scope(f.scope), status);
            file.bytes = f.file.bytes();
            file.included_bytes = rendered.included_bytes(i, f.file.text.len()) as u64;
            file
        })
        .collect();
    for s in skipped.iter().filter(|s| s.reason == SkipReason::Shadowed) {
        let mut file = AgentFile::new(s.path.clone(), scope(s.scope), Status::Shadowed);
        // Never read, but said with its size, as an agent's shadowed file is.
        file.bytes = std::fs::metadata(&s.path).map_or(0, |m| m.len());
        file.by = s.shadowed_by.clone();
        out.push(file);
    }
    let text = rendered.text.clone();
    AgentView {
        profile: settings.profile.name(),
        mirrors: crate::session::profiles::ENGINE_MIRRORS,
        files: out,
        parts: if text.is_empty() { Vec::new() } else { vec![text.clone()] },
        text,
        budget: Some(crate::session::profiles::engine_budget(settings.budget_bytes)),
        nothing: rendered.text.is_empty().then(|| agents::nothing_of(&settings.candidates)),
        global_in_budget: true,
        cwd: dir.to_path_buf(),
        import_boundary: "the project root",
        rule_problems: Vec::new(),
        rule_reach: Vec::new(),
        repository: None,
    }
}
